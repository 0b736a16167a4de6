"""One normalisation in every channel and the verdict (issue 13, item 6): accents, case, full-width
forms, CJK, Arabic and emoji are treated the same by node search, code search and unified search."""

from __future__ import annotations

from pathlib import Path

import pytest
from core_helpers import git

from autology_mcp.code.service import code_search
from autology_mcp.common.errors import ValidationError
from autology_mcp.common.text import cjk_bigrams, code_query_words, fold, keyword_coverage, keyword_stem, keyword_terms
from autology_mcp.knowledge.service import Autology
from autology_mcp.retrieval.engine import search


def test_fold_unifies_case_accents_and_compatibility_forms_but_keeps_kana():
    assert fold("Café RÉSUMÉ naïve") == "cafe resume naive"
    assert fold("ＣＡＦÉ") == "cafe"  # full-width letters
    assert fold("ﬁle") == "file"  # a ligature
    assert fold("がぎぐ") == "がぎぐ"  # the voicing mark is part of the kana, not an accent
    assert fold("Straße") == "straße"


def test_cjk_runs_become_bigrams_and_other_text_is_untouched():
    assert cjk_bigrams("日本語の検索 works") == " 日本 本語 語の の検 検索  works"
    assert cjk_bigrams("a 字 b") == "a  字  b"
    assert cjk_bigrams("plain ascii") == "plain ascii"


def test_the_verdict_matches_what_the_channels_found():
    stems = [keyword_stem(t) for t in keyword_terms("naive CAFÉ")]
    assert keyword_coverage(stems, "A naïve café")[0] == 1.0
    stems = [keyword_stem(t) for t in keyword_terms("日本語")]
    assert keyword_coverage(stems, "日本語の検索について")[0] == 1.0


def test_able_words_meet_their_verb_when_a_long_stem_is_left():
    """"make retries configurable" finds a decision saying "retry policy is configured"; short
    stems keep their "-able" so "variable" does not match "various", nor "table" "tab"."""
    def found(query_word: str, text: str) -> bool:
        return keyword_coverage([keyword_stem(query_word)], text)[0] == 1.0

    assert found("configurable", "the retry policy is configured by mounting an adapter")
    assert found("configurable", "the configuration file")
    assert found("serializable", "a serialized payload")
    assert found("searchable", "every field is searched")
    assert not found("variable", "various options")
    assert not found("table", "open a new tab")
    assert not found("disable", "dispatch the event")
    assert found("variable", "two variables") and found("table", "the tables")


def test_code_query_words_keep_every_script():
    assert code_query_words("café") == ["cafe"]
    assert code_query_words("日本語") == ["日本", "本語"]
    assert code_query_words("مرحبا بالعالم") == ["مرحبا", "بالعالم"]
    assert code_query_words("🚀") == []


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text(
        "# Menu\n\nThe naïve café serves résumé tea.\n\n## 検索\n\n日本語の検索をサポートします。\n\n"
        "## عربي\n\nمرحبا بالعالم من المقهى\n",
        encoding="utf-8",
    )
    git(root, "add", "-A")
    git(root, "commit", "-qm", "readme")
    return root


def test_node_search_finds_accents_cjk_and_refuses_nothing_searchable(project):
    service = Autology.open(project)
    try:
        accented = service.capture("Café résumé naïve", "Why the café keeps a naïve menu.", type="concept").id
        japanese = service.capture("日本語の検索", "検索は二文字の単語でも動きます。", type="concept").id
        assert [h.node.id for h in service.query("naive")] == [accented]
        assert [h.node.id for h in service.query("CAFE")] == [accented]
        assert [h.node.id for h in service.query("日本語")] == [japanese]
        assert [h.node.id for h in service.query("検索")] == [japanese]
        assert service.query("🚀") == []
    finally:
        service.close()


def test_code_search_finds_accented_cjk_and_arabic_words(project):
    for query in ("café", "cafe", "naive", "日本語", "検索", "بالعالم"):
        hits = code_search(project, query)["hits"]
        assert [h["path"] for h in hits] == ["README.md"], query
    with pytest.raises(ValidationError, match="no searchable words"):
        code_search(project, "🚀")


def test_unified_search_keeps_what_its_channels_found(project):
    code_search(project, "menu")  # builds the code index
    service = Autology.open(project)
    try:
        node = service.capture("Café résumé naïve", "Why the café keeps a naïve menu.", type="concept").id
        for query in ("naive", "naïve", "café"):
            answer = search(project, query, store=service.store)
            assert answer["verdict"] != "no_evidence", (query, answer["verdict"])
            refs = {h["ref"] for h in answer["hits"]}
            assert node in refs and any(r.startswith("README.md") for r in refs), (query, refs)
        answer = search(project, "日本語の検索", store=service.store)
        assert any(h["ref"].startswith("README.md") for h in answer["hits"]) and answer["verdict"] != "no_evidence"
    finally:
        service.close()
