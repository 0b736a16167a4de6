"""File-system primitives: atomic writes and the cross-process write lock.

A reader never sees a half-written file: text goes to a temporary file in the same directory,
is fsync'ed, then renamed over the target (and the directory is fsync'ed so the rename survives a
crash). Every read-modify-write of the store happens under :class:`WriteLock`, an exclusive
``flock`` on the ``.autology/`` directory that also serialises threads of one process.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from autology_mcp.common.errors import StorageError


def _reason(exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return "no space left on device"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.EROFS:
        return "read-only file system"
    return exc.strerror or str(exc)


def fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write(path: Path, text: str | bytes, durable: bool = True, tmp_dir: Path | None = None) -> os.stat_result:
    """Write ``text`` (str, written as UTF-8, or bytes, as they are) to ``path`` atomically; returns
    the new file's stat. Raises StorageError.

    The temporary file goes to ``tmp_dir`` when given (it must be on the same file system; if the
    rename across folders fails, the write is redone with the temporary file beside ``path``): a
    watched folder then sees one event, the file arriving, instead of a temporary file's life.
    """
    path = Path(path)
    tmp_name = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if tmp_dir is not None:
            Path(tmp_dir).mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=tmp_dir or path.parent)
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8") if isinstance(text, str) else text)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.chmod(tmp_name, 0o644)
        try:
            os.replace(tmp_name, path)
        except OSError as exc:
            if tmp_dir is None or exc.errno != errno.EXDEV:
                raise
            os.unlink(tmp_name)
            tmp_name = None
            return atomic_write(path, text, durable)
        tmp_name = None
        if durable:
            fsync_dir(path.parent)
        return path.stat()
    except OSError as exc:
        raise StorageError(str(path), _reason(exc)) from exc
    finally:
        if tmp_name is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)


def remove_file(path: Path) -> None:
    """Delete ``path`` (a missing file is fine). Raises StorageError."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StorageError(str(path), _reason(exc)) from exc
    fsync_dir(Path(path).parent)


def read_text(path: Path) -> str:
    """A node file's text (UTF-8, newlines as written). Raises StorageError."""
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read()
    except UnicodeDecodeError as exc:
        raise StorageError(str(path), f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except OSError as exc:
        raise StorageError(str(path), _reason(exc)) from exc


class WriteLock:
    """Exclusive across processes (flock) and threads (RLock); re-entrant within one thread.

    ``path`` is a lock file, or (``directory=True``) a directory whose own descriptor is locked:
    the store locks ``.autology/`` itself, so deleting ``cache/`` never breaks the lock.
    """

    def __init__(self, path: Path, directory: bool = False):
        self.path = Path(path)
        self.directory = directory
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._fd: int | None = None

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        with self._thread_lock:
            if self._depth == 0:
                self._acquire()
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self._release()

    def _acquire(self) -> None:
        try:
            if self.directory:
                self.path.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StorageError(str(self.path), f"cannot open the write lock: {_reason(exc)}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError as exc:
            os.close(fd)
            raise StorageError(str(self.path), f"cannot take the write lock: {_reason(exc)}") from exc
        self._fd = fd

    def _release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def read_json_object(path: Path) -> dict:
    """A JSON file's object; {} when it is missing, unreadable, not JSON or not an object."""
    import json

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
