package org.example.txcommit;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;

import io.txcommit.store.CommitStore;
import io.txcommit.store.StoreAdapter;

/**
 * The example adapter, found by ServiceLoader (META-INF/services/io.txcommit.store.StoreAdapter);
 * its declaration is the resource txcommit/adapters/example/adapter.json of this jar.
 */
public final class ExampleAdapter implements StoreAdapter {
  @Override
  public String name() {
    return "example";
  }

  @Override
  public CommitStore open(Path table, Configuration conf) {
    return new ExampleCommitStore(declaration());
  }
}
