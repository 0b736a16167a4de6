"""Staleness (issue 38): the readings that came from the errors of the multidict replay, once it joined the tuning
side, each with real git and files on both sides (no flag, and a flag). Strict typing added to a module: a sentinel
default renamed and tested as before; a base class given type arguments; a base no longer listed and inherited
through a base of the module's own."""

from __future__ import annotations

from pathlib import Path

from test_staleness import commit, edit, one_file_repo, only
from test_staleness_sympy import capture

LOOKUP = '''_marker = object()


class Base:
    def getone(self, key, default=_marker):
        for k, v in self._items:
            if k == key:
                return v
        if default is not _marker:
            return default
        raise KeyError("Key not found: %r" % key)
'''

GETONE = ("`Base.getone(key, default=<private sentinel>)` returns the first value stored under the key; with no match "
          "it returns `default` when one was passed and otherwise raises `KeyError`.")


def _lookup(tmp_path: Path) -> tuple[Path, str]:
    root = one_file_repo(tmp_path / "r", "md/lookup.py", LOOKUP, "lookup")
    node = capture(root, ["md/lookup.py#Base.getone"], GETONE, "getone", type="component")
    commit(root, "record")
    return root, node


def test_a_sentinel_default_renamed_and_tested_as_before_changes_nothing(tmp_path: Path) -> None:
    root, node = _lookup(tmp_path)
    edit(root, "_marker = object()", "sentinel = object()", path="md/lookup.py")
    edit(root, "default=_marker", "default: object = sentinel", path="md/lookup.py")
    edit(root, "default is not _marker", "default is not sentinel", path="md/lookup.py")
    commit(root, "strict typing")
    assert only(root, node).stale is False


def test_a_default_that_is_no_sentinel_any_more_is_a_change(tmp_path: Path) -> None:
    root, node = _lookup(tmp_path)
    edit(root, "default=_marker", "default=None", path="md/lookup.py")
    edit(root, "default is not _marker", "default is not None", path="md/lookup.py")
    commit(root, "None is the default now")
    finding = only(root, node)
    assert finding.stale is True and "`default`" in finding.why


def test_a_default_renamed_to_a_name_the_function_does_not_test_is_a_change(tmp_path: Path) -> None:
    root, node = _lookup(tmp_path)
    edit(root, "_marker = object()", "_marker = object()\nFALLBACK = 0", path="md/lookup.py")
    edit(root, "default=_marker", "default=FALLBACK", path="md/lookup.py")
    commit(root, "a real default")
    assert only(root, node).stale is True


CLASSES = '''from typing import Generic, TypeVar

_V = TypeVar("_V")


class MultiMapping:
    pass


class Base:
    def keys(self):
        return [k for k, _ in self._items]


class MultiDict(Base, MultiMapping):
    def add(self, key, value):
        self._items.append((key, value))


class CIMultiDict(MultiDict):
    def _title(self, key):
        return key.title()
'''

TYPED = '''from typing import Generic, TypeVar

_V = TypeVar("_V")


class MultiMapping(Generic[_V]):
    pass


class Base(MultiMapping[_V]):
    def keys(self):
        return [k for k, _ in self._items]


class MultiDict(Base[_V]):
    def add(self, key, value):
        self._items.append((key, value))


class CIMultiDict(MultiDict[_V]):
    def _title(self, key):
        return key.title()
'''


def _classes(tmp_path: Path, ref: str, text: str) -> tuple[Path, str]:
    root = one_file_repo(tmp_path / "r", "md/classes.py", CLASSES, "classes")
    node = capture(root, [ref], text, "classes", type="component")
    commit(root, "record")
    return root, node


def test_a_base_given_type_arguments_is_the_same_base(tmp_path: Path) -> None:
    root, node = _classes(tmp_path, "md/classes.py#CIMultiDict",
                          "`CIMultiDict(MultiDict)` overrides only `_title(key)`, returning `key.title()`.")
    (root / "md/classes.py").write_text(TYPED)
    commit(root, "strict typing")
    assert only(root, node).stale is False
    edit(root, "class CIMultiDict(MultiDict[_V]):", "class CIMultiDict(Base[_V]):", path="md/classes.py")
    commit(root, "another base")
    finding = only(root, node)
    assert finding.stale is True and "CIMultiDict(MultiDict)" in finding.why


def test_a_base_inherited_through_a_base_of_the_module_is_still_a_base(tmp_path: Path) -> None:
    root, node = _classes(tmp_path, "md/classes.py#MultiDict",
                          "`MultiDict` is a `MultiMapping` whose `add(key, value)` appends the pair.")
    (root / "md/classes.py").write_text(TYPED)
    commit(root, "strict typing")
    assert only(root, node).stale is False
    edit(root, "class Base(MultiMapping[_V]):", "class Base:", path="md/classes.py")
    commit(root, "no longer a mapping")
    finding = only(root, node)
    assert finding.stale is True and "`MultiMapping`" in finding.why
