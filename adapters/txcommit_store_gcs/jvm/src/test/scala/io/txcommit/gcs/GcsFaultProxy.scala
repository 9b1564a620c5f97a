package io.txcommit.gcs

import java.net.{HttpURLConnection, InetSocketAddress, URL}
import java.util.concurrent.{ConcurrentLinkedQueue, Executors}
import java.util.concurrent.atomic.AtomicInteger

import scala.jdk.CollectionConverters._

import com.sun.net.httpserver.{HttpExchange, HttpServer}
import org.apache.commons.io.IOUtils

/**
 * A real HTTP endpoint in front of fake-gcs-server that plays two store faults:
 *
 *  - `ignoreGenerationMatch`: it drops `ifGenerationMatch` from every request before passing it
 *    on, so the store behind it overwrites: a store that accepts the precondition and ignores it;
 *  - [[loseAnswers]]: it passes the next matching request on, lets the store apply it, and
 *    closes the connection without answering (the client cannot tell whether it landed).
 *
 * Only what the adapter's tests send goes through it (JSON API calls, bodies read whole).
 */
final class GcsFaultProxy(target: String, ignoreGenerationMatch: Boolean = false) extends AutoCloseable {
  private val server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0)
  private val lose = new AtomicInteger(0)
  @volatile private var losePattern = "$^".r
  val lost = new ConcurrentLinkedQueue[String]()

  /** "METHOD path?query" of every request passed on to the emulator: what the store served. */
  val served = new ConcurrentLinkedQueue[String]()

  val endpoint = s"http://127.0.0.1:${server.getAddress.getPort}"

  /** Loses the answers of the next `count` requests whose "METHOD path?query" matches `pattern`. */
  def loseAnswers(pattern: String, count: Int = 1): Unit = { losePattern = pattern.r; lose.set(count) }

  server.createContext("/", (ex: HttpExchange) => forward(ex))
  server.setExecutor(Executors.newFixedThreadPool(32))
  server.start()

  private def forward(ex: HttpExchange): Unit =
    try {
      val uri = ex.getRequestURI
      val query = Option(uri.getRawQuery).map(_.split("&").toSeq).getOrElse(Nil)
        .filterNot(p => ignoreGenerationMatch && p.startsWith("ifGenerationMatch="))
      val pathAndQuery = uri.getRawPath + (if (query.isEmpty) "" else query.mkString("?", "&", ""))
      val request = s"${ex.getRequestMethod} $pathAndQuery"
      val body = IOUtils.toByteArray(ex.getRequestBody)
      val c = new URL(target + pathAndQuery).openConnection().asInstanceOf[HttpURLConnection]
      c.setRequestMethod(ex.getRequestMethod)
      ex.getRequestHeaders.asScala.foreach { case (k, vs) =>
        if (!Set("host", "content-length", "transfer-encoding", "connection")(k.toLowerCase))
          vs.asScala.foreach(c.addRequestProperty(k, _))
      }
      if (body.nonEmpty) { c.setDoOutput(true); c.getOutputStream.write(body); c.getOutputStream.close() }
      val status = c.getResponseCode
      served.add(request)
      val answer = Option(if (status >= 400) c.getErrorStream else c.getInputStream).map(IOUtils.toByteArray).getOrElse(
        Array.emptyByteArray)
      if (losePattern.findFirstIn(request).isDefined && lose.getAndUpdate(n => math.max(0, n - 1)) > 0) {
        lost.add(request)
        return // applied, never answered: the finally below drops the connection
      }
      Option(c.getContentType).foreach(ex.getResponseHeaders.set("Content-Type", _))
      Option(c.getHeaderField("Location")).foreach(ex.getResponseHeaders.set("Location", _))
      ex.sendResponseHeaders(status, if (answer.isEmpty) -1 else answer.length.toLong)
      if (answer.nonEmpty) ex.getResponseBody.write(answer)
    } finally ex.close()

  override def close(): Unit = server.stop(0)
}
