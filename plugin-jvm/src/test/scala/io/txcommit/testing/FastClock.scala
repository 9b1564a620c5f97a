package io.txcommit.testing

import java.nio.file.{Files, Path => JPath}

import io.txcommit.log.RecordCodec

/** What a driver whose clock runs an hour fast leaves in a table's log, for reads that must not trust it. */
object FastClock {

  /**
   * Re-dates the replacing commit `sequence` of the local table at `dir` (its `replace/` record
   * and its `commits/` copy) an hour ahead, as another application with such a clock writes it.
   */
  def dateReplaceAnHourAhead(dir: JPath, sequence: Long = 1L): Unit = {
    val replace = dir.resolve(f"_txcommit/replace/$sequence%020d.json")
    val r = RecordCodec.decodeReplacement(Files.readAllBytes(replace), replace.toString, sequence)
    val ahead = RecordCodec.encode(r.copy(committedAt = System.currentTimeMillis() + 3600L * 1000L,
        appId = Some("app-with-a-fast-clock")))
    Files.write(replace, ahead)
    Files.write(dir.resolve(s"_txcommit/commits/${r.txn}.json"), ahead)
  }
}
