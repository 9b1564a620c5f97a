package io.txcommit.azure

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.txcommit.streaming.CheckpointManagerContractSuite

/** Streaming checkpoint files on Azurite: one Put Blob each, exclusive unless overwriting. */
class AzureCheckpointManagerSuite extends CheckpointManagerContractSuite with WithAzurite {
  override protected def expectedAdapter = "azure"
  override protected def freshCheckpoint(): (Path, Configuration) = (azurite.freshTable(), azurite.conf())
}
