package io.txcommit.testing

import java.nio.file.Files
import java.util.UUID

import org.apache.commons.io.FileUtils
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}
import org.apache.hadoop.hdfs.MiniDFSCluster

/**
 * A real NameNode and DataNode (Hadoop's MiniDFSCluster, from hadoop-client-minicluster 3.5.0)
 * shared by every HDFS suite of the test JVM: started on first use, on ephemeral loopback
 * ports, under a temporary directory that goes with the JVM.
 */
object MiniHdfs {
  private lazy val cluster: MiniDFSCluster = {
    val base = Files.createTempDirectory("txcommit-minidfs").toFile
    val conf = new Configuration()
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, base.getAbsolutePath)
    // The web servers' signing secret would otherwise be looked for in the user's home.
    val secret = new java.io.File(base, "http-secret")
    Files.write(secret.toPath, UUID.randomUUID().toString.getBytes("UTF-8"))
    conf.set("hadoop.http.authentication.signature.secret.file", secret.getAbsolutePath)
    val started = new MiniDFSCluster.Builder(conf).numDataNodes(1).format(true).build()
    started.waitActive()
    // Only the files go at exit: stopping the daemons inside a JVM shutdown makes Hadoop's own
    // shutdown hooks throw.
    sys.addShutdownHook(FileUtils.deleteQuietly(base))
    started
  }

  /** The client configuration that reaches the cluster (fs.defaultFS and nothing else set). */
  def conf: Configuration = new Configuration(cluster.getConfiguration(0))

  def fs: FileSystem = cluster.getFileSystem

  /** A new, empty directory: hdfs://127.0.0.1:<port>/t-<uuid>. */
  def freshDir(): Path = {
    val dir = new Path(s"${fs.getUri}/t-${UUID.randomUUID()}")
    fs.mkdirs(dir)
    dir
  }
}
