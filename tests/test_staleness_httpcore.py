"""Staleness (issue 38): readings that came from the errors of the httpcore replay, once it joined the tuning side,
each with real git and files on both sides (no flag, and a flag). A ``raise`` that gains its ``from`` under a node
that speaks of chaining; a parameter added to a ``def`` header inside ``#L`` lines whose node counts the options."""

from __future__ import annotations

from pathlib import Path

from test_staleness import commit, edit, one_file_repo, only
from test_staleness_sympy import capture

EXCEPTIONS = '''import contextlib


class ConnectError(Exception):
    pass


@contextlib.contextmanager
def map_exceptions(map):
    try:
        yield
    except Exception as exc:
        for from_exc, to_exc in map.items():
            if isinstance(exc, from_exc):
                raise to_exc(exc)
        raise
'''

CHAINING = ("`map_exceptions(map)` raises `to_exc(exc)` for the first `from_exc` the exception is an instance of. The "
            "new exception is raised inside the except block without `from`, so the original shows up only as its "
            "implicit `__context__`, not as `__cause__`.")
MAPPING = ("`map_exceptions(map)` raises `to_exc(exc)` for the first `from_exc` the exception is an instance of; "
           "anything unmapped is re-raised unchanged.")


def test_a_raise_that_gains_its_from_is_a_flag_where_the_node_speaks_of_chaining(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "pkg/_exceptions.py", EXCEPTIONS, "exceptions")
    chaining = capture(root, ["pkg/_exceptions.py#map_exceptions"], CHAINING, "Mapped errors are not chained",
                       type="convention")
    mapping = capture(root, ["pkg/_exceptions.py#map_exceptions"], MAPPING, "map_exceptions: translating errors",
                      type="component")
    commit(root, "record")
    edit(root, "raise to_exc(exc)\n", "raise to_exc(exc) from exc\n", path="pkg/_exceptions.py")
    commit(root, "chain the original exception")
    finding = only(root, chaining)
    assert finding.stale is True and "`from`" in finding.why
    assert only(root, mapping).stale is False  # the same names, the same mapping: what it says holds


POOL = '''class ConnectionPool:
    def __init__(
        self,
        ssl_context=None,
        max_connections=10,
        retries=0,
    ):
        self._ssl_context = ssl_context
        self._max_connections = max_connections
        self._retries = retries
'''

COUNTED = ("`ConnectionPool.__init__` takes exactly three keyword options: `ssl_context=None`, `max_connections=10`, "
           "`retries=0`. That list is the whole configuration of a pool.")
LISTED = "`ConnectionPool.__init__` takes `ssl_context=None`, `max_connections=10` and `retries=0`."


def test_a_parameter_added_in_lines_whose_node_counts_the_options_is_a_flag(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "pkg/pool.py", POOL, "pool")
    counted = capture(root, ["pkg/pool.py#L2-L7"], COUNTED, "The pool's configuration is its three options",
                      type="convention")
    listed = capture(root, ["pkg/pool.py#L2-L7"], LISTED, "The pool's options", type="component")
    commit(root, "record")
    edit(root, "        retries=0,\n", "        retries=0,\n        socket_options=None,\n", path="pkg/pool.py")
    commit(root, "socket options")
    assert only(root, counted).stale is True
    assert only(root, listed).stale is False  # an optional parameter added is only an option
