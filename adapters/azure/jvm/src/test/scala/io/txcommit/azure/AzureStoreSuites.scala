package io.txcommit.azure

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.hadoop.fs.Path
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.txcommit.{CommitConflictException, UnsupportedStoreException}
import io.txcommit.commit.{PublishCommitRecord, StageTimings, TxnContext}
import io.txcommit.log.{AddedFile, CommitRecord, RecordCodec}
import io.txcommit.store.{Adapters, CommitStore, StoreContractSuite}

/** Starts one Azurite per suite. */
trait WithAzurite extends BeforeAndAfterAll { self: org.scalatest.Suite =>
  protected lazy val azurite = new LocalAzurite
  override protected def afterAll(): Unit = try azurite.close() finally super.afterAll()
}

/** The `azure` adapter bound to the store contract (the 16-way race included), on Azurite. */
class AzureStoreContractSuite extends StoreContractSuite with WithAzurite {
  override protected def freshTable(): (Path, CommitStore) = {
    val t = azurite.freshTable()
    (t, Adapters.open(t, azurite.conf()))
  }
}
