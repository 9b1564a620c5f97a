"""The store contract, shipped with the package as ``pyspark.testing`` is: the checks the
conformance kit runs at Level 1 (:mod:`~txcommit.testing.checks`), the same checks as a pytest
class a store's tests bind in a few lines (:mod:`~txcommit.testing.store_contract`), and the
golden vectors both languages load (:mod:`~txcommit.testing.vectors`). The emulators and the
test kits are the devkit's (``txcommit.devkit``)."""
