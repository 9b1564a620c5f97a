"""The store contract as a pytest class: bind it to an adapter's store in a few lines.

The contract is the conformance kit's Level 1 checks (:data:`txcommit.conformance.CHECKS`),
the same ones ``txcommit conformance`` certifies a live store with: binding it runs every
check the adapter's declaration claims against a fresh store, and reports every other check
as skipped, naming the capability the declaration does not claim. So a suite that passes here
passes the kit's Level 1 on the same store.

    import pytest
    from txcommit.adapters import open_store
    from txcommit.testing.store_contract import StoreContract

    class TestMyStore(StoreContract):
        @pytest.fixture
        def store(self, tmp_path):
            return open_store(f"mystore://bucket/{tmp_path.name}")  # fresh and empty per test

Set ``adapter`` to the adapter's name to also check that the store is that adapter's. The class
itself is not collected (its name does not start with ``Test``); a binding is. Needs pytest,
which txcommit does not depend on.
"""

from __future__ import annotations

import contextlib
import time
from typing import ClassVar

import pytest

from txcommit.adapters.base import MultipartStore, Store
from txcommit.errors import TxCommitError
from txcommit.testing.checks import CHECKS, MIB, Check, CheckContext, CheckFailed


class StoreContract:
    """Every Level 1 check against the ``store`` fixture; bindings override ``store``."""

    #: The adapter the bound store must be (``store.declaration.name``); "" skips that test.
    adapter: ClassVar[str] = ""
    #: Concurrent writers of the exclusive-create race, and the size of large objects.
    writers: ClassVar[int] = 8
    large_mib: ClassVar[int] = 6

    @pytest.fixture
    def store(self) -> Store:
        raise NotImplementedError("bind the contract: override the 'store' fixture")

    @pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.name)
    def test_check(self, store: Store, check: Check) -> None:
        declaration = store.declaration
        if not check.applies(declaration):
            # A store is never certified for what its declaration does not claim (the kit
            # reports "not declared"); the skip says which capability, so it is visible.
            pytest.skip(
                f"not declared: adapter '{declaration.name}' does not claim "
                f"{check.capability(declaration)}"
            )
        ctx = CheckContext(store, writers=self.writers, large_bytes=self.large_mib * MIB)
        try:
            check.run(ctx)
        except CheckFailed as e:
            pytest.fail(f"{check.name}: {e}", pytrace=False)
        finally:
            if isinstance(store, MultipartStore):
                for upload in ctx.uploads:
                    with contextlib.suppress(TxCommitError):
                        store.abort_multipart(upload)

    def test_a_listing_dates_every_file_by_the_store(self, store: Store) -> None:
        # What orders a table's versions (docs/protocol.md, I30): the store's time of each
        # record, as the listing gives it; never a writer's clock.
        before = time.time_ns()
        store.create_exclusive("_txcommit/commits/dated.json", b"{}")
        (listed,) = [f for f in store.walk("_txcommit") if f.key.endswith("dated.json")]
        assert listed.mtime_ns is not None, f"{store.root_url}: the listing gives no time"
        assert abs(listed.mtime_ns - before) < 600 * 1_000_000_000, "the store's time is now"

    def test_the_store_is_the_bound_adapter(self, store: Store) -> None:
        if not self.adapter:
            # Naming the adapter is optional for a third-party binding; every binding of
            # txcommit's own adapters names one, so this test runs for each of them.
            pytest.skip("the binding names no adapter")
        assert store.declaration.name == self.adapter


__all__ = ["StoreContract"]
