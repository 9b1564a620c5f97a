package io.txcommit.azure

import java.io.IOException
import java.net.URLEncoder
import java.net.http.{HttpClient, HttpRequest, HttpResponse}
import java.nio.charset.StandardCharsets.UTF_8
import java.time.{Duration, ZoneOffset, ZonedDateTime}
import java.time.format.DateTimeFormatter
import java.util.Base64
import javax.crypto.Mac
import javax.crypto.spec.SecretKeySpec

/** One Blob REST answer: status, headers (lower-case names) and body. */
final case class BlobResponse(status: Int, headers: Map[String, String], body: Array[Byte]) {
  def header(name: String): Option[String] = headers.get(name.toLowerCase(java.util.Locale.ROOT))

  /** Azure's `x-ms-error-code` (e.g. `BlobAlreadyExists`), or empty. */
  def errorCode: String = header("x-ms-error-code").getOrElse("")
}

/** What a request body is: bytes in memory, or a local file streamed as it is sent. */
sealed trait BlobBody { def length: Long }
object BlobBody {
  final case class Bytes(bytes: Array[Byte]) extends BlobBody { def length: Long = bytes.length.toLong }
  final case class File(path: java.nio.file.Path) extends BlobBody {
    def length: Long = java.nio.file.Files.size(path)
  }
  val Empty: BlobBody = Bytes(Array.emptyByteArray)
}

/** Signs a request: returns the `Authorization` header's value. */
private[azure] trait Authorizer {
  def authorize(method: String, rawPath: String, query: Seq[(String, String)],
      headers: Map[String, String], contentLength: Long): String
}

/**
 * Shared Key, as the Blob service defines it (the string to sign is the verb, the standard
 * headers, the `x-ms-*` headers and the canonical resource). The key never leaves this object.
 */
private[azure] final class SharedKeyAuthorizer(account: String, base64Key: String) extends Authorizer {
  private val key = new SecretKeySpec(Base64.getDecoder.decode(base64Key), "HmacSHA256")

  override def authorize(method: String, rawPath: String, query: Seq[(String, String)],
      headers: Map[String, String], contentLength: Long): String = {
    def h(name: String) = headers.collectFirst { case (k, v) if k.equalsIgnoreCase(name) => v }.getOrElse("")
    val standard = Seq(method, h("Content-Encoding"), h("Content-Language"),
      if (contentLength > 0) contentLength.toString else "", h("Content-MD5"), h("Content-Type"),
      "", h("If-Modified-Since"), h("If-Match"), h("If-None-Match"), h("If-Unmodified-Since"), h("Range"))
    val msHeaders = headers.toSeq.map { case (k, v) => k.toLowerCase(java.util.Locale.ROOT) -> v.trim }
      .filter(_._1.startsWith("x-ms-")).sortBy(_._1).map { case (k, v) => s"$k:$v" }
    val params = query.groupBy(_._1.toLowerCase(java.util.Locale.ROOT)).toSeq.sortBy(_._1)
      .map { case (k, vs) => s"\n$k:${vs.map(_._2).sorted.mkString(",")}" }
    val toSign = (standard ++ msHeaders).mkString("\n") + "\n" + s"/$account$rawPath" + params.mkString
    val mac = Mac.getInstance("HmacSHA256")
    mac.init(key)
    s"SharedKey $account:${Base64.getEncoder.encodeToString(mac.doFinal(toSign.getBytes(UTF_8)))}"
  }

  override def toString: String = s"SharedKeyAuthorizer($account, key hidden)"
}

/** OAuth: the bearer token of ABFS's own token provider (it caches and refreshes it). */
private[azure] final class BearerAuthorizer(token: () => String) extends Authorizer {
  override def authorize(method: String, rawPath: String, query: Seq[(String, String)],
      headers: Map[String, String], contentLength: Long): String = token()
  override def toString: String = "BearerAuthorizer(token hidden)"
}

/**
 * A small Blob REST client (the JDK's HTTP client; no SDK on the classpath, nothing to shade).
 * Each call is one request, retried on a lost connection, a timeout or a 500/503 (up to
 * [[BlobClient.Attempts]] times); a caller whose request is not idempotent (an exclusive
 * create) resolves what a resend meets itself.
 */
final class BlobClient(loc: AzureContainer) {
  private def http: HttpClient = BlobClient.http

  /** The path part of a blob's URL, as sent (each segment percent-encoded). */
  def rawPath(blob: String): String =
    (new java.net.URI(loc.serviceRoot).getRawPath + "/" + loc.container +
      (if (blob.isEmpty) "" else "/" + blob.split("/", -1).map(BlobClient.encodeSegment).mkString("/")))

  /**
   * Sends one request for `blob` (empty: the container) and returns the answer, whatever its
   * status. Throws IOException only when no answer came after every attempt. `onAttempt` runs
   * before each attempt (the store counts requests as the wire sees them).
   */
  def send(method: String, blob: String, query: Seq[(String, String)] = Nil,
      headers: Map[String, String] = Map.empty, body: BlobBody = BlobBody.Empty,
      onAttempt: () => Unit = () => ()): BlobResponse = {
    val path = rawPath(blob)
    val queryString = if (query.isEmpty) ""
    else query.map { case (k, v) =>
      s"${BlobClient.encodeQuery(k)}=${BlobClient.encodeQuery(v)}"
    }.mkString("?", "&", "")
    val root = new java.net.URI(loc.serviceRoot)
    val uri = java.net.URI.create(s"${root.getScheme}://${root.getRawAuthority}$path$queryString")
    @scala.annotation.tailrec
    def attempt(n: Int): BlobResponse = {
      onAttempt()
      val all = headers ++ Map("x-ms-date" -> BlobClient.now(), "x-ms-version" -> BlobClient.Version)
      val auth = loc.auth.authorize(method, path, query, all, body.length)
      val publisher = body match {
        case BlobBody.Bytes(b) if b.isEmpty => HttpRequest.BodyPublishers.noBody()
        case BlobBody.Bytes(b) => HttpRequest.BodyPublishers.ofByteArray(b)
        case BlobBody.File(f) => HttpRequest.BodyPublishers.ofFile(f)
      }
      val req = HttpRequest.newBuilder(uri).method(method, publisher)
        .timeout(Duration.ofSeconds(60 + body.length / (1024 * 1024)))
      (all + ("Authorization" -> auth)).foreach { case (k, v) => req.header(k, v) }
      val outcome: Either[IOException, BlobResponse] =
        try {
          val r = http.send(req.build(), HttpResponse.BodyHandlers.ofByteArray())
          val hs =
            r.headers().map().entrySet().toArray(Array.empty[java.util.Map.Entry[String, java.util.List[String]]])
              .map(e => e.getKey.toLowerCase(java.util.Locale.ROOT) -> String.join(",", e.getValue)).toMap
          Right(BlobResponse(r.statusCode(), hs, Option(r.body()).getOrElse(Array.emptyByteArray)))
        } catch {
          case e: IOException => Left(e)
          case e: InterruptedException =>
            Thread.currentThread().interrupt()
            throw new java.io.InterruptedIOException(s"txcommit: $method ${loc.url(blob)} was interrupted: $e")
        }
      outcome match {
        case Right(r) if !BlobClient.Transient(r.status) || n + 1 >= BlobClient.Attempts => r
        case Left(e) if n + 1 >= BlobClient.Attempts =>
          throw new IOException(
            s"txcommit: $method ${loc.url(blob)} at ${loc.endpoint} got no answer after " +
              s"${BlobClient.Attempts} attempts: $e", e)
        case _ =>
          Thread.sleep(100L << (2 * n))
          attempt(n + 1)
      }
    }
    attempt(0)
  }
}

object BlobClient {

  /** The Blob service version requests ask for. */
  val Version = "2021-12-02"
  val Attempts = 4
  private val Transient = Set(408, 500, 502, 503, 504)

  /** One JVM-wide client (a store is opened per job stage; each client would hold a thread). */
  private lazy val http: HttpClient = HttpClient.newBuilder()
    .version(HttpClient.Version.HTTP_1_1) // no h2c upgrade dance on plain-http emulators
    .connectTimeout(Duration.ofSeconds(20)).build()

  private val rfc1123 = DateTimeFormatter.RFC_1123_DATE_TIME
  def now(): String = rfc1123.format(ZonedDateTime.now(ZoneOffset.UTC))

  /** Percent-encodes one path segment (RFC 3986 unreserved characters and `=` stay as they are). */
  def encodeSegment(s: String): String =
    URLEncoder.encode(s, UTF_8).replace("+", "%20").replace("%3D", "=").replace("%7E", "~")

  def encodeQuery(s: String): String = URLEncoder.encode(s, UTF_8).replace("+", "%20")
}
