"""The store contract (:mod:`txcommit.testing.store_contract`: the conformance kit's Level 1
checks) bound to every store's Python store on its real store or an emulator: one test class
per variant its test kit names, made here from the registry, so a new store's kit gets it with
no edit."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from txcommit.devkit.testkit import StoreTestKit, store_test_kits
from txcommit.testing.store_contract import LossyStore, StoreContract


def _binding(name: str, store: str, kit: StoreTestKit, make: Any) -> type[StoreContract]:
    def emulator(request: pytest.FixtureRequest) -> Any:
        return request.getfixturevalue(kit.fixture) if kit.fixture else None

    @pytest.fixture
    def store_fixture(self: Any, request: pytest.FixtureRequest, tmp_path: Path) -> Any:
        return make(store, emulator(request), tmp_path)

    members: dict[str, Any] = {"adapter": store, "store": store_fixture}
    lossy = kit.lossy_contract
    if lossy is not None:

        @pytest.fixture
        def lossy_fixture(
            self: Any, request: pytest.FixtureRequest, tmp_path: Path
        ) -> Iterator[LossyStore]:
            with lossy(store, emulator(request), tmp_path) as found:
                yield found

        members["lossy_store"] = lossy_fixture
    return type(name, (StoreContract,), members)


def _bindings() -> dict[str, type[StoreContract]]:
    found: dict[str, type[StoreContract]] = {}
    for store, kit in store_test_kits().items():
        for variant, make in (kit.contract or {}).items():
            name = "Test" + "".join(p.capitalize() for p in store.split("-")) + variant + "Contract"
            assert name not in found, f"two contract bindings named {name}"
            found[name] = _binding(name, store, kit, make)
    return found


globals().update(_bindings())
