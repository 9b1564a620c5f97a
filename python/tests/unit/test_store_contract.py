"""The store contract (:mod:`txcommit.testing.store_contract`: the conformance kit's Level 1
checks) bound to every store's Python store on its real store or an emulator: one test class
per variant its test kit names, made here from the registry, so a new store's kit gets it with
no edit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from txcommit.devkit.testkit import store_test_kits
from txcommit.testing.store_contract import StoreContract


def _binding(name: str, store: str, fixture: str | None, make: Any) -> type[StoreContract]:
    @pytest.fixture
    def store_fixture(self: Any, request: pytest.FixtureRequest, tmp_path: Path) -> Any:
        return make(store, request.getfixturevalue(fixture) if fixture else None, tmp_path)

    return type(name, (StoreContract,), {"adapter": store, "store": store_fixture})


def _bindings() -> dict[str, type[StoreContract]]:
    found: dict[str, type[StoreContract]] = {}
    for store, kit in store_test_kits().items():
        for variant, make in (kit.contract or {}).items():
            name = "Test" + "".join(p.capitalize() for p in store.split("-")) + variant + "Contract"
            assert name not in found, f"two contract bindings named {name}"
            found[name] = _binding(name, store, kit.fixture, make)
    return found


globals().update(_bindings())
