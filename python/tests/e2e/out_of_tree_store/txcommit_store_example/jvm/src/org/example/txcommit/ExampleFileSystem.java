package org.example.txcommit;

import java.io.IOException;
import java.net.URI;

import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;

/**
 * Hadoop's view of example:///abs/path: the local file /abs/path. Spark's writers and readers
 * reach example:// tables through it (fs.example.impl); the paths it returns keep the scheme.
 */
public class ExampleFileSystem extends RawLocalFileSystem {
  static final URI NAME = URI.create("example:///");

  @Override
  public URI getUri() {
    return NAME;
  }

  @Override
  public String getScheme() {
    return "example";
  }

  @Override
  public FileStatus getFileStatus(Path f) throws IOException {
    return plain(super.getFileStatus(f));
  }

  @Override
  public FileStatus getFileLinkStatus(Path f) throws IOException {
    return plain(super.getFileLinkStatus(f));
  }

  @Override
  public FileStatus[] listStatus(Path f) throws IOException {
    FileStatus[] found = super.listStatus(f);
    for (int i = 0; i < found.length; i++) found[i] = plain(found[i]);
    return found;
  }

  /**
   * The local file system's statuses read owner and permissions lazily from a java.io.File of
   * their path, which takes file: URIs only; these carry the defaults instead.
   */
  private static FileStatus plain(FileStatus s) {
    return new FileStatus(s.getLen(), s.isDirectory(), s.getReplication(), s.getBlockSize(),
        s.getModificationTime(), s.getPath());
  }
}
