package io.txcommit.maintenance

/** One thing VACUUM deletes (or would delete, in a dry run). */
final case class VacuumEntry(path: String, kind: String, reason: String, bytes: Long, deleted: Boolean)
