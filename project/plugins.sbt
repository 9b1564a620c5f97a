libraryDependencies += "org.ow2.asm" % "asm" % "9.8"
// scalafmt (.scalafmt.conf): `bash .ci/sbt fmt` formats, `fmtCheck` (CI) checks.
addSbtPlugin("org.scalameta" % "sbt-scalafmt" % "2.5.6")
