package io.txcommit

import java.util.Properties

/** The plugin version, written into the jar by the build. */
object Version {
  lazy val current: String = {
    val props = new Properties()
    Option(getClass.getResourceAsStream("/io/txcommit/version.properties")).foreach { in =>
      try props.load(in)
      finally in.close()
    }
    props.getProperty("version", "unknown")
  }

  /** How records, fences and checkpoints name the writer that created them. */
  lazy val writer: String = s"txcommit/$current"
}
