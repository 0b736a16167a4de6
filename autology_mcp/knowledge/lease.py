"""The watcher lease: how a reader knows that a live file watcher is following the node files.

A file edited in place (VS Code, Obsidian, ``echo >>``) keeps its directory's mtime, so the only way
to see it without a stat of every node file is a watcher. While ``autology serve`` watches the
store, it holds an exclusive ``flock`` on a file of its own in ``.autology/cache/watchers/``: taken
once its start-up reconcile is done (so nothing older is missed), released when the watcher stops
or its thread dies, and released by the kernel when the process dies (``kill -9`` included).

A reader tries a *shared* lock on each such file without waiting: one it cannot take belongs to a
live watcher; one it can take belongs to a process that is gone, and is removed. Readers never
block each other (shared locks do not conflict), so two hooks probing at once both see the truth.
Deleting ``.autology/cache/`` deletes the leases too: readers then check every file themselves.

A lease file may also carry one line of text for readers (:meth:`Lease.advertise`): the server
writes there the socket its hook service listens on (:mod:`autology_mcp.hooks.service`).

What a lease does not cover: the watcher's own delay. watchdog's inotify buffer holds events about
half a second, so an in-place edit made less than ~0.5 s before a read may not be in the answer yet.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

FOLDER = "watchers"


class Lease:
    """One watcher's lease file, held with an exclusive lock until :meth:`release`."""

    def __init__(self, cache_dir: Path):
        self.folder = Path(cache_dir) / FOLDER
        self._fd: int | None = None
        self._path: Path | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None and self._path is not None and self._path.exists()

    def acquire(self) -> bool:
        """Take a fresh lease (after releasing any old one); False when it cannot be written.

        The file is locked under a temporary name and then renamed to ``*.lease``, so a reader never
        sees a lease file before its lock is held."""
        self.release()
        name = f"{os.getpid()}-{os.urandom(4).hex()}"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            taking = self.folder / f".{name}.tmp"
            fd = os.open(taking, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            path = self.folder / f"{name}.lease"
            os.rename(taking, path)
        except OSError:
            os.close(fd)
            taking.unlink(missing_ok=True)
            return False
        self._fd, self._path = fd, path
        return True

    def advertise(self, text: str) -> None:
        """Put one line of text in the lease file, for readers of :func:`live_leases`."""
        if self._fd is None:
            return
        data = text.replace("\n", " ").encode("utf-8")
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, data, 0)

    def release(self) -> None:
        if self._fd is None:
            return
        path, fd = self._path, self._fd
        self._fd = self._path = None
        try:
            if path is not None:
                path.unlink(missing_ok=True)
        except OSError:
            pass
        finally:
            os.close(fd)  # closing the descriptor drops the lock


def live_leases(cache_dir: Path) -> list[str]:
    """The text of every lease a live process holds on this store (``""`` for one that advertises
    nothing); lease files of dead processes are removed on the way."""
    folder = Path(cache_dir) / FOLDER
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    live = []
    for name in names:
        if not name.endswith(".lease"):
            continue
        path = folder / name
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:  # held exclusively: its watcher is alive
            live.append(os.pread(fd, 4096, 0).decode("utf-8", "replace").strip())
        else:
            fcntl.flock(fd, fcntl.LOCK_UN)
            try:
                path.unlink()  # its holder died without releasing: nobody holds it
            except OSError:
                pass
        finally:
            os.close(fd)
    return live


def watched(cache_dir: Path) -> bool:
    """True when some live process holds a watcher lease on this store right now."""
    return bool(live_leases(cache_dir))
