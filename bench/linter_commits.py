"""How much of what a linter commit rewrites the staleness rule reads as the same code (issue 38).

    python bench/linter_commits.py --checkout /work/main --baseline /tmp/gate-2fb10ee /work/.mirror/pallets+flask/repo ...

For each repository (a git dir), the first-parent commits whose subject says a linter or formatter ran
(ruff, pyupgrade, pre-commit, black, isort, flake8, "lint", "formatting", "reformat", "modernize",
"f-string", "autoupdate", "auto fixes")
are read. For every Python function or method that such a commit changed (the two versions' ASTs differ,
positions aside), each checkout's comparison is asked whether the two are the same code: the canonical
form the staleness rule reads (``code_compare.parse_python``, which sets typing aside, then
``equivalents.canonical`` and ``code_compare.dump``; a checkout from before ``knowledge/trust/`` cannot be
measured). A symbol read as the same is one a node about it keeps without a flag; one read as changed goes on to the other rules,
which may still find that nothing the node says changed.

Printed per repository and in all: the commits read, the symbols they changed, and how many each checkout
reads as the same. No labels are involved: these commits say what they are, and a linter's commit is
meant to keep what the code does (a linter's unsafe fixes and hand edits in such commits exist, so not
every symbol must read as the same).
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

LINTER = re.compile(r"\b(ruff|pyupgrade|pre-commit|precommit|black|isort|flake8|lint|linter|formatting|formatter|"
                    r"reformat|modernize|f-?strings?|autoupdate|autofix|auto fixes)\b", re.IGNORECASE)
COMPARE = r'''
import json, sys
from autology_mcp.knowledge.trust.code_compare import dump, find_symbol, parse_python
from autology_mcp.knowledge.trust.equivalents import canonical
out = []
for old, new, name in json.load(sys.stdin):
    a, b = find_symbol(parse_python(old), name), find_symbol(parse_python(new), name)
    out.append(a is not None and b is not None and dump(canonical(a), False) == dump(canonical(b), False))
print(json.dumps(out))
'''


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, errors="replace").stdout


def symbols(text: str) -> dict[str, str]:
    """Each function and method of a module (``Class.method``), as its source."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    found: dict[str, str] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found[prefix + node.name] = ast.get_source_segment(text, node) or ""
            elif isinstance(node, ast.ClassDef):
                visit(node.body, prefix + node.name + ".")

    visit(tree.body, "")
    return found


def changed_pairs(repo: Path, most: int) -> tuple[int, list[tuple[str, str, str]]]:
    """The commits a linter made (newest first, up to ``most``) and, for every function or method they
    changed, the file before and after and the function's qualified name."""
    log = git(repo, "log", "--first-parent", "--no-merges", "--format=%H%x00%s", "HEAD")
    commits = [line.split("\0", 1)[0] for line in log.splitlines() if "\0" in line and LINTER.search(line.split("\0", 1)[1])]
    commits = commits[:most]
    pairs: list[tuple[str, str, str]] = []
    for sha in commits:
        files = [f for f in git(repo, "diff", "--name-only", f"{sha}^", sha, "--", "*.py").splitlines()
                 if not re.search(r"(^|/)(tests?|testing|docs?)/|(^|/)test_", f)]
        for path in files:
            old_text, new_text = git(repo, "show", f"{sha}^:{path}"), git(repo, "show", f"{sha}:{path}")
            before, after = symbols(old_text), symbols(new_text)
            for name in sorted(before.keys() & after.keys()):
                a, b = _dedent(before[name]), _dedent(after[name])
                try:
                    if ast.dump(ast.parse(a)) != ast.dump(ast.parse(b)):
                        pairs.append((old_text, new_text, name))
                except SyntaxError:
                    continue
    return len(commits), pairs


def _dedent(source: str) -> str:
    return textwrap.dedent(source) if source[:1] in " \t" else source


def same(checkout: Path, pairs: list[tuple[str, str]]) -> list[bool]:
    run = subprocess.run([sys.executable, "-c", COMPARE], input=json.dumps(pairs), capture_output=True, text=True,
                         env={"PYTHONPATH": str(checkout), "PATH": "/usr/bin:/bin"}, cwd=checkout)  # (-c puts the cwd first)
    if run.returncode != 0:
        raise RuntimeError(run.stderr[-2000:])
    return json.loads(run.stdout)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("repos", nargs="+", type=Path, help="git dirs of the repositories")
    p.add_argument("--checkout", type=Path, required=True, help="the autology checkout measured")
    p.add_argument("--baseline", type=Path, help="another checkout, measured side by side")
    p.add_argument("--most", type=int, default=60, help="linter commits read per repository, newest first")
    args = p.parse_args(argv)
    checkouts = [c for c in (args.baseline, args.checkout) if c is not None]
    totals = [0, 0] + [0] * len(checkouts)
    print("repository | linter commits | symbols changed | " + " | ".join(f"read as the same by {c.name}" for c in checkouts))
    for repo in args.repos:
        commits, pairs = changed_pairs(repo, args.most)
        counts = [sum(same(c, pairs)) if pairs else 0 for c in checkouts]
        name = repo.parent.name if repo.name == "repo" else repo.name
        print(f"{name} | {commits} | {len(pairs)} | " + " | ".join(str(n) for n in counts))
        totals = [t + v for t, v in zip(totals, [commits, len(pairs), *counts])]
    print("all | " + " | ".join(str(t) for t in totals))
    return 0


if __name__ == "__main__":
    sys.exit(main())
