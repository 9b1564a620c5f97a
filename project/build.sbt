// Each store's JVM module describes its own build in its folder (jvm/build/, StoreModule.scala):
// the meta-build compiles the descriptions; build.sbt's storeModules lists the modules built.
Compile / unmanagedSourceDirectories ++= (baseDirectory.value.getParentFile / "adapters" * "*" / "jvm" / "build").get
// The meta-build's own sources (project/*.scala, the stores' descriptions) as strictly as the
// build's: every warning an error.
scalacOptions ++= Seq("-deprecation", "-feature", "-unchecked", "-Xlint", "-Werror",
  "-Wconf:cat=unused-imports&src=.*[.]sbt:s") // the imports sbt adds to every .sbt file, not ours
