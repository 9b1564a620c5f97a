package io.txcommit.azure

import java.net.{InetSocketAddress, URI, URLDecoder}
import java.net.http.{HttpClient, HttpRequest, HttpResponse}
import java.nio.charset.StandardCharsets.UTF_8
import java.util.concurrent.{ConcurrentLinkedQueue, Executors}
import java.util.concurrent.atomic.AtomicInteger

import scala.jdk.CollectionConverters._

import com.sun.net.httpserver.{HttpExchange, HttpServer}

/**
 * A loopback HTTP proxy in front of a real Azurite, to play two faults Azurite cannot:
 *
 *  - `ignoreIfNoneMatch`: a store that accepts `If-None-Match: *` and ignores it (the proxy
 *    drops the header and signs the request again with the emulator's public key);
 *  - [[loseAnswers]]: the next matching requests are applied by Azurite, but the proxy closes
 *    the connection instead of answering, so the client resends them and meets what its first
 *    attempt did.
 */
final class AzureProxy(target: String, ignoreIfNoneMatch: Boolean = false) extends AutoCloseable {
  private val upstream = new URI(target) // http://127.0.0.1:<port>/devstoreaccount1
  private val http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()
  private val server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0)
  private val signer = new SharedKeyAuthorizer(LocalAzurite.Account, LocalAzurite.Key)
  @volatile private var losePattern: Option[scala.util.matching.Regex] = None
  private val loseCount = new AtomicInteger(0)

  /** `<METHOD> <path>` of each request whose answer was dropped. */
  val lost = new ConcurrentLinkedQueue[String]()

  /** `<METHOD> <path>` of every request passed on to Azurite: what the store served. */
  val served = new ConcurrentLinkedQueue[String]()

  server.setExecutor(Executors.newFixedThreadPool(32))
  server.createContext("/", (ex: HttpExchange) => handle(ex))
  server.start()

  /** `127.0.0.1:<port>`: what fs.azure.abfs.endpoint takes. */
  val hostPort: String = s"127.0.0.1:${server.getAddress.getPort}"

  def loseAnswers(pattern: String, count: Int = 1): Unit = { losePattern = Some(pattern.r); loseCount.set(count) }

  private val restricted = Set("host", "content-length", "connection", "expect", "upgrade", "authorization")

  private def handle(ex: HttpExchange): Unit =
    try {
      val method = ex.getRequestMethod
      val uri = ex.getRequestURI
      val body = ex.getRequestBody.readAllBytes()
      var headers = ex.getRequestHeaders.asScala.toSeq.map { case (k, v) => k -> v.asScala.mkString(",") }
        .filterNot { case (k, _) => restricted(k.toLowerCase(java.util.Locale.ROOT)) }.toMap
      val auth = if (ignoreIfNoneMatch) {
        headers = headers.filterNot(_._1.equalsIgnoreCase("If-None-Match"))
        val query = Option(uri.getRawQuery).toSeq.flatMap(_.split("&")).map(_.split("=", 2)).map(kv =>
          URLDecoder.decode(kv(0), UTF_8) -> URLDecoder.decode(kv.lift(1).getOrElse(""), UTF_8))
        signer.authorize(method, uri.getRawPath, query, headers, body.length.toLong)
      } else ex.getRequestHeaders.getFirst("Authorization")
      val fwd = HttpRequest.newBuilder(new URI(s"${upstream.getScheme}://${upstream.getRawAuthority}${uri.getRawPath}" +
          Option(uri.getRawQuery).map("?" + _).getOrElse("")))
        .method(method,
          if (body.isEmpty) HttpRequest.BodyPublishers.noBody() else HttpRequest.BodyPublishers.ofByteArray(body))
      (headers + ("Authorization" -> auth)).foreach { case (k, v) => fwd.header(k, v) }
      val r = http.send(fwd.build(), HttpResponse.BodyHandlers.ofByteArray())
      val op = s"$method ${uri.getRawPath}"
      served.add(op)
      if (losePattern.exists(_.findFirstIn(op).isDefined) && loseCount.getAndDecrement() > 0) {
        lost.add(op)
        ex.close() // applied upstream, never answered
      } else {
        r.headers().map().asScala.foreach { case (k, vs) =>
          if (!Set("content-length", "transfer-encoding", "connection", ":status")(
              k.toLowerCase(java.util.Locale.ROOT)))
            vs.asScala.foreach(v => ex.getResponseHeaders.add(k, v))
        }
        val out = r.body()
        val noBody = method == "HEAD" || out.isEmpty
        ex.sendResponseHeaders(r.statusCode(), if (noBody) -1 else out.length.toLong)
        if (!noBody) ex.getResponseBody.write(out)
        ex.close()
      }
    } catch { case e: Throwable => e.printStackTrace(); ex.close() }

  override def close(): Unit = server.stop(0)
}
