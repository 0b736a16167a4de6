"""The follower: ``python -m autology_mcp.sessions.follow ROOT``, started detached by an end hook that
noted a transcript still being written (:mod:`~autology_mcp.sessions.pending`), or by a session-start
hook that finds notes left over (a follower killed with the machine, say).

It ingests each noted transcript as soon as it is written through, checking often at first (Copilot
writes within a second or two) and less often later, and exits when no note is left; a note older than
:data:`~autology_mcp.sessions.pending.FOLLOW_FOR_S` is ingested as it is, so it never outlives that by
long. One follower per project (a lock in the notes' folder): a second one exits at once, and the one
running picks up notes made meanwhile.
"""

from __future__ import annotations

import fcntl
import logging
import os
import sys
import time
from pathlib import Path

from autology_mcp.sessions.lifecycle import ingest_pending
from autology_mcp.sessions.pending import entries, pending_dir

log = logging.getLogger("autology.sessions.follow")

FIRST_CHECK_S = 0.05
LAST_CHECK_S = 1.0


def _claim(root: Path) -> int | None:
    """The follower lock's descriptor, or None when another follower holds it (or there is no folder)."""
    try:
        fd = os.open(pending_dir(root) / ".follower", os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _waiting(root: Path) -> bool:
    return any(not e.error for e in entries(root))


def follow(root: Path) -> None:
    """Ingest the noted transcripts of ``root`` as they are written through; return when none is left."""
    fd = _claim(root)
    while fd is not None:
        try:
            delay = FIRST_CHECK_S
            while _waiting(root):
                ingest_pending(root)
                time.sleep(delay)
                delay = min(delay * 1.5, LAST_CHECK_S)
        except Exception:  # the notes stay, for the next follower (a session-start starts one)
            log.exception("following %s", root)
            return
        finally:
            os.close(fd)  # releases the lock; a note made just before is seen below, or by a new follower
        fd = _claim(root) if _waiting(root) else None


if __name__ == "__main__":
    follow(Path(sys.argv[1]))
