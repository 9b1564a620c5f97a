package io.txcommit.azure

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.txcommit.store.{CommitStore, StoreAdapter}

/**
 * Azure Blob Storage (and ADLS Gen2 accounts) through Hadoop's ABFS connector: data files are
 * written by ABFS, every exclusive create (commit records, `replace/` records, streaming
 * checkpoint files) is one Put Blob with `If-None-Match: *`.
 */
final class AzureBlobAdapter extends StoreAdapter {
  override val name = "azure"
  override def open(table: Path, conf: Configuration): CommitStore =
    new AzureStore(declaration, AzureContainer(table, conf))
}
