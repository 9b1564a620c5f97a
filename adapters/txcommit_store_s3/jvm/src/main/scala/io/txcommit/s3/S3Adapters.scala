package io.txcommit.s3

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.txcommit.store.{CommitStore, StoreAdapter}

/** S3 through S3A: data straight to the final key, the record created with `If-None-Match: *`. */
final class S3ConditionalPutAdapter extends StoreAdapter {
  override val name = "s3"
  override def open(table: Path, conf: Configuration): CommitStore =
    new S3Store(declaration, S3Bucket(table, conf))
}

/** S3 through S3A: data as multipart uploads (S3A magic paths) completed at job commit. */
final class S3MultipartAdapter extends StoreAdapter {
  override val name = "s3-multipart"
  override def open(table: Path, conf: Configuration): CommitStore =
    new S3MultipartStore(declaration, S3Bucket(table, conf))
}
