"""Node search on real records nobody here wrote (issue 15): Python's PEPs, queried by the changelog
entries of four projects that cite them.

    python bench/records_eval.py --peps PEPS --changelog MYPY:CHANGELOG.md --changelog PIP:NEWS.rst \\
        --changelog TYPING_EXTENSIONS:CHANGELOG.md --changelog BLACK:CHANGES.md [--json out.json] [--per-query]

where each path is a clone (python/peps, python/mypy, pypa/pip, python/typing_extensions, psf/black);
the files are read at each clone's HEAD, whose commit is printed.

With ``--semantic MODEL_DIR`` (issue 31), the store is ranked again with semantic recall on, in the same
run (rows ``…, semantic``).

- **Nodes:** every ``peps/pep-NNNN.rst`` becomes a ``decision`` node: its ``Title:`` header as the
  title, its ``Topic:`` headers as tags, the text after the headers as the content (cut at the
  store's 200,000-character limit). Written straight to the store: benchmark data, not an import
  feature.
- **Queries and answers:** every changelog entry (a bullet with its continuation lines, a heading, or
  a paragraph) that cites exactly one PEP that exists, as ``PEP 123``, ``PEP-123``, ``PEP123``,
  ``:pep:`123``` or a peps.python.org link. The query is the entry with every citation of a PEP,
  every link target, issue and PR number taken out (link texts and credited names stay: they are
  part of real changelog text); the answer is the cited PEP. Entries under four words after that,
  or over 400 characters, are left out; repeated queries are kept once. The rule is mechanical: no
  query or judgement was written here.
- **Split:** the queries in file order, the files in the order given; every third (index 2, 5, ...)
  is held out. Tuning looks at the tuning split only.
- **Rankers:** ``autology_query``; plain BM25 over the same node texts (``knowledge_eval.PlainBM25``);
  unified search over the nodes (``scope=["nodes"]``).
- **Metrics:** MRR@10 and recall@10 of the cited PEP.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import uuid
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from knowledge_eval import PlainBM25, write_store  # noqa: E402

from autology_mcp.knowledge.models import KnowledgeNode  # noqa: E402
from autology_mcp.knowledge.service import Autology  # noqa: E402
from autology_mcp.retrieval.engine import search  # noqa: E402

CONTENT_LIMIT = 200_000
_CITATION = re.compile(
    r"peps\.python\.org/pep-0*(\d{1,4})|python\.org/dev/peps/pep-0*(\d{1,4})|:pep:`(\d{1,4})`|\bPEP[- ]?(\d{1,4})\b",
    re.IGNORECASE,
)
_TAG = re.compile(r"[^a-z0-9]+")


def clone_name(repo: Path) -> str:
    """A clone's name (a bare mirror is often ``<owner+name>/repo``)."""
    return repo.parent.name if repo.name in ("repo", ".git") else repo.name


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


# ------------------------------------------------------------------------------ the records


def pep_nodes(peps: Path) -> dict[int, KnowledgeNode]:
    """PEP number -> its node, from the PEP files at HEAD."""
    when = datetime(2026, 1, 1, tzinfo=UTC)
    nodes = {}
    for path in git(peps, "ls-tree", "--name-only", "HEAD", "peps/").split("\n"):
        match = re.fullmatch(r"peps/pep-(\d{4})\.rst", path)
        if not match:
            continue
        text = git(peps, "show", f"HEAD:{path}")
        head, _, body = text.partition("\n\n")
        headers: dict[str, str] = {}
        key = None
        for line in head.split("\n"):
            if line[:1].isspace() and key:  # a continued header
                headers[key] += " " + line.strip()
            elif ":" in line:
                key, value = line.split(":", 1)
                headers[key.strip()] = value.strip()
        title = " ".join(headers.get("Title", f"PEP {int(match[1])}").split())[:100]
        tags = [_TAG.sub("-", t.strip().lower()).strip("-") for t in headers.get("Topic", "").split(",")]
        # A v4-shaped id from the PEP's number, not a random one: ties in a ranking break on the id.
        pep_id = str(uuid.UUID(bytes=uuid.uuid5(uuid.NAMESPACE_URL, f"pep:{int(match[1])}").bytes, version=4))
        nodes[int(match[1])] = KnowledgeNode(
            id=pep_id, type="decision", title=title, content=body.strip()[:CONTENT_LIMIT] or title,
            tags=[t for t in tags if t], created=when, modified=when, source="manual",
        )
    return nodes


# ------------------------------------------------------------------------------ the queries


def entries(text: str) -> list[str]:
    """A changelog's entries: a bullet with its continuation lines, a heading, or a paragraph."""
    found: list[list[str]] = []
    current: list[str] | None = None
    for line in text.split("\n"):
        stripped = line.strip()
        if not stripped or set(stripped) <= set("=-~^*#`"):  # a blank line or an RST underline
            current = None
            continue
        starts = re.match(r"([-*+]|#{1,6}|\d+\.)\s", stripped)
        if starts or current is None:
            current = [stripped]
            found.append(current)
            if stripped.startswith("#"):
                current = None  # a heading is an entry of its own
        else:
            current.append(stripped)
    return [" ".join(parts) for parts in found]


def cited(entry: str) -> set[int]:
    return {int(next(g for g in m.groups() if g)) for m in _CITATION.finditer(entry)}


def clean(entry: str) -> str:
    """The entry without PEP citations, link targets, issue or PR numbers, and Markdown/RST markup."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", entry)  # [text](url) -> text
    text = re.sub(r"`([^`<]*?)\s*<[^>]*>`_+", r"\1", text)  # `text <url>`_ -> text
    text = re.sub(r"https?://\S+", " ", text)
    text = _CITATION.sub(" ", text)
    text = re.sub(r"\b(?:PR|GH|bpo|issue)\s*-?\s*#?\d+|#\d+", " ", text, flags=re.IGNORECASE)
    text = re.sub(r"^([-*+]|#{1,6}|\d+\.)\s+", "", text)
    text = re.sub(r"`+|\*\*?|:\w+:", " ", text).replace("\\ ", "")  # markup, not identifiers' underscores
    text = re.sub(r"\(\s*[,;]?\s*\)", " ", text)  # brackets emptied by the above
    return " ".join(text.split()).strip(" .,;:-")


def judged_queries(changelogs: list[tuple[Path, str]], peps: set[int]) -> list[dict]:
    queries, seen = [], set()
    for repo, path in changelogs:
        for entry in entries(git(repo, "show", f"HEAD:{path}")):
            numbers = cited(entry)
            if len(numbers) != 1 or not numbers <= peps:
                continue
            query = clean(entry)
            if len(query.split()) < 4 or len(query) > 400 or query.lower() in seen:
                continue
            seen.add(query.lower())
            queries.append({"source": f"{clone_name(repo)}:{path}", "query": query, "pep": numbers.pop()})
    return queries


# ------------------------------------------------------------------------------ rankers and metrics


def evaluate(rankers: dict, queries: list[dict], ids: dict[int, str]) -> dict[str, dict]:
    out = {}
    for name, rank in rankers.items():
        ranks = []
        for q in queries:
            ranked = rank(q["query"])[:10]
            relevant = ids[q["pep"]]
            ranks.append(ranked.index(relevant) + 1 if relevant in ranked else None)
        out[name] = {
            "mrr@10": round(statistics.fmean(1 / r if r else 0.0 for r in ranks), 3),
            "recall@10": round(statistics.fmean(1.0 if r else 0.0 for r in ranks), 3),
            "per_query": ranks,
        }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--peps", type=Path, required=True, help="a clone of python/peps")
    parser.add_argument("--changelog", action="append", required=True, metavar="CLONE:PATH",
                        help="a clone and the path of its changelog (repeat)")
    parser.add_argument("--per-query", action="store_true")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--semantic", type=Path, help="a local model folder: rank again with semantic recall on, "
                                                      "in the same run (issue 31; the optional extra installed)")
    args = parser.parse_args()
    load = os.getloadavg()
    changelogs = [(Path(c.rsplit(":", 1)[0]), c.rsplit(":", 1)[1]) for c in args.changelog]
    nodes = pep_nodes(args.peps)
    queries = judged_queries(changelogs, set(nodes))
    splits = {"tuning": [q for i, q in enumerate(queries) if i % 3 != 2],
              "held-out": [q for i, q in enumerate(queries) if i % 3 == 2]}
    with tempfile.TemporaryDirectory(prefix="records-eval-") as tmp:
        root = Path(tmp)
        write_store(root, list(nodes.values()))
        ids = {number: node.id for number, node in nodes.items()}
        autology = Autology.open(root)
        bm25 = PlainBM25(list(autology.store.index.all_nodes()))

        def unified(query: str) -> list[str]:
            answer = search(root, query, scope=["nodes"], limit=10, max_tokens=1_000_000, store=autology.store)
            return [h["node_id"] for h in answer["hits"] if h["kind"] == "node"]

        rankers = {
            "autology_query": lambda q: [h.node.id for h in autology.query(q, limit=10)],
            "plain BM25": bm25,
            "unified, nodes": unified,
        }
        results = {split: evaluate(rankers, qs, ids) for split, qs in splits.items()}
        if args.semantic:
            from autology_mcp.semantic.runtime import enable

            enable(root, args.semantic)
            on = {f"{name}, semantic": rankers[name] for name in ("autology_query", "unified, nodes")}
            for split, qs in splits.items():
                results[split] |= evaluate(on, qs, ids)
        autology.close()
    sources = {clone_name(repo): git(repo, "rev-parse", "--short", "HEAD").strip() for repo in [args.peps, *(r for r, _ in changelogs)]}
    report = {
        "sources": sources,
        "nodes": len(nodes),
        "queries": {k: len(v) for k, v in splits.items()},
        "machine": f"{platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}",
        "load": f"{' '.join(f'{x:.2f}' for x in load)} / {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
        "results": results,
    }
    print(f"# {len(nodes)} PEPs as nodes; queries {report['queries']}; {report['machine']}; load {report['load']}")
    print("# " + ", ".join(f"{k}@{v}" for k, v in sources.items()))
    for split, rows in results.items():
        print(f"\n{split} ({report['queries'][split]} queries)")
        print(f"{'ranker':<28} {'MRR@10':>7} {'recall@10':>9}")
        for name, r in rows.items():
            print(f"{name:<28} {r['mrr@10']:>7.3f} {r['recall@10']:>9.3f}")
            if args.per_query:
                print("    ranks:", r["per_query"])
    if args.json:
        args.json.write_text(json.dumps({**report, "queries_list": queries}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
