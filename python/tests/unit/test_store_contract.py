"""The store contract (:mod:`txcommit.testing.store_contract`: the conformance kit's Level 1
checks) bound to every adapter's Python mirror on its real store or an emulator. Each store
binds it in its own folder, ``adapters/<name>/python/store_tests_<name>.py``; their test
classes and functions are collected here, where the emulator fixtures every store's tests share
(python/tests/conftest.py) reach them, so a new store's binding needs no edit here."""

from __future__ import annotations

import importlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

for _binding in sorted(ROOT.glob("adapters/*/python/store_tests_*.py")):
    # Importable by name: python/tests/conftest.py puts every adapters/<name>/python on the path.
    _module = importlib.import_module(_binding.stem)
    globals().update(
        {name: value for name, value in vars(_module).items() if name.startswith(("Test", "test_"))}
    )
