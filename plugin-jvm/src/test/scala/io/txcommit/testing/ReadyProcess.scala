package io.txcommit.testing

import java.io.{BufferedReader, File, InputStreamReader}
import java.net.ServerSocket
import java.util.concurrent.TimeUnit

/**
 * A helper service for the adapter suites, started as `python -m <args>` from the project's
 * server venv (the local S3 endpoint, the GCS and Azure emulators): it serves once it prints
 * "ready at <address>". The process runs this checkout's Python sources (the venv may be
 * shared with another checkout) and is stopped by [[close]].
 */
final class ReadyProcess(what: String, args: Seq[String], timeoutSeconds: Int = 60) extends AutoCloseable {
  private val (proc: Process, line: String) = {
    val pb = new ProcessBuilder((ReadyProcess.python +: "-m" +: args): _*).redirectErrorStream(true)
    pb.environment().put("PYTHONPATH", new File(ReadyProcess.checkout, "python/src").getPath)
    val p = pb.start()
    val out = new BufferedReader(new InputStreamReader(p.getInputStream))
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds.toLong)
    var l = out.readLine()
    while (l != null && !l.contains(ReadyProcess.Ready) && System.nanoTime() < deadline) l = out.readLine()
    if (l == null || !l.contains(ReadyProcess.Ready)) { p.destroyForcibly(); sys.error(s"$what did not start: $l") }
    new Thread(() => while (out.readLine() != null) {}).start() // keep draining its output
    (p, l)
  }

  /** The address the process printed after "ready at". */
  val readyAt: String = line.substring(line.indexOf(ReadyProcess.Ready) + ReadyProcess.Ready.length).trim

  override def close(): Unit = { proc.destroy(); proc.waitFor(10, TimeUnit.SECONDS); proc.destroyForcibly() }
}

object ReadyProcess {
  private val Ready = "ready at "

  /** The checkout: the nearest directory above the working one holding `.venv/bin/python`. */
  lazy val checkout: File = Iterator.iterate(new File(".").getAbsoluteFile)(_.getParentFile)
    .takeWhile(_ != null).find(d => new File(d, ".venv/bin/python").exists())
    .getOrElse(sys.error("no .venv/bin/python above the working directory: run bash .ci/setup"))

  lazy val python: String =
    sys.env.getOrElse("TXCOMMIT_SERVER_PYTHON", new File(checkout, ".venv/bin/python").getPath)

  /** A loopback port free right now. */
  def freePort(): Int = {
    val s = new ServerSocket(0);
    try s.getLocalPort
    finally s.close()
  }
}
