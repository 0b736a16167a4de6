"""Staleness (issue 38): a reading that came from the errors of the packaging replay, once it joined the tuning side,
with real git and files on both sides (no flag, and a flag). A function read at the defaults of the parameters it
gained (trust/defaults.py): an option whose default keeps the code the node describes is information; one whose
default changes that code, or that the node names, is not read away. A folder whose public modules the node counts
gains one (trust/folder_files.py): a private helper added is not one."""

from __future__ import annotations

import ast
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from test_staleness import commit, edit, one_file_repo, only, relate_and_commit
from test_staleness_sympy import capture

from autology_mcp.knowledge.trust.defaults import read_at_defaults

UTILS = '''import re


def canonicalize_version(version):
    parsed = Version(version)
    parts = []
    if parsed.epoch != 0:
        parts.append(f"{parsed.epoch}!")
    parts.append(re.sub(r"(\\.0)+$", "", ".".join(str(x) for x in parsed.release)))
    return "".join(parts)


def contains(specs, item, prereleases=None):
    if prereleases is None:
        prereleases = False
    if not prereleases and item.is_prerelease:
        return False
    return all(s.contains(item) for s in specs)
'''

CANONICAL = ("`canonicalize_version` normalises like `Version.__str__`, but strips trailing `.0`s from the release "
             "with `re.sub`: '1.0.0' becomes '1'.")
CONTAINS = "`contains(specs, item)` rejects a pre-release unless `prereleases` is set, then asks every spec (`all`)."


def test_an_option_whose_default_keeps_the_code_is_not_a_flag(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "pkg/utils.py", UTILS, "utils")
    canonical = capture(root, ["pkg/utils.py#canonicalize_version"], CANONICAL, "canonicalize_version strips .0s",
                        type="convention")
    contains = capture(root, ["pkg/utils.py#contains"], CONTAINS, "contains and pre-releases", type="component")
    commit(root, "record")
    edit(root, "def canonicalize_version(version):", "def canonicalize_version(version, *, strip_trailing_zero=True):",
         path="pkg/utils.py")
    edit(root, '    parts.append(re.sub(r"(\\.0)+$", "", ".".join(str(x) for x in parsed.release)))\n',
         '    release_segment = ".".join(str(x) for x in parsed.release)\n'
         '    if strip_trailing_zero:\n'
         '        release_segment = re.sub(r"(\\.0)+$", "", release_segment)\n'
         '    parts.append(release_segment)\n', path="pkg/utils.py")
    edit(root, "def contains(specs, item, prereleases=None):", "def contains(specs, item, prereleases=None, installed=None):",
         path="pkg/utils.py")
    edit(root, "        return False\n    return all", "        return False\n    if installed and item.is_prerelease:\n"
         "        item = parse(item.base_version)\n    return all", path="pkg/utils.py")
    commit(root, "options: strip_trailing_zero and installed")
    assert only(root, canonical).stale is False  # at its default (True) the stripping runs as it did
    assert only(root, contains).stale is False  # at its default (None) the new branch never runs


def test_an_option_whose_default_changes_the_code_or_that_the_node_names_is_a_flag(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "pkg/utils.py", UTILS, "utils")
    canonical = capture(root, ["pkg/utils.py#canonicalize_version"], CANONICAL, "canonicalize_version strips .0s",
                        type="convention")
    named = capture(root, ["pkg/utils.py#contains"], CONTAINS + " An installed pre-release (`installed`) is not "
                    "special.", "contains and installed pre-releases", type="component")
    commit(root, "record")
    edit(root, "def canonicalize_version(version):", "def canonicalize_version(version, *, keep_zeros=True):",
         path="pkg/utils.py")
    edit(root, '    parts.append(re.sub(r"(\\.0)+$", "", ".".join(str(x) for x in parsed.release)))\n',
         '    release_segment = ".".join(str(x) for x in parsed.release)\n'
         '    if not keep_zeros:\n'
         '        release_segment = re.sub(r"(\\.0)+$", "", release_segment)\n'
         '    parts.append(release_segment)\n', path="pkg/utils.py")
    edit(root, "def contains(specs, item, prereleases=None):", "def contains(specs, item, prereleases=None, installed=None):",
         path="pkg/utils.py")
    edit(root, "        return False\n    return all", "        return False\n    if installed and item.is_prerelease:\n"
         "        item = parse(item.base_version)\n    return all", path="pkg/utils.py")
    commit(root, "options: keep_zeros (on by default) and installed")
    assert only(root, canonical).stale is True  # at its default the stripping is skipped: '1.0.0' stays
    assert only(root, named).stale is True  # the node speaks of `installed`: its code is what the node is about


def _function(source: str) -> ast.AST:
    return ast.parse(source).body[0]


def test_a_test_the_defaults_do_not_decide_or_a_rebound_parameter_is_left_as_it_is() -> None:
    old = _function("def f(x):\n    return g(x)\n")
    undecided = _function("def f(x, mode=None):\n    if mode == other:\n        x = h(x)\n    return g(x)\n")
    assert read_at_defaults(old, undecided) is undecided
    rebound = _function("def f(x, fast=None):\n    if fast is None:\n        fast = CONFIG\n    if fast:\n"
                        "        return h(x)\n    return g(x)\n")
    assert read_at_defaults(old, rebound) is rebound  # `fast` is bound again: its default is not what is tested
    kept = _function("def f(x, flag=None):\n    if flag is not None:\n        x = h(x)\n    return g(x)\n")
    assert ast.unparse(read_at_defaults(old, kept)) == "def f(x, flag=None):\n    return g(x)"


@given(default=st.sampled_from(["None", "True", "False", "0", "1", "''", "'x'"]),
       test=st.sampled_from(["p", "not p", "p is None", "p is not None", "p == 1", "p != 1", "p and q", "p or q",
                             "not p and q", "q and p"]))
def test_the_branch_kept_is_the_one_the_default_takes(default: str, test: str) -> None:
    old = _function("def f(q):\n    return 0\n")
    new = _function(f"def f(q, p={default}):\n    if {test}:\n        return 1\n    else:\n        return 2\n")
    read = read_at_defaults(old, new)
    p = ast.literal_eval(default)
    if read is new:  # left as it is only when the test needs `q`
        for q in (True, False):
            assert eval(test, {"p": p, "q": q}) != eval(test, {"p": p, "q": not q})
        return
    taken = 1 if eval(test, {"p": p, "q": object()}) else 2
    assert ast.unparse(read).endswith(f"return {taken}")


PUBLIC = ("pkg/: three public modules, private helpers. Its public modules are `version`, `specifiers` and `utils`; "
          "`_structures.py` is a private helper.")


def test_a_public_module_added_to_a_folder_whose_public_modules_the_node_counts_is_a_flag(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "pkg/__init__.py", "", "pkg")
    for name in ("version", "specifiers", "utils", "_structures"):
        (root / f"pkg/{name}.py").write_text(f"NAME = {name!r}\n")
    commit(root, "three public modules and a helper")
    counted = capture(root, ["pkg/"], PUBLIC, "pkg/: three public modules", type="component")
    other = capture(root, ["pkg/"], PUBLIC.replace("three public", "four public"), "pkg/, miscounted", type="component")
    commit(root, "record")
    (root / "pkg/_parser.py").write_text("def parse():\n    pass\n")
    (root / "pkg/_tokenizer.py").write_text("def tokens():\n    pass\n")
    commit(root, "a hand-written parser in two private modules")
    assert only(root, counted).stale is False  # private helpers: still three public modules
    (root / "pkg/metadata.py").write_text("class Metadata:\n    pass\n")
    commit(root, "core metadata")
    finding = only(root, counted)
    assert finding.stale is True and "pkg/metadata.py" in finding.why and "3 public modules" in finding.why
    assert "added to" not in (only(root, other).why or "")  # a count that was not right at the base says nothing
    relate_and_commit(root, counted, other)  # the fingerprint recorded the public modules: a relate keeps the flag
    assert only(root, counted).stale is True
