package io.txcommit.testing

import java.nio.file.AccessDeniedException

import org.apache.hadoop.fs.{LocalFileSystem, Path}

/**
 * The local file system as credentials scoped to one prefix see a store: asking whether a path
 * outside `PrefixScopedFileSystem.Allowed` exists is refused with the exception S3A raises for
 * HTTP 403 (`java.nio.file.AccessDeniedException`). Install with `fs.file.impl` and
 * `fs.file.impl.disable.cache=true` in one test's conf.
 */
final class PrefixScopedFileSystem extends LocalFileSystem {
  override def exists(f: Path): Boolean = {
    val allowed = getConf.get(PrefixScopedFileSystem.Allowed)
    val p = makeQualified(f).toUri.getPath
    if (allowed != null && !(p == allowed || p.startsWith(allowed.stripSuffix("/") + "/"))) {
      throw new AccessDeniedException(p, null, "403 Forbidden (prefix-scoped credentials)")
    }
    super.exists(f)
  }
}

object PrefixScopedFileSystem {
  val Allowed = "test.txcommit.allowedPrefix"
}
