"""Which process listens on a TCP port, for a server's readiness check.

A connection that succeeds proves only that SOME process listens: a port free when the server
was told to use it can be taken before the JVM binds it (on a standalone cluster, an executor
draws its ports from the same ephemeral range). The server is ready when its own process tree
holds the listening socket. psutil reads that from the operating system (``/proc`` on Linux).
"""

from __future__ import annotations

import psutil


def listens_on(pid: int, port: int) -> bool | None:
    """Whether process ``pid`` (or a descendant: a launcher script may run the JVM as a child)
    holds a socket listening on ``port``.

    None where the system will not tell (another user's process on macOS): the caller falls
    back to a connection attempt."""
    try:
        root = psutil.Process(pid)
        tree = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return False
    undecided = False
    for process in tree:
        try:
            sockets = process.net_connections(kind="tcp")
        except psutil.NoSuchProcess:
            continue
        except psutil.AccessDenied:
            undecided = True
            continue
        if any(s.status == psutil.CONN_LISTEN and s.laddr.port == port for s in sockets if s.laddr):
            return True
    return None if undecided else False
