"""Real prose for bench/store.py: node text taken from a repository's docstrings.

The synthetic corpus (store_corpus.py) builds every sentence from a vocabulary of ~600 words, so
at 10k nodes a typical query word is in 11-27 % of all nodes: a worst case for full-text search
(every query scores thousands of matches). Real technical text has a long-tailed vocabulary.
This module keeps everything else of the synthetic store (types, statuses, relations, tags,
timestamps, the same seeded generator) but takes each node's title and content from a real
docstring: the first line is the title, the rest the content (decisions get it split into the
four ADR sections). Queries are 1-3 content words from real docstring first lines.

Read from git objects at a pinned commit (not the work tree), so the corpus is the same on every
machine: ``python bench/store.py --text-corpus /tmp/sympy`` (a clone of sympy/sympy with commit
e950d313 in it, as for bench/repo_index.py).
"""

from __future__ import annotations

import ast
import inspect
import re
import subprocess
from pathlib import Path

from store_corpus import CorpusGenerator

PINNED_SYMPY_COMMIT = "e950d313a932bc6cccbc95376b3821cd2f8b5af4"
MIN_CONTENT = 120
MAX_CONTENT = 2000
_WORD = re.compile(r"[A-Za-z][a-z]{2,}")
_STOP = frozenset(
    """the and for with that this from are was were which when then than into onto have has not all any
    can may its also such each other only some more most must given return returns see example examples
    use used using new one two same where whether will would should does this these those there here
    their them they our your you been being over under between about after before above below""".split()
)


def _blobs(repo: Path, commit: str) -> list[tuple[str, str]]:
    """(path, text) of every .py file at ``commit``, in path order."""
    listing = subprocess.run(
        ["git", "-C", str(repo), "ls-tree", "-r", "--name-only", commit],
        check=True, capture_output=True, text=True,
    ).stdout.split("\n")
    paths = sorted(p for p in listing if p.endswith(".py") and "/tests/" not in p and "/benchmarks/" not in p)
    batch = subprocess.run(
        ["git", "-C", str(repo), "cat-file", "--batch"],
        input="".join(f"{commit}:{p}\n" for p in paths).encode(), check=True, capture_output=True,
    ).stdout
    out, pos = [], 0
    for path in paths:
        header_end = batch.index(b"\n", pos)
        size = int(batch[pos:header_end].split()[2])
        body = batch[header_end + 1 : header_end + 1 + size]
        pos = header_end + 1 + size + 1
        out.append((path, body.decode("utf-8", "replace")))
    return out


def _tags(path: str) -> list[str]:
    parts = [re.sub(r"[^a-z0-9]+", "-", p.lower()).strip("-") for p in Path(path).with_suffix("").parts[1:3]]
    return [p for p in dict.fromkeys(parts) if p and p != "init"]


def load_entries(repo: Path, commit: str = PINNED_SYMPY_COMMIT) -> list[dict]:
    """Docstrings with a one-line summary and at least MIN_CONTENT characters of body."""
    entries = []
    for path, text in _blobs(repo, commit):
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            doc = ast.get_docstring(node)
            if not doc:
                continue
            doc = inspect.cleandoc(doc)
            first, _, body = doc.partition("\n")
            first, body = first.strip(), body.strip()
            if len(first.split()) < 3 or len(body) < MIN_CONTENT:
                continue
            if len(body) > MAX_CONTENT:
                cut = body.rfind("\n\n", 0, MAX_CONTENT)
                body = body[: cut if cut > MIN_CONTENT else MAX_CONTENT]
            entries.append(
                {"title": first[:100], "content": body, "tags": _tags(path), "ref": f"{path}#{node.name}" if hasattr(node, "name") else path}
            )
    return entries


class TextGenerator(CorpusGenerator):
    """CorpusGenerator whose titles, contents, tags, references and queries come from real docstrings."""

    def __init__(self, seed: int, entries: list[dict]):
        super().__init__(seed)
        if not entries:
            raise ValueError("no docstrings found for the text corpus")
        self.entries = entries
        self._current: dict | None = None

    def _entry(self) -> dict:
        self._current = self.rng.choice(self.entries)
        return self._current

    def title(self, node_type: str) -> str:
        return self._entry()["title"]

    def content(self, node_type: str) -> str:
        entry = self._current or self._entry()
        body = entry["content"]
        if node_type != "decision":
            return body
        paragraphs = [p for p in body.split("\n\n") if p.strip()] or [body]
        quarter = max(1, len(paragraphs) // 4)
        sections = [paragraphs[:quarter], paragraphs[quarter : 2 * quarter], paragraphs[2 * quarter : 3 * quarter],
                    paragraphs[3 * quarter :]]
        names = ["Context", "Decision", "Alternatives", "Consequences"]
        return "\n\n".join(f"## {n}\n" + ("\n\n".join(s) if s else entry["title"]) for n, s in zip(names, sections))

    def tags(self) -> list[str]:
        entry = self._current or self.rng.choice(self.entries)
        extra = [t for t in self.rng.sample(["api", "perf", "docs", "bug", "design"], self.rng.randint(0, 1))]
        return list(dict.fromkeys(entry["tags"] + extra)) or ["misc"]

    def references(self) -> list[str]:
        entry = self._current or self.rng.choice(self.entries)
        return [entry["ref"]] if self.rng.random() < 0.6 else []

    def query(self) -> str:
        """1-3 content words of a real docstring's first line, in their order."""
        for _ in range(100):
            words = [w.lower() for w in _WORD.findall(self.rng.choice(self.entries)["title"])]
            words = [w for w in dict.fromkeys(words) if w not in _STOP]
            if words:
                n = min(len(words), self.rng.choice([1, 2, 2, 3]))
                start = self.rng.randint(0, len(words) - n)
                return " ".join(words[start : start + n])
        return "matrix"
