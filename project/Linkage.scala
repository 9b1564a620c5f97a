import java.io.{File, InputStream}
import java.net.URI
import java.nio.file.{FileSystems, Files, Path => NioPath}
import java.util.zip.ZipFile

import scala.annotation.nowarn
import scala.collection.mutable
import scala.jdk.CollectionConverters._

import org.objectweb.asm.{ClassReader, ClassVisitor, FieldVisitor, Handle, Label, MethodVisitor, Opcodes, Type}
import sbt._
import sbt.Keys._

/**
 * The linkage check: every class, method and field a built jar refers to must exist in the
 * Spark line it is built for (that line's jars, the connector jars its module is compiled
 * against, the JDK), resolved as the JVM resolves them (a member may come from a superclass or
 * an interface). A missing one is a NoClassDefFoundError or NoSuchMethodError waiting for a user
 * of that line; compiling against the line catches most, this catches the rest (a Scala trait
 * initializer, a member reached through a supertype that moved, a Scala library method of a
 * newer Scala). References a line lacks but never runs are listed, with why, in
 * project/linkage-allowed.txt; an entry that no longer matches fails the check too.
 *
 * `bash .ci/sbt line40/linkageCheck` checks one line's four jars; the report of each jar is
 * target/linkage.txt.
 */
object Linkage {
  val linkageCheck =
    taskKey[File]("Resolves every class, method and field the packaged jar refers to against its Spark line's jars")

  def settings(line: String): Seq[Setting[_]] = Seq(
    linkageCheck := {
      val log = streams.value.log
      val jar = (Compile / packageBin).value
      val classpath = (Compile / dependencyClasspath).value.map(_.data).filter(_.exists)
      val allowedFile = (ThisBuild / baseDirectory).value / "project" / "linkage-allowed.txt"
      val allowed = Allowed.read(allowedFile, line, jar.getName)
      val found = check(jar, classpath)
      val (excused, missing) = found.partition(m => allowed.contains(m.key))
      val stale = allowed -- found.map(_.key)
      val out = target.value / "linkage.txt"
      IO.writeLines(out,
        s"# linkage of ${jar.getName} against Spark $line (${classpath.size} jars and folders)" +:
          (missing.map(m => s"MISSING ${m.key} (from ${m.from})") ++
            excused.map(m => s"allowed ${m.key} (from ${m.from})") ++
            stale.toSeq.sorted.map(k => s"STALE allowed entry (no longer referenced): $k")))
      excused.foreach(m => log.info(s"linkage: allowed on Spark $line: ${m.key}"))
      if (missing.nonEmpty || stale.nonEmpty) {
        missing.foreach(m => log.error(s"linkage: missing on Spark $line: ${m.key} (from ${m.from})"))
        stale.foreach(k =>
          log.error(s"linkage: $allowedFile lists $k for Spark $line, but ${jar.getName} no longer refers to it"))
        sys.error(s"linkage check of ${jar.getName} against Spark $line failed: ${missing.size} missing " +
          s"reference(s), ${stale.size} stale allowed entr(y/ies); see $out")
      }
      log.info(s"linkage: ${jar.getName} resolves on Spark $line (${excused.size} allowed, see $out)")
      out
    })

  val linkageControl =
    taskKey[Unit]("The check's negative control: a jar built for another line must show the references this line lacks")

  /** Checks `jar` (built for another line) against this project's classpath and fails unless every
    * one of `expected` (key prefixes) is reported missing: proof that the check can fail. */
  def control(jar: TaskKey[File], expected: Seq[String]): Setting[_] = linkageControl := {
    val built = jar.value
    val found = check(built, (Compile / dependencyClasspath).value.map(_.data).filter(_.exists)).map(_.key)
    val unseen = expected.filterNot(e => found.exists(_.startsWith(e)))
    streams.value.log.info(
      s"linkage control: ${built.getName} of another line misses ${found.size} reference(s) here: ${found.mkString(", ")}")
    if (unseen.nonEmpty) sys.error(s"linkage control: the check did not report ${unseen.mkString(", ")} for $built")
  }

  /** A reference that does not resolve: `key` is `Owner` (a class) or `Owner#name descriptor`. */
  final case class Missing(key: String, from: String)

  /** project/linkage-allowed.txt: `<line|*> <jar name> <key>  # why`, one per line. */
  object Allowed {
    def read(f: File, line: String, jarName: String): Set[String] =
      if (!f.exists) Set.empty
      else IO.readLines(f).map(_.takeWhile(_ != '#').trim).filter(_.nonEmpty).flatMap { l =>
        l.split("\\s+", 3) match {
          case Array(lines, jar, key) if (lines == "*" || lines.split(',').contains(line)) && jar == jarName =>
            Some(key)
          case Array(_, _, _) => None
          case _ => sys.error(s"$f: cannot read '$l': expected '<line|*> <jar name> <Owner#name descriptor>  # why'")
        }
      }.toSet
  }

  private final case class Info(name: String, superName: Option[String], interfaces: Seq[String],
      methods: Map[(String, String), Int], fields: Set[(String, String)])

  /** Class files by internal name: the jar, the classpath in order, then the running JDK. */
  private final class ClassPath(entries: Seq[File]) extends AutoCloseable {
    private val zips = mutable.Buffer.empty[ZipFile]
    private val index = mutable.Map.empty[String, () => InputStream]
    entries.foreach { e =>
      if (e.isDirectory) {
        val root = e.toPath
        Files.walk(root).iterator().asScala.filter(_.toString.endsWith(".class")).foreach { p =>
          val n = root.relativize(p).toString.replace(File.separatorChar, '/').stripSuffix(".class")
          if (!index.contains(n)) index(n) = () => Files.newInputStream(p)
        }
      } else if (e.getName.endsWith(".jar")) {
        val z = new ZipFile(e)
        zips += z
        z.entries().asScala.filter(en => en.getName.endsWith(".class") && !en.getName.startsWith("META-INF/")).foreach {
          en =>
            val n = en.getName.stripSuffix(".class")
            if (!index.contains(n)) index(n) = () => z.getInputStream(en)
        }
      }
    }
    private val jrt = FileSystems.getFileSystem(URI.create("jrt:/"))
    private val jdkModules: Seq[NioPath] = Files.list(jrt.getPath("/modules")).iterator().asScala.toSeq
    private val cache = mutable.Map.empty[String, Option[Info]]

    def info(name: String): Option[Info] = cache.getOrElseUpdate(name, read(name))

    private def read(name: String): Option[Info] = {
      val open: Option[() => InputStream] = index.get(name).orElse {
        jdkModules.iterator.map(_.resolve(name + ".class")).find(Files.exists(_))
          .map(p => () => Files.newInputStream(p))
      }
      open.map { o =>
        val in = o()
        try parse(new ClassReader(in))
        finally in.close()
      }
    }

    private def parse(r: ClassReader): Info = {
      val methods = mutable.Map.empty[(String, String), Int]
      val fields = mutable.Set.empty[(String, String)]
      r.accept(new ClassVisitor(Opcodes.ASM9) {
          override def visitMethod(access: Int, name: String, desc: String, sig: String, ex: Array[String])
              : MethodVisitor = {
            methods((name, desc)) = access; null
          }
          override def visitField(access: Int, name: String, desc: String, sig: String, v: Any): FieldVisitor = {
            fields += ((name, desc)); null
          }
        }, ClassReader.SKIP_CODE | ClassReader.SKIP_DEBUG | ClassReader.SKIP_FRAMES)
      Info(r.getClassName, Option(r.getSuperName), r.getInterfaces.toSeq, methods.toMap, fields.toSet)
    }

    /** The class and all its supertypes, or the first supertype that is missing. */
    def hierarchy(name: String): Either[String, Seq[Info]] = {
      val seen = mutable.LinkedHashMap.empty[String, Info]
      def go(n: String): Option[String] =
        if (seen.contains(n)) None
        else info(n) match {
          case None => Some(n)
          case Some(i) =>
            seen(n) = i
            (i.superName.toSeq ++ i.interfaces).iterator.map(go).collectFirst { case Some(m) => m }
        }
      go(name).toLeft(seen.values.toSeq)
    }

    override def close(): Unit = zips.foreach(_.close())
  }

  private val SignaturePolymorphic = Set("java/lang/invoke/MethodHandle", "java/lang/invoke/VarHandle")

  def check(jar: File, classpath: Seq[File]): Seq[Missing] = {
    val cp = new ClassPath(jar +: classpath)
    try {
      val missing = mutable.LinkedHashMap.empty[String, String]
      def note(key: String, from: String): Unit = if (!missing.contains(key)) missing(key) = from

      def classRef(t: String, from: String): Unit = {
        val n = Type.getObjectType(t) match {
          case a if a.getSort == Type.ARRAY => a.getElementType
          case o => o
        }
        if (n.getSort == Type.OBJECT) cp.hierarchy(n.getInternalName).left.foreach(m => note(m.replace('/', '.'), from))
      }
      def member(owner: String, name: String, desc: String, method: Boolean, from: String): Unit = {
        val o = if (owner.startsWith("[")) "java/lang/Object" else owner
        cp.hierarchy(o) match {
          case Left(m) => note(m.replace('/', '.'), from)
          case Right(types) =>
            val found =
              if (method) types.exists(i =>
                i.methods.contains((name, desc)) ||
                  (SignaturePolymorphic(i.name) && i.methods.exists { case ((n, _), acc) =>
                    n == name && (acc & Opcodes.ACC_NATIVE) != 0 && (acc & Opcodes.ACC_VARARGS) != 0
                  }))
              else types.exists(_.fields.contains((name, desc)))
            if (!found) note(s"${o.replace('/', '.')}#$name $desc", from)
        }
      }
      def handle(h: Handle, from: String): Unit = h.getTag match {
        case Opcodes.H_GETFIELD | Opcodes.H_GETSTATIC | Opcodes.H_PUTFIELD | Opcodes.H_PUTSTATIC =>
          member(h.getOwner, h.getName, h.getDesc, method = false, from)
        case _ => member(h.getOwner, h.getName, h.getDesc, method = true, from)
      }
      def constant(c: Any, from: String): Unit = c match {
        case t: Type if t.getSort == Type.OBJECT || t.getSort == Type.ARRAY => classRef(t.getInternalName, from)
        case h: Handle => handle(h, from)
        case _ =>
      }

      val z = new ZipFile(jar)
      try {
        z.entries().asScala.filter(e => e.getName.endsWith(".class") && !e.getName.startsWith("META-INF/")).foreach {
          e =>
            val in = z.getInputStream(e)
            val reader =
              try new ClassReader(in)
              finally in.close()
            val from = reader.getClassName.replace('/', '.')
            Option(reader.getSuperName).foreach(classRef(_, from))
            reader.getInterfaces.foreach(classRef(_, from))
            reader.accept(new ClassVisitor(Opcodes.ASM9) {
                override def visitMethod(access: Int, name: String, desc: String, sig: String, ex: Array[String])
                    : MethodVisitor =
                  new MethodVisitor(Opcodes.ASM9) {
                    override def visitMethodInsn(op: Int, owner: String, n: String, d: String, itf: Boolean): Unit =
                      member(owner, n, d, method = true, from)
                    override def visitFieldInsn(op: Int, owner: String, n: String, d: String): Unit =
                      member(owner, n, d, method = false, from)
                    override def visitTypeInsn(op: Int, t: String): Unit = classRef(t, from)
                    override def visitMultiANewArrayInsn(d: String, dims: Int): Unit = constant(Type.getType(d), from)
                    override def visitLdcInsn(c: Any): Unit = constant(c, from)
                    override def visitTryCatchBlock(s: Label, e: Label, h: Label, t: String): Unit =
                      if (t != null) classRef(t, from)
                    @nowarn("cat=unused-privates") // ASM calls it through the bridge scalac adds; 2.12 misses that
                    override def visitInvokeDynamicInsn(n: String, d: String, bsm: Handle, args: AnyRef*): Unit = {
                      handle(bsm, from)
                      args.foreach(constant(_, from))
                    }
                  }
              }, ClassReader.SKIP_DEBUG | ClassReader.SKIP_FRAMES)
        }
      } finally z.close()
      missing.toSeq.map { case (k, f) => Missing(k, f) }
    } finally cp.close()
  }
}
