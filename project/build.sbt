// Each store's JVM module describes its own build (adapters/<name>/jvm/build/, StoreModule.scala):
// the meta-build compiles those descriptions beside project/'s sources.
Compile / unmanagedSourceDirectories ++= (baseDirectory.value.getParentFile / "adapters" * "*" / "jvm" / "build").get
