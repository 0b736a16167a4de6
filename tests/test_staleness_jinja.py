"""Staleness (issue 38), the jinja classes: a class that gains or loses the special method behind an operation
the node writes as code (``__contains__`` for ``x in missing``), given by a ``def`` or by assignment. Real git
and files on both sides (a flag, and no flag)."""

from __future__ import annotations

from pathlib import Path

from test_staleness import commit, edit, one_file_repo, only
from test_staleness_sympy import capture

from autology_mcp.knowledge.trust.protocols import operations

LENIENT = '''class Missing:
    def __str__(self):
        return ""

    def __iter__(self):
        return iter(())

    def _fail(self, *args, **kwargs):
        raise LookupError("missing")

    __call__ = __getitem__ = _fail
'''


def test_operations_read_the_code_in_backticks_only() -> None:
    """``x in missing`` is ``__contains__`` (and ``__iter__``, its fallback), ``str()`` ``__str__``, ``async for``
    ``__aiter__``, ``a == b`` ``__eq__``; the English "in", a path and a dashed word are none."""
    assert operations("`x in missing` is False") == {"__contains__", "__iter__"}
    assert operations("`str()` is empty and `async for` over it") >= {"__str__", "__aiter__", "__anext__"}
    assert operations("`a == b` holds") == {"__eq__"}
    assert operations("`{% for x in missing %}` renders nothing") == {"__iter__"}
    assert operations("it lives in `src/a-b.py` and in `pre-commit`; `__iter__` is named") == set()


def test_a_special_method_behind_an_operation_the_node_writes_is_a_flag(tmp_path: Path) -> None:
    """"`x in missing` is False": ``__contains__`` made to fail, by assignment beside ``__call__``, is a flag
    (jinja's Undefined). The same change under a node that writes no ``in``, and another special method added
    (``__repr__``, no operation the node writes), are information."""
    root = one_file_repo(tmp_path / "m", "pkg/missing.py", LENIENT, "missing")
    body = "`Missing` prints as `str()` empty and iterates as empty, so `x in missing` is False."
    membership = capture(root, ["pkg/missing.py#Missing"], body, "Missing is lenient", type="concept")
    printing = capture(root, ["pkg/missing.py#Missing"], "`Missing` prints as `str()` empty; calls fail.",
                       "Missing prints empty", type="concept")
    commit(root, "record")
    edit(root, "    __call__ = __getitem__ = _fail\n",
         "    __call__ = __getitem__ = _fail\n\n    def __repr__(self):\n        return '<unset>'\n",
         path="pkg/missing.py")
    commit(root, "a repr")
    assert only(root, membership).stale is False
    assert only(root, printing).stale is False
    edit(root, "    __call__ = __getitem__ = _fail\n", "    __call__ = __getitem__ = __contains__ = _fail\n",
         path="pkg/missing.py")
    commit(root, "membership fails")
    finding = only(root, membership)
    assert finding.stale is True and "`__contains__` added" in finding.why
    assert only(root, printing).stale is False


CHAIN = LENIENT + '''

class Chained(Missing):
    def __getattr__(self, name):
        return self
'''


def test_a_base_of_the_same_file_gaining_a_method_the_node_names_is_a_flag(tmp_path: Path) -> None:
    """"`async for` over a `Chained` fails" (jinja's ChainableUndefined): its base ``Missing`` gains ``__aiter__``
    and the class, unchanged, now iterates; a flag. A method the node names that the class defines itself
    (its own ``__getattr__`` overrides the base's), a base's method the node does not name, and ``__contains__``
    under a node whose only ``in`` is a loop's, are not."""
    root = one_file_repo(tmp_path / "c", "pkg/missing.py", CHAIN, "chain")
    issue = capture(root, ["pkg/missing.py#Chained"],
                    "`Chained.__getattr__` answers every name, so `async for` over it fails with a TypeError: "
                    "`{% for x in missing.items %}` crashes.",
                    "Chained breaks async iteration", type="issue")
    commit(root, "record")
    edit(root, "    def _fail(self,", "    def __getattr__(self, name):\n        raise LookupError(name)\n\n"
         "    def describe(self):\n        return 'missing'\n\n    def _fail(self,", path="pkg/missing.py")
    edit(root, "    __call__ = __getitem__ = _fail", "    __call__ = __getitem__ = __contains__ = _fail", path="pkg/missing.py")
    commit(root, "the base answers no name, fails membership, and describes itself")
    assert only(root, issue).stale is False
    edit(root, "    def describe(self):", "    async def __aiter__(self):\n        for x in ():\n            yield x\n\n"
         "    def describe(self):", path="pkg/missing.py")
    commit(root, "async iteration is empty")
    finding = only(root, issue)
    assert finding.stale is True and "base `Missing`" in finding.why and "`__aiter__` added" in finding.why
