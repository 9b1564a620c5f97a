"""How hard the end-to-end attacks push. CI runs each attack small enough to fit its time
budget, yet each still asserts that the overlap it depends on happened; the soak
(`bash .ci/soak`, docs/protocol.md) runs the same tests with the full rounds."""

from __future__ import annotations

import os

#: ``TXCOMMIT_TEST_SOAK=1``: the full rounds.
SOAK = os.environ.get("TXCOMMIT_TEST_SOAK") == "1"


def scaled(ci: int, soak: int) -> int:
    """``ci`` in CI, ``soak`` in the soak."""
    return soak if SOAK else ci
