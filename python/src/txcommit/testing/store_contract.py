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

Set ``adapter`` to the adapter's name to also check that the store is that adapter's. A binding
that can put the store behind an endpoint that loses answers (``txcommit.devkit.lossy_proxy``)
overrides ``lossy_store`` too (a :class:`LossyStore`); otherwise the lost-answer tests are
skipped, saying so. The class itself is not collected (its name does not start with ``Test``);
a binding is. Needs pytest, which txcommit does not depend on.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

import pytest

from txcommit.adapters.base import MultipartStore, Store
from txcommit.errors import AlreadyExistsError, TxCommitError
from txcommit.testing.checks import CHECKS, MIB, Check, CheckContext, CheckFailed


@dataclass(frozen=True)
class LossyStore:
    """A fresh store whose requests pass an endpoint that can lose answers: a request it picks
    reaches the store and takes effect, and the client sees its connection dropped instead of
    the answer (its own retry then meets what the first attempt did)."""

    store: Store
    #: Loses the answer to the next exclusive create of this key (a key of ``store``).
    lose_create: Callable[[str], None]
    #: What the endpoint lost since it was armed, and disarms it.
    lost: Callable[[], Sequence[str]]


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

    @pytest.fixture
    def lossy_store(self) -> LossyStore:
        pytest.skip("the binding offers no endpoint that loses answers (override 'lossy_store')")

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

    def test_a_create_whose_answer_was_lost_is_the_writers_own(
        self, lossy_store: LossyStore
    ) -> None:
        # The client resends a create whose answer it lost; the resend meets the object its
        # first attempt made and is refused, although that object is this create's own
        # (docs/protocol.md, I17). The create succeeds, once.
        store, key = lossy_store.store, "_txcommit/commits/lost-answer.json"
        lossy_store.lose_create(key)
        store.create_exclusive(key, b"mine")
        assert len(lossy_store.lost()) == 1, "the endpoint lost the first attempt's answer"
        assert store.read(key) == b"mine"
        with pytest.raises(AlreadyExistsError):
            store.create_exclusive(key, b"again")

    def test_a_lost_answer_never_makes_another_writers_object_ours(
        self, lossy_store: LossyStore
    ) -> None:
        # Another writer created the key; this create is refused, its answer lost, and its
        # resend refused again: a conflict, and the other writer's object stays.
        store, key = lossy_store.store, "_txcommit/commits/taken.json"
        store.create_exclusive(key, b"theirs")
        lossy_store.lose_create(key)
        with pytest.raises(AlreadyExistsError):
            store.create_exclusive(key, b"mine")
        assert len(lossy_store.lost()) == 1, "the endpoint lost the refusal's answer"
        assert store.read(key) == b"theirs"

    def test_the_store_is_the_bound_adapter(self, store: Store) -> None:
        if not self.adapter:
            # Naming the adapter is optional for a third-party binding; every binding of
            # txcommit's own adapters names one, so this test runs for each of them.
            pytest.skip("the binding names no adapter")
        assert store.declaration.name == self.adapter


__all__ = ["LossyStore", "StoreContract"]
