"""Staleness (issue 38): the readings that came from the errors of the loguru replay, once it joined the tuning side,
each with real git and files on both sides (no flag, and a flag). An exception raised with another message than the one
the node quotes; a file the node gives line by line that gained a line; a name gone from a file that another file of
the folder only binds as a local; the values of a method the class gained."""

from __future__ import annotations

from pathlib import Path

from test_staleness import commit, edit, git, one_file_repo, only
from test_staleness_sympy import capture

COMPRESSION = '''class FileSink:
    @staticmethod
    def _make_compression_function(compression):
        if compression is None:
            return None
        elif isinstance(compression, str):
            ext = compression.strip().lstrip(".")
            if ext == "gz":
                compress = "gzip"
            else:
                raise ValueError("Invalid compression format: '%s'" % ext)
            return compress
        elif callable(compression):
            return compression
        else:
            raise ValueError(
                "Cannot infer compression for objects of type: '%s'" % type(compression).__name__
            )
'''

SAID = ("`FileSink._make_compression_function(compression)`: None means no compression and a callable is used as "
        "is. A str is an extension: gz compresses a copy. Any other extension raises ValueError(\"Invalid compression "
        "format: '...'\").")


def test_another_raise_of_the_exception_the_node_quotes_is_not_it(tmp_path: Path) -> None:
    """The last branch (an object neither None, str nor callable) now raises TypeError: the node's ValueError is
    the one with "Invalid compression format", which stays. That raise made a TypeError is a flag."""
    root = one_file_repo(tmp_path / "c", "pkg/sink.py", COMPRESSION, "sink")
    node = capture(root, ["pkg/sink.py#L3-L18"], SAID, "Compression formats", type="pattern")
    commit(root, "record")
    edit(root, "            raise ValueError(\n                \"Cannot infer", "            raise TypeError(\n"
         "                \"Cannot infer", path="pkg/sink.py")
    commit(root, "TypeError for invalid types")
    assert only(root, node).stale is False
    edit(root, "raise ValueError(\"Invalid compression format", "raise TypeError(\"Invalid compression format",
         path="pkg/sink.py")
    commit(root, "TypeError for unknown formats too")
    assert only(root, node).stale is True


MANIFEST = "include LICENSE\nrecursive-include tests *.py *.txt\n"


def test_a_file_the_node_gives_line_by_line_that_gained_a_line(tmp_path: Path) -> None:
    """MANIFEST.in, both of whose lines the node gives, gains ``include pkg/py.typed``: stale. A node that gives only
    one of its lines is not."""
    root = one_file_repo(tmp_path / "m", "MANIFEST.in", MANIFEST, "manifest")
    whole = capture(root, ["MANIFEST.in"], "MANIFEST.in has two lines: `include LICENSE` and `recursive-include tests "
                    "*.py *.txt`, so the sdist carries the tests. Nothing else ships.", "MANIFEST.in",
                    type="convention")
    part = capture(root, ["MANIFEST.in"], "The sdist carries the license: `include LICENSE`.", "The license ships",
                   type="convention")
    commit(root, "record")
    (root / "MANIFEST.in").write_text(MANIFEST + "include pkg/py.typed\n")
    commit(root, "ship the stub marker")
    assert only(root, whole).stale is True
    assert "include pkg/py.typed" in only(root, whole).why
    assert only(root, part).stale is False


SINKS = '''class StreamSink:
    def __init__(self, stream, kwargs):
        self._stream = stream
        self._kwargs = kwargs

    def write(self, message):
        self._stream.write(message, **self._kwargs)
'''

LOGGER = '''def add(sink, **kwargs):
    if not kwargs:
        kwargs = {}
    return sink
'''


def test_a_name_another_file_only_binds_as_a_local_was_not_moved_there(tmp_path: Path) -> None:
    """``kwargs`` taken out of the sinks: gone, though ``kwargs = {}`` is a local of a function in another module of
    the package. A module variable of that name in another module is the name moved there (a package split)."""
    root = one_file_repo(tmp_path / "s", "pkg/sinks.py", SINKS, "sinks")
    (root / "pkg/logger.py").write_text(LOGGER)
    commit(root, "logger")
    node = capture(root, ["pkg/sinks.py"], "Each wrapper is built with the sink and the `kwargs` dict given to add(), "
                   "and passes them on at every message.", "Sinks pass kwargs on", type="component")
    commit(root, "record")
    (root / "pkg/sinks.py").write_text(SINKS.replace(", kwargs):", "):").replace("        self._kwargs = kwargs\n", "")
                                       .replace(", **self._kwargs", ""))
    commit(root, "no kwargs in the sinks")
    assert only(root, node).stale is True

    moved = one_file_repo(tmp_path / "p", "pkg/sinks.py", SINKS + "\nkwargs = {}\n", "sinks")
    (moved / "pkg/logger.py").write_text(LOGGER)
    commit(moved, "logger")
    split = capture(moved, ["pkg/sinks.py"], "The module's `kwargs` dict holds the defaults.", "Sink defaults",
                    type="component")
    commit(moved, "record")
    (moved / "pkg/sinks.py").write_text(SINKS)
    (moved / "pkg/defaults.py").write_text("kwargs = {}\n")
    git(moved, "add", "-A")
    commit(moved, "defaults in their own module")
    assert only(moved, split).stale is False


MARKUP = '''class AnsiMarkup:
    def __init__(self, custom_markups=None, strip=False):
        self._custom = custom_markups or {}
        self._strip = strip

    def feed(self, text, *, strict=True):
        return text
'''

VERIFY = '''
    @staticmethod
    def verify(format_, custom_markups):
        markup = AnsiMarkup(custom_markups=custom_markups, strip=True)
        return markup.feed(format_, strict=False)
'''


def test_the_values_of_a_method_the_class_gained_are_its_own(tmp_path: Path) -> None:
    """``verify()`` added beside ``feed()``, with ``strip=True`` and ``strict=False`` of its own: the node's
    ``strip=False`` and ``strict=True`` still hold. ``feed``'s default made ``strict=False`` is a flag."""
    root = one_file_repo(tmp_path / "a", "pkg/markup.py", MARKUP, "markup")
    node = capture(root, ["pkg/markup.py#AnsiMarkup"], "`AnsiMarkup(custom_markups=None, strip=False)` turns color "
                   "tags into ANSI codes; `feed(text, *, strict=True)` substitutes them.", "AnsiMarkup",
                   type="component")
    commit(root, "record")
    (root / "pkg/markup.py").write_text(MARKUP + VERIFY)
    commit(root, "verify")
    assert only(root, node).stale is False
    edit(root, "def feed(self, text, *, strict=True):", "def feed(self, text, *, strict=False):", path="pkg/markup.py")
    commit(root, "lenient by default")
    assert only(root, node).stale is True
