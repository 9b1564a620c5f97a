package io.txcommit.bench;

import java.io.Serializable;

import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.spark.internal.io.FileCommitProtocol;
import org.apache.spark.internal.io.FileNameSpec;

import scala.Option;
import scala.collection.immutable.Seq;
import scala.runtime.BoxedUnit;

/**
 * BENCHMARK ONLY, NEVER FOR REAL DATA: the "no commit protocol" floor of `txcommit bench`.
 *
 * Tasks write each file straight to its final path and nothing else happens: no staging, no
 * rename, no marker, no record, no _SUCCESS, no clean-up of failed or speculative attempts
 * (their partial files stay visible). It is the least work a Spark file write can do, so a
 * protocol's cost is measured against it. Compiled by the benchmark with javac against the
 * server's own Spark jars (see txcommit/bench/jvm.py); it is not part of the plugin.
 *
 * Spark instantiates it from spark.sql.sources.commitProtocolClass with
 * (jobId, path, dynamicPartitionOverwrite). For a plain overwrite Spark deletes the output
 * directory through deleteWithJob before the job, as it does for every protocol.
 */
public class DirectWriteCommitProtocol extends FileCommitProtocol implements Serializable {
  private static final long serialVersionUID = 1L;

  private final String jobId;
  private final String path;

  public DirectWriteCommitProtocol(String jobId, String path, boolean dynamicPartitionOverwrite) {
    this.jobId = jobId;
    this.path = path;
  }

  @Override public void setupJob(JobContext jobContext) {}

  @Override public void commitJob(JobContext jobContext, Seq<TaskCommitMessage> taskCommits) {}

  @Override public void abortJob(JobContext jobContext) {}

  @Override public void setupTask(TaskAttemptContext taskContext) {}

  /** Spark's own file name (HadoopMapReduceCommitProtocol.getFilename), in the final place. */
  private String fileName(TaskAttemptContext taskContext, FileNameSpec spec) {
    int split = taskContext.getTaskAttemptID().getTaskID().getId();
    return spec.prefix() + String.format("part-%05d-%s", split, jobId) + spec.suffix();
  }

  @Override
  public String newTaskTempFile(TaskAttemptContext taskContext, Option<String> dir, String ext) {
    return newTaskTempFile(taskContext, dir, new FileNameSpec("", ext));
  }

  @Override
  public String newTaskTempFile(
      TaskAttemptContext taskContext, Option<String> dir, FileNameSpec spec) {
    Path base = dir.isDefined() ? new Path(path, dir.get()) : new Path(path);
    return new Path(base, fileName(taskContext, spec)).toString();
  }

  @Override
  public String newTaskTempFileAbsPath(
      TaskAttemptContext taskContext, String absoluteDir, String ext) {
    return newTaskTempFileAbsPath(taskContext, absoluteDir, new FileNameSpec("", ext));
  }

  @Override
  public String newTaskTempFileAbsPath(
      TaskAttemptContext taskContext, String absoluteDir, FileNameSpec spec) {
    return new Path(absoluteDir, fileName(taskContext, spec)).toString();
  }

  @Override
  public TaskCommitMessage commitTask(TaskAttemptContext taskContext) {
    return new TaskCommitMessage(BoxedUnit.UNIT);
  }

  @Override public void abortTask(TaskAttemptContext taskContext) {}
}
