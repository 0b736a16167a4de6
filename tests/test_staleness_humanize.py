"""Staleness (issue 38): the readings that came from the errors of the humanize replay, once it joined the tuning
side, each with real git and files on both sides (no flag, and a flag). A parameter a call stops passing on under its
own name, while the function still takes it and reads it itself."""

from __future__ import annotations

from pathlib import Path

from test_staleness import commit, edit, one_file_repo, only
from test_staleness_sympy import capture

TIME = '''import datetime as dt


def _now():
    return dt.datetime.now()


def naturaldelta(value, months=True, minimum_unit="seconds", when=None):
    if when:
        value = when - value
    return f"{value} {minimum_unit}"


def naturaltime(value, future=False, months=True, minimum_unit="seconds", when=None):
    now = when or _now()
    date, delta = value, now - value
    ago = "%s from now" if future else "%s ago"
    delta = naturaldelta(delta, months, minimum_unit, when=when)
    if delta == "a moment":
        return "now"
    return ago % delta
'''

NATURALTIME = ("`naturaltime(value, future=False, months=True, minimum_unit='seconds', when=None)` turns a datetime "
               "into '<delta> ago' or '<delta> from now', the delta text coming from naturaldelta with the same months "
               "and minimum_unit. `when` (default: now) is the point of reference. When the delta is 'a moment' the "
               "result is 'now'.")


def _dropped_when(root: Path) -> None:
    """naturaldelta loses its deprecated ``when``, and naturaltime stops passing it on."""
    edit(root, 'def naturaldelta(value, months=True, minimum_unit="seconds", when=None):\n    if when:\n'
               '        value = when - value\n', 'def naturaldelta(value, months=True, minimum_unit="seconds"):\n',
         path="pkg/time.py")
    edit(root, "naturaldelta(delta, months, minimum_unit, when=when)", "naturaldelta(delta, months, minimum_unit)",
         path="pkg/time.py")
    commit(root, "naturaldelta: when removed")


def _recorded(tmp_path: Path, code: str, text: str) -> tuple[Path, str]:
    """A repository holding ``code`` with a node of ``text`` on naturaltime, then the change of :func:`_dropped_when`."""
    root = one_file_repo(tmp_path / "t", "pkg/time.py", code, "time")
    node = capture(root, ["pkg/time.py#naturaltime"], text, "naturaltime: naturaldelta with a tense", type="component")
    commit(root, "record")
    _dropped_when(root)
    return root, node


def test_a_parameter_no_longer_passed_on_keeps_its_use(tmp_path: Path) -> None:
    """naturaltime still takes `when` and still reads it as its point of reference: no flag. When it stops reading it
    (the reference is always now), the flag comes."""
    root, node = _recorded(tmp_path, TIME, NATURALTIME)
    assert only(root, node).stale is False
    edit(root, "    now = when or _now()\n", "    now = _now()\n", path="pkg/time.py")
    commit(root, "when ignored")
    assert only(root, node).stale is True


def test_a_parameter_the_node_shows_passed_on_is_a_flag_when_it_no_longer_is(tmp_path: Path) -> None:
    """A node that writes the call with the parameter (`naturaldelta(delta, when=when)`) says where it goes: the call
    losing it is a flag."""
    text = NATURALTIME + " The delta is `naturaldelta(delta, months, minimum_unit, when=when)`."
    root, node = _recorded(tmp_path, TIME, text)
    assert only(root, node).stale is True


def test_a_parameter_no_longer_read_at_all_is_a_flag(tmp_path: Path) -> None:
    """When the call was the only place the symbol read `when`, dropping it leaves a parameter that does nothing: a
    flag."""
    root, node = _recorded(tmp_path, TIME.replace("    now = when or _now()\n", "    now = _now()\n"), NATURALTIME)
    assert only(root, node).stale is True


VERSIONED = '''try:
    import importlib.metadata as importlib_metadata
except ImportError:
    import importlib_metadata

__version__ = importlib_metadata.version(__name__)

if sys.version_info >= (3, 7):
    def __getattr__(name):
        if name == "VERSION":
            return __version__
        raise AttributeError(name)
else:
    VERSION = __version__
'''

FROM_METADATA = ("`__version__` is read with `importlib_metadata.version(__name__)`: `importlib.metadata` on Python "
                 "3.8+, the `importlib_metadata` backport before that.")


def test_a_version_test_dropped_with_an_old_python_takes_no_number_the_node_states(tmp_path: Path) -> None:
    """A whole file's numbers leave out a test of the interpreter's
    version: the shim for 3.6 removed takes away the 3 of ``(3, 7)``, which is no part of "3.8+"."""
    root = one_file_repo(tmp_path / "r", "kit/__init__.py", "import sys\n\n" + VERSIONED, "kit")
    node = capture(root, ["kit/__init__.py"], FROM_METADATA, "version from metadata", type="convention")
    commit(root, "record")
    edit(root, VERSIONED[VERSIONED.index("if sys.version_info"):], "", path="kit/__init__.py")
    commit(root, "drop 3.6")
    assert only(root, node).stale is False
    edit(root, "__version__ = importlib_metadata.version(__name__)", '__version__ = "3.9.1"', path="kit/__init__.py")
    commit(root, "a literal version")
    assert only(root, node).stale is True
