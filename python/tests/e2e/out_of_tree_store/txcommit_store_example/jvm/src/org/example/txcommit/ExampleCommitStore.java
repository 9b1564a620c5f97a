package org.example.txcommit;

import java.io.File;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;

import io.txcommit.CommitConflictException;
import io.txcommit.store.AdapterDeclaration;
import io.txcommit.store.CommitStore;
import io.txcommit.store.RequestCounter;
import io.txcommit.store.StagedFile;

/**
 * The store contract (io.txcommit.store.CommitStore) on local files named example:///abs/path.
 * A file is published by writing a temporary file next to it, forcing it to disk, then
 * hard-linking it into place: link(2) fails when the target exists, so exactly one of racing
 * publishers wins and a reader never sees a part. A replacement is an atomic rename(2). Data
 * files are written in place by Spark's writers (through ExampleFileSystem) and never moved.
 */
final class ExampleCommitStore implements CommitStore {
  private final AdapterDeclaration declaration;
  private RequestCounter requests;

  ExampleCommitStore(AdapterDeclaration declaration) {
    this.declaration = declaration;
    CommitStore.$init$(this); // sets `requests`, a val of the Scala trait
  }

  @Override
  public void io$txcommit$store$CommitStore$_setter_$requests_$eq(RequestCounter counter) {
    this.requests = counter;
  }

  @Override
  public RequestCounter requests() {
    return requests;
  }

  @Override
  public AdapterDeclaration declaration() {
    return declaration;
  }

  @Override
  public void createExclusive(Path target, byte[] bytes) {
    java.nio.file.Path dest = local(target);
    java.nio.file.Path tmp = writeTemp(target, bytes);
    requests.add("RENAME", 1);
    try {
      Files.createLink(dest, tmp);
    } catch (FileAlreadyExistsException e) {
      throw sneaky(new CommitConflictException(target + " already exists, so it was not "
          + "overwritten; another writer published it first"));
    } catch (IOException e) {
      throw sneaky(new IOException("could not publish " + target + ": " + e.getMessage(), e));
    } finally {
      deleteQuietly(tmp);
    }
    syncDir(target);
  }

  @Override
  public void writeReplacing(Path target, byte[] bytes) {
    java.nio.file.Path tmp = writeTemp(target, bytes);
    requests.add("RENAME", 1);
    try {
      Files.move(tmp, local(target), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      deleteQuietly(tmp);
      throw sneaky(new IOException("could not write " + target + ": " + e.getMessage(), e));
    }
    syncDir(target);
  }

  @Override
  public scala.Option<byte[]> read(Path path) {
    requests.add("GET", 1);
    try {
      return scala.Option.apply(Files.readAllBytes(local(path)));
    } catch (NoSuchFileException e) {
      return scala.Option.empty();
    } catch (IOException e) {
      throw sneaky(new IOException("could not read " + path + ": " + e.getMessage(), e));
    }
  }

  @Override
  public scala.collection.immutable.Seq<FileStatus> list(Path dir) {
    requests.add("LIST", 1);
    List<FileStatus> found = new ArrayList<>();
    File[] entries = local(dir).toFile().listFiles();
    for (File f : entries == null ? new File[0] : entries) { // null: no such directory
      if (f.isFile() && !f.getName().startsWith(".")) { // dot names: writes still in flight
        found.add(new FileStatus(f.length(), false, 1, 0, f.lastModified(), new Path(dir, f.getName())));
      }
    }
    return scala.jdk.javaapi.CollectionConverters.asScala(found).toSeq();
  }

  @Override
  public boolean exists(Path path) {
    requests.add("HEAD", 1);
    return Files.isRegularFile(local(path));
  }

  @Override
  public boolean delete(Path path) {
    requests.add("DELETE", 1);
    try {
      return Files.deleteIfExists(local(path));
    } catch (IOException e) {
      throw sneaky(new IOException("could not delete " + path + ": " + e.getMessage(), e));
    }
  }

  @Override
  public scala.Option<StagedFile> stagedFile(Path table, String rel, Path written) {
    requests.add("HEAD", 1);
    File f = local(written).toFile();
    // Missing: the attempt never opened it, or it was deleted under the task.
    return f.isFile() ? scala.Option.apply(new StagedFile(rel, f.length(), scala.Option.empty()))
        : scala.Option.empty();
  }

  private static java.nio.file.Path local(Path path) {
    return new File(path.toUri().getPath()).toPath();
  }

  private java.nio.file.Path writeTemp(Path target, byte[] bytes) {
    java.nio.file.Path dest = local(target);
    java.nio.file.Path tmp = dest.resolveSibling("." + dest.getFileName() + "." + UUID.randomUUID() + ".tmp");
    requests.add("PUT", 1);
    try {
      Files.createDirectories(dest.getParent());
      try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
        ByteBuffer buf = ByteBuffer.wrap(bytes);
        while (buf.hasRemaining()) ch.write(buf);
        ch.force(true); // durable before it is published
      }
      return tmp;
    } catch (IOException e) {
      deleteQuietly(tmp);
      throw sneaky(new IOException("could not write " + target + ": " + e.getMessage(), e));
    }
  }

  /** Makes the new directory entry durable, as the file's bytes already are. */
  private void syncDir(Path target) {
    requests.add("FSYNC_DIR", 1);
    try (FileChannel dir = FileChannel.open(local(target).getParent(), StandardOpenOption.READ)) {
      dir.force(true);
    } catch (IOException e) {
      throw sneaky(new IOException("could not sync the directory of " + target + ": " + e.getMessage(), e));
    }
  }

  private static void deleteQuietly(java.nio.file.Path p) {
    try {
      Files.deleteIfExists(p);
    } catch (IOException ignored) {
      // a temporary file left behind is hidden (dot name) and harmless
    }
  }

  /** The contract's IOException, thrown through Scala signatures that declare none. */
  @SuppressWarnings("unchecked")
  private static <E extends Throwable> RuntimeException sneaky(Throwable e) throws E {
    throw (E) e;
  }
}
