"""Names shared with the JVM plugin and with Spark, spelled once for every Python module.

Each name here must be spelled exactly as on the JVM: the conf keys and class names as in
``plugin-jvm/src/main/scala/io/txcommit/conf/TxCommitConf.scala`` (and, where noted, the file
that defines them), the fault points as in ``io/txcommit/fault/HaltPoint.scala``. The Python
constants keep the JVM's names, in upper snake case. ``conformance/vectors/names.json`` holds
them once more, and a test on each side checks its own names against it.
"""

from __future__ import annotations

# --- JVM classes ----------------------------------------------------------------------------

#: ``TxCommitConf.ProtocolClass``: the commit protocol a session switches on.
PROTOCOL_CLASS = "io.txcommit.spark.TxCommitProtocol"
#: The Spark plugin and the SQL extensions (``spark.plugins``, ``spark.sql.extensions``).
PLUGIN_CLASS = "io.txcommit.spark.TxCommitPlugin"
EXTENSIONS_CLASS = "io.txcommit.spark.TxCommitExtensions"
#: The plugin jar's file name in the package (``_jars/spark-<line>/``) and in the docs.
PLUGIN_JAR_NAME = "txcommit-plugin.jar"
#: ``TxCommitCheckpointFileManager.scala``: atomic, exclusive checkpoint files for streaming.
CHECKPOINT_FILE_MANAGER_CLASS = "io.txcommit.streaming.TxCommitCheckpointFileManager"
#: The benchmarks' no-protocol floor (``txcommit/bench/java/DirectWriteCommitProtocol.java``).
FLOOR_CLASS = "io.txcommit.bench.DirectWriteCommitProtocol"

# --- Spark's own keys and classes -----------------------------------------------------------

COMMIT_PROTOCOL_CONF = "spark.sql.sources.commitProtocolClass"
SPARK_DEFAULT_PROTOCOL_CLASS = (
    "org.apache.spark.sql.execution.datasources.SQLHadoopMapReduceCommitProtocol"
)
PLUGINS_CONF = "spark.plugins"
EXTENSIONS_CONF = "spark.sql.extensions"
#: ``TxCommitCheckpointFileManager.ConfKey``.
CHECKPOINT_FILE_MANAGER_CONF = "spark.sql.streaming.checkpointFileManagerClass"
PARQUET_COMMITTER_CONF = "spark.sql.parquet.output.committer.class"

# --- txcommit's confs (TxCommitConf) --------------------------------------------------------

READ_FILTER_CONF = "spark.txcommit.read.filter"
IGNORE_CORRUPT_RECORDS_CONF = "spark.txcommit.read.ignoreCorruptRecords"
#: How a table txcommit creates is read: "log" (log-only) or "listing" (docs/protocol.md, I32).
NEW_TABLE_READS_CONF = "spark.txcommit.newTables.reads"
CLEANUP_ATTEMPTS_CONF = "spark.txcommit.commit.cleanupAttempts"
#: ``Adapters.ConfPrefix`` (``io/txcommit/store/Adapters.scala``): ``<prefix><scheme>`` names
#: the adapter of a URL scheme, e.g. ``spark.txcommit.adapter.s3a``.
ADAPTER_CONF_PREFIX = "spark.txcommit.adapter."
HALT_AT_CONF = "spark.txcommit.test.haltAt"
KEEP_ABORTED_FILES_CONF = "spark.txcommit.test.keepAbortedFiles"
#: Static (server start only): fault injection does nothing unless this is true.
ALLOW_FAULT_INJECTION_CONF = "spark.txcommit.test.allowFaultInjection"


def adapter_conf(scheme: str) -> str:
    """The conf naming the adapter of ``scheme``: ``spark.txcommit.adapter.<scheme>``."""
    return f"{ADAPTER_CONF_PREFIX}{scheme}"


# --- fault points (HaltPoint) ---------------------------------------------------------------

JOB_AFTER_NESTING_CHECK = "job.afterNestingCheck"
TASK_BEFORE_COMMIT = "task.beforeCommit"
JOB_DURING_PUBLISH_DATA = "job.duringPublishData"
JOB_BEFORE_RECORD = "job.beforeRecord"
JOB_AFTER_RECORD = "job.afterRecord"
JOB_DURING_CLEANUP = "job.duringCleanup"
JOB_BEFORE_SUCCESS = "job.beforeSuccess"
STREAMING_BEFORE_SINK_LOG = "streaming.beforeSinkLog"
STREAMING_BEFORE_RECORD = "streaming.beforeRecord"
TRANSACTION_BEFORE_DECISION = "transaction.beforeDecision"
TRANSACTION_AFTER_DECISION = "transaction.afterDecision"
MAINTENANCE_TASK = "maintenance.task"
#: ``HaltPoint.all``, in the JVM's order.
HALT_POINTS: tuple[str, ...] = (
    JOB_AFTER_NESTING_CHECK,
    TASK_BEFORE_COMMIT,
    JOB_DURING_PUBLISH_DATA,
    JOB_BEFORE_RECORD,
    JOB_AFTER_RECORD,
    JOB_DURING_CLEANUP,
    JOB_BEFORE_SUCCESS,
    STREAMING_BEFORE_SINK_LOG,
    STREAMING_BEFORE_RECORD,
    TRANSACTION_BEFORE_DECISION,
    TRANSACTION_AFTER_DECISION,
    MAINTENANCE_TASK,
)

# Commit stages, as the JVM's logs and `stageDurationsMs` of `_SUCCESS` name them
# (`CommitStage.name`; conformance/vectors/names.json, "stages"): the ones Python reads.
CHECK_CONFLICTS_STAGE = "check-conflicts"
PUBLISH_COMMIT_RECORD_STAGE = "publish-commit-record"
PUBLISH_REPLACE_RECORD_STAGE = "publish-replace-record"
COPY_REPLACE_RECORD_STAGE = "copy-replace-record"
