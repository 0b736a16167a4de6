"""On means on, with real weights (issue 40): a server started while the machine is busy, a prompt hook
sent every second, and what another process reads as the hooks' choice, over time.

    python bench/semantic_hooks_live.py MODEL_DIR [--busy 4] [--busy-for 20] [--seconds 45]

MODEL_DIR is a model folder ``autology semantic enable --path`` takes (docs/benchmarks.md says which).
A temporary project gets a few sessions and semantic recall with that model; ``--busy`` processes spin
the CPU from before the server starts until ``--busy-for`` seconds after it; ``autology serve`` runs as
in a Claude Code session; every second the prompt hook runs as Claude Code runs it
(``python -m autology_mcp.hooks user-prompt-submit``, answered by the server) and the line printed is its
time, and ``runtime.hooks_status`` as ``autology semantic status`` reads it in another process: whether the
hooks use the vectors, and the median query time behind it. With ``uptime`` at the start and the end.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from hooks import RunningServer  # noqa: E402

from autology_mcp.semantic.runtime import hooks_status  # noqa: E402

SESSIONS = {
    "s-deal": "John signed up Nike for a basketball shoe and gear deal",
    "s-art": "Caroline painted a picture of the lake at sunset",
    "s-db": "we moved the session index to SQLite with WAL so readers never block the writer",
}
PROMPTS = ["Which endorsement deals has John been offered?", "what did Caroline paint last summer?",
           "why does the session store never block readers?"]


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def autology(root: Path, *args: str) -> None:
    subprocess.run([sys.executable, "-m", "autology_mcp", "--root", str(root), *args], check=True,
                   capture_output=True, text=True)


def project_with_sessions(root: Path, model: Path) -> None:
    root.mkdir(parents=True)
    autology(root, "init", "--no-git")
    folder = root.parent / "transcripts"
    folder.mkdir()
    for n, (sid, text) in enumerate(SESSIONS.items()):
        line = {"type": "user", "message": {"role": "user", "content": text}, "uuid": f"u{n}", "parentUuid": None,
                "timestamp": f"2026-11-0{n + 1}T10:00:00Z", "sessionId": sid, "cwd": str(root), "isSidechain": False}
        (folder / f"{sid}.jsonl").write_text(json.dumps(line) + "\n")
        autology(root, "sessions", "ingest", str(folder / f"{sid}.jsonl"))
    autology(root, "semantic", "enable", "--path", str(model))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", type=Path)
    ap.add_argument("--busy", type=int, default=4, help="processes spinning the CPU at the server's start")
    ap.add_argument("--busy-for", type=float, default=20.0, help="seconds after the server's start they spin")
    ap.add_argument("--seconds", type=float, default=45.0)
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="autology-hooks-live-")) / "project"
    busy: list[subprocess.Popen] = []
    print(f"# bench/semantic_hooks_live.py {args.model.name}, {args.busy} busy processes for {args.busy_for:g} s; {uptime()}")
    try:
        project_with_sessions(root, args.model.resolve())
        busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
        time.sleep(1)
        with RunningServer(root):
            start = time.monotonic()
            while (now := time.monotonic() - start) < args.seconds:
                if busy and now >= args.busy_for:
                    for proc in busy:
                        proc.kill()
                        proc.wait()
                    busy = []
                    print(f"{now:5.1f} s  -- the busy processes stopped; {uptime()}")
                payload = json.dumps({"session_id": "live", "cwd": str(root), "hook_event_name": "UserPromptSubmit",
                                      "prompt": PROMPTS[int(now) % len(PROMPTS)]})
                t = time.perf_counter()
                subprocess.run([sys.executable, "-m", "autology_mcp.hooks", "user-prompt-submit"], input=payload,
                               text=True, capture_output=True, check=True, cwd=root)
                hook_ms = (time.perf_counter() - t) * 1000
                status = hooks_status(root)
                print(f"{now:5.1f} s  hook {hook_ms:6.0f} ms  hooks use vectors: {str(status['use_vectors']):5}  "
                      f"query median {status.get('query_ms')} ms of {status.get('samples')}"
                      + (f"  ({status['why']})" if not status["use_vectors"] else ""))
                time.sleep(max(0.0, 1.0 - (time.perf_counter() - t)))
        print(f"# end; {uptime()}")
    finally:
        for proc in busy:
            proc.kill()
            proc.wait()
        shutil.rmtree(root.parent, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
