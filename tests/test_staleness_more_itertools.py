"""Staleness (issue 38): the readings that came from the errors of the more_itertools replay, once it joined the
tuning side, each with real git and files on both sides (no flag, and a flag). A deprecation warning that names the
builtin to use instead, and the package by its hyphenated name; a ``None`` a function only tests a name against; a
stub's signature that now requires parameters the node's signature does not list."""

from __future__ import annotations

from pathlib import Path

from autology_mcp.knowledge.trust.code_compare import named_deprecated
from test_staleness import commit, edit, one_file_repo, only
from test_staleness_sympy import capture

PAIRS = '''import warnings


def pair_up(*groups):
    """Pair the groups up, refusing groups of unequal length."""
    return zip(*groups)


def spread(values, gap=1):
    """Every gap-th value."""
    return list(zip(values[::gap]))
'''

REMOVED = '''    warnings.warn(
        "pair_up will be removed in a future version of pairs-kit. "
        "Use the builtin zip function with strict=True instead.",
        DeprecationWarning,
    )
'''


def _pairs_node(tmp_path: Path, ref: str, text: str) -> tuple[Path, str]:
    root = one_file_repo(tmp_path / "p", "kit/pairs.py", PAIRS, "pairs")
    node = capture(root, [ref], text, "pairs", type="component")
    commit(root, "record")
    return root, node


def _deprecate_pair_up(root: Path) -> None:
    edit(root, '    """Pair the groups up, refusing groups of unequal length."""\n',
         '    """Pair the groups up, refusing groups of unequal length."""\n' + REMOVED, path="kit/pairs.py")
    commit(root, "deprecate pair_up")


def test_a_removal_notice_deprecates_what_it_removes_not_what_to_use_nor_the_package() -> None:
    message = ("pair_up will be removed in a future version of pairs-kit. "
               "Use the builtin zip function with strict=True instead.")
    assert named_deprecated(message, {"zip", "pairs", "pair_up"}) == {"pair_up"}
    assert named_deprecated("BaseCommand will be removed in 9.0", {"BaseCommand"}) == {"BaseCommand"}
    assert named_deprecated("Use Command instead of BaseCommand", {"BaseCommand", "Command"}) == {"BaseCommand"}


def test_a_function_deprecated_in_favour_of_zip_leaves_a_node_on_another_function_that_uses_zip(tmp_path: Path) -> None:
    root, node = _pairs_node(tmp_path / "a", "kit/pairs.py#spread",
                             "`spread(values, gap=1)` returns every gap-th value as one-tuples, built with `zip(...)`; "
                             "pairs.py is the pairs module of pairs-kit.")
    _deprecate_pair_up(root)
    assert only(root, node).stale is False
    named, about = _pairs_node(tmp_path / "b", "kit/pairs.py#pair_up",
                               "`pair_up(*groups)` pairs the groups up with `zip`.")
    _deprecate_pair_up(named)
    finding = only(named, about)
    assert finding.stale is True and "`pair_up` is deprecated" in finding.why


SEEN = '''def first_seen(items, key=None):
    seen = set()
    for item in items:
        k = key(item) if key else item
        if k not in seen:
            seen.add(k)
            yield item
'''

SEEN_NODE = ("`first_seen(items, key=None)` yields each item whose key (the item itself, or `key(item)`) was not seen "
             "before, in first-seen order; keys are kept in a set.")


def test_a_none_the_function_only_tests_by_identity_is_no_value_it_gives(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "s", "kit/seen.py", SEEN, "seen")
    node = capture(root, ["kit/seen.py#first_seen"], SEEN_NODE, "first_seen", type="component")
    commit(root, "record")
    edit(root, "    seen = set()\n    for item in items:\n        k = key(item) if key else item\n",
         "    key = key if key is not None else (lambda x: x)\n    seen = set()\n    for item in items:\n"
         "        k = key(item)\n", path="kit/seen.py")
    commit(root, "test the key by identity")
    assert only(root, node).stale is False
    edit(root, "        k = key(item)\n", "        k = key(item) or None\n", path="kit/seen.py")
    commit(root, "every item without a key is one")
    assert only(root, node).stale is True  # a None the code now gives as a value


STUB = '''from typing import Iterable, Iterator, Tuple, TypeVar, overload

_T = TypeVar('_T')
_T1 = TypeVar('_T1')

def pair_up(*groups: Iterable[_T]) -> Iterator[Tuple[_T, ...]]: ...
def spread(values: Iterable[_T], gap: int = ...) -> Iterator[Tuple[_T]]: ...
'''

STUB_NODE = ("In pairs.pyi, `pair_up(*groups: Iterable[_T]) -> Iterator[Tuple[_T, ...]]` types every group with one "
             "and the same _T and returns tuples of any length.")


def test_a_stub_that_now_requires_parameters_the_written_signature_does_not_list_is_a_flag(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "t", "kit/pairs.pyi", STUB, "stub")
    node = capture(root, ["kit/pairs.pyi#L6-L7"], STUB_NODE, "pair_up's stub", type="issue")
    commit(root, "record")
    edit(root, "def spread(values: Iterable[_T], gap: int = ...)", "def spread(values: Iterable[_T], gap: int = ..., "
         "*, strict: bool = ...)", path="kit/pairs.pyi")
    commit(root, "an optional keyword of another function")
    assert only(root, node).stale is False
    edit(root, "def pair_up(*groups: Iterable[_T]) -> Iterator[Tuple[_T, ...]]: ...",
         "def pair_up(*groups: Iterable[_T], fill: _T = ...) -> Iterator[Tuple[_T, ...]]: ...", path="kit/pairs.pyi")
    commit(root, "an optional keyword")
    assert only(root, node).stale is False  # an option added: the calls the node describes still work
    edit(root, "def pair_up(*groups: Iterable[_T], fill: _T = ...) -> Iterator[Tuple[_T, ...]]: ...",
         "@overload\ndef pair_up(__g1: Iterable[_T1]) -> Iterator[Tuple[_T1]]: ...\n@overload\n"
         "def pair_up(__g1: Iterable[_T], __g2: Iterable[_T], *groups: Iterable[_T]) -> Iterator[Tuple[_T, ...]]: ...",
         path="kit/pairs.pyi")
    commit(root, "overloads per arity")
    assert only(root, node).stale is True


INSTALL = '''class I18n:
    def install(self, gettext, ngettext, newstyle=None):
        if newstyle is not None:
            self.newstyle = newstyle
        self.globals.update(gettext=gettext, ngettext=ngettext)
'''

INSTALL_NODE = ("`I18n.install(gettext, ngettext, newstyle=None)` puts its two callables into `globals`. There is no "
                "context-aware variant (pgettext); messages that need a context put it into the msgid.")


def test_a_name_in_an_aside_after_the_words_that_deny_it_is_denied() -> None:
    """With a ``None`` tested by identity no longer a value (above), the symbol gaining ``pgettext=None`` and ``if
    pgettext is not None`` is flagged for what the node says of it: the name it gives for what there is not."""
    from autology_mcp.knowledge.trust.denials import denied
    assert denied(INSTALL_NODE) == {"pgettext"}
    assert "code" not in denied("`Abort` and Exit(code) derive from RuntimeError, not from ClickException.")
    assert denied("The type is subclassable (basetype) and defines no methods of its own.") == set()


def test_a_symbol_gaining_the_name_an_aside_denies_is_a_flag(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "i", "kit/i18n.py", INSTALL, "i18n")
    node = capture(root, ["kit/i18n.py#I18n.install"], INSTALL_NODE, "i18n installs two callables", type="component")
    commit(root, "record")
    edit(root, "        self.globals.update(gettext=gettext, ngettext=ngettext)\n",
         "        self.globals.update(gettext=gettext, ngettext=ngettext)  # both\n", path="kit/i18n.py")
    commit(root, "a comment")
    assert only(root, node).stale is False
    edit(root, "    def install(self, gettext, ngettext, newstyle=None):\n",
         "    def install(self, gettext, ngettext, newstyle=None, pgettext=None):\n", path="kit/i18n.py")
    edit(root, "        self.globals.update(gettext=gettext, ngettext=ngettext)  # both\n",
         "        if pgettext is not None:\n            self.globals.update(pgettext=pgettext)\n"
         "        self.globals.update(gettext=gettext, ngettext=ngettext)\n", path="kit/i18n.py")
    commit(root, "pgettext")
    finding = only(root, node)
    assert finding.stale is True and "`pgettext`, which the node says it has not" in finding.why
