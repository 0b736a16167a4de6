"""Staleness (issue 38): readings that came from the errors of the filelock and tablib replays, once they joined the
tuning side, each with real git and files on both sides (no flag, and a flag). A class defined per platform under an
``if``, a stub in the other branch; a name now imported from the module it was written with."""

from __future__ import annotations

from pathlib import Path

from test_staleness import commit, edit, one_file_repo, only
from test_staleness_sympy import capture

UNIX = '''import os

import fcntl


class UnixFileLock:
    def _release(self):
        # do not remove the lock file: another process may hold it
        fd = self._lock_file_fd
        self._lock_file_fd = None
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
'''

PER_PLATFORM = '''import os
import sys

if sys.platform == "win32":

    class UnixFileLock:
        """Not available on Windows."""

else:
    import fcntl

    class UnixFileLock:
        def _release(self) -> None:
            # do not remove the lock file: another process may hold it
            fd = self._lock_file_fd
            self._lock_file_fd = None
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
'''

KEEPS = ("`UnixFileLock._release()` unlocks with `fcntl.flock(fd, fcntl.LOCK_UN)` and closes the descriptor; it never "
         "deletes the lock file.")


def test_a_class_moved_under_a_platform_test_beside_a_stub_is_found(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "lock/_unix.py", UNIX, "unix")
    node = capture(root, ["lock/_unix.py#UnixFileLock._release"], KEEPS, "release", type="component")
    commit(root, "record")
    (root / "lock/_unix.py").write_text(PER_PLATFORM)
    commit(root, "a stub on windows")
    assert only(root, node).stale is False
    edit(root, "fcntl.flock(fd, fcntl.LOCK_UN)", "fcntl.lockf(fd, fcntl.LOCK_UN)", path="lock/_unix.py")
    commit(root, "lockf")
    finding = only(root, node)
    assert finding.stale is True and "fcntl.flock(fd, fcntl.LOCK_UN)" in finding.why


def test_a_method_gone_from_every_branch_is_gone(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "lock/_unix.py", UNIX, "unix")
    node = capture(root, ["lock/_unix.py#UnixFileLock._release"], KEEPS, "release", type="component")
    commit(root, "record")
    (root / "lock/_unix.py").write_text(PER_PLATFORM.replace("def _release(self) -> None:", "def release(self) -> None:"))
    commit(root, "renamed")
    finding = only(root, node)
    assert finding.stale is True and "_release" in finding.why


SHEET = '''import openpyxl


def dset_sheet(rows, ws):
    bold = openpyxl.styles.Font(bold=True)
    for i, row in enumerate(rows):
        for j, value in enumerate(row):
            cell = ws.cell(row=i + 1, column=j + 1, value=value)
            if i == 0:
                cell.font = bold
'''

HEADER_BOLD = ("`dset_sheet(rows, ws)` writes the rows with openpyxl's styles, one cell each; the header row is bold "
               "(`Font(bold=True)`).")


def test_a_name_now_imported_from_the_module_it_was_written_with_is_the_same_name(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "fmt/xlsx.py", SHEET, "sheet")
    node = capture(root, ["fmt/xlsx.py#dset_sheet"], HEADER_BOLD, "sheet", type="component")
    commit(root, "record")
    edit(root, "import openpyxl\n", "from openpyxl.styles import Font\n", path="fmt/xlsx.py")
    edit(root, "openpyxl.styles.Font(bold=True)", "Font(bold=True)", path="fmt/xlsx.py")
    commit(root, "import the names")
    assert only(root, node).stale is False
    edit(root, "from openpyxl.styles import Font\n", "from xlsxwriter.format import Font\n", path="fmt/xlsx.py")
    commit(root, "another library")
    assert only(root, node).stale is True


ENCODE = '''class URL:
    @classmethod
    def _encode_host(cls, host):
        if host.isascii():
            return host
        return host.encode("idna").decode("ascii")
'''

PER_VERSION = '''import sys


class URL:
    if sys.version_info >= (3, 7):

        @classmethod
        def _encode_host(cls, host):
            if host.isascii():
                return host
            return host.encode("idna").decode("ascii")

    else:

        @classmethod
        def _encode_host(cls, host):
            if all(ord(c) < 128 for c in host):
                return host
            return host.encode("idna").decode("ascii")
'''


def test_a_function_now_defined_per_python_version_is_a_change_of_it(tmp_path: Path) -> None:
    """(From yarl's replay.) Two real definitions under a version test are both the symbol, unlike a platform's
    stub: the node describes the one there was, and the code now holds another for some versions."""
    root = one_file_repo(tmp_path / "r", "url.py", ENCODE, "url")
    node = capture(root, ["url.py#URL._encode_host"], "`URL._encode_host(host)` returns an ASCII host as it is, "
                   "tested with `host.isascii()`, which Python 3.6 lacks: there it raises AttributeError.", "ascii",
                   type="issue")
    commit(root, "record")
    (root / "url.py").write_text(PER_VERSION)
    commit(root, "a variant for 3.6")
    finding = only(root, node)
    assert finding.stale is True and "defined 2 times" in finding.why


LOCK = '''class Lock:
    def __enter__(self):
        self.acquire()
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.release()
'''

NOT_A_DECORATOR = ("`Lock` is a context manager: `with lock:` acquires and releases. `Lock` is not a "
                   "`contextlib.ContextDecorator`, so a lock cannot decorate a function.")


def test_a_dotted_name_the_node_denies_is_denied_by_its_last_part(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "lock/api.py", LOCK, "lock")
    node = capture(root, ["lock/api.py#Lock"], NOT_A_DECORATOR, "with, not a decorator", type="pattern")
    commit(root, "record")
    (root / "lock/api.py").write_text("import abc\n\n\n" + LOCK.replace("class Lock:", "class Lock(abc.ABC):"))
    commit(root, "an abstract base")
    assert only(root, node).stale is False  # another base: not what the node denies
    (root / "lock/api.py").write_text("import abc\nimport contextlib\n\n\n" + LOCK.replace(
        "class Lock:", "class Lock(contextlib.ContextDecorator, abc.ABC):"))
    commit(root, "a lock decorates a function")
    finding = only(root, node)
    assert finding.stale is True and "`ContextDecorator`, which the node says it has not" in finding.why
