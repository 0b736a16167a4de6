"""Whether anything under a work tree may have changed since the index was last checked (inotify).

``autology_code_search`` brings the index up to date before each call. That check lists and stats
every file (about 0.3 s on a 38,000-file tree); a long-lived server can skip it when nothing
changed. :class:`TreeWatch` holds an inotify watch on every directory of the tree the index could
cover (pruned directories such as ``.git`` or ``node_modules`` are left out) and on the git
directory (``HEAD``, ``index``), and counts the changes it is told of: :meth:`TreeWatch.generation`.

The guarantee: the kernel queues a file's event before the write, rename or delete returns to the
process that made it, and :meth:`generation` reads that queue to the end, in the calling thread,
before it answers. So a change completed before a search begins is always counted, and that search
re-checks the index. When the watch cannot be trusted (the kernel's event queue overflowed, a
directory was moved, the watch limit ``fs.inotify.max_user_watches`` was reached), the count is
bumped or the watch gives up (``generation`` returns None), and every search checks, as without a
watch. Linux only: elsewhere :func:`open_watch` returns None. Not seen: writes through a shared
memory map, and changes made on another machine to a network file system.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import logging
import os
import struct
import sys
import threading
import weakref
from pathlib import Path

from autology_mcp.code import git

log = logging.getLogger("autology.code.watch")

IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_ISDIR = 0x40000000
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000

CHANGES = (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
           | IN_DELETE_SELF | IN_MOVE_SELF)
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len (then len bytes of name)
GIT_FILES = {"HEAD", "index", "exclude"}  # in the git directory (and its info/): what changes the file list


class WatchFailed(Exception):
    """The tree cannot be watched (no inotify, or the watch limit was reached)."""


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.inotify_init1.argtypes = [ctypes.c_int]
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        return libc
    except (OSError, AttributeError):
        return None


class TreeWatch:
    """Counts the changes under ``root`` (see the module's docstring). Thread-safe."""

    def __init__(self, root: Path, prune: set[str], libc: ctypes.CDLL):
        self.root = Path(root)
        self.prune = set(prune)
        self._libc = libc
        self._lock = threading.Lock()
        self._generation = 0
        self._fd = -1
        self._dirs: dict[int, str] = {}  # watch descriptor -> directory (bytes path decoded with surrogates)
        self._git: set[int] = set()  # watch descriptors of the git directory and its info/
        self.failed: str | None = None
        self.checked: tuple | None = None  # what the caller last checked at (see service.code_search)
        self._open()

    # ------------------------------------------------------------------ setting up

    def _open(self) -> None:
        fd = self._libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            raise WatchFailed(f"inotify_init1: {os.strerror(ctypes.get_errno())}")
        self._fd = fd
        self._closer = weakref.finalize(self, os.close, fd)  # a watch dropped without close() frees its fd
        self._dirs.clear()
        self._git.clear()
        try:
            self._add_tree(str(self.root))
            gd = git.git_dir(self.root)
            if gd is not None:
                for d in (gd, gd / "info"):
                    if d.is_dir():
                        self._git.add(self._add(str(d)))
        except WatchFailed:
            self._close_fd()
            raise

    def _add(self, path: str) -> int:
        wd = self._libc.inotify_add_watch(self._fd, os.fsencode(path), CHANGES | IN_ONLYDIR | IN_DONT_FOLLOW)
        if wd < 0:
            err = ctypes.get_errno()
            if err in (errno.ENOENT, errno.ENOTDIR, errno.EACCES):
                return -1  # gone already, or not ours to read: the next scan sees what is there
            hint = " (raise fs.inotify.max_user_watches)" if err == errno.ENOSPC else ""
            raise WatchFailed(f"inotify_add_watch {path}: {os.strerror(err)}{hint}")
        self._dirs[wd] = path
        return wd

    def _add_tree(self, top: str) -> None:
        """Watch ``top`` and every directory below it that is not pruned (symlinks are not followed)."""
        stack = [top]
        while stack:
            path = stack.pop()
            if self._add(path) < 0:
                continue
            try:
                with os.scandir(path) as entries:
                    for entry in entries:
                        if entry.name not in self.prune and entry.is_dir(follow_symlinks=False):
                            stack.append(entry.path)
            except OSError:
                continue

    def _close_fd(self) -> None:
        if self._fd >= 0:
            self._closer()  # closes the fd, once
            self._fd = -1

    def close(self) -> None:
        with self._lock:
            self._close_fd()

    # ------------------------------------------------------------------ reading

    def generation(self) -> int | None:
        """The number of changes counted so far, after reading every event already queued; None when
        the watch has failed (then the caller must check the files itself)."""
        with self._lock:
            if self.failed is not None:
                return None
            try:
                self._drain()
            except (OSError, WatchFailed) as exc:
                self.failed = str(exc)
                self._close_fd()
                log.warning("the code index's file watch stopped (%s); each search checks every file", exc)
                return None
            return self._generation

    def _drain(self) -> None:
        rewatch = False
        while True:
            try:
                data = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                break
            pos = 0
            while pos + _EVENT.size <= len(data):
                wd, mask, _cookie, length = _EVENT.unpack_from(data, pos)
                name = data[pos + _EVENT.size: pos + _EVENT.size + length].rstrip(b"\0").decode("utf-8", "surrogateescape")
                pos += _EVENT.size + length
                rewatch |= self._event(wd, mask, name)
        if rewatch:  # events were lost or directories moved: watch the tree afresh
            self._close_fd()
            self._open()

    def _event(self, wd: int, mask: int, name: str) -> bool:
        """Count one event; True when the whole tree must be watched afresh."""
        if mask & IN_Q_OVERFLOW:
            self._generation += 1
            return True
        if mask & IN_IGNORED:  # the directory was removed (its parent's event counted it)
            self._dirs.pop(wd, None)
            self._git.discard(wd)
            return False
        if wd in self._git:
            if name in GIT_FILES or mask & (IN_DELETE_SELF | IN_MOVE_SELF):
                self._generation += 1
            return False
        if mask & IN_ISDIR and name in self.prune:  # e.g. __pycache__ or node_modules appearing: never indexed
            return False
        self._generation += 1
        if mask & IN_ISDIR:
            if mask & (IN_MOVED_FROM | IN_MOVED_TO):
                return True  # a moved directory keeps its watches under old names
            if mask & IN_CREATE and wd in self._dirs:
                self._add_tree(os.path.join(self._dirs[wd], name))
        if mask & IN_MOVE_SELF and wd in self._dirs and self._dirs[wd] == str(self.root):
            return True
        return False


def open_watch(root: Path, prune: list[str] | set[str]) -> TreeWatch | None:
    """A :class:`TreeWatch` on ``root``, or None where the tree cannot be watched (not Linux, no
    inotify, or too many directories for ``fs.inotify.max_user_watches``: said once in the log)."""
    libc = _libc()
    if libc is None:
        return None
    try:
        return TreeWatch(root, set(prune), libc)
    except (WatchFailed, OSError) as exc:
        log.warning("cannot watch %s for the code index (%s); each search checks every file", root, exc)
        return None


class IndexWatch:
    """The watch a long-lived process (the MCP server) keeps for one project's code index: opened on
    first use, and again when the pruned directories change (they decide which folders are watched).
    A tree that cannot be watched is not tried again for the same settings."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self._lock = threading.Lock()
        self._tree: TreeWatch | None = None
        self._prune: frozenset[str] | None = None

    def tree(self, prune: list[str] | set[str]) -> TreeWatch | None:
        with self._lock:
            wanted = frozenset(prune)
            if wanted != self._prune:
                if self._tree is not None:
                    self._tree.close()
                self._tree, self._prune = open_watch(self.root, wanted), wanted
            return self._tree

    def close(self) -> None:
        with self._lock:
            if self._tree is not None:
                self._tree.close()
            self._tree, self._prune = None, None
