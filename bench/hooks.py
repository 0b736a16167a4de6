"""Hook latency (issue 12): the wall time of every Claude Code hook, as the whole process Claude Code
starts, beside the bare interpreter timed in the same run.

    git clone https://github.com/sympy/sympy /tmp/sympy && git -C /tmp/sympy checkout e950d313a932
    python bench/hooks.py /tmp/sympy [--sizes 1000 10000] [--runs 15] [--json out.json]

For each store size it builds a project: a clone of the repository (nothing of it is committed
here), a generated store of that many nodes (bench/store_corpus.py) plus a decision and a convention
referencing real files, one commit of those nodes, and the code index of the whole repository. Then,
in rounds (one run of every command per round, so load changes touch them all alike):

- the floor, ``python -c "import sqlite3, json"``;
- ``python -m autology_mcp --help``;
- every hook as the plugin's launcher runs it, ``python -m autology_mcp.hooks <event>`` with a
  realistic payload on stdin (a new session id each round, so the once-per-session rules never skip
  the work): session-start, user-prompt-submit (questions about the repository and the store, some
  grounded, some not), post-read and pre-tool-use on a file a decision references, post-commit after
  the commit, pre-compact, session-end (a small transcript); pre-tool-use in a session of its own,
  so it does the full work of an edit to a file not read first;

then (issue 30, ``--agents``, all by default) Codex CLI's, Gemini CLI's and Copilot CLI's hooks as
``autology setup`` registers them (``python -m autology_mcp.hooks --agent A <event>``), with each
CLI's payloads: session start, the prompt, a read and an edit of that file, and a tool call that is
none of these (each CLI runs its one tool hook on every tool call);

with no server running, and again with ``autology serve`` running on the project (as in a Claude
Code session, where the plugin's MCP server runs beside the hooks). Last, the MCP server's spawn to
first answer (``autology_query``) beside a trivial server on the same SDK (bench/store_floor_server.py).
The package's bytecode is compiled first, as an installed package has it.

Targets (issue 12), as ratios to the floor's p50 in the same run: user-prompt-submit and the edit
hooks (post-read, pre-tool-use) <= 3x, session-start <= 4x, ``--help`` <= 3x, the same for each
agent's; the server's first
answer <= the trivial server's + 0.15 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from store import autology_params, first_answer, floor_params  # noqa: E402
from store_corpus import generate_store  # noqa: E402

REPO = HERE.parent
PINNED_SYMPY_COMMIT = "e950d313a932bc6cccbc95376b3821cd2f8b5af4"
GOVERNED_FILE = "sympy/simplify/trigsimp.py"
TRANSCRIPT = REPO / "tests" / "sessions" / "fixtures" / "basic.jsonl"
PROMPTS = [
    "How does trigsimp simplify trigonometric expressions?",
    "Why do we cache the schema migration snapshots?",
    "where is the retry backoff for the token refresh handled",
    "add a test for the rational function integration",
    "What is our convention for printing matrices in LaTeX?",
    "the kubernetes ingress certificate rotation policy",
]
TARGETS = {"user-prompt-submit": 3.0, "post-read": 3.0, "pre-tool-use": 3.0, "session-start": 4.0, "--help": 3.0}
AGENTS = ("codex", "gemini", "copilot")
for _agent in AGENTS:  # issue 30: each agent's hooks, the same targets as Claude Code's
    TARGETS |= {f"{_agent} session-start": 4.0, f"{_agent} prompt": 3.0, f"{_agent} read": 3.0,
                f"{_agent} edit": 3.0, f"{_agent} other tool": 3.0}
SERVER_MARGIN_S = 0.15
ADR = """## Context
Trigonometric simplification is slow on large expressions and users rely on its output form.

## Decision
`trigsimp` tries the Fu et al. transformation rules (`futrig`) first and keeps the old heuristic as a fallback.

## Alternatives
Only the heuristic; only Fu.

## Consequences
Simplification of trigonometric expressions is more predictable; changes to trigsimp must keep the
fallback.
"""

GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}


def uptime() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def autology(*args: str, root: Path) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "autology_mcp", "--root", str(root), *args], capture_output=True, text=True, check=True
    )
    return out.stdout


def build_project(repo: Path, size: int, data_dir: Path, seed: int, base_commits: int = 0) -> tuple[Path, str]:
    """The project for one store size; returns it and the output line of its one commit. With
    ``base_commits``, the decision and the convention about the edited file are left out of that commit,
    their ``modified`` set to the time of the commit that many first-parent commits back: their base
    is then that old, and the edit hooks judge them against every later commit of the file (the
    staleness rule, issue 29)."""
    project = data_dir / f"hooks-{size}"
    if project.exists():
        shutil.rmtree(project)
    subprocess.run(["git", "clone", "-q", "--shared", str(repo), str(project)], check=True)
    subprocess.run(["git", "-C", str(project), "checkout", "-q", PINNED_SYMPY_COMMIT], check=False)
    started = time.perf_counter()
    generate_store(project, size, seed=seed)
    autology("rebuild", root=project)
    governing = [json.loads(autology(
        "capture", "trigsimp tries Fu's rules first, the old heuristic second", "--type", "decision",
        "--content", ADR, "--tag", "simplify", "-r", GOVERNED_FILE, "--json", root=project,
    ))["id"], json.loads(autology(
        "capture", "Simplification functions never mutate their input", "--type", "convention",
        "--content", "Every simplify function returns a new expression; `trigsimp` and `futrig` never modify args.",
        "--tag", "simplify", "-r", "sympy/simplify", "--json", root=project,
    ))["id"]]
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "-C", str(project), "add", ".autology/nodes"], check=True, env=env)
    if base_commits:
        when = subprocess.run(["git", "-C", str(project), "log", "--first-parent", "-1", f"--skip={base_commits}",
                               "--format=%cI"], capture_output=True, text=True, check=True).stdout.strip()
        for path in (project / ".autology" / "nodes").rglob("*.md"):
            if any(path.stem == node for node in governing):
                subprocess.run(["git", "-C", str(project), "rm", "-q", "--cached", str(path)], check=True)
                text = path.read_text()
                path.write_text(re.sub(r"(?m)^modified: .*$", f"modified: '{when}'", text, count=1))
    commit = subprocess.run(
        ["git", "-C", str(project), "commit", "-m", "Record the simplify decisions"],
        capture_output=True, text=True, check=True, env=env,
    ).stdout
    print(f"[{size}] store generated and committed in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    started = time.perf_counter()
    autology("index", "build", "--quiet", root=project)
    print(f"[{size}] code index built in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return project, commit


def commands(project: Path, commit_output: str, round_no: int, mode: str,
             agents: tuple[str, ...] = ()) -> list[tuple[str, list[str], str]]:
    """(name, argv, stdin) of every command measured in one round: Claude Code's hooks, then ``agents``'."""
    py = sys.executable
    session = f"bench-{mode.replace(' ', '-')}-{round_no}"
    base = {"session_id": session, "cwd": str(project), "transcript_path": str(TRANSCRIPT)}
    governed = str(project / GOVERNED_FILE)

    def hook(event: str, payload: dict) -> tuple[str, list[str], str]:
        return event, [py, "-m", "autology_mcp.hooks", event], json.dumps({**base, **payload})

    claude = [
        ("floor", [py, "-c", "import sqlite3, json"], ""),
        ("--help", [py, "-m", "autology_mcp", "--help"], ""),
        hook("session-start", {"hook_event_name": "SessionStart", "source": "startup"}),
        hook("user-prompt-submit", {"hook_event_name": "UserPromptSubmit", "prompt": PROMPTS[round_no % len(PROMPTS)]}),
        hook("post-read", {"hook_event_name": "PostToolUse", "tool_name": "Read", "tool_input": {"file_path": governed},
                           "tool_response": {"type": "text"}}),
        # Its own session: in the Read's session the file was already spoken about, and the hook
        # would stop early. This is the full work, an edit of a file the session never read.
        hook("pre-tool-use", {"hook_event_name": "PreToolUse", "tool_name": "Edit", "session_id": session + "-edit",
                              "tool_input": {"file_path": governed, "old_string": "def trigsimp(", "new_string": "def trigsimp("}}),
        hook("post-commit", {"hook_event_name": "PostToolUse", "tool_name": "Bash",
                             "tool_input": {"command": "git add -A && git commit -m 'Record the simplify decisions'"},
                             "tool_response": {"stdout": commit_output}}),
        hook("pre-compact", {"hook_event_name": "PreCompact", "trigger": "auto"}),
        hook("session-end", {"hook_event_name": "SessionEnd", "reason": "exit"}),
    ]
    return [*claude, *agent_commands(project, session, round_no, agents)]


def agent_commands(project: Path, session: str, round_no: int, agents: tuple[str, ...]) -> list[tuple[str, list[str], str]]:
    """Codex CLI's, Gemini CLI's and Copilot CLI's hooks (issue 30), as ``autology setup`` registers them
    (``python -m autology_mcp.hooks --agent A <event>``), with the payloads each CLI sends
    (docs/agents/<agent>.md): session start, the prompt, a read and an edit of the governed file (in a
    session of its own, so it does the full work), and a tool that is none of those (a search), which
    costs a process on every tool call."""
    py = sys.executable
    governed = str(project / GOVERNED_FILE)
    prompt = PROMPTS[round_no % len(PROMPTS)]
    out = []
    for agent in agents:
        sid = f"{session}-{agent}"

        def hook(name: str, event: str, payload: dict, agent: str = agent) -> tuple[str, list[str], str]:
            return f"{agent} {name}", [py, "-m", "autology_mcp.hooks", "--agent", agent, event], json.dumps(payload)

        if agent == "codex":
            base = {"session_id": sid, "cwd": str(project), "transcript_path": str(TRANSCRIPT), "model": "gpt-5.5"}
            patch = f"*** Begin Patch\n*** Update File: {GOVERNED_FILE}\n@@\n-x\n+x\n*** End Patch\n"

            def tool(name: str, command: str, session: str = sid) -> dict:
                return {**base, "session_id": session, "hook_event_name": "PostToolUse", "turn_id": "t",
                        "tool_name": name, "tool_input": {"command": command}, "tool_response": ""}

            out += [hook("session-start", "session-start", {**base, "hook_event_name": "SessionStart", "source": "startup"}),
                    hook("prompt", "user-prompt-submit", {**base, "hook_event_name": "UserPromptSubmit", "prompt": prompt}),
                    hook("read", "post-tool-use", tool("Bash", f"sed -n '1,200p' {GOVERNED_FILE}")),
                    hook("edit", "post-tool-use", tool("apply_patch", patch, sid + "-edit")),
                    hook("other tool", "post-tool-use", tool("Bash", "rg -n trigsimp sympy/simplify"))]
        elif agent == "gemini":
            base = {"session_id": sid, "cwd": str(project), "transcript_path": str(TRANSCRIPT), "timestamp": "2026-11-27T00:00:00Z"}

            def tool(name: str, args: dict, session: str = sid) -> dict:
                return {**base, "session_id": session, "hook_event_name": "AfterTool", "tool_name": name,
                        "tool_input": args, "tool_response": {"llmContent": ""}}

            out += [hook("session-start", "session-start", {**base, "hook_event_name": "SessionStart", "source": "startup"}),
                    hook("prompt", "user-prompt-submit", {**base, "hook_event_name": "BeforeAgent", "prompt": prompt}),
                    hook("read", "post-tool-use", tool("read_file", {"file_path": governed})),
                    hook("edit", "post-tool-use", tool("replace", {"file_path": governed, "old_string": "def trigsimp(",
                                                                   "new_string": "def trigsimp("}, sid + "-edit")),
                    hook("other tool", "post-tool-use", tool("glob", {"pattern": "**/*.py"}))]
        else:
            base = {"sessionId": sid, "cwd": str(project), "timestamp": 1764201600000}

            def tool(name: str, args: dict, session: str = sid) -> dict:
                return {**base, "sessionId": session, "toolName": name, "toolArgs": args,
                        "toolResult": {"resultType": "success", "textResultForLlm": ""}}

            out += [hook("session-start", "session-start", {**base, "source": "new", "initialPrompt": prompt}),
                    hook("prompt", "user-prompt-submit", {**base, "prompt": prompt}),
                    hook("read", "post-tool-use", tool("view", {"path": governed})),
                    hook("edit", "post-tool-use", tool("edit", {"path": governed, "old_str": "def trigsimp(",
                                                                "new_str": "def trigsimp("}, sid + "-edit")),
                    hook("other tool", "post-tool-use", tool("grep", {"pattern": "trigsimp"}))]
    return out


def run_once(argv: list[str], stdin: str, cwd: Path) -> float:
    started = time.perf_counter()
    out = subprocess.run(argv, input=stdin, capture_output=True, text=True, cwd=cwd)
    elapsed = time.perf_counter() - started
    if out.returncode != 0:
        raise RuntimeError(f"{argv} exited {out.returncode}: {out.stderr[-500:]}")
    return elapsed


def stats(samples: list[float]) -> dict[str, float]:
    ms = sorted(x * 1000 for x in samples)
    return {
        "p50_ms": round(statistics.median(ms), 1),
        "p95_ms": round(ms[max(0, round(0.95 * len(ms)) - 1)], 1),
        "min_ms": round(ms[0], 1),
        "runs": len(ms),
    }


def measure_hooks(project: Path, commit_output: str, runs: int, mode: str,
                  agents: tuple[str, ...] = ()) -> dict[str, dict[str, float]]:
    samples: dict[str, list[float]] = {}
    for round_no in range(runs + 1):
        for name, argv, stdin in commands(project, commit_output, round_no, mode, agents):
            elapsed = run_once(argv, stdin, project)
            if round_no:  # round 0 warms the OS caches and the derived indexes
                samples.setdefault(name, []).append(elapsed)
    return {name: stats(values) for name, values in samples.items()}


class RunningServer:
    """``autology serve`` on the project for the duration of a ``with`` block, as in a Claude Code session."""

    def __init__(self, project: Path):
        self.project = project

    def __enter__(self) -> RunningServer:
        from autology_mcp.knowledge.lease import live_leases

        self.proc = subprocess.Popen(
            [sys.executable, "-m", "autology_mcp", "--root", str(self.project), "serve"],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while not any(live_leases(self.project / ".autology" / "cache")):  # its hook service is listening
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("autology serve did not start its hook service")
            time.sleep(0.1)
        return self

    def __exit__(self, *exc: object) -> None:
        self.proc.stdin.close()  # end of the stdio session: the server exits
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


async def measure_server(project: Path, runs: int) -> dict[str, dict[str, float]]:
    ours, floor = [], []
    await first_answer(autology_params(project), "autology_query", {"query": "simplify"})  # warm
    for _ in range(runs):
        floor.append(await first_answer(floor_params(), "echo", {"text": "ping"}))
        ours.append(await first_answer(autology_params(project), "autology_query", {"query": "simplify"}))
    return {"trivial server": stats(floor), "autology serve": stats(ours)}


def report(size: int, result: dict) -> list[str]:
    lines = [f"\n## {size} nodes + the code index of {result['repo']} ({result['index_files']} files)"]
    for mode in ("no server", "server running"):
        hooks = result[mode]
        base = hooks["floor"]["p50_ms"]
        lines.append(f"\n{mode} (load before/after: {result['load'][mode]})")
        lines.append(f"{'command':<22} {'p50 ms':>8} {'p95 ms':>8} {'x floor':>8}  target")
        for name, s in hooks.items():
            ratio = s["p50_ms"] / base
            target = TARGETS.get(name)
            verdict = "" if target is None else f"<= {target:.0f}x  {'met' if ratio <= target else 'MISSED'}"
            lines.append(f"{name:<22} {s['p50_ms']:>8.1f} {s['p95_ms']:>8.1f} {ratio:>8.2f}  {verdict}")
    server = result["server"]
    diff = (server["autology serve"]["p50_ms"] - server["trivial server"]["p50_ms"]) / 1000
    lines.append(f"\nspawn to first answer (load {result['load']['server']})")
    for name, s in server.items():
        lines.append(f"{name:<22} {s['p50_ms']:>8.1f} {s['p95_ms']:>8.1f}")
    lines.append(f"difference {diff:+.3f} s (target <= +{SERVER_MARGIN_S} s: {'met' if diff <= SERVER_MARGIN_S else 'MISSED'})")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo", type=Path, help="a clone of a large repository (sympy at the pinned commit)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--runs", type=int, default=15, help="measured runs per command (after one warm-up round)")
    parser.add_argument("--server-runs", type=int, default=7)
    parser.add_argument("--seed", type=int, default=20260208)
    parser.add_argument("--data-dir", type=Path, default=HERE / ".data")
    parser.add_argument("--keep", action="store_true", help="keep the generated projects")
    parser.add_argument("--base-commits", type=int, default=0,
                        help="the governing nodes' base this many first-parent commits back (0: committed at HEAD)")
    parser.add_argument("--agents", nargs="*", default=list(AGENTS), choices=AGENTS,
                        help="other agents whose hooks are measured beside Claude Code's (default: all)")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    args.data_dir.mkdir(parents=True, exist_ok=True)
    # Bytecode, as an installed package has it (pip compiles on install; PYTHONDONTWRITEBYTECODE may
    # be set here, and then every run would compile the package again).
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "autology_mcp")], check=True)
    results = {
        "machine": f"{platform.node()} {platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}",
        "sizes": {},
    }
    lines = [f"# bench/hooks.py — {results['machine']}"]
    for size in args.sizes:
        project, commit_output = build_project(args.repo, size, args.data_dir, args.seed, args.base_commits)
        status = json.loads(autology("index", "status", "--json", root=project))
        result: dict = {"repo": args.repo.name, "index_files": (status.get("stats") or {}).get("files"), "load": {}}
        for mode in ("no server", "server running"):
            before = uptime()
            if mode == "server running":
                with RunningServer(project):
                    result[mode] = measure_hooks(project, commit_output, args.runs, mode, tuple(args.agents))
            else:
                result[mode] = measure_hooks(project, commit_output, args.runs, mode, tuple(args.agents))
            result["load"][mode] = f"{before} / {uptime()}"
            print(f"[{size}] hooks measured ({mode})", file=sys.stderr)
        before = uptime()
        result["server"] = asyncio.run(measure_server(project, args.server_runs))
        result["load"]["server"] = f"{before} / {uptime()}"
        results["sizes"][size] = result
        lines += report(size, result)
        if not args.keep:
            shutil.rmtree(project)
    print("\n".join(lines))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
