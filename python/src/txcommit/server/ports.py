"""Which process listens on a TCP port (Linux's /proc), for a server's readiness check.

A connection that succeeds proves only that SOME process listens: a port free when the server
was told to use it can be taken before the JVM binds it (on a standalone cluster, an executor
draws its ports from the same ephemeral range). The server is ready when its own process tree
holds the listening socket.
"""

from __future__ import annotations

import os
from pathlib import Path

_LISTEN = "0A"  # the TCP state LISTEN in /proc/net/tcp


def _listening_inodes(port: int) -> set[str] | None:
    """Socket inodes listening on ``port`` (IPv4 and IPv6); None where /proc cannot tell."""
    tables = [Path("/proc/net/tcp"), Path("/proc/net/tcp6")]
    if not tables[0].exists():
        return None
    inodes = set()
    for table in tables:
        try:
            lines = table.read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            # sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
            fields = line.split()
            if len(fields) <= 9 or fields[3] != _LISTEN:
                continue
            if int(fields[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(fields[9])
    return inodes


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants (a launcher script may run the JVM as a child)."""
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        for task in Path(f"/proc/{p}/task").glob("*/children"):
            try:
                todo += [int(c) for c in task.read_text().split()]
            except OSError:
                continue
    return found


def listens_on(pid: int, port: int) -> bool | None:
    """Whether process ``pid`` (or a descendant) holds a socket listening on ``port``.

    None where the system cannot tell (no /proc, as on macOS): the caller falls back to a
    connection attempt."""
    inodes = _listening_inodes(port)
    if inodes is None:
        return None
    wanted = {f"socket:[{inode}]" for inode in inodes}
    for p in _tree(pid):
        try:
            fds = os.listdir(f"/proc/{p}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{p}/fd/{fd}") in wanted:
                    return True
            except OSError:
                continue
    return False
