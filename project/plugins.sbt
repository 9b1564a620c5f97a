libraryDependencies += "org.ow2.asm" % "asm" % "9.8"
