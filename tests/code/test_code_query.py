from pathlib import Path

import pytest
from code_fixtures import git, write

from autology_mcp.code import service
from autology_mcp.code.build import build
from autology_mcp.code.query import path_score, symbol_score
from autology_mcp.common.errors import NotFoundError, ValidationError


def test_natural_question_finds_the_method(repo: Path):
    build(repo)
    r = service.code_search(repo, "where do we reconnect the websocket after a timeout?", top=5, refresh=False)
    top = r["hits"][0]
    assert top["path"] == "src/app/websocket.py"
    assert top["symbol"] == "WebSocketClient" or top["symbol"].startswith("WebSocketClient")
    assert top["start_line"] <= 20 <= top["end_line"]  # reconnect_after_timeout's body
    assert top["location"] == f"src/app/websocket.py:{top['start_line']}-{top['end_line']}"
    assert set(top["scores"]) == {"bm25", "symbol", "path", "vector", "exact", "recency", "area"}
    assert "reconnect" in top["snippet"].lower()
    assert r["trace"]["words"] == ["reconnect", "websocket", "after", "timeout"]


def test_camel_case_and_other_languages(repo: Path):
    build(repo)
    hits = service.code_search(repo, "listen together", top=3, refresh=False)["hits"]
    assert hits[0]["path"] == "web/client.ts" and hits[0]["symbol"] == "startListenTogether"
    hits = service.code_search(repo, "serve health", top=3, refresh=False)["hits"]
    assert hits[0]["path"] == "server/main.go"
    hits = service.code_search(repo, "invoice total", top=3, refresh=False)["hits"]
    assert hits[0]["symbol"] == "compute_invoice_total"


def test_docs_are_searchable_with_heading_breadcrumbs(repo: Path):
    build(repo)
    hits = service.code_search(repo, "installation make install", top=3, refresh=False)["hits"]
    assert hits[0]["path"] == "docs/guide.md" and hits[0]["symbol"] == "Guide > Installation"


def test_ranking_is_deterministic_and_top_is_respected(repo: Path):
    build(repo)
    a = service.code_search(repo, "socket url connect", top=4, refresh=False)
    b = service.code_search(repo, "socket url connect", top=4, refresh=False)
    assert [h["location"] for h in a["hits"]] == [h["location"] for h in b["hits"]]
    assert [h["score"] for h in a["hits"]] == [h["score"] for h in b["hits"]]
    assert len(a["hits"]) <= 4
    assert [h["score"] for h in a["hits"]] == sorted((h["score"] for h in a["hits"]), reverse=True)


def test_max_hits_per_file(repo: Path):
    write(repo, "big.py", "\n\n".join(f"def socket_fn_{i}():\n    return 'socket'" for i in range(10)) + "\n")
    git(repo, "add", "big.py")
    build(repo)
    hits = service.code_search(repo, "socket", top=10, refresh=False)["hits"]
    assert sum(1 for h in hits if h["path"] == "big.py") == 2


def test_refresh_builds_a_missing_index(repo: Path):
    r = service.code_search(repo, "refund payment", top=3)
    assert r["trace"]["refresh"]["mode"] == "full"
    assert r["hits"][0]["symbol"] == "refund_payment"


def test_bad_queries(repo: Path):
    with pytest.raises(NotFoundError):
        service.code_search(repo, "anything", refresh=False)
    build(repo)
    with pytest.raises(ValidationError, match="non-empty"):
        service.code_search(repo, "   ", refresh=False)
    with pytest.raises(ValidationError, match="no searchable words"):
        service.code_search(repo, "the of and ???", refresh=False)
    with pytest.raises(ValidationError, match="top"):
        service.code_search(repo, "socket", top=0, refresh=False)
    assert service.code_search(repo, "zzzqqqxxx", refresh=False)["hits"] == []


def test_channel_scores():
    assert path_score(["websocket"], "src/app/websocket.py") == 1.0
    assert path_score(["websockt"], "src/app/websocket.py") > 0.4  # misspelled still matches
    assert path_score(["billing"], "src/app/websocket.py") == 0.0
    assert symbol_score({"reconnect", "timeout"}, "reconnect_after_timeout") > 0.5
    assert symbol_score({"billing"}, "reconnect_after_timeout") == 0.0


def test_common_words_are_left_out_of_the_bm25_pass_only_above_the_budget(repo: Path):
    from autology_mcp.code.config import config_from_dict
    from autology_mcp.code.layout import IndexLocation
    from autology_mcp.code.query import search
    from autology_mcp.code.store import IndexDB

    for i in range(20):
        write(repo, f"pkg/m{i}.py", f"def common_{i}():\n    return 'shared word'\n")
    git(repo, "add", "pkg")
    build(repo)
    cfg = config_from_dict({"lexical_budget": 5, "common_word_ratio": 0.3})
    with IndexDB(IndexLocation.of(repo, cfg).db, create=False) as db:
        r = search(db, cfg, "shared invoice")
        assert r["trace"]["lexical_words"] == ["invoice"]  # 'shared' is in most chunks
        r = search(db, config_from_dict({"lexical_budget": 10000}), "shared invoice")
        assert r["trace"]["lexical_words"] == ["shared", "invoice"]


def test_ties_at_the_candidate_cut_do_not_depend_on_build_history(repo: Path):
    from autology_mcp.code.config import config_from_dict

    (repo / ".autology").mkdir(exist_ok=True)
    (repo / ".autology" / "config.toml").write_text("[index]\ncandidates = 10\n")
    body = "def twin():\n    return 'identical twin body'\n"
    for i in range(30):
        write(repo, f"pkg/t{i:02d}.py", body)
    git(repo, "add", "pkg")
    build(repo)
    for i in range(0, 30, 3):  # re-create some files: their chunks get new, higher rowids
        (repo / f"pkg/t{i:02d}.py").unlink()
    build(repo)
    for i in range(0, 30, 3):
        write(repo, f"pkg/t{i:02d}.py", body)
    build(repo)
    incremental = service.code_search(repo, "identical twin", top=10, refresh=False)["hits"]
    build(repo, rebuild=True)
    fresh = service.code_search(repo, "identical twin", top=10, refresh=False)["hits"]
    assert [h["path"] for h in incremental] == [h["path"] for h in fresh]
    assert [h["path"] for h in fresh] == [f"pkg/t{i:02d}.py" for i in range(10)]
    assert config_from_dict({"candidates": 10}).candidates == 10


def test_tests_docs_and_changelogs_rank_below_source_unless_asked_for():
    from autology_mcp.code.config import DEFAULT_AREA_WEIGHTS
    from autology_mcp.code.query import area_weight, area_weights_for

    plain = area_weights_for(DEFAULT_AREA_WEIGHTS, ["retry", "backoff"])
    assert plain is DEFAULT_AREA_WEIGHTS
    assert area_weight("tests/test_retry.py", plain) == 0.6
    assert area_weight("docs/retry.md", plain) == 0.7
    assert area_weight("CHANGES.rst", plain) == 0.5
    assert area_weight("src/retry.py", plain) == 1.0
    asked = area_weights_for(DEFAULT_AREA_WEIGHTS, ["retry", "tests"])
    assert area_weight("tests/test_retry.py", asked) == 0.8  # halfway to 1
    assert area_weight("docs/retry.md", asked) == 0.7  # not asked for
    asked = area_weights_for(DEFAULT_AREA_WEIGHTS, ["changelog", "docs"])
    assert area_weight("CHANGES.rst", asked) == 0.75
    assert area_weight("docs/retry.md", asked) == 0.85
    assert area_weight("tests/test_retry.py", asked) == 0.6


@pytest.mark.parametrize("path", ["src/retry_test.go", "retry_test.go", "pkg/testdata/retry.txt", "src/retry.test.ts",
                                  "lib/retry.spec.js", "src/__tests__/retry.tsx", "spec/retry_spec.rb",
                                  "lib/retry_spec.rb", "pkg/retry_test.py", "src/conftest.py"])
def test_tests_of_other_languages_rank_below_source(path):
    """Go's ``_test.go`` and ``testdata/``, JavaScript's ``.test.``/``.spec.`` and ``__tests__/``, Ruby's
    ``spec/``: on a Go repository (fzf) a ``_test.go`` file was among the top three hits for 40 of 150
    commit subjects while weighing as much as source."""
    from autology_mcp.code.config import DEFAULT_AREA_WEIGHTS
    from autology_mcp.code.query import area_weight, area_weights_for

    assert area_weight(path, DEFAULT_AREA_WEIGHTS) == 0.6
    for word in ("test", "spec"):
        assert area_weight(path, area_weights_for(DEFAULT_AREA_WEIGHTS, ["retry", word])) == 0.8
    for source in ("src/retry.go", "lib/retry.ts", "lib/specification.rb", "src/contest.py", "src/latest.go"):
        assert area_weight(source, DEFAULT_AREA_WEIGHTS) == 1.0


@pytest.mark.parametrize("path", ["bench/retry.py", "packages/bench/retry.ts", "benches/retry.rs", "benchmarks/bench_retry.py"])
def test_benchmarks_rank_below_source_unless_asked_for(path):
    """zod's packages/bench/ files came first for "how does z.discriminatedUnion pick the option"."""
    from autology_mcp.code.config import DEFAULT_AREA_WEIGHTS
    from autology_mcp.code.query import area_weight, area_weights_for

    assert area_weight(path, DEFAULT_AREA_WEIGHTS) == 0.6
    assert area_weight(path, area_weights_for(DEFAULT_AREA_WEIGHTS, ["retry", "benchmark"])) == 0.8
    assert area_weight("src/benchmarking_utils.py", DEFAULT_AREA_WEIGHTS) == 1.0


def test_a_chunk_is_found_by_its_neighbours_names_and_an_edit_leaves_no_stale_terms(tmp_path: Path):
    """Context-aware chunks (issue 15): a chunk's FTS body carries the names of the definitions
    before and after it, and rewriting the file removes exactly what was indexed (contentless FTS5
    deletes must repeat the indexed values, neighbours included)."""
    import sqlite3

    from autology_mcp.code.layout import IndexLocation
    from autology_mcp.code.config import load_index_config

    root = tmp_path / "p"
    body = "\n".join(f"    x{i} = {i}" for i in range(12))
    write(root, "src/streams.py", f"def open_stream(url):\n{body}\n    return url\n\n\ndef drain_buffers(q):\n{body}\n    return q\n")
    build(root)
    db = IndexLocation.of(root, load_index_config(root)).db

    def matching(word: str) -> list[str]:
        conn = sqlite3.connect(db)
        try:
            return [r[0] for r in conn.execute(
                "SELECT c.symbol_name FROM chunks_fts f JOIN chunks c ON c.id = f.rowid"
                " WHERE chunks_fts MATCH ? ORDER BY c.start_line", (f"body:{word}",))]
        finally:
            conn.close()

    assert matching("drain") == ["open_stream", "drain_buffers"]  # its neighbour's name, and its own text
    write(root, "src/streams.py", f"def open_stream(url):\n{body}\n    return url\n\n\ndef flush_queue(q):\n{body}\n    return q\n")
    build(root)
    assert matching("drain") == []  # the old neighbour name went with the old rows
    assert matching("flush") == ["open_stream", "flush_queue"]
    conn = sqlite3.connect(db)
    try:
        conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES('integrity-check')")
    finally:
        conn.close()


def _hooks_and_one_env_reader(repo: Path, hooks: int) -> None:
    """``hooks`` plugin files whose ``pytest_addoption`` stems like ``addopts``, and the one file that
    reads ``PYTEST_ADDOPTS`` (issue 15's error analysis, on a small scale)."""
    for i in range(hooks):
        write(repo, f"plugins/p{i:02d}.py",
              f"def pytest_addoption(parser):\n    parser.addoption('--opt{i}', help='pytest addoption {i}')\n")
    write(repo, "config/env.py", "import os\n\n\ndef read_env(args):\n"
          "    extra = os.environ.get('PYTEST_ADDOPTS', '')\n    return extra.split() + args\n")
    git(repo, "add", "plugins", "config")


def test_an_identifier_found_whole_outranks_its_stem_alikes(repo: Path):
    _hooks_and_one_env_reader(repo, 10)
    build(repo)
    for query in ("PYTEST_ADDOPTS", "pytest_addopts", "where is PYTEST_ADDOPTS read"):
        hits = service.code_search(repo, query, top=5, refresh=False)["hits"]
        assert hits[0]["path"] == "config/env.py", query
        assert hits[0]["scores"]["exact"] == 1.0 and all(h["scores"]["exact"] == 0.0 for h in hits[1:])
    # a plain word is left to the stemmed channels: no exact part
    assert all(h["scores"]["exact"] == 0.0 for h in service.code_search(repo, "addopts", top=5, refresh=False)["hits"])


def test_a_release_subject_finds_the_file_holding_the_version(repo: Path):
    """The index keeps no number-only words, so only the ``exact`` part can meet ``0.12.1`` for a
    query naming ``0.12.2``; a ``--version`` option, a newer release's ``10.12`` and a ``1.0.12``
    match "version" but not the number."""
    write(repo, "pkg/__init__.py", '"""The package."""\n\n__version__ = "0.12.1"\n')
    write(repo, "pkg/cli.py", "def show_version(version: bool = False):\n"
          "    '''Print the version and exit: --version.'''\n    return version\n")
    write(repo, "pkg/compat.py", "# version checks: 10.12 and 1.0.12 are other versions\nVERSION_MIN = (3, 9)\n")
    git(repo, "add", "pkg")
    build(repo)
    hits = service.code_search(repo, "Release version 0.12.2", top=5, refresh=False)["hits"]
    assert hits[0]["path"] == "pkg/__init__.py" and hits[0]["scores"]["exact"] == 1.0
    assert all(h["scores"]["exact"] == 0.0 for h in hits[1:])
    assert {h["path"] for h in hits} == {"pkg/__init__.py", "pkg/cli.py", "pkg/compat.py"}


def test_an_identifier_outside_the_bm25_candidates_is_still_found(repo: Path):
    """With room for 10 BM25 candidates the 30 hooks fill it; the chunk holding the identifier whole
    comes in through the identifier's phrase, and a stem-alike the phrase also matched does not."""
    (repo / ".autology").mkdir(exist_ok=True)
    (repo / ".autology" / "config.toml").write_text("[index]\ncandidates = 10\n")
    _hooks_and_one_env_reader(repo, 30)
    build(repo)
    hits = service.code_search(repo, "pytest_addopts", top=20, refresh=False)["hits"]
    assert hits[0]["path"] == "config/env.py" and hits[0]["scores"]["exact"] == 1.0
    assert len(hits) == 10 + 1  # the BM25 candidates and the one chunk the phrase added after its check
