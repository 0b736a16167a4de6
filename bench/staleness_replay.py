"""Staleness on replayed history (issue 38): nodes written at an old commit of a public repository,
the repository's next real commits replayed one by one, the product's flags compared with labels a
person wrote by reading the diffs.

For each window of ``bench/data/staleness_replay/<repo>.json`` the harness

1. clones the mirror with ``git clone --shared`` into a work dir and checks out the window's ``c0``
   on a branch;
2. writes the window's nodes with the real CLI (``autology init --no-git``, ``autology capture ...
   -r REF``) and commits them;
3. replays each later commit ``Ci``: the branch's next commit gets exactly ``Ci``'s tree plus the
   ``.autology/`` folder, with ``Ci``'s message, author and dates (the code is the real code at
   ``Ci``, byte for byte);
4. after each step runs ``autology analyze references --json`` and records which nodes it flags
   (any ``references`` finding, whatever its kind: stale or missing file at b71eda4; the report
   counts the kinds it saw, so a checkout that adds an informational kind shows it);
5. at the end of the window (or at the steps listed in the window's ``scenarios_at``) plays the
   workflows that must not change a flag, each against the plain replay's flags at the same code:
   (a) committed ``autology relate`` calls, each node to the next, (b) a committed ``autology update
   ID --tag x`` of every node (both on the replayed branch), (c) the nodes' commit rebased
   (cherry-picked) onto the real commit of that step, (d) the nodes' branch (the nodes' commit on
   ``c0``) squash-merged onto it, and, for reference, (e) the same branch merged with a merge commit.

The CLI is that of ``--checkout PATH`` (run as ``python -m autology_mcp`` with ``PYTHONPATH=PATH``),
so one harness measures any checkout. Labels: per node, one entry per step whose diff touches a file
the node references (``stale`` true or false and why); a step without an entry keeps the judgement of
the step before. ``--check-labels`` lists the touched steps without an entry, from git alone: a referenced path
is followed through renames (a moved folder's files at their new place), and a node labelled stale
needs no entry after that (its judgement carries).

    python bench/staleness_replay.py --checkout /work/main --repo flask --json /tmp/flask.json

Repositories: flask, requests, pip, httpx, click, black, typer, pytest, mypy, sympy, werkzeug, jinja, attrs,
starlette, rich, marshmallow, structlog, uvicorn, tenacity, itsdangerous, yarl, gunicorn, loguru, httpie, humanize,
quart, more_itertools, doc2dash, multidict, tablib, tomlkit, filelock, markupsafe, environs, pluggy, httpcore, arrow,
packaging and jsonschema (``--repo tuning``: all thirty-nine have been read while the rule was worked on; all but flask
and requests were each written as a fresh held-out replay for issue 38 and joined the tuning side once their flags had
been read; markupsafe was run blind at stop 60's and stop 61's rules, environs and pluggy at stop 62's before and after
a turn, httpcore at stop 63's, arrow after stop 63's turns 15 and 16, packaging before and after stop 64's turn 17,
jsonschema before and after stop 66's turn 18, then read), and dateutil (``--repo dateutil``, the held-out one: a fresh
replay of dateutil/dateutil whose labels, and a second labelling of them, were committed before any rule ran on it;
run it once per rule change you report, not while tuning).
``--repo all`` leaves out a replay whose role is
"held-out (fresh, for the stop after ...)", a replay prepared for a later stop, so that a run of all cannot
spend it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

DATA = Path(__file__).parent / "data" / "staleness_replay"
PYTHON = "/work/main/.venv/bin/python"
REPOS = ("flask", "requests", "pip", "httpx", "click", "black", "typer", "pytest", "mypy", "sympy", "werkzeug",
         "jinja", "attrs", "starlette", "rich", "marshmallow", "structlog", "uvicorn", "tenacity", "itsdangerous",
         "yarl", "gunicorn", "loguru", "httpie", "humanize", "quart", "more_itertools", "doc2dash", "tablib",
         "multidict", "tomlkit", "filelock", "markupsafe", "environs", "pluggy", "httpcore", "arrow", "packaging",
         "jsonschema", "dateutil")
FUTURE_HELD_OUT = "held-out (fresh, for the stop after"  # a role starting so is left out of --repo all
TUNING = ("flask", "requests", "pip", "httpx", "click", "black", "typer", "pytest", "mypy", "sympy", "werkzeug",
          "jinja", "attrs", "starlette", "rich", "marshmallow", "structlog", "uvicorn", "tenacity", "itsdangerous", "yarl",
          "gunicorn", "loguru", "httpie", "humanize", "quart", "more_itertools", "doc2dash",
          "multidict", "tablib", "tomlkit", "filelock", "markupsafe", "environs", "pluggy", "httpcore", "arrow",
          "packaging", "jsonschema")
TAG = "replay-tag"


def git(cwd: Path, *args: str, env: dict | None = None, check: bool = True) -> str:
    run = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env)
    if check and run.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {run.stderr.strip()}")
    return run.stdout.strip()


class Cli:
    """The autology CLI of one checkout, run in one work tree."""

    def __init__(self, checkout: Path):
        self.env = {k: v for k, v in os.environ.items() if k not in ("AUTOLOGY_ROOT", "CLAUDE_PROJECT_DIR")}
        self.env["PYTHONPATH"] = str(checkout)

    def __call__(self, root: Path, *args: str) -> str:
        run = subprocess.run([PYTHON, "-m", "autology_mcp", "--root", str(root), *args], cwd=root,
                             capture_output=True, text=True, env=self.env, timeout=300)
        if run.returncode != 0:
            raise RuntimeError(f"autology {' '.join(args[:2])}: {run.stderr.strip()[:500]}")
        return run.stdout

    def flags(self, root: Path) -> dict[str, list[str]]:
        """Node id -> the details of its reference findings."""
        out = json.loads(self(root, "analyze", "references", "--json"))
        cat = out["categories"]["references"]
        if cat["truncated"]:
            raise RuntimeError("analyze truncated its findings: too many references in one window")
        flagged: dict[str, list[str]] = {}
        for f in cat["findings"]:
            flagged.setdefault(f["id"], []).append(f"{f['kind']}: {f['detail']}")
        return flagged


def commit_env(repo: Path, sha: str) -> dict:
    fields = git(repo, "log", "-1", "--format=%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI", sha).split("\x00")
    env = dict(os.environ)
    env.update(GIT_AUTHOR_NAME=fields[0], GIT_AUTHOR_EMAIL=fields[1], GIT_AUTHOR_DATE=fields[2],
               GIT_COMMITTER_NAME=fields[3], GIT_COMMITTER_EMAIL=fields[4], GIT_COMMITTER_DATE=fields[5])
    return env


def replay_step(repo: Path, sha: str) -> None:
    """The next commit of the branch: ``sha``'s tree exactly, plus the branch's ``.autology/``."""
    index = Path(tempfile.mkstemp(prefix="replay-index-")[1])
    try:
        env = dict(os.environ, GIT_INDEX_FILE=str(index))
        index.unlink()
        git(repo, "read-tree", sha, env=env)
        git(repo, "read-tree", "--prefix=.autology/", git(repo, "rev-parse", "HEAD:.autology"), env=env)
        tree = git(repo, "write-tree", env=env)
    finally:
        index.unlink(missing_ok=True)
    message = git(repo, "log", "-1", "--format=%B", sha)
    new = subprocess.run(["git", "commit-tree", tree, "-p", "HEAD", "-F", "-"], cwd=repo, input=message,
                         capture_output=True, text=True, env=commit_env(repo, sha), check=True).stdout.strip()
    git(repo, "reset", "-q", "--hard", new)


def expand_labels(window: dict) -> dict[str, list[dict]]:
    """Node key -> one label per step (stale, why)."""
    steps = window["steps"]
    out = {}
    for node in window["nodes"]:
        entries = {}
        for e in window["labels"][node["key"]]:
            match = [i for i, s in enumerate(steps) if s.startswith(e["step"])]
            if len(match) != 1:
                raise ValueError(f"{node['key']}: label step {e['step']} is not one step of the window")
            entries[match[0]] = e
        if 0 not in entries:
            raise ValueError(f"{node['key']}: no label at the first step")
        row, last = [], None
        for i in range(len(steps)):
            if i in entries:
                last = entries[i]
                row.append({"stale": last["stale"], "why": last["why"]})
            else:
                row.append({"stale": last["stale"], "why": "referenced code unchanged at this step; as before: " + last["why"]})
        out[node["key"]] = row
    return out


def touched(mirror: Path, window: dict) -> list[tuple[set[str], dict[str, str]]]:
    """Per step, the paths its commit changed against the step before (a renamed file by both names), and
    its renames (old path: new path)."""
    prev, out = window["c0"], []
    for sha in window["steps"]:
        paths, moves = set(), {}
        for line in git(mirror, "diff", "--name-status", "-M", prev, sha).splitlines():
            status, *names = line.split("\t")
            paths.update(names)
            if status.startswith("R") and len(names) == 2:
                moves[names[0]] = names[1]
        out.append((paths, moves))
        prev = sha
    return out


def ref_path(ref: str) -> str:
    return ref.split("#", 1)[0].rstrip("/")


def _under(path: str, ref: str) -> bool:
    return path == ref or path.startswith(ref + "/")


def check_labels(mirror: Path, window: dict) -> list[str]:
    """Steps that touch a referenced path without a label entry for the node (git only). A referenced
    path is followed through renames (a file moved, or a folder: ``marshmallow/`` into
    ``src/marshmallow/``), so later changes at its new place need a label too, until the node is
    labelled stale (a step without an entry keeps the judgement before it)."""
    problems = []
    changed = touched(mirror, window)
    for node in window["nodes"]:
        labels = {e["step"][:7]: e["stale"] for e in window["labels"][node["key"]]}
        followed = {ref_path(r) for r in node["references"]}
        stale = False  # a node labelled stale stays stale: the steps after need no entry
        for i, (paths, moves) in enumerate(changed):
            hit = any(_under(p, r) for r in followed for p in paths)
            step = window["steps"][i][:7]
            if hit and step not in labels and not stale:
                problems.append(f"{node['key']}: step {i + 1} {window['steps'][i][:8]} touches a referenced path, no label")
            stale = labels.get(step, stale)
            for old, new in moves.items():  # a file moved, or a file of a referenced folder moved with it
                for r in list(followed):
                    if old == r:
                        followed.add(new)
                    elif old.startswith(r + "/") and new.endswith(old[len(r):]):
                        followed.add(new[:len(new) - len(old) + len(r)])
    return problems


def scenario_flags(cli: Cli, work: Path, window: dict, ids: dict[str, str], nodes_commit: str,
                   replay_head: str, last: str) -> dict[str, dict[str, bool]]:
    """Flags per node after each workflow that must not change them, played at the replayed commit
    ``replay_head`` (relate, tag) and at the real commit ``last`` it replays (rebase, squash, merge)."""
    keys = [n["key"] for n in window["nodes"]]
    result = {}

    def read(name: str) -> None:
        flagged = cli.flags(work)
        result[name] = {k: ids[k] in flagged for k in keys}

    env = None  # these commits are made now, after the code, as a person would
    git(work, "checkout", "-q", "-B", "scenario-relate", replay_head)
    for a, b in zip(keys, keys[1:] + keys[:1]):
        cli(work, "relate", ids[a], "relates_to", ids[b], "--json")
    git(work, "add", "-A", ".autology")
    git(work, "commit", "-q", "-m", "autology: relate each node to the next", env=env)
    read("relate")
    git(work, "checkout", "-q", "-B", "scenario-tag", replay_head)
    for k in keys:
        cli(work, "update", ids[k], "--tag", TAG, "--json")
    git(work, "add", "-A", ".autology")
    git(work, "commit", "-q", "-m", "autology: retag every node", env=env)
    read("tag")
    git(work, "checkout", "-q", "-B", "scenario-rebase", last)
    git(work, "cherry-pick", nodes_commit, env=env)
    read("rebase")
    git(work, "checkout", "-q", "-B", "scenario-squash", last)
    git(work, "branch", "-f", "nodes-at-c0", nodes_commit)
    git(work, "merge", "-q", "--squash", "nodes-at-c0", env=env)
    git(work, "commit", "-q", "-m", "Squashed: autology nodes", env=env)
    read("squash")
    git(work, "checkout", "-q", "-B", "scenario-merge", last)
    git(work, "merge", "-q", "--no-ff", "-m", "Merge branch 'nodes-at-c0'", "nodes-at-c0", env=env)
    read("merge")
    return result


def run_window(cli: Cli, mirror: Path, window: dict, workdir: Path) -> dict:
    work = workdir / window["name"]
    if work.exists():
        shutil.rmtree(work)
    git(workdir, "clone", "-q", "--shared", "--no-checkout", str(mirror), str(work))
    git(work, "config", "user.name", "Replay Bench")
    git(work, "config", "user.email", "replay@example.invalid")
    git(work, "config", "commit.gpgsign", "false")
    git(work, "checkout", "-q", "-b", "replay", window["c0"])
    cli(work, "init", "--no-git")
    ids = {}
    for node in window["nodes"]:
        args = ["capture", node["title"], "-t", node["type"], "-c", node["content"], "--json"]
        for ref in node["references"]:
            args += ["-r", ref]
        for tag in node.get("tags", []):
            args += ["--tag", tag]
        ids[node["key"]] = json.loads(cli(work, *args))["id"]
    git(work, "add", "-A", ".autology")
    env = commit_env(work, window["c0"])
    git(work, "commit", "-q", "-m", "autology: nodes written at this commit", env=env)
    nodes_commit = git(work, "rev-parse", "HEAD")
    labels = expand_labels(window)
    subjects = [git(mirror, "log", "-1", "--format=%s", s) for s in window["steps"]]
    cells, flags_at, seconds, heads = [], [], [], []
    for i, sha in enumerate(window["steps"]):
        replay_step(work, sha)
        heads.append(git(work, "rev-parse", "HEAD"))
        start = time.monotonic()
        flagged = cli.flags(work)
        seconds.append(time.monotonic() - start)
        flags_at.append(flagged)
        for node in window["nodes"]:
            k = node["key"]
            cells.append({"window": window["name"], "node": k, "title": node["title"], "step": i + 1, "commit": sha[:10],
                          "subject": subjects[i], "label": labels[k][i]["stale"], "why": labels[k][i]["why"],
                          "flagged": ids[k] in flagged, "findings": flagged.get(ids[k], [])})
    points = []
    for prefix in window.get("scenarios_at") or [window["steps"][-1]]:
        i = next(i for i, s in enumerate(window["steps"]) if s.startswith(prefix))
        plain = {n["key"]: ids[n["key"]] in flags_at[i] for n in window["nodes"]}
        points.append({"step": i + 1, "commit": window["steps"][i][:10], "plain_flags": plain,
                       "scenarios": scenario_flags(cli, work, window, ids, nodes_commit, heads[i], window["steps"][i])})
    return {"window": window["name"], "c0": window["c0"], "steps": len(window["steps"]), "nodes": len(window["nodes"]),
            "cells": cells, "scenario_points": points,
            "analyze_seconds": [round(s, 2) for s in seconds]}


def matrix(cells: list[dict]) -> dict:
    tp = sum(c["flagged"] and c["label"] for c in cells)
    fp = sum(c["flagged"] and not c["label"] for c in cells)
    fn = sum(not c["flagged"] and c["label"] for c in cells)
    tn = sum(not c["flagged"] and not c["label"] for c in cells)
    return {"cells": len(cells), "tp": tp, "fp": fp, "fn": fn, "tn": tn,
            "precision": round(tp / (tp + fp), 3) if tp + fp else None,
            "recall": round(tp / (tp + fn), 3) if tp + fn else None}


def runs(cells: list[dict]) -> list[list[dict]]:
    """Consecutive steps of one node in one window, grouped (cells come window by window, step by step)."""
    by_node: dict[tuple, list[dict]] = {}
    for c in cells:
        by_node.setdefault((c["window"], c["node"]), []).append(c)
    out = []
    for group in by_node.values():
        for c in group:
            if out and out[-1][-1]["node"] == c["node"] and out[-1][-1]["window"] == c["window"] \
                    and out[-1][-1]["step"] == c["step"] - 1:
                out[-1].append(c)
            else:
                out.append([c])
    return out


def report(name: str, windows: list[dict], every_cell: bool = False) -> dict:
    cells = [c for w in windows for c in w["cells"]]
    m = matrix(cells)
    print(f"== {name}: {m['cells']} node-step cells, {sum(w['nodes'] for w in windows)} nodes, "
          f"{sum(w['steps'] for w in windows)} steps")
    print(f"   TP {m['tp']}  FP {m['fp']}  FN {m['fn']}  TN {m['tn']}   precision {m['precision']}  recall {m['recall']}")
    kinds = Counter(f.split(":", 1)[0] for c in cells for f in c["findings"])
    print("   finding kinds counted as flags (findings over all cells): " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    for kind, pick in (("false flags", lambda c: c["flagged"] and not c["label"]),
                       ("missed flags", lambda c: c["label"] and not c["flagged"])):
        bad = [c for c in cells if pick(c)]
        print(f"   {kind} ({len(bad)}){'' if every_cell else ', as runs of steps of one node'}:")
        for run in ([[c] for c in bad] if every_cell else runs(bad)):
            c, end = run[0], run[-1]
            steps = f"step {c['step']}" if len(run) == 1 else f"steps {c['step']}-{end['step']}"
            print(f"     {c['node']} {steps} (from {c['commit'][:9]} {c['subject'][:60]!r}): {c['title'][:60]}")
            print(f"         label: {c['why'][:120]}")
            for f in c["findings"][:2]:
                print(f"         flag:  {f[:120]}")
    scen = {}
    for w in windows:
        for point in w["scenario_points"]:
            plain = point["plain_flags"]
            for sname, flags in point["scenarios"].items():
                changed = [k for k, v in flags.items() if v != plain[k]]
                s = scen.setdefault(sname, {"nodes": 0, "changed": [], "kept_flags": 0, "plain_flags": 0})
                s["nodes"] += len(flags)
                s["changed"] += [f"{k}@{point['step']}" for k in changed]
                s["plain_flags"] += sum(plain.values())
                s["kept_flags"] += sum(1 for k, v in flags.items() if v and plain[k])
    where = ", ".join(f"{w['window']} step {p['step']}" for w in windows for p in w["scenario_points"])
    print(f"   workflows against the plain replay's flags at the same code ({where}):")
    for sname, s in scen.items():
        print(f"     {sname:<7} {s['kept_flags']}/{s['plain_flags']} flags kept, "
              f"{len(s['changed'])} of {s['nodes']} nodes changed{': ' + ', '.join(s['changed']) if s['changed'] else ''}")
    return {"matrix": m, "finding_kinds": dict(kinds), "scenarios": scen, "windows": windows}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--checkout", type=Path, default=Path(__file__).resolve().parent.parent,
                   help="the autology checkout whose CLI is measured (default: this one)")
    p.add_argument("--repo", choices=(*REPOS, "tuning", "all"), default="all",
                   help="tuning: the thirty-eight replays of TUNING (each was read after a run, so they tune now); "
                        "jsonschema is the held-out one")
    p.add_argument("--json", type=Path, help="write every cell, finding and scenario here")
    p.add_argument("--workdir", type=Path, help="keep the replayed clones here (default: a temp dir, removed)")
    p.add_argument("--every-cell", action="store_true", help="list each false or missed cell, not runs of steps")
    p.add_argument("--data", type=Path, default=DATA, help="the folder of <repo>.json files")
    p.add_argument("--check-labels", action="store_true", help="only list touched steps without a label entry")
    args = p.parse_args(argv)
    repos = {"all": REPOS, "tuning": TUNING}.get(args.repo, (args.repo,))
    cli = Cli(args.checkout.resolve())
    head = git(args.checkout, "rev-parse", "--short", "HEAD", check=False) or "?"
    out = {"checkout": str(args.checkout), "commit": head, "repos": {}}
    tmp = None
    if args.workdir is None:
        tmp = tempfile.mkdtemp(prefix="staleness-replay-")
        workdir = Path(tmp)
    else:
        workdir = args.workdir
        workdir.mkdir(parents=True, exist_ok=True)
    try:
        for repo in repos:
            if not (args.data / f"{repo}.json").exists():
                print(f"{repo}: no {args.data / f'{repo}.json'} (a replay not written yet)")
                continue
            data = json.loads((args.data / f"{repo}.json").read_text())
            if args.repo == "all" and data["role"].startswith(FUTURE_HELD_OUT):
                print(f"{repo}: left out of --repo all ({data['role']}); run it with --repo {repo}")
                continue
            mirror = Path(data["mirror"])
            if args.check_labels:
                for w in data["windows"]:
                    expand_labels(w)
                    problems = check_labels(mirror, w)
                    print(f"{repo}/{w['name']}: {len(problems)} touched steps without a label")
                    for line in problems:
                        print("  " + line)
                continue
            start = time.monotonic()
            windows = [run_window(cli, mirror, w, workdir) for w in data["windows"]]
            print(f"[{repo} at {head}: {time.monotonic() - start:.0f}s]")
            out["repos"][repo] = report(f"{data['repository']} ({data['role']})", windows, args.every_cell)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    if args.json and not args.check_labels:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
