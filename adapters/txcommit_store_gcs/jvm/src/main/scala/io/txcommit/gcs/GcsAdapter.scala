package io.txcommit.gcs

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.txcommit.{Paths, UnsupportedStoreException}
import io.txcommit.store.{CommitStore, StoreAdapter}

/** GCS through Google's connector: data straight to the final name, the record created with `ifGenerationMatch=0`. */
final class GcsAdapter extends StoreAdapter {
  override val name = "gcs"
  override def open(table: Path, conf: Configuration): CommitStore =
    try new GcsStore(declaration, GcsBucket(table, conf))
    catch {
      // The connector is provided by the cluster; this class loads without it.
      case e: NoClassDefFoundError => throw new UnsupportedStoreException(s"the gcs adapter needs " +
          s"Google's Cloud Storage connector (gcs-connector, shaded) for ${Paths.display(table)}, but " +
          s"${e.getMessage} is not on the classpath. Put the jar `txcommit jars --store gcs` prints on " +
          "every JVM's classpath (spark.driver.extraClassPath, spark.executor.extraClassPath).")
    }
}
