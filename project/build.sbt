// Each store's JVM module describes its own build (adapters/<name>/jvm/build/, StoreModule.scala):
// the meta-build compiles those descriptions beside project/'s sources.
Compile / unmanagedSourceDirectories ++= (baseDirectory.value.getParentFile / "adapters" * "*" / "jvm" / "build").get
// The meta-build's own sources (project/*.scala, the stores' descriptions) as strictly as the
// build's: every warning an error.
scalacOptions ++= Seq("-deprecation", "-feature", "-unchecked", "-Xlint", "-Werror",
  "-Wconf:cat=unused-imports&src=.*[.]sbt:s") // the imports sbt adds to every .sbt file, not ours
