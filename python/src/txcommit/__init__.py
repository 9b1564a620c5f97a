"""txcommit: transactional Spark file writes, switched on per Spark Connect session.

    import txcommit
    spark = txcommit.connect("sc://localhost:15002")
    txcommit.enable(spark)
    df.write.mode("overwrite").parquet(path)  # a lost race raises txcommit.CommitConflictError

Importing txcommit never imports pyspark (so ``txcommit server --help`` works anywhere), but
it does set SPARK_HOME for a pure ``pyspark-client`` install, because that client otherwise
exits the process while importing ``pyspark.sql.connect`` (see ``_spark_home``). Import
txcommit before pyspark.sql.connect, or use ``txcommit.connect``.
"""

from txcommit._spark_home import ensure_spark_home

# Must run before anything imports pyspark.sql.connect; a user-set SPARK_HOME is kept.
ensure_spark_home()

from txcommit._names import (  # noqa: E402
    COMMIT_PROTOCOL_CONF,
    PROTOCOL_CLASS,
    READ_FILTER_CONF,
    SPARK_DEFAULT_PROTOCOL_CLASS,
)
from txcommit.client import (  # noqa: E402
    abandon,
    connect,
    disable,
    enable,
    is_enabled,
    server_version,
    transactional,
)
from txcommit.errors import (  # noqa: E402
    CommitConflictError,
    CommitOutcomeUnknownError,
    CorruptCheckpointError,
    CorruptCommitRecordError,
    CorruptTablePropertiesError,
    FencedError,
    InvalidConfError,
    InvalidRemoteError,
    ListingChangedError,
    MaintenanceError,
    NotATableError,
    RestoreFilesMissingError,
    SchemaMismatchError,
    ServerStartError,
    ServerUnreachableError,
    StorePermissionError,
    TaskFileMissingError,
    TxCommitError,
    TxCommitNotInstalledError,
    UnsupportedReadError,
    UnsupportedStoreError,
    UnsupportedWriteError,
    WriteIdCommittedError,
    typed_errors,
)
from txcommit.errors import install as _install_typed_errors  # noqa: E402
from txcommit.readers import dataset, duckdb_relation, polars_frame  # noqa: E402
from txcommit.readers.fsspec import register as _register_fs  # noqa: E402

# pyspark raises the server plugin's errors as txcommit's classes (txcommit.errors), for every
# client, without a context manager; pyspark itself is not imported here.
_install_typed_errors()
_register_fs()  # txcommit+file://, txcommit+s3:// (the entry points cover installed copies)

__version__ = "0.1.0"

__all__ = [
    "COMMIT_PROTOCOL_CONF",
    "PROTOCOL_CLASS",
    "READ_FILTER_CONF",
    "SPARK_DEFAULT_PROTOCOL_CLASS",
    "CommitConflictError",
    "CommitOutcomeUnknownError",
    "CorruptCheckpointError",
    "CorruptTablePropertiesError",
    "CorruptCommitRecordError",
    "FencedError",
    "InvalidConfError",
    "InvalidRemoteError",
    "MaintenanceError",
    "NotATableError",
    "RestoreFilesMissingError",
    "SchemaMismatchError",
    "ServerStartError",
    "ServerUnreachableError",
    "TaskFileMissingError",
    "ListingChangedError",
    "StorePermissionError",
    "TxCommitError",
    "TxCommitNotInstalledError",
    "UnsupportedReadError",
    "UnsupportedStoreError",
    "UnsupportedWriteError",
    "WriteIdCommittedError",
    "__version__",
    "abandon",
    "connect",
    "dataset",
    "disable",
    "duckdb_relation",
    "enable",
    "is_enabled",
    "polars_frame",
    "server_version",
    "transactional",
    "typed_errors",
]
