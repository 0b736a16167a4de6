"""Ingesting a huge Claude Code transcript (issue 13): the SessionEnd hook's time and peak memory per
step, and ``autology sessions ingest`` to the end, on a generated transcript of a given size.

    python bench/transcript_ingest.py [--mb 1024] [--code-path PATH] [--transcript FILE] [--json out.json]

The transcript is synthetic but shaped like Claude Code's, with the fields it writes: user prompts
and assistant answers of 12 to 300 words, tool calls, and tool results of 5 to 2,500 lines (the
bulk of the bytes, as in real sessions, where file reads and command output dominate). It is
written to Claude Code's projects folder of a temporary config dir, so the hook reads it as it
would in a session.

Measured, each as the whole process Claude Code (or the user) starts:

- ``autology hook session-end`` with the transcript's path on stdin, run repeatedly until the
  transcript is complete: wall time and peak RSS of each run (the hook has a 10 s timeout);
- ``autology sessions ingest PATH`` on a fresh store: wall time and peak RSS to the end;
- the floor, ``python -c "import sqlite3, json"``, in the same run.

``--code-path`` runs another checkout of autology (for example the commit before issue 13's change,
with ``git worktree add``) for a side-by-side figure; a run is cut at 600 s, the hook's runs together
at ``--hook-budget`` seconds. ``--transcript FILE`` keeps the generated transcript there (written when
missing, hard-linked into the temporary config dir), so two checkouts are measured on the same bytes.
The summary line gives the partial steps' mean and maximum and the completing step (issue 29: it
used to grow with the session). The temporary folder is deleted at the end unless ``--keep``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LIMIT_S = 600


def write_transcript(path: Path, megabytes: int, session_id: str, cwd: str) -> int:
    rng = random.Random(7)
    words = "retry backoff client server cache token request response parser schema index query store".split()
    target = megabytes * 1024 * 1024
    written, n = 0, 0
    with open(path, "w", encoding="utf-8") as out:
        while written < target:
            n += 1
            stamp = f"2026-10-{1 + n // 86400 % 28:02d}T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}.000Z"
            base = {"parentUuid": None, "isSidechain": False, "uuid": f"u-{n}", "timestamp": stamp,
                    "userType": "external", "entrypoint": "cli", "cwd": cwd, "sessionId": session_id,
                    "version": "2.1.197", "gitBranch": "main"}
            kind = n % 4
            if kind in (0, 1):  # prompts and answers: a sentence to a few paragraphs
                text = " ".join(rng.choice(words) for _ in range(rng.choice((12, 60, 300))))
            else:  # tool results: a few lines to a 200 KB file
                text = "\n".join(" ".join(rng.choice(words) for _ in range(12)) for _ in range(rng.choice((5, 100, 2500))))
            if kind == 0:
                row = {**base, "type": "user", "message": {"role": "user", "content": f"Prompt {n}: {text}"}}
            elif kind == 1:
                row = {**base, "type": "assistant", "message": {"role": "assistant", "content": [
                    {"type": "text", "text": text}]}}
            elif kind == 2:
                row = {**base, "type": "assistant", "message": {"role": "assistant", "content": [
                    {"type": "tool_use", "id": f"t-{n}", "name": "Read", "input": {"file_path": f"{cwd}/src/m{n % 50}.py"}}]}}
            else:
                row = {**base, "type": "user", "message": {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": f"t-{n - 1}", "content": text}]}}
            line = json.dumps(row) + "\n"
            out.write(line)
            written += len(line.encode())
    return written


def timed(cmd: list[str], env: dict[str, str], stdin: str | None = None) -> tuple[float, float, str]:
    """(wall seconds, peak RSS in MB, stdout) of one process, run through a wrapper that reports its child's peak."""
    wrapper = (
        "import resource, subprocess, sys, time; t = time.perf_counter();"
        " r = subprocess.run(sys.argv[1:], input=sys.stdin.read(), capture_output=True, text=True, timeout=%d);"
        " w = time.perf_counter() - t;"
        " print(w, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, r.returncode, file=sys.stderr);"
        " sys.stdout.write(r.stdout)" % LIMIT_S
    )
    try:
        result = subprocess.run([sys.executable, "-c", wrapper, *cmd], input=stdin or "", capture_output=True,
                                text=True, env=env, timeout=LIMIT_S + 30,
                                cwd=tempfile.gettempdir())  # not the checkout: `python -m` puts the cwd first on sys.path
    except subprocess.TimeoutExpired:
        return float("inf"), float("nan"), ""
    if "TimeoutExpired" in result.stderr:
        return float("inf"), float("nan"), ""
    wall, rss, _code = result.stderr.strip().splitlines()[-1].split()
    return float(wall), float(rss), result.stdout


def session_complete(path: Path) -> bool:
    """Whether the session file says its transcript is all read: format 1 in its header, format 2
    in its last checkpoint (issue 29's append-only file)."""
    if not path.is_file():
        return False
    with path.open("rb") as handle:
        header = json.loads(handle.readline())
        if header.get("format") == 1:
            return header.get("complete", True)
        size = handle.seek(0, os.SEEK_END)
        handle.seek(max(0, size - (4 << 20)))
        tail = handle.read()
    for line in reversed(tail.split(b"\n")[:-1]):
        if line.startswith(b'{"kind":"checkpoint"'):
            return json.loads(line).get("complete", True)
    return False


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "load %.2f %.2f %.2f" % os.getloadavg()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=1024)
    parser.add_argument("--code-path", default=None, help="run this checkout of autology instead of the installed one")
    parser.add_argument("--json", default=None)
    parser.add_argument("--transcript", default=None, help="generated transcript to reuse (written when missing)")
    parser.add_argument("--hook-budget", type=float, default=3600, help="seconds for all the hook's runs together")
    parser.add_argument("--no-ingest", action="store_true", help="skip `autology sessions ingest` to the end")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    print(f"# {uptime()}")

    work = Path(tempfile.mkdtemp(prefix="autology-ingest-"))
    config = work / "claude-config"
    project = work / "project"
    (project / ".autology" / "nodes").mkdir(parents=True)
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(config)}
    if args.code_path:
        env["PYTHONPATH"] = args.code_path
    folder = config / "projects" / "-project"
    folder.mkdir(parents=True)
    session_id = "big-session"
    transcript = folder / f"{session_id}.jsonl"
    started = time.perf_counter()
    if args.transcript:
        kept = Path(args.transcript)
        if not kept.is_file():
            write_transcript(kept, args.mb, session_id, "/bench/project")
        try:
            os.link(kept, transcript)
        except OSError:
            shutil.copyfile(kept, transcript)
        size = transcript.stat().st_size
    else:
        size = write_transcript(transcript, args.mb, session_id, str(project))
    print(f"# transcript {size / 1e6:.0f} MB ready in {time.perf_counter() - started:.0f} s; load {os.getloadavg()}")

    floor = min(timed([sys.executable, "-c", "import sqlite3, json"], env)[0] for _ in range(5))
    payload = json.dumps({"session_id": session_id, "transcript_path": str(transcript), "cwd": str(project),
                          "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"})
    hook = [sys.executable, "-m", "autology_mcp", "--root", str(project), "hook", "session-end"]
    steps = []
    total = 0.0
    done = False
    while total < args.hook_budget:
        wall, rss, _out = timed(hook, env, payload)
        steps.append({"wall_s": round(wall, 2), "peak_rss_mb": round(rss)})
        total += wall
        done = session_complete(project / ".autology" / "sessions" / f"{session_id}.jsonl")
        print(f"session-end step {len(steps)}: {wall:.2f} s, peak {rss:.0f} MB{'' if done else ' (more to go)'}"
              f"{'  # ' + uptime() if len(steps) % 32 == 0 or done else ''}", flush=True)
        if done or wall == float("inf"):
            break
    partial = steps[:-1] if done else steps
    summary = {
        "steps": len(steps), "complete": done, "hook_total_s": round(total, 1),
        "partial_mean_s": round(sum(s["wall_s"] for s in partial) / len(partial), 2) if partial else None,
        "partial_max_s": max((s["wall_s"] for s in partial), default=None),
        "partial_max_rss_mb": max((s["peak_rss_mb"] for s in partial), default=None),
        "completing_s": steps[-1]["wall_s"] if done else None,
        "completing_rss_mb": steps[-1]["peak_rss_mb"] if done else None,
    }
    print(f"# hook: {summary['steps']} runs, {summary['hook_total_s']} s in all; partial steps mean "
          f"{summary['partial_mean_s']} s, max {summary['partial_max_s']} s, peak {summary['partial_max_rss_mb']} MB; "
          f"completing step {summary['completing_s']} s, peak {summary['completing_rss_mb']} MB"
          f"{'' if done else ' (NOT complete within the budget)'}; {uptime()}", flush=True)
    wall = rss = None
    if not args.no_ingest:
        fresh = work / "project2"
        (fresh / ".autology" / "nodes").mkdir(parents=True)
        wall, rss, _ = timed([sys.executable, "-m", "autology_mcp", "--root", str(fresh), "sessions", "ingest",
                              str(transcript)], env)
        print(f"sessions ingest to the end: {wall:.1f} s, peak {rss:.0f} MB; floor {floor * 1000:.0f} ms; {uptime()}")
    data = {"mb": size / 1e6, "floor_s": floor, "hook_steps": steps, "hook": summary, "ingest_s": wall,
            "ingest_peak_rss_mb": rss, "load": os.getloadavg(), "code_path": args.code_path}
    if args.json:
        Path(args.json).write_text(json.dumps(data, indent=1))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
