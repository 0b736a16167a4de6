"""Which source file a test file tests, by the naming conventions that hold across languages (issue 41).

A change description often reads like a test's name ("the preview window should not reset"), so a test
file can match a query better than the file it tests. ``bench/code_rank_replay.py`` replays code ranking
with a matching test counted as evidence for that file; this module says which file that is, from the
tree's paths alone (and, for the replay's import variant, a Python test's ``from pkg.X import`` lines).
It is a bench module: the vote was measured and not adopted (docs/benchmarks.md, "a matching test file
votes for the file it tests").

- the test's subject: ``test_X.py``, ``X_test.py``, ``X_test.go``, ``X_spec.rb``, ``X.test.ts``,
  ``X.spec.js`` (any JavaScript or TypeScript extension), or, outside Python (whose test folders also
  hold helpers such as ``tests/utils.py``), any ``X.ext`` under a ``tests``, ``test``, ``testing``,
  ``__tests__`` or ``spec`` folder (``tests/X.rs``, ``test/X.ts``) is ``X``; files in a helpers,
  fixtures, utils, support, mocks or data folder, ``conftest.py`` and ``_X`` files test nothing;
- its counterpart: a source file (not under a test, docs, examples or benchmarks folder) named ``X``
  with an extension of the same language, a leading underscore aside (``test_models.py`` tests
  ``_models.py``), inside the folder above the test folder (``crates/a/tests/x.rs`` tests a file of
  ``crates/a``): the only one; else the one in the test's own folder (Go, colocated TypeScript); else the
  one whose folder ends with the test's folder inside its test tree (``tests/cli/test_main.py`` →
  ``.../cli/main.py``). Several candidates and no rule to choose: no counterpart, never a guess.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

TEST_DIRS = frozenset({"tests", "test", "testing", "__tests__", "spec"})
HELPERS = frozenset({"conftest", "__init__", "__main__"})  # a test folder's plumbing, not a test
HELPER_DIRS = frozenset({"helpers", "fixtures", "utils", "support", "mocks", "__mocks__", "testdata", "data"})
LANGUAGES = (  # extensions that may test one another's files
    frozenset({".py", ".pyi"}), frozenset({".go"}), frozenset({".rs"}), frozenset({".rb"}),
    frozenset({".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"}),
    frozenset({".java", ".kt", ".scala"}), frozenset({".c", ".h", ".cc", ".cpp", ".hpp"}), frozenset({".cs"}),
    frozenset({".swift"}), frozenset({".php"}),
)
_LANGUAGE_OF = {ext: group for group in LANGUAGES for ext in group}


def _split(path: str) -> tuple[list[str], str, str]:
    """(folders, stem, extension) of ``path``."""
    *folders, name = path.split("/")
    stem, dot, ext = name.rpartition(".")
    return (folders, stem, "." + ext) if dot and stem else (folders, name, "")


def test_subject(path: str) -> str | None:
    """The name ``X`` of what the test file at ``path`` tests, None when ``path`` is not a test file by
    name or folder (a helper such as ``conftest.py`` or ``tests/__init__.py`` tests nothing)."""
    folders, stem, ext = _split(path)
    if ext not in _LANGUAGE_OF:
        return None
    subject = None
    if ext in (".py", ".pyi") and stem.startswith("test_"):
        subject = stem[len("test_"):]
    elif stem.endswith(("_test", "_spec")) and ext in (".py", ".go", ".rb", ".rs"):
        subject = stem[: -len("_test")]
    elif stem.endswith((".test", ".spec")):
        subject = stem[: -len(".test")]
    elif ext not in (".py", ".pyi") and any(f in TEST_DIRS for f in folders):  # Python's tests say so by name
        subject = stem
    if not subject or subject.lstrip("_") in HELPERS or subject.startswith("_") or HELPER_DIRS & set(folders):
        return None
    return subject


def _key(stem: str, ext: str) -> tuple[str, frozenset[str]]:
    return stem.lstrip("_").lower(), _LANGUAGE_OF[ext]


_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import\s+([\w, ()]+)|import\s+([\w.]+))", re.M)


def python_imports(text: str) -> list[str]:
    """The dotted names a Python file imports at the start of a line: ``from a.b import c`` gives ``a.b``
    and ``a.b.c`` (c may be a module), ``import a.b`` gives ``a.b``; relative imports are left out."""
    names = []
    for source, imported, plain in _IMPORT.findall(text):
        if source.startswith("."):
            continue
        if plain:
            names.append(plain)
        elif source:
            names.append(source)
            names += [f"{source}.{n.strip()}" for n in imported.replace("(", "").replace(")", "").split(",") if n.strip()]
    return list(dict.fromkeys(names))


class TestSources:
    """The counterpart of each test file of one tree (its list of files, as indexed)."""

    def __init__(self, files: Iterable[str]):
        self.by_name: dict[tuple[str, frozenset[str]], list[str]] = {}
        for path in files:
            folders, stem, ext = _split(path)
            if ext in _LANGUAGE_OF and test_subject(path) is None and not _is_helper_or_test(folders, stem):
                self.by_name.setdefault(_key(stem, ext), []).append(path)
        self._cache: dict[str, str | None] = {}
        self.modules: dict[str, list[str]] = {}  # "a/b" -> the files a.b may be: .../a/b.py
        for path in files:
            if path.endswith(".py") and not path.endswith("/__init__.py") and test_subject(path) is None:
                folders, stem, _ = _split(path)
                if not _is_helper_or_test(folders, stem):
                    for i in range(len(folders) + 1):
                        self.modules.setdefault("/".join(folders[i:] + [stem]), []).append(path)

    def imported(self, text: str) -> list[str]:
        """The project's source files a Python test imports by absolute module name (one file per name, the
        names several files could be left out)."""
        out = []
        for name in python_imports(text):
            found = self.modules.get(name.replace(".", "/"), [])
            if len(found) == 1 and "." in name:  # a package's module, not a top-level name like ``os``
                out.append(found[0])
        return list(dict.fromkeys(out))

    def source_of(self, test_path: str) -> str | None:
        """The source file the test file at ``test_path`` tests, None when it is not a test file or no one
        file is its counterpart."""
        if test_path not in self._cache:
            self._cache[test_path] = self._resolve(test_path)
        return self._cache[test_path]

    def _resolve(self, test_path: str) -> str | None:
        subject = test_subject(test_path)
        if subject is None:
            return None
        folders, _, ext = _split(test_path)
        candidates = self.by_name.get(_key(subject, ext), [])
        root = _test_root(folders)  # crates/x/tests/y.rs tests crates/x, not crates/z
        if root:
            candidates = [c for c in candidates if c.split("/")[: len(root)] == root]
        if len(candidates) <= 1:
            return candidates[0] if candidates else None
        same = [c for c in candidates if c.split("/")[:-1] == folders]
        if len(same) == 1:
            return same[0]
        inner = _inside_test_tree(folders)  # tests/cli/test_main.py -> ["cli"]
        if inner:
            deepest = [c for c in candidates if c.split("/")[:-1][-len(inner):] == inner]
            if len(deepest) == 1:
                return deepest[0]
        return None


NOT_SOURCE_DIRS = TEST_DIRS | {"testdata", "docs", "doc", "docs_src", "examples", "example", "bench", "benches",
                                "benchmark", "benchmarks"}


def _is_helper_or_test(folders: list[str], stem: str) -> bool:
    """Not a counterpart: a file under a test, docs, examples or benchmarks folder, or conftest.py."""
    return any(f in NOT_SOURCE_DIRS for f in folders) or stem == "conftest"


def _test_root(folders: list[str]) -> list[str]:
    """The folders above the first test folder of a test file's path: the project or package it tests."""
    first = next((i for i, f in enumerate(folders) if f in TEST_DIRS), None)
    return folders[:first] if first is not None else folders


def _inside_test_tree(folders: list[str]) -> list[str]:
    """The folders below the last test folder of a test file's path (none when it sits in no test folder)."""
    last = max((i for i, f in enumerate(folders) if f in TEST_DIRS), default=None)
    return folders[last + 1:] if last is not None else []
