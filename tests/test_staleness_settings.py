"""Staleness (issue 38): a setting the node gives a value (`ensure_ascii` is True), set to another value later
(tablib's T20). The parsing of what a node states, and real git on both sides (no flag, and a flag)."""

from __future__ import annotations

import ast
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from test_staleness import commit, edit, one_file_repo, only
from test_staleness_sympy import capture

from autology_mcp.knowledge.trust.settings import set_otherwise, stated


def test_what_a_node_states_a_name_is() -> None:
    assert stated("The options keep their defaults: `ensure_ascii` is True, so text is escaped.") == {"ensure_ascii": "True"}
    assert stated("`strict` defaults to `False`; pass `follow_redirects=False` to stop; `retries` is 3.") == {
        "strict": "False", "follow_redirects": "False", "retries": "3"}
    assert stated("`ensure_ascii` is Truthy") == {}  # a word, not the value
    assert stated("`ensure_ascii` is not True") == {}  # not a value it states
    assert stated("ensure_ascii is True") == {}  # a name in backticks only


@given(st.text(max_size=200))
def test_stating_never_fails_and_gives_only_values(text: str) -> None:
    for value in stated(text).values():
        assert value in {"True", "False", "None"} or value.lstrip("-").isdigit()


def test_a_setting_set_to_another_constant_is_found_and_the_same_or_an_unstated_one_is_not() -> None:
    then = ast.parse("json.dumps(data, default=handler)")
    said = "`ensure_ascii` is True and `indent` is None."
    assert set_otherwise(said, then, ast.parse("json.dumps(data, default=handler, ensure_ascii=False)")) == [
        "`ensure_ascii`, which the node says is True, is set to False"]
    assert set_otherwise(said, then, ast.parse("json.dumps(data, default=handler, ensure_ascii=True)")) == []
    assert set_otherwise(said, then, ast.parse("json.dumps(data, sort_keys=False)")) == []  # a name it states not
    assert set_otherwise(said, then, ast.parse("json.dumps(data, ensure_ascii=flag)")) == []  # not a constant
    assert set_otherwise(said, then, ast.parse("self.indent = 4")) == [
        "`indent`, which the node says is None, is set to 4"]
    # set so already when the node was written: it said what it meant about another place
    assert set_otherwise(said, ast.parse("f(ensure_ascii=False)"), ast.parse("f(ensure_ascii=False)\ng()")) == []


JSON_FORMAT = '''import json


def export_set(dataset):
    return json.dumps(dataset.dict, default=serialize_objects_handler)
'''

ESCAPED = ("Exports call `json.dumps(..., default=serialize_objects_handler)`; the other options keep their "
           "defaults: `ensure_ascii` is True, so non-ASCII text is written as escapes.")


def test_a_file_that_now_passes_another_value_for_a_setting_the_node_states_is_a_flag(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "fmt/_json.py", JSON_FORMAT, "json")
    node = capture(root, ["fmt/_json.py"], ESCAPED, "JSON output is ASCII-escaped", type="convention")
    commit(root, "record")
    edit(root, "default=serialize_objects_handler)", "default=serialize_objects_handler, sort_keys=False)",
         path="fmt/_json.py")
    commit(root, "keep the order")
    assert only(root, node).stale is False  # a setting the node does not state
    edit(root, "sort_keys=False)", "sort_keys=False, ensure_ascii=False)", path="fmt/_json.py")
    commit(root, "unicode as is")
    finding = only(root, node)
    assert finding.stale is True and "`ensure_ascii`, which the node says is True, is set to False" in finding.why


def test_a_symbol_that_now_passes_another_value_for_a_setting_the_node_states_is_a_flag(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "fmt/_json.py", JSON_FORMAT, "json")
    node = capture(root, ["fmt/_json.py#export_set"], ESCAPED, "JSON output is ASCII-escaped", type="convention")
    commit(root, "record")
    edit(root, "default=serialize_objects_handler)", "default=serialize_objects_handler, ensure_ascii=False)",
         path="fmt/_json.py")
    commit(root, "unicode as is")
    finding = only(root, node)
    assert finding.stale is True and "`ensure_ascii`, which the node says is True, is set to False" in finding.why
