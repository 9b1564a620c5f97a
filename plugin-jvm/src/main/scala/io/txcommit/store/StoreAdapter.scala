package io.txcommit.store

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/**
 * A store adapter: how txcommit publishes files on one kind of store. An adapter
 *
 *  - declares what it relies on as data, in `<name>.json` in its store's folder (primitive:
 *    `rename`, `conditional-put` or `multipart-complete`; exclusive create; listing
 *    consistency; the URI schemes it serves). The declaration is the contract the conformance
 *    kit certifies: a store is never trusted for a capability it does not declare;
 *  - opens a [[CommitStore]] for a table, which must keep the guarantees written on that trait;
 *  - is found by `java.util.ServiceLoader` (list the class in
 *    `META-INF/services/io.txcommit.store.StoreAdapter`), so an adapter in its own jar needs no
 *    change to txcommit. `spark.txcommit.adapter.<scheme>=<name>` picks among several adapters
 *    for one scheme.
 *
 * Implementations must be cheap to construct and thread-safe; `open` may be called on the
 * driver and on executors, for every job.
 */
trait StoreAdapter {

  /** The adapter's name; its declaration is the resource `txcommit/adapters/<name>/adapter.json`. */
  def name: String

  final lazy val declaration: AdapterDeclaration =
    AdapterDeclaration.load(name, getClass.getClassLoader)

  def open(table: Path, conf: Configuration): CommitStore
}
