package io.txcommit.manifest

/** Which partition directories a manifest pass rewrites. */
sealed trait ManifestScope

object ManifestScope {

  /** Every partition with a visible file, and every manifest already there (deleted if stale). */
  case object AllPartitions extends ManifestScope

  /** These partition directories only (relative to the table; "" is the table itself). */
  final case class Partitions(dirs: Set[String]) extends ManifestScope
}
