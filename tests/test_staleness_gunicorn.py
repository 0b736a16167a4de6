"""Staleness (issue 38): the readings that came from the errors of the gunicorn replay, once it joined the tuning side,
each with real git and files on both sides (no flag, and a flag). A release number bumped in a span that says where the
version lives; a value tested for its truth that is now tested against None, under a node that speaks of zero."""

from __future__ import annotations

from pathlib import Path

from test_staleness import commit, edit, one_file_repo, only
from test_staleness_sympy import capture

VERSION = '''# This file is part of the package.

version_info = (19, 7, 1)
__version__ = ".".join([str(v) for v in version_info])
SERVER_SOFTWARE = "pkg/%s" % __version__
'''


def test_a_release_number_bumped_is_a_version_not_a_changed_value(tmp_path: Path) -> None:
    """``version_info = (19, 7, 1)`` now ``(19, 8, 0)``: the node says where the version lives, not which it is.
    The same numbers changed in a tuple that is not a version are a flag; so is a release the node states, bumped."""
    root = one_file_repo(tmp_path / "v", "pkg/__init__.py", VERSION, "version")
    node = capture(root, ["pkg/__init__.py#L3-L5"], "The release number lives only in `version_info`, a tuple of "
                   "ints. `__version__` is derived from it by joining with dots, and `SERVER_SOFTWARE` from "
                   "`__version__`. A release bumps the tuple and nothing else.", "The version is written once",
                   type="convention")
    commit(root, "record")
    edit(root, "version_info = (19, 7, 1)", "version_info = (19, 8, 0)", path="pkg/__init__.py")
    commit(root, "Release version 19.8.0")
    assert only(root, node).stale is False

    limits = one_file_repo(tmp_path / "l", "pkg/__init__.py", VERSION.replace("version_info", "limits_info"), "limits")
    bound = capture(limits, ["pkg/__init__.py#L3-L5"], "The bounds live only in `limits_info`, a tuple of ints. "
                    "`__version__` joins them with dots.", "The bounds are written once", type="convention")
    commit(limits, "record")
    edit(limits, "limits_info = (19, 7, 1)", "limits_info = (19, 8, 0)", path="pkg/__init__.py")
    commit(limits, "other bounds")
    assert only(limits, bound).stale is True

    stated = one_file_repo(tmp_path / "s", "pkg/__init__.py", VERSION, "version")
    release = capture(stated, ["pkg/__init__.py#L3-L5"], "This branch is the 19.7 series: `version_info` is "
                      "(19, 7, 1).", "The 19.7 series", type="concept")
    commit(stated, "record")
    edit(stated, "version_info = (19, 7, 1)", "version_info = (19, 8, 0)", path="pkg/__init__.py")
    commit(stated, "Release version 19.8.0")
    assert only(stated, release).stale is True


ATOMS = '''class Logger:
    def atoms(self, resp, req, environ):
        return {
            "s": resp.status,
            "b": getattr(resp, "sent", None) and str(resp.sent) or "-",
            "B": getattr(resp, "sent", None),
            "f": environ.get("HTTP_REFERER", "-"),
        }
'''


def test_a_truth_test_made_a_none_test_flags_a_node_about_zero(tmp_path: Path) -> None:
    """``getattr(resp, "sent", None) and ...`` now ``... is not None and ...``: a zero-length response now logs
    ``0``. A node that says it logs '-' for zero is stale; one that does not speak of zero or empty values is not."""
    root = one_file_repo(tmp_path / "a", "pkg/glogging.py", ATOMS, "atoms")
    zero = capture(root, ["pkg/glogging.py#Logger.atoms"], "`Logger.atoms(resp, req, environ)` builds the access "
                   "log's fields: s the status, f the referer. As in Apache's %b, `b` is '-' when no body bytes were "
                   "sent (a zero-length response logs '-', not 0); `B` gives the number.", "Access log atoms",
                   type="concept")
    fields = capture(root, ["pkg/glogging.py#Logger.atoms"], "`Logger.atoms(resp, req, environ)` builds the dict the "
                     "access log format is formatted against: s the status, b the response length, f the referer.",
                     "The access log's fields", type="component")
    commit(root, "record")
    edit(root, '"b": getattr(resp, "sent", None) and', '"b": getattr(resp, "sent", None) is not None and',
         path="pkg/glogging.py")
    commit(root, "log zero-length responses as 0")
    assert only(root, zero).stale is True
    assert "tells None from other false values" in only(root, zero).why
    assert only(root, fields).stale is False
