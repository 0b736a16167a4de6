"""Knowledge beside code (issue 12): do decision records stay findable once the project's code and
docs are indexed next to them?

Real data nobody here wrote: BrighterCommand/Brighter, a C# messaging library whose authors keep
their architecture decision records in ``docs/adr/`` and reference them from their commits.

    git clone https://github.com/BrighterCommand/Brighter /tmp/brighter
    python bench/mixed_store_eval.py /tmp/brighter [--json out.json] [--per-query]

- **Nodes:** every ADR at HEAD becomes a ``decision`` node (title and tags from its frontmatter or
  its heading, the text as content), written straight to the store: this is benchmark data, not the
  import feature. ``docs/adr/`` is then excluded from the code index, so what competes with the
  nodes is the rest of the repository: 4,400 C# files and the other docs.
- **Queries and answers:** the subject of every non-merge commit that changed exactly one ADR
  together with C# code, and that ADR (followed through renames to its name at HEAD) as the one
  relevant node. The rule is mechanical; no query or judgement was written here.
- **Split:** queries in commit order; every third one (index 2, 5, 8, ...) is held out. Tuning looks
  at the tuning split only.
- **Rankers:** unified search over the nodes alone (``scope=["nodes"]``: only the records in the
  store), unified search over everything (the mixed store), plain BM25 over the node texts
  (``knowledge_eval.PlainBM25``), and ``autology_query``.
- **Metrics:** node recall@10 and MRR@10 of the relevant ADR, and for the mixed store how many of
  the top 10 hits are nodes.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from knowledge_eval import PlainBM25, mrr_at_k, write_store  # noqa: E402

from autology_mcp.code import service as code_index  # noqa: E402
from autology_mcp.code.config import DEFAULT_EXCLUDE  # noqa: E402
from autology_mcp.knowledge.models import KnowledgeNode  # noqa: E402
from autology_mcp.knowledge.service import Autology  # noqa: E402
from autology_mcp.retrieval.engine import search  # noqa: E402

ADR_DIR = "docs/adr/"
_TAG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True).stdout


# ------------------------------------------------------------------------------ the judged queries


def head_names(repo: Path) -> dict[str, str]:
    """Every name an ADR at HEAD has had (followed through renames) -> its name at HEAD."""
    names = {}
    for path in git(repo, "ls-tree", "-r", "--name-only", "HEAD", ADR_DIR).split():  # a bare mirror has no work tree
        if path.endswith(".md"):
            for old in git(repo, "log", "--follow", "--name-only", "--format=", "--", path).split():
                names.setdefault(old, path)
            names[path] = path
    return names


def judged_queries(repo: Path) -> list[dict]:
    """Commits that changed exactly one ADR together with C# code: (subject, that ADR at HEAD), oldest first.

    Commit by commit (``git log`` over the whole history stops at the first object a snapshot lacks)."""
    names = head_names(repo)
    queries = []
    for sha in reversed(git(repo, "rev-list", "--no-merges", "HEAD", "--", ADR_DIR).split()):
        files = git(repo, "diff-tree", "--no-commit-id", "--name-only", "-r", sha).split("\n")
        adrs = [f for f in files if f.startswith(ADR_DIR) and f.endswith(".md")]
        if len(adrs) == 1 and any(f.endswith(".cs") for f in files) and adrs[0] in names:
            when, subject = git(repo, "show", "-s", "--format=%cI%x00%s", sha).strip().split("\x00", 1)
            queries.append({"sha": sha, "date": when, "query": subject, "adr": names[adrs[0]]})
    return queries


# ------------------------------------------------------------------------------ the mixed store


def adr_node(path: Path, when: datetime) -> KnowledgeNode:
    text = path.read_text(encoding="utf-8")
    meta: dict = {}
    if text.startswith("---\n") and "\n---\n" in text[4:]:
        head, text = text[4:].split("\n---\n", 1)
        try:
            meta = yaml.safe_load(head) or {}
        except yaml.YAMLError:
            meta = {}
    heading = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), path.stem)
    title = str(meta.get("title") or re.sub(r"^\d+\.\s*", "", heading))[:100]
    body = "\n".join(line for line in text.splitlines() if not line.startswith("# ")).strip() or title
    tags = [t for t in (str(x).lower() for x in meta.get("tags") or []) if _TAG.match(t)][:32]
    # A v4-shaped id from the ADR's path, not a random one: ties in a ranking break on the id, so random ids made
    # the figures differ from run to run (one tuning query ranked 2nd or 3rd).
    node_id = str(uuid.UUID(bytes=uuid.uuid5(uuid.NAMESPACE_URL, f"brighter-adr:{path.name}").bytes, version=4))
    return KnowledgeNode(id=node_id, type="decision", title=" ".join(title.split()), content=body[:200_000],
                         created=when, modified=when, tags=tags, source="manual")


def build_project(repo: Path, workdir: Path) -> tuple[Path, dict[str, str]]:
    """A clone of the repository with its ADRs as nodes and its code index built; ADR path -> node id."""
    project = workdir / "project"
    if project.exists():
        shutil.rmtree(project)
    subprocess.run(["git", "clone", "-q", "--shared", str(repo), str(project)], check=True)
    when = datetime(2026, 1, 1, tzinfo=UTC)
    nodes = {path.relative_to(project).as_posix(): adr_node(path, when) for path in sorted((project / ADR_DIR).glob("*.md"))}
    write_store(project, list(nodes.values()))
    ids = {rel: node.id for rel, node in nodes.items()}
    excluded = [*DEFAULT_EXCLUDE, "docs/adr/**"]  # the ADRs are the nodes; what competes is the rest
    (project / ".autology" / "config.toml").write_text(f"[index]\nexclude_globs = {json.dumps(excluded)}\n")
    started = time.perf_counter()
    summary = code_index.build_index(project)
    print(f"indexed {summary.get('files')} files in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return project, ids


# ------------------------------------------------------------------------------ rankers and metrics


def unified(project: Path, store, scope: list[str] | None):
    def rank(query: str) -> tuple[list[str], int]:
        answer = search(project, query, scope=scope, limit=10, max_tokens=1_000_000, store=store)
        nodes = [h["node_id"] for h in answer["hits"] if h["kind"] == "node"]
        return nodes, len(nodes)

    return rank


def evaluate(rankers: dict, queries: list[dict], ids: dict[str, str]) -> dict[str, dict]:
    rows: dict[str, list[dict]] = {name: [] for name in rankers}
    for q in queries:
        relevant = ids[q["adr"]]
        for name, rank in rankers.items():
            ranked, nodes_in_top = rank(q["query"])
            rows[name].append({
                "recall@10": float(relevant in ranked[:10]),
                "mrr@10": mrr_at_k(ranked, {relevant: 2}),
                "nodes_in_top10": nodes_in_top,
                "rank": ranked.index(relevant) + 1 if relevant in ranked else None,
            })
    return {
        name: {
            "recall@10": round(statistics.fmean(r["recall@10"] for r in rs), 3),
            "mrr@10": round(statistics.fmean(r["mrr@10"] for r in rs), 3),
            "nodes_in_top10": round(statistics.fmean(r["nodes_in_top10"] for r in rs), 1),
            "per_query": [r["rank"] for r in rs],
        }
        for name, rs in rows.items()
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo", type=Path, help="a clone of BrighterCommand/Brighter")
    parser.add_argument("--workdir", type=Path, help="where to build the project (default: a temp dir)")
    parser.add_argument("--per-query", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    queries = judged_queries(args.repo)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="mixed-store-"))
    try:
        return run(args, queries, workdir, load)
    finally:
        if args.workdir is None:  # the clone and its index: about 160 MB
            shutil.rmtree(workdir, ignore_errors=True)


def run(args: argparse.Namespace, queries: list[dict], workdir: Path, load: float) -> int:
    project, ids = build_project(args.repo, workdir)
    queries = [q for q in queries if q["adr"] in ids]
    splits = {"tuning": [q for i, q in enumerate(queries) if i % 3 != 2],
              "held-out": [q for i, q in enumerate(queries) if i % 3 == 2]}
    autology = Autology.open(project)
    bm25 = PlainBM25(list(autology.store.index.all_nodes()))
    rankers = {
        "unified, nodes only": unified(project, autology.store, ["nodes"]),
        "unified, mixed store": unified(project, autology.store, None),
        "plain BM25 (nodes)": lambda q: ((r := bm25(q)), len(r)),
        "autology_query": lambda q: ((r := [h.node.id for h in autology.query(q, limit=10)]), len(r)),
    }
    report = {
        "repo": f"{args.repo.name} at {git(args.repo, 'rev-parse', '--short', 'HEAD').strip()}",
        "nodes": len(ids),
        "queries": {k: len(v) for k, v in splits.items()},
        "machine": f"{platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}, load {load:.2f}",
        "results": {split: evaluate(rankers, qs, ids) for split, qs in splits.items()},
    }
    autology.close()
    print(f"# {report['repo']}: {report['nodes']} ADR nodes; queries {report['queries']}; {report['machine']}")
    for split, results in report["results"].items():
        print(f"\n{split} ({report['queries'][split]} queries)")
        print(f"{'ranker':<24} {'recall@10':>9} {'MRR@10':>7} {'nodes in top 10':>16}")
        for name, r in results.items():
            print(f"{name:<24} {r['recall@10']:>9.3f} {r['mrr@10']:>7.3f} {r['nodes_in_top10']:>16.1f}")
            if args.per_query:
                print("    ranks:", r["per_query"])
    if args.json:
        args.json.write_text(json.dumps({**report, "queries_list": queries}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
