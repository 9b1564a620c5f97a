"""txcommit's own stores, one module each: the :class:`~txcommit.adapters.plugin.StorePlugin`
descriptors its pyproject.toml registers in the ``txcommit.adapters`` entry-point group, with
what is particular to each store on the server side (confs, emulator launchers, the
conformance kit's Level 2 target). The adapters themselves are ``txcommit.adapters.<name>``
(Python) and ``adapters/<name>/`` (declaration and JVM sources).

This layer sits above :mod:`txcommit.testing` (the emulators it launches) and below
:mod:`txcommit.server`, which finds the stores through the entry points (it imports from
here only the names it has always exported).
"""
