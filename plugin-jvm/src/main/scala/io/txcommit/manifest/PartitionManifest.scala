package io.txcommit.manifest

import org.apache.hadoop.fs.Path

/**
 * What a manifest pass did to one partition directory's manifest: wrote it, listing `files`
 * data files, or deleted it (`files` 0) because no file of the partition is visible any more.
 * `partition` is relative to the table ("" for the table itself).
 */
final case class PartitionManifest(partition: String, files: Int, manifest: Path, deleted: Boolean)
