"""The replay of issue 41's test-to-code vote (bench/code_rank_replay.py, bench/test_source_pairs.py): a test
file that matches a query votes for the source file it tests, and for no other. Measured on the tuning
parts and not adopted (docs/benchmarks.md), so these tests hold the bench's measurement to what it says."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from retrieval_fixtures import git, write

from autology_mcp.code import service as code_index

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import code_rank_replay as replay  # noqa: E402
import test_source_pairs as pairs  # noqa: E402  (names starting with test are not for pytest to collect)

PREVIEW_TEST = '''
def test_change_preview_window_should_not_reset_change_preview(tmp_path):
    """Changing the preview window keeps the change preview."""
    window = {"preview": "change"}
    assert window["preview"] == "change"
'''

FILES = {
    # a test whose name describes the change, and the file it tests (tests/cli/ -> pkg/cli/)
    "tests/cli/test_preview.py": PREVIEW_TEST,
    "pkg/cli/preview.py": "def render(window):\n    return window\n",
    # an unrelated source file with the same stem elsewhere: not the counterpart
    "pkg/server/preview.py": "def serve(port):\n    return port\n",
    # a matching test whose name two source files share, with nothing to choose between them
    "tests/test_window.py": PREVIEW_TEST.replace("test_change_preview", "test_window_change_preview"),
    "pkg/a/window.py": "def size():\n    return 1\n",
    "pkg/b/window.py": "def width():\n    return 2\n",
    "pkg/core.py": "def main():\n    return 0\n",
}


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("votes") / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for path, text in FILES.items():
        write(root, path, text)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "a project with tests")
    code_index.build_index(root)
    return root


def test_a_matching_test_votes_for_the_file_it_tests_only(project):
    row = replay.capture_one(project.resolve(), "change preview window should not reset the change preview")
    assert set(FILES) <= set(row["files"])  # the tree as indexed, both sides real
    assert "tests/cli/test_preview.py" in replay.file_scores(row)  # the test matched the query
    assert "tests/test_window.py" in replay.file_scores(row)
    votes = replay.test_votes(0.05)(row)
    assert votes.get("pkg/cli/preview.py", 0.0) > 0  # lifted: the file the matching test tests
    assert "pkg/server/preview.py" not in votes  # the same stem elsewhere: not lifted
    assert "pkg/a/window.py" not in votes and "pkg/b/window.py" not in votes  # ambiguous: neither
    ranked = replay.prior_rank(extra=replay.test_votes(0.05))(row)
    shipped = replay.prior_rank()(row)
    key = next(k for k, it in row["items"].items() if it.path == "pkg/cli/preview.py")
    assert ranked(row["items"][key], row["scored"][key]) > shipped(row["items"][key], row["scored"][key])


def test_counterparts_by_convention_and_not_by_guess():
    files = ["src/click/_compat.py", "tests/test_compat.py", "src/fzf/terminal.go", "src/fzf/terminal_test.go",
             "src/tui/terminal.go", "source/core/Ky.ts", "test/hooks.ts", "source/types/hooks.ts",
             "crates/printer/src/json.rs", "crates/core/tests/json.rs", "tests/utils.py", "httpx/_utils.py",
             "src/a/config.py", "src/b/config.py", "tests/test_config.py", "docs/compat.py",
             "packages/z/src/string.ts", "packages/z/src/tests/string.test.ts", "packages/bench/string.ts"]
    sources = pairs.TestSources(files)
    assert sources.source_of("tests/test_compat.py") == "src/click/_compat.py"  # underscore aside; docs/ is no source
    assert sources.source_of("src/fzf/terminal_test.go") == "src/fzf/terminal.go"  # same folder over src/tui/
    assert sources.source_of("test/hooks.ts") == "source/types/hooks.ts"
    assert sources.source_of("packages/z/src/tests/string.test.ts") == "packages/z/src/string.ts"  # not bench/
    assert sources.source_of("crates/core/tests/json.rs") is None  # another crate's json.rs is not its subject
    assert sources.source_of("tests/utils.py") is None  # a Python test folder's helper tests nothing
    assert sources.source_of("tests/test_config.py") is None  # two config.py, no rule to choose
    assert sources.source_of("src/click/_compat.py") is None  # not a test
    assert sources.imported("from httpx._utils import x\nimport os\nfrom . import y\n") == ["httpx/_utils.py"]


NAMES = st.from_regex(r"[a-z][a-z0-9]{0,8}(_[a-z0-9]{1,6}){0,2}", fullmatch=True).filter(
    lambda n: n not in ("conftest", "test") and not n.endswith(("_test", "_spec")))


@given(NAMES, st.sampled_from(["src", "pkg/sub", "lib"]))
def test_a_tests_subject_is_its_name_in_each_convention(name, folder):
    assert pairs.test_subject(f"tests/test_{name}.py") == name
    assert pairs.test_subject(f"{folder}/{name}_test.go") == name
    assert pairs.test_subject(f"{folder}/{name}.test.ts") == name
    assert pairs.test_subject(f"{folder}/{name}.spec.js") == name
    assert pairs.test_subject(f"tests/{name}.rs") == name
    assert pairs.test_subject(f"{folder}/{name}.py") is None
    assert pairs.test_subject(f"tests/{name}.py") is None  # Python says so by name, not by folder
    assert pairs.TestSources([f"{folder}/{name}.go", f"{folder}/{name}_test.go"]).source_of(f"{folder}/{name}_test.go") \
        == f"{folder}/{name}.go"


@given(st.lists(st.from_regex(r"[a-z_][a-z0-9_]{0,6}(\.[a-z_][a-z0-9_]{0,6}){0,2}", fullmatch=True), min_size=1, max_size=4))
def test_python_imports_reads_each_absolute_import(modules):
    text = "".join(f"import {m}\n" for m in modules) + "from . import sibling\n"
    assert pairs.python_imports(text) == list(dict.fromkeys(modules))
