package io.txcommit.commit

import io.txcommit.log.CommitRecord

/** What a replacing job publishes: its record (without replacement yet), intent and base. */
final case class ReplaceRequest(record: CommitRecord, intent: WriteIntent, base: ReplaceBase)
