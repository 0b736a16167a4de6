"""Identifier-shaped query words (issue 15): which words are matched whole and unstemmed by the
code index, and the pattern that finds them."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from autology_mcp.common.text import code_identifiers, identifier_pattern, identifier_phrase


def test_which_query_words_are_identifiers():
    assert code_identifiers("PYTEST_ADDOPTS") == ["pytest_addopts"]
    assert code_identifiers("Fix Response.iter_bytes() when HTTPError is raised") == ["iter_bytes", "httperror"]
    assert code_identifiers("Drop unneccessary `binascii` import") == ["binascii"]
    assert code_identifiers("where is _preparse called, and getFooBar?") == ["_preparse", "getfoobar"]
    assert code_identifiers("Fix the timeout in the client") == []  # plain words: the stemmed channels' job
    assert code_identifiers("URL APIs HTTP `ab` a_ 2to3_fix") == []  # capitals alone, under 3 characters, a digit first
    assert code_identifiers("x_y") == ["x_y"]
    # a version number's first two parts (the index's words leave numbers out)
    assert code_identifiers("🔖 Release version 0.12.2") == ["0.12"]
    assert code_identifiers("Add support for Python 3.10.") == ["3.10"]
    assert code_identifiers("v2.31.0: fix `merge_setting`") == ["merge_setting", "2.31"]
    assert code_identifiers("Fix #4945 in 2to3 and x1.2") == []


def test_the_pattern_finds_an_identifier_whole_only():
    pattern = identifier_pattern(["pytest_addopts"])
    assert pattern.findall("os.environ.get('PYTEST_ADDOPTS')") == ["PYTEST_ADDOPTS"]
    assert pattern.findall("def pytest_addoption(parser): pass") == []
    assert pattern.findall("MY_PYTEST_ADDOPTS = 1; pytest_addopts_extra()") == []
    assert identifier_pattern([]) is None
    assert identifier_phrase("pytest_addopts") == ["pytest", "addopts"]
    assert identifier_phrase("HTTPError") == ["http", "error"]


def test_the_pattern_finds_a_version_number_whole_only():
    pattern = identifier_pattern(["0.12", "3.10"])
    text = '__version__ = "0.12.1"  # 10.12, 1.0.12, 0.120; Python 3.10 (3.10.4) v3.10 but not xv3.10 or 13.10'
    assert pattern.findall(text) == ["0.12", "3.10", "3.10", "3.10"]
    assert identifier_phrase("0.12") == ["0", "12"]  # the FTS5 phrase that finds 0.12.1


words = st.text(alphabet=st.sampled_from("abcXYZ_09 .`()év"), max_size=40)


@given(words)
def test_every_identifier_is_found_whole_in_its_query(query: str):
    found = code_identifiers(query)
    assert len(found) == len(set(found))
    pattern = identifier_pattern(found)
    if pattern is None:
        assert found == []
        return
    seen = {m.lower() for m in pattern.findall(query)}
    assert seen == set(found)
    for ident in found:
        assert ident == ident.lower() and re.fullmatch(r"[a-z_][a-z0-9_]*|\d+\.\d+", ident)


# ------------------------------------------------------------------------------ Porter stems


def test_porter_stems_are_fts5s():
    from autology_mcp.common.text import claim_normal, porter_stem

    assert [porter_stem(w) for w in ("retries", "retry", "parsing", "connection", "naïve")] == [
        "retri", "retri", "pars", "connect", "naiv"]  # fmt: skip
    assert porter_stem("a-b") == "a-b" and porter_stem("") == ""  # split or dropped: the word itself
    assert claim_normal("params") == claim_normal("parameters") and claim_normal("ctx") == claim_normal("context")


@given(st.lists(st.text(alphabet=st.sampled_from("abcdefgisnotre-é日 "), max_size=12), max_size=30))
def test_porter_stems_in_a_batch_equal_one_by_one(words: list[str]):
    from autology_mcp.common import text

    text._porter_cache.clear()
    together = text.porter_stems(words)
    text._porter_cache.clear()
    assert together == [text.porter_stem(w) for w in words]



_NAME = st.text(st.sampled_from(list("abksi_019.")), min_size=1, max_size=10)
_AROUND = st.text(st.sampled_from(list("abksiXYZ_019. -\n") + ["é"]), max_size=30)
# each letter as the text may hold it: its cases, and the non-ASCII letters a case-blind pattern takes for it
_LOOKALIKES = {"k": ["k", "K", "\u212a"], "s": ["s", "S", "\u017f"], "i": ["i", "I", "\u0130", "\u0131"],
               "a": ["a", "A"], "b": ["b", "B"]}


@given(st.data())
def test_the_quick_check_finds_what_the_pattern_finds(data):
    """held_whole (the code index's check before running the pattern) gives exactly the pattern's own
    findings: ASCII names in texts that hold them in any case, or as non-ASCII look-alikes, or not."""
    from autology_mcp.code.query import held_whole

    names = [n for n in dict.fromkeys(data.draw(st.lists(_NAME, min_size=1, max_size=3))) if n.strip("._")]
    pattern = identifier_pattern(names)
    if pattern is None:
        return
    written = "".join(data.draw(st.sampled_from(_LOOKALIKES.get(ch, [ch]))) for ch in data.draw(st.sampled_from(names)))
    text = data.draw(_AROUND) + written + data.draw(_AROUND)
    assert held_whole(text, pattern, names) == {m.lower() for m in pattern.findall(text)}


def test_the_quick_check_runs_the_pattern_on_a_text_with_look_alike_letters():
    from autology_mcp.code.query import held_whole

    pattern = identifier_pattern(["s_ab", "k_ab"])
    assert held_whole("x \u017f_ab \u212a_AB y", pattern, ["s_ab", "k_ab"]) == {"\u017f_ab", "k_ab"}
    assert held_whole("x S_AB y", pattern, ["s_ab", "k_ab"]) == {"s_ab"}
    assert held_whole("x s_abc y", pattern, ["s_ab", "k_ab"]) == set()
