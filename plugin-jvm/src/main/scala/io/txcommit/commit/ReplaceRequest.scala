package io.txcommit.commit

import io.txcommit.log.{CommitRecord, TableState}

/**
 * What a replacing job publishes: its record (without replacement yet), intent and base; and,
 * for [[CheckConflicts]], the job commit's snapshot of the log (None: it lists its own), which
 * the schema guard judges against next, so the two share their listings.
 */
final case class ReplaceRequest(record: CommitRecord, intent: WriteIntent, base: ReplaceBase,
    snapshot: Option[TableState] = None)
