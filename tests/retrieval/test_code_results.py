"""Unified search's code results (issue 15): a file is one hit, so ``limit`` hits are ``limit`` files
when that many match, and the similarity floor never cuts short a list that matches could fill."""

from __future__ import annotations

from pathlib import Path

import pytest
from retrieval_fixtures import git, write

from autology_mcp.code import service as code_index
from autology_mcp.retrieval.engine import search

RETRY_FUNCTION = '''

def retry_backoff_{i}(call):
    """Retry the call with exponential backoff, attempt {i}."""
    for attempt in range(5):
        try:
            return call()
        except TimeoutError:
            backoff = 2 ** attempt  # retry backoff
    raise TimeoutError("retry backoff exhausted")
'''


def indexed_project(tmp_path_factory, name: str, files: dict[str, str]) -> Path:
    """A git project holding ``files``, committed, with its repository index built."""
    root = tmp_path_factory.mktemp(name) / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for path, text in files.items():
        write(root, path, text)
    git(root, "add", "-A")
    git(root, "commit", "-qm", name)
    code_index.build_index(root)
    return root


@pytest.fixture(scope="module")
def flooded(tmp_path_factory) -> Path:
    """One module of 40 functions all about retry backoff, and 12 modules that mention a retry once
    in a long function: by fused rank alone, the big module's chunks fill the shortlist."""
    body = "\n".join(f"    value = value * {j} + {j}  # step {j}" for j in range(40))
    files = {"src/net/retrying.py": "".join(RETRY_FUNCTION.format(i=i) for i in range(40))}
    for i in range(12):
        files[f"src/jobs/job_{i:02d}.py"] = (
            f"def run_job_{i}(value):\n    # no retry here, a failed job fails\n{body}\n    return value\n")
    return indexed_project(tmp_path_factory, "code-results", files)


def test_a_file_is_one_hit_and_limit_hits_are_limit_files(flooded: Path) -> None:
    answer = search(flooded, "retry with backoff", scope=["code"], limit=10, max_tokens=100_000)
    paths = [h["path"] for h in answer["hits"]]
    assert paths[0] == "src/net/retrying.py"
    assert len(paths) == len(set(paths)) == 10  # the big module once, then nine of the jobs


def test_the_floor_does_not_starve_the_list(flooded: Path) -> None:
    """The jobs match a query word once in a long chunk, which the floor finds weak; they still fill
    the list, after the strong hit."""
    answer = search(flooded, "retry with backoff", scope=["code"], limit=13, max_tokens=100_000)
    paths = [h["path"] for h in answer["hits"]]
    assert paths[0] == "src/net/retrying.py"
    assert sorted(paths[1:]) == [f"src/jobs/job_{i:02d}.py" for i in range(12)]


@pytest.fixture(scope="module")
def stemmed(tmp_path_factory) -> Path:
    """Twelve modules that hold "generated" (FTS5's Porter stemmer: "gener", like "general") and
    never "general": the full-text index matches them, the keyword check's lighter stemming does not."""
    return indexed_project(tmp_path_factory, "code-stemmed", {
        f"src/reports/report_{i:02d}.py":
            f"def report_{i}(rows):\n    # the generated report of batch {i}\n    return [r * {i} for r in rows]\n"
        for i in range(12)
    })


def test_what_the_full_text_index_matched_fills_the_list(stemmed: Path) -> None:
    index_paths = {h["path"] for h in code_index.code_search(stemmed, "general cleanup", top=20)["hits"]}
    assert len(index_paths) == 12  # BM25 finds every module ...
    answer = search(stemmed, "general cleanup", scope=["code"], limit=10, max_tokens=100_000)
    paths = [h["path"] for h in answer["hits"]]
    assert len(paths) == len(set(paths)) == 10  # ... and unified search lists ten of them
    assert set(paths) <= index_paths


def test_docs_filling_the_index_candidates_do_not_shorten_a_code_list(tmp_path_factory) -> None:
    """The index scores its best ``candidates`` chunks (10 here); when docs take all of them and the
    scope wants code, a wider pass finds the code files: 10 asked, 10 listed (issue 15: a pytest
    subject about docs and a changelog listed 9 files where 96 matched)."""
    files = {f"docs/guide_{i:02d}.md": f"# Frobnicate widgets {i}\n\n" + "Frobnicate the widget. " * 30 + "\n"
             for i in range(30)}
    for i in range(12):
        files[f"src/parts/p_{i:02d}.py"] = f"def build_{i}(widget):\n    # frobnicate once\n    return widget\n"
    files[".autology/config.toml"] = "[index]\ncandidates = 10\n"
    root = indexed_project(tmp_path_factory, "docs-flood", files)
    answer = search(root, "frobnicate widget", scope=["code"], limit=10, max_tokens=100_000)
    paths = [h["path"] for h in answer["hits"]]
    assert len(paths) == len(set(paths)) == 10 and all(p.startswith("src/parts/") for p in paths)
    with_docs = search(root, "frobnicate widget", scope=["code", "docs"], limit=10, max_tokens=100_000)
    assert [h["path"] for h in with_docs["hits"]][0].startswith("docs/")


def test_one_long_file_filling_the_index_candidates_does_not_shorten_the_list(tmp_path_factory) -> None:
    """One module whose every short function says a query word several times takes all the index's
    candidates (10 here); a pass four times wider finds the other files that match: 10 asked, 10 listed
    (ripgrep: "deps: switch to tikv-jemallocator" listed 8 files where 18 matched, 283 of the 300
    candidates being the flag definitions' ``is_switch`` functions)."""
    flags = "".join(f"def flag_{i}(switch):\n    return switch.switch()\n\n\n" for i in range(25))
    files = {"src/flags.py": flags}
    filler = "".join(f"    total = total + {n}\n" for n in range(30))
    for i in range(12):
        files[f"src/other/mod_{i:02d}.py"] = f"def run_{i}(total):\n    # one switch here\n{filler}    return total\n"
    files[".autology/config.toml"] = "[index]\ncandidates = 10\n"
    root = indexed_project(tmp_path_factory, "one-long-file", files)
    index_paths = {h["path"] for h in code_index.code_search(root, "switch", top=10)["hits"]}
    assert index_paths == {"src/flags.py"}  # the index's 10 candidates are all in one file ...
    answer = search(root, "switch", scope=["code"], limit=10, max_tokens=100_000)
    paths = [h["path"] for h in answer["hits"]]
    assert paths[0] == "src/flags.py"
    assert len(paths) == len(set(paths)) == 10  # ... and unified search still lists ten files
