"""Test doubles and contracts, shipped with the package as ``pyspark.testing`` is.

Nothing here is used by a production code path; these modules exist so that the quick starts,
the conformance kit, the benchmarks and third-party adapter test suites can run without a
cloud account:

* :mod:`~txcommit.testing.local_s3`: a real S3 endpoint on loopback (moto's server) that counts
  the requests it serves and can be told to ignore ``If-None-Match`` (a lying store);
* :mod:`~txcommit.testing.latency_model`: per-request delays that make the local S3 behave like
  S3 over a network, for the benchmarks;
* :mod:`~txcommit.testing.emulators`: what the stores' emulators (fake-gcs-server, Azurite,
  a MiniDFSCluster, each in its store's package) share, and the command that runs one;
* :mod:`~txcommit.testing.checks`: the store contract, the checks the conformance kit runs at
  Level 1;
* :mod:`~txcommit.testing.store_contract`: the same checks as a pytest class an adapter's test
  suite binds in a few lines;
* :mod:`~txcommit.testing.vectors`: the golden vectors the JVM and Python tests share.

The stores' descriptors import from here (they start the emulators for ``txcommit server
--store ...``); nothing here imports a store's package, the server, the client, the
conformance kit or the command line.
"""
