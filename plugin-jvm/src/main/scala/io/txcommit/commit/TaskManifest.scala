package io.txcommit.commit

import io.txcommit.store.StagedFile

/** What one committed task attempt wrote: sent from the executor to the driver. */
final case class TaskManifest(attempt: String, files: Seq[StagedFile])
