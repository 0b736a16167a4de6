"""Staleness (issue 38): readings that came from the errors of the tomlkit replay, once it joined the tuning side,
each with real git and files on both sides (no flag, and a flag). A defect's code rewritten first and fixed after, by
a test widened with a clause; a caller that now hands the function to a wrapper instead of calling it."""

from __future__ import annotations

from pathlib import Path

from test_staleness import commit, edit, git, one_file_repo, only
from test_staleness_sympy import capture

BARE_KEY = '''class Parser:
    def _parse_bare_key(self):
        while self._current.is_bare_key_char() or self._current.is_spaces():
            if not self.inc():
                break
        key = self.extract().strip()
        if not key:
            raise self.parse_error("empty key")
        if " " in key:
            raise self.parse_error(f"Invalid key {key}")
        return key
'''

SCANNED = BARE_KEY.replace('''        while self._current.is_bare_key_char() or self._current.is_spaces():
            if not self.inc():
                break
''', '''        self._src.advance_while(_BARE_KEY_OR_SPACE)
''')

TAB = ("`Parser._parse_bare_key()` consumes bare-key characters and spaces or tabs, strips the text and raises for a "
       "key that still holds a space. The check is only for ' ', so `a\\tb = 1` parses to the key 'a\\tb'.")


def test_a_defect_fixed_after_a_rewrite_that_kept_it_is_a_flag(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "toml/parser.py", BARE_KEY, "parser")
    node = capture(root, ["toml/parser.py#Parser._parse_bare_key"], TAB, "A tab inside a bare key is accepted")
    commit(root, "record")
    (root / "toml/parser.py").write_text(SCANNED)
    commit(root, "scan the key in one call")
    assert only(root, node).stale is False  # the same characters, the same check: the defect holds
    edit(root, 'if " " in key:', 'if " " in key or "\\t" in key:', path="toml/parser.py")
    commit(root, "reject tabs in bare keys")
    sha = git(root, "rev-parse", "--short=9", "HEAD").strip()
    finding = only(root, node)
    assert finding.stale is True and "tests a new condition" in finding.why and sha in finding.why


def test_a_rewrite_then_a_change_that_adds_no_test_is_no_flag(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "toml/parser.py", BARE_KEY, "parser")
    node = capture(root, ["toml/parser.py#Parser._parse_bare_key"], TAB, "A tab inside a bare key is accepted")
    commit(root, "record")
    (root / "toml/parser.py").write_text(SCANNED)
    commit(root, "scan the key in one call")
    edit(root, 'f"Invalid key {key}"', 'f"Invalid bare key {key!r}"', path="toml/parser.py")
    commit(root, "a clearer message")
    assert only(root, node).stale is False


def test_a_test_that_only_changes_a_blank_string_for_another_is_no_new_test(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "toml/parser.py", BARE_KEY, "parser")
    node = capture(root, ["toml/parser.py#Parser._parse_bare_key"], TAB, "A tab inside a bare key is accepted")
    commit(root, "record")
    edit(root, 'if " " in key:', 'if "\\t" in key:', path="toml/parser.py")
    commit(root, "a tab, not a space")  # one test for another: not a fix added while keeping what it tested
    assert "tests a new condition" not in (only(root, node).why or "")


VALUE = '''class Parser:
    def _parse_value(self):
        c = self._current
        if c == "[":
            return self._parse_array()
        return self._parse_scalar()

    def _parse_array(self):
        elems = []
        while self._current != "]":
            elems.append(self._parse_value())
        return elems
'''

ARRAY = "`Parser._parse_array()` is what `_parse_value()` calls on '[': it parses values until ']'."


def test_a_caller_that_hands_the_function_to_a_wrapper_still_calls_it(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "toml/parser.py", VALUE, "parser")
    node = capture(root, ["toml/parser.py#Parser._parse_array"], ARRAY, "arrays", type="component")
    commit(root, "record")
    edit(root, "return self._parse_array()", "return self._parse_nested(self._parse_array)", path="toml/parser.py")
    commit(root, "a depth limit around nested values")
    assert only(root, node).stale is False
    edit(root, "return self._parse_nested(self._parse_array)", "return self._parse_list()", path="toml/parser.py")
    commit(root, "another parser for lists")
    sha = git(root, "rev-parse", "--short=9", "HEAD").strip()
    finding = only(root, node)
    assert finding.stale is True and "`_parse_value` no longer calls `_parse_array`" in finding.why and sha in finding.why


SPLIT = '''def split_before(iterable, pred):
    buf = []
    for item in iterable:
        if pred(item) and buf:
            yield buf
            buf = []
        buf.append(item)
    yield buf
'''

EMPTY = ("`split_before(iterable, pred)` ends with an unconditional `yield buf`, so an empty iterable gives `[[]]`, "
         "one empty list.")


def test_a_clause_of_a_test_now_tested_alone_as_well_is_a_new_test(tmp_path: Path) -> None:
    """The clauses of an and/or count, and so does how often a condition is tested: ``if buf:`` added after a
    loop that tests ``pred(item) and buf`` is a test added (more_itertools' M02)."""
    root = one_file_repo(tmp_path / "r", "it/more.py", SPLIT, "split")
    node = capture(root, ["it/more.py#split_before"], EMPTY, "split_before on an empty iterable yields one empty list")
    commit(root, "record")
    edit(root, "        buf.append(item)\n    yield buf\n", "        buf.append(item)\n    if buf:\n        yield buf\n",
         path="it/more.py")
    commit(root, "nothing for an empty iterable")
    finding = only(root, node)
    assert finding.stale is True and "tests a new condition" in finding.why
