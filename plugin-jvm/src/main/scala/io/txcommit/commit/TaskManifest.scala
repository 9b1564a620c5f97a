package io.txcommit.commit

import io.txcommit.log.AddedFile

/** What one committed task attempt wrote: sent from the executor to the driver. */
final case class TaskManifest(attempt: String, files: Seq[AddedFile])
