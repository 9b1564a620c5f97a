"""Start a Spark Connect server with the txcommit plugin loaded.

This reproduces what ``pyspark/sbin/start-connect-server.sh --wait`` does (which ends in
``bin/spark-submit --class org.apache.spark.sql.connect.service.SparkConnectServer``; the
launcher recognises that class and supplies the ``spark-internal`` primary resource itself),
without the daemon wrapper, so the server is a child process we can watch, stop and kill.
Only the full ``pyspark`` package (``txcommit[server]``) can run it; it needs Java 17+.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from types import TracebackType

from txcommit._names import (
    EXTENSIONS_CLASS,
    EXTENSIONS_CONF,
    PLUGIN_CLASS,
    PLUGINS_CONF,
)
from txcommit._names import PLUGIN_JAR_NAME as PLUGIN_JAR_NAME  # re-exported: its old home
from txcommit._spark_home import is_pure_client, pyspark_dir
from txcommit.errors import ServerStartError, UnknownAdapterError
from txcommit.server.ports import listens_on
from txcommit.stores import Emulator, StoreDescriptor, store_descriptor

PLUGIN_JAR_ENV = "TXCOMMIT_PLUGIN_JAR"
#: The bucket (or container) an emulator creates for ``--local``.
LOCAL_BUCKET = "txcommit"
CONNECT_SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
SERVER_APP_NAME = "txcommit Connect server"
DEFAULT_PORT = 15002
PORT_CONF = "spark.connect.grpc.binding.port"
ADDRESS_CONF = "spark.connect.grpc.binding.address"

_SENSITIVE_KEY = re.compile(
    r"secret|password|token|credential|access\.key|account\.key", re.IGNORECASE
)
_REDACTED = "*********(redacted)"
_WILDCARD_HOSTS = {"", "0.0.0.0", "::", "[::]"}


@dataclass
class ServerConfig:
    """How to run the Spark Connect server.

    ``confs`` become ``--conf k=v``; ``jars`` are added after the plugin jar.
    ``spark_conf_dir`` (else ``$SPARK_CONF_DIR``) holds the ``spark-defaults.conf`` to merge
    with. ``plugin=False`` runs a plain Connect server without txcommit (for debugging).
    ``die_with_parent`` (Linux) makes the server get SIGTERM when the starting thread dies.
    ``store`` adds a store (:func:`~txcommit.stores.store_names`): its jars and confs, from its
    descriptor. ``local`` also starts its emulator on loopback for the server's lifetime, with
    bucket (or container) ``local_bucket`` (``pip install 'txcommit[local]'``); without it the
    server reaches the real store through the usual confs (or spark-defaults.conf).
    """

    port: int = DEFAULT_PORT
    host: str = "localhost"
    master: str = "local[*]"
    confs: dict[str, str] = field(default_factory=dict)
    jars: list[str] = field(default_factory=list)
    spark_conf_dir: str | None = None
    log_file: str | None = None
    plugin: bool = True
    startup_timeout: float = 120.0
    die_with_parent: bool = False
    store: str = "local"
    local: bool = False
    local_bucket: str = LOCAL_BUCKET


# ---------------------------------------------------------------------------- locating


def find_pyspark_server() -> Path:
    """The directory of a full pyspark install (``jars/`` and ``bin/spark-submit``)."""
    home = pyspark_dir()
    install_hint = "Install the server side with: pip install 'txcommit[server]'"
    if home is None:
        raise ServerStartError(f"pyspark is not installed. {install_hint}")
    if is_pure_client(home):
        raise ServerStartError(
            f"Only the pure Spark Connect client (pyspark-client, no jars) is installed at "
            f"{home}; running a server needs the full pyspark. {install_hint} "
            f"(in an environment without pyspark-client)"
        )
    if not (home / "bin" / "spark-submit").is_file():
        raise ServerStartError(f"{home}/bin/spark-submit is missing. {install_hint}")
    if not any((home / "jars").glob("spark-connect_*.jar")):
        raise ServerStartError(f"No Spark Connect server jar in {home}/jars. {install_hint}")
    return home


def bundled_jar_dir(line: str | None = None) -> Path:
    """Where the package keeps the jars built for a Spark line: ``_jars/spark-<line>/`` (the
    wheel carries the small plugin and adapter jars of every line: a server starts offline,
    with the jar its pyspark's line needs)."""
    from txcommit._maven import installed_spark_line

    folder = f"spark-{line or installed_spark_line()}"
    return Path(str(resources.files("txcommit") / "_jars" / folder))


def find_plugin_jar(line: str | None = None) -> Path:
    """The txcommit plugin jar: ``$TXCOMMIT_PLUGIN_JAR``, else the one the package carries for
    the Spark line of the installed pyspark (or ``line``)."""
    override = os.environ.get(PLUGIN_JAR_ENV)
    if override:
        path = Path(override).expanduser()
        if not path.is_file():
            raise ServerStartError(f"{PLUGIN_JAR_ENV}={override} is not a file.")
        return path.resolve()
    return _bundled(PLUGIN_JAR_NAME, line)


def find_adapter_jar(name: str, line: str | None = None) -> Path:
    """A store adapter's jar the package carries for the installed pyspark's Spark line."""
    return _bundled(name, line)


def shipped_adapter_jar(store: str, jar: Traversable | Path) -> Path:
    """The adapter jar another distribution ships for ``store`` (``adapter_jar_file``)."""
    path = Path(str(jar))
    if not path.is_file():
        raise ServerStartError(
            f"the store '{store}' names its adapter jar {path}, which does not exist. "
            "Reinstall the distribution that provides the store (its jar must be installed "
            "as a file, not inside a zip)."
        )
    return path.resolve()


def _bundled(name: str, line: str | None) -> Path:
    folder = bundled_jar_dir(line)
    if (folder / name).is_file():
        return (folder / name).resolve()
    line_id = folder.name.removeprefix("spark-").replace(".", "")
    raise ServerStartError(
        f"This txcommit package carries no {name} for {folder.name.replace('-', ' ')}: "
        f"{folder / name} does not exist. Install the txcommit wheel `bash .ci/release` builds "
        f"(it carries every Spark line's jars), or build this line's jars in a txcommit checkout "
        f"(`bash .ci/sbt line{line_id}/package`, copied there by `bash .ci/setup` for 4.3 and "
        f"`bash .ci/lines` for the others), or set {PLUGIN_JAR_ENV} to a built plugin jar."
    )


def store_settings(config: ServerConfig) -> tuple[list[str], list[str], dict[str, str]]:
    """(jars for --jars, jars for the driver and executor classpath, confs) of the store.

    The adapter jar joins the plugin jar in Spark's application class loader; Hadoop's S3A
    connector and its 690 MB AWS SDK go on the JVMs' own classpath (extraClassPath), so
    executors read them from local disk instead of downloading them from the driver.
    """
    plugin = server_store(config.store)
    jars = [str(find_adapter_jar(plugin.adapter_jar))] if plugin.adapter_jar else []
    if plugin.adapter_jar_file is not None:
        jars.append(str(shipped_adapter_jar(plugin.name, plugin.adapter_jar_file)))
    classpath = [str(p) for p in plugin.jars()]
    return jars, classpath, dict(plugin.server_confs)


def server_store(name: str) -> StoreDescriptor:
    """The store ``txcommit server --store name`` sets up; ServerStartError when unknown."""
    try:
        return store_descriptor(name)
    except UnknownAdapterError as e:
        raise ServerStartError(str(e)) from e


def with_store(config: ServerConfig, defaults: Mapping[str, str]) -> ServerConfig:
    """``config`` with its store's jars, classpath and confs folded in (user confs win)."""
    jars, classpath, confs = store_settings(config)
    if not (jars or classpath or confs):
        return config
    merged = {**confs, **config.confs}
    for key in ("spark.driver.extraClassPath", "spark.executor.extraClassPath"):
        existing = config.confs.get(key) or defaults.get(key)
        merged[key] = ":".join([*classpath, *([existing] if existing else [])])
    return replace(config, jars=[*jars, *config.jars], confs=merged)


def spark_conf_dir(config: ServerConfig, pyspark_home: Path) -> Path:
    """Where spark-submit will read ``spark-defaults.conf`` from."""
    chosen = config.spark_conf_dir or os.environ.get("SPARK_CONF_DIR")
    return Path(chosen).expanduser() if chosen else pyspark_home / "conf"


def read_spark_defaults(conf_dir: Path) -> dict[str, str]:
    """Parse ``spark-defaults.conf`` (Java properties syntax, values trimmed like Spark does)."""
    path = conf_dir / "spark-defaults.conf"
    if not path.is_file():
        return {}
    props: dict[str, str] = {}
    pending = ""
    for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = pending + raw.strip() if pending else raw.strip()
        pending = ""
        if not line or line[0] in "#!":
            continue
        if line.endswith("\\") and not line.endswith("\\\\"):
            pending = line[:-1]
            continue
        match = re.match(r"((?:\\.|[^=:\s\\])+)\s*[=:\s]\s*(.*)$", line)
        key, value = (match.group(1), match.group(2)) if match else (line, "")
        props[_unescape(key)] = _unescape(value).strip()
    return props


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


# ------------------------------------------------------------------------ command line


def merge_csv(*values: str | None) -> str:
    """Join comma-separated lists in order, dropping blanks and duplicates."""
    seen: dict[str, None] = {}
    for value in values:
        for item in (value or "").split(","):
            if item.strip():
                seen.setdefault(item.strip(), None)
    return ",".join(seen)


def effective_confs(
    config: ServerConfig, defaults: Mapping[str, str], plugin: bool = True
) -> dict[str, str]:
    """The ``--conf`` pairs to pass, merging ours into existing plugin/extension lists.

    A ``--conf`` replaces the same key from spark-defaults.conf, so passing our classes
    naively would silently drop a cluster's other plugins; instead the user's value (or the
    defaults-file value) is kept and ours appended.
    """
    if PORT_CONF in config.confs:
        raise ServerStartError(f"Set the port with ServerConfig.port / --port, not {PORT_CONF}.")
    confs = {k: v for k, v in config.confs.items() if k != "spark.jars"}
    merged: dict[str, str] = {PORT_CONF: str(config.port)}
    # Bind to the named host only (Spark's default is every interface); "0.0.0.0" = all.
    if config.host not in _WILDCARD_HOSTS and ADDRESS_CONF not in confs:
        merged[ADDRESS_CONF] = config.host.strip("[]")
    if plugin:
        for key, ours in (
            (PLUGINS_CONF, PLUGIN_CLASS),
            (EXTENSIONS_CONF, EXTENSIONS_CLASS),
        ):
            merged[key] = merge_csv(confs.pop(key, None) or defaults.get(key), ours)
    merged.update(confs)
    return merged


def effective_jars(
    config: ServerConfig, defaults: Mapping[str, str], plugin_jar: Path | None
) -> str:
    """The ``--jars`` value; it replaces ``spark.jars`` entirely, so those are folded in."""
    existing = config.confs.get("spark.jars") or defaults.get("spark.jars")
    return merge_csv(str(plugin_jar) if plugin_jar else None, *config.jars, existing)


def build_command(
    config: ServerConfig,
    pyspark_home: Path | None = None,
    plugin_jar: Path | None = None,
) -> list[str]:
    """The spark-submit command line that runs the Connect server in the foreground."""
    home = pyspark_home or find_pyspark_server()
    if config.plugin and plugin_jar is None:
        plugin_jar = find_plugin_jar()
    defaults = read_spark_defaults(spark_conf_dir(config, home))
    config = with_store(config, defaults)
    cmd = [
        str(home / "bin" / "spark-submit"),
        "--class",
        CONNECT_SERVER_CLASS,
        "--name",
        SERVER_APP_NAME,
        "--master",
        config.master,
    ]
    jars = effective_jars(config, defaults, plugin_jar if config.plugin else None)
    if jars:
        cmd += ["--jars", jars]
    for key, value in effective_confs(config, defaults, plugin=config.plugin).items():
        cmd += ["--conf", f"{key}={value}"]
    return cmd


def child_env(config: ServerConfig, pyspark_home: Path) -> dict[str, str]:
    """Environment for spark-submit: Spark home = the pyspark package, as the script does."""
    env = dict(os.environ)
    env["SPARK_HOME"] = str(pyspark_home)
    # start-connect-server.sh exports this: a leftover SPARK_CONNECT_MODE=1 would make the
    # launcher treat the submission as a Connect client application.
    env["SPARK_CONNECT_MODE"] = "0"
    # Python UDF workers must import pyspark; this interpreter can.
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    if config.spark_conf_dir:
        env["SPARK_CONF_DIR"] = str(Path(config.spark_conf_dir).expanduser())
    return env


def is_sensitive(key: str) -> bool:
    """Whether a conf key's value must never be printed."""
    return bool(_SENSITIVE_KEY.search(key))


def redact_command(cmd: Iterable[str]) -> list[str]:
    """Copy of a command line with sensitive ``k=v`` conf values replaced."""
    out = []
    for arg in cmd:
        key, sep, _ = arg.partition("=")
        out.append(f"{key}={_REDACTED}" if sep and is_sensitive(key) else arg)
    return out


def format_command(cmd: Iterable[str]) -> str:
    """A redacted, shell-quoted command line, safe to print or log."""
    return shlex.join(redact_command(cmd))


# ----------------------------------------------------------------------------- running


def free_port(host: str = "localhost") -> int:
    """A TCP port that is free right now (another process may still take it later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((_probe_host(host), 0))
        return int(sock.getsockname()[1])


def port_accepts(host: str, port: int, timeout: float = 1.0) -> bool:
    """Whether a TCP connection to host:port succeeds."""
    try:
        with socket.create_connection((_probe_host(host), port), timeout=timeout):
            return True
    except OSError:
        return False


def _probe_host(host: str) -> str:
    # A server bound to the wildcard address is reachable locally on the loopback.
    return "127.0.0.1" if host in _WILDCARD_HOSTS else host.strip("[]")


def _url_host(host: str) -> str:
    if host in _WILDCARD_HOSTS:
        return socket.gethostname()
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _tail(path: Path, lines: int = 40) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


class RunningServer:
    """A Spark Connect server child process (leader of its own process group)."""

    def __init__(
        self,
        process: subprocess.Popen[bytes],
        host: str,
        port: int,
        log_path: Path,
        emulator: Emulator | None = None,
    ):
        self.process = process
        self.host = host
        self.port = port
        self.log_path = log_path
        #: The emulator started for this server (``--local``), stopped with it.
        self.emulator = emulator

    @property
    def url(self) -> str:
        """The Spark Connect URL clients use, ``sc://host:port``."""
        return f"sc://{_url_host(self.host)}:{self.port}"

    @property
    def pid(self) -> int:
        """The server's pid; spark-submit execs into the JVM, so this is the JVM's pid."""
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def log_tail(self, lines: int = 40) -> str:
        return _tail(self.log_path, lines)

    def wait_ready(self, timeout: float) -> None:
        """Block until the server's own process listens on its port; raise if it dies or
        times out. A connection alone proves nothing: another process may have taken the port
        after it was chosen (an executor of a standalone cluster draws from the same range)."""
        deadline = time.monotonic() + timeout
        foreign = False
        while time.monotonic() < deadline:
            code = self.process.poll()
            if code is not None:
                raise ServerStartError(
                    f"The Spark Connect server exited with code {code} before accepting "
                    f"connections{self._port_taken()}. Last lines of {self.log_path}:\n"
                    f"{self.log_tail()}"
                )
            if port_accepts(self.host, self.port, timeout=0.5):
                if listens_on(self.process.pid, self.port) is not False:
                    return
                foreign = True
            time.sleep(0.25)
        held = (
            f" another process listens on port {self.port} (not the server, pid "
            f"{self.process.pid}): choose another --port."
            if foreign
            else ""
        )
        raise ServerStartError(
            f"The Spark Connect server did not accept connections on {self.host}:{self.port} "
            f"within {timeout:.0f} s;{held} Last lines of {self.log_path}:\n{self.log_tail()}"
        )

    def _port_taken(self) -> str:
        """What to say when the JVM could not bind its port: another process took it."""
        try:
            log = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        if "BindException: Failed to bind to address" not in log:
            return ""
        return f": port {self.port} was taken by another process; choose another --port"

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the server to exit and return its exit code."""
        return self.process.wait(timeout)

    def stop(self, grace: float = 20.0) -> int:
        """SIGTERM the process group (Spark runs its shutdown hooks), SIGKILL after ``grace``."""
        if self.alive():
            self._signal_group(signal.SIGTERM)
            try:
                self.process.wait(grace)
            except subprocess.TimeoutExpired:
                self._signal_group(signal.SIGKILL)
                self.process.wait()
        # Python workers the JVM started share the group; do not leave them behind.
        self._signal_group(signal.SIGKILL)
        if self.emulator is not None:
            self.emulator.stop()
        return self.process.returncode

    def kill(self) -> int:
        """SIGKILL the JVM and its process group at once: a simulated driver crash."""
        self._signal_group(signal.SIGKILL)
        return self.process.wait()

    def _signal_group(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, sig)

    def __enter__(self) -> RunningServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.alive() else f"exited {self.process.returncode}"
        return f"RunningServer(url={self.url!r}, pid={self.pid}, {state}, log={self.log_path})"


def _default_log_path(port: int) -> Path:
    fd, name = tempfile.mkstemp(prefix=f"txcommit-server-{port}-", suffix=".log")
    os.close(fd)
    return Path(name)


def _parent_death_signal() -> Callable[[], None] | None:
    """A preexec_fn asking Linux to SIGTERM the child when the starting thread dies."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)  # loaded here: nothing may be imported after fork
    pr_set_pdeathsig = 1

    def preexec() -> None:
        libc.prctl(pr_set_pdeathsig, int(signal.SIGTERM))

    return preexec


def start(config: ServerConfig | None = None) -> RunningServer:
    """Start a Spark Connect server and return once it accepts connections.

    The server runs in its own process group with output in ``config.log_file`` (a temp file
    by default). Raises ServerStartError when it cannot start, exits early or is not
    listening within ``config.startup_timeout`` seconds (the log's last 40 lines included).
    """
    config = config or ServerConfig()
    home = find_pyspark_server()
    emulator: Emulator | None = None
    if config.local:
        emulator, emulator_confs = (
            server_store(config.store).local_emulator().start(config.local_bucket)
        )
        config = replace(config, confs={**emulator_confs, **config.confs})
    try:
        cmd = build_command(config, home)
    except BaseException:
        if emulator is not None:
            emulator.stop()
        raise
    if not (os.environ.get("JAVA_HOME") or shutil.which("java")):
        raise ServerStartError("Java 17 or newer is needed: put `java` on PATH or set JAVA_HOME.")
    if port_accepts(config.host, config.port):
        raise ServerStartError(
            f"Port {config.port} on {config.host} is already in use; choose another --port."
        )
    log_path = Path(config.log_file).expanduser() if config.log_file else None
    log_path = log_path or _default_log_path(config.port)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        log.write(f"# txcommit: {format_command(cmd)}\n".encode())
        log.flush()
        process = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=child_env(config, home),
            start_new_session=True,
            preexec_fn=_parent_death_signal() if config.die_with_parent else None,
        )
    server = RunningServer(process, config.host, config.port, log_path, emulator)
    try:
        server.wait_ready(config.startup_timeout)
    except BaseException:  # including Ctrl-C: never leave a half-started JVM behind
        server.stop(grace=5.0)
        raise
    return server
