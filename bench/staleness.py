"""Staleness at scale (issue 29): ``autology analyze references`` on a store of many nodes whose bases
are spread over many commits of a large repository, beside the rule before issue 29 (a checkout of
main at 5f378d6: any later commit to a referenced file flags it) on the same store, in one run.

    git clone https://github.com/sympy/sympy /tmp/sympy && git -C /tmp/sympy checkout e950d313a932
    git -C <this checkout> worktree add /tmp/staleness-before 5f378d6
    python bench/staleness.py /tmp/sympy [--nodes 10000] [--commits 10000] [--before /tmp/staleness-before]

The store: ``--nodes`` decisions, each referencing one or two real Python files of the repository as
they were at its base (one in ten a folder), its text naming two to four functions or classes those
files defined then (in backticks, as people write them). Each node's base is a commit drawn uniformly
from the last ``--commits`` of HEAD's first-parent history: the node files are left uncommitted with
``modified`` at that commit's time, so the base is found as for any node edited then. Timed: a fresh
process of ``autology analyze references --json`` (after ``autology rebuild``), twice, and the same
for the rule before; with the nodes each flags, and `uptime` beside each run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PINNED_SYMPY_COMMIT = "e950d313a932bc6cccbc95376b3821cd2f8b5af4"
ADR = "## Context\n{context}\n\n## Decision\n{decision}\n\n## Alternatives\nLeave it.\n\n## Consequences\nCallers rely on it."
_DEF = re.compile(r"^(?:def|class)\s+([A-Za-z_]\w{3,})", re.MULTILINE)


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True, errors="replace").stdout


def uptime() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def build(repo: Path, project: Path, nodes: int, commits: int, seed: int) -> None:
    if project.exists():
        shutil.rmtree(project)
    subprocess.run(["git", "clone", "-q", "--shared", str(repo), str(project)], check=True)
    subprocess.run(["git", "-C", str(project), "checkout", "-q", PINNED_SYMPY_COMMIT], check=False)
    history = git(project, "log", "--first-parent", "--format=%H %ct", f"-n{commits}").split("\n")
    history = [line.split() for line in history if line]
    rng = random.Random(seed)
    chosen = sorted(rng.choices(range(len(history)), k=nodes))
    files_at: dict[str, list[str]] = {}
    out = project / ".autology" / "nodes" / "decisions"
    out.mkdir(parents=True)
    cat = subprocess.Popen(["git", "cat-file", "--batch"], cwd=project, stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def text_at(sha: str, path: str) -> str:
        cat.stdin.write(f"{sha}:{path}\n".encode())
        cat.stdin.flush()
        header = cat.stdout.readline().split()
        if len(header) != 3:
            return ""
        data = cat.stdout.read(int(header[2]) + 1)[:-1]
        return data.decode("utf-8", "replace") if header[1] == b"blob" else ""

    made = 0
    for index in chosen:
        sha, when = history[index]
        if sha not in files_at:
            files_at[sha] = [f for f in git(project, "ls-tree", "-r", "--name-only", sha, "--", "sympy").split("\n")
                             if f.endswith(".py") and "/tests/" not in f]
        files = files_at[sha]
        refs = rng.sample(files, rng.choice([1, 1, 2]))
        names: list[str] = []
        for ref in refs:
            defined = sorted(set(_DEF.findall(text_at(sha, ref))))
            names += rng.sample(defined, min(len(defined), rng.randint(1, 3)))
        if rng.random() < 0.1:
            refs[0] = refs[0].rsplit("/", 1)[0]  # a folder
        if not names:
            continue
        stamp = datetime.fromtimestamp(int(when), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        node_id = f"{made:08x}-0000-4000-8000-{rng.getrandbits(48):012x}"
        content = ADR.format(context=f"{' and '.join(refs)} grew several ways to do one thing.",
                             decision="Keep " + ", ".join(f"`{n}`" for n in names) + " as the one entry point each.")
        front = {"id": node_id, "type": "decision", "title": f"One entry point in {refs[0].rsplit('/', 1)[-1]} ({made})",
                 "tags": [], "references": refs, "confidence": 0.9, "created": stamp, "modified": stamp,
                 "source": "manual", "status": "active"}
        lines = ["---"] + [f"{k}: {json.dumps(v)}" for k, v in front.items()] + ["---", "", content, ""]
        (out / f"{node_id}.md").write_text("\n".join(lines))
        made += 1
    cat.stdin.close()
    cat.wait()
    print(f"{made} nodes over {len(set(chosen))} distinct bases of the last {len(history)} first-parent commits",
          file=sys.stderr)


def analyze(project: Path, checkout: Path | None) -> tuple[float, dict]:
    code = ("import sys; sys.path.insert(0, sys.argv[1]) if sys.argv[1] else None; "
            "from autology_mcp.cli.main import main; sys.exit(main(sys.argv[2:]))")
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code, str(checkout or ""), "--root", str(project), "analyze",
                          "references", "--json"], capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if out.returncode not in (0, 1):
        raise RuntimeError(out.stderr[-2000:])
    return elapsed, json.loads(out.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo", type=Path, help="a clone of sympy (the pinned commit is checked out in a copy)")
    parser.add_argument("--nodes", type=int, default=10000)
    parser.add_argument("--commits", type=int, default=10000)
    parser.add_argument("--before", type=Path, help="a checkout of the code before issue 29 (5f378d6)")
    parser.add_argument("--data-dir", type=Path, default=HERE / ".data")
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    project = args.data_dir / "staleness"
    args.data_dir.mkdir(parents=True, exist_ok=True)
    build(args.repo, project, args.nodes, args.commits, args.seed)
    subprocess.run([sys.executable, "-m", "autology_mcp", "--root", str(project), "rebuild"], check=True,
                   capture_output=True)
    for name, checkout in [("now", None)] + ([("before (5f378d6)", args.before)] if args.before else []):
        for run in (1, 2):
            load = uptime()
            elapsed, report = analyze(project, checkout)
            category = report["categories"]["references"]
            kinds: dict[str, int] = {}
            for f in category["findings"]:
                kinds[f["kind"]] = kinds.get(f["kind"], 0) + 1
            nodes = round((1 - category["score"] / 100) * category["considered"])
            print(f"{name:<18} run {run}: {elapsed:6.1f} s  {category['count']:>6} findings, about {nodes} of "
                  f"{category['considered']} nodes (score {category['score']})  {kinds} (of the first 50)  load {load}")
    if not args.keep:
        shutil.rmtree(project)
    return 0


if __name__ == "__main__":
    sys.exit(main())
