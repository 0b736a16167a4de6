"""What semantic recall costs (issue 31), beside the lexical default in the same run.

    python bench/semantic.py /tmp/locomo/data/multimodal_dialog/locomo10_v2 MODEL_DIR [--conversation 44] [--runs 15]

MODEL_DIR is a local model folder the optional extra loads (docs/benchmarks.md says which was used and
how it was made). One LoCoMo conversation becomes a project (its sessions ingested with the product's
ingest, as in bench/sessions_locomo_eval.py); then:

- **ingest**: the product's ingest of the conversation's turns (lexical), and embedding them
  (``autology semantic sync``'s work), per turn;
- **query**: ``search_sessions`` p50 over the conversation's questions, semantic recall off and on
  (the model loaded, as in a server), in one process, alternating;
- **hook**: the prompt hook (``python -m autology_mcp.hooks user-prompt-submit``, as Claude Code runs it)
  answered by a running ``autology serve``, semantic recall off, then on (the server loads the model and
  embeds the turns before the timing starts), each beside the bare interpreter (the floor) in the same
  rounds.

Every figure is printed with ``uptime``; the ratios are the point.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from hooks import RunningServer  # noqa: E402
from sessions_locomo_eval import ingest_conversation  # noqa: E402

from autology_mcp.semantic.runtime import enable  # noqa: E402
from autology_mcp.semantic.state import STATE  # noqa: E402
from autology_mcp.semantic.vectors import VectorCache  # noqa: E402
from autology_mcp.sessions.search import search_sessions  # noqa: E402
from autology_mcp.sessions.semantic import KIND, sync_turn_vectors  # noqa: E402


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def p50(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 2)


def hook_rounds(root: Path, questions: list[str], runs: int, label: str) -> dict[str, float]:
    """The prompt hook through the running server, beside the floor, in rounds."""
    floor, hook = [], []
    for i in range(runs + 1):
        payload = json.dumps({"session_id": f"bench-{label}-{i}", "cwd": str(root), "hook_event_name": "UserPromptSubmit",
                              "prompt": questions[i % len(questions)]})
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import sqlite3, json"], check=True)
        f = time.perf_counter() - t
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "autology_mcp.hooks", "user-prompt-submit"], input=payload, text=True,
                       capture_output=True, check=True, cwd=root)
        h = time.perf_counter() - t
        if i:
            floor.append(f)
            hook.append(h)
    return {"floor_ms": p50(floor), "hook_ms": p50(hook), "ratio": round(statistics.median(hook) / statistics.median(floor), 2)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", type=Path)
    ap.add_argument("model", type=Path)
    ap.add_argument("--conversation", default="44")
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    data = json.loads((args.data / f"{args.conversation}.json").read_text(encoding="utf-8"))
    questions = [qa["question"] for qa in data["qa"] if qa.get("category") != 5][:60]
    root = Path(tempfile.mkdtemp(prefix="autology-semantic-bench-")) / "project"
    root.mkdir()
    print(f"# bench/semantic.py, LoCoMo conversation {args.conversation}, model {args.model.name}; {uptime()}")
    try:
        t = time.perf_counter()
        turns, _ = ingest_conversation(args.conversation, data, root)
        ingest_s = time.perf_counter() - t
        state, _ = enable(root, args.model)
        t = time.perf_counter()
        embedded = sync_turn_vectors(root)
        embed_s = time.perf_counter() - t
        print(f"ingest: {len(turns)} turns, lexical {ingest_s / len(turns) * 1000:.2f} ms a turn, embedding "
              f"{embed_s / max(embedded or 1, 1) * 1000:.2f} ms a turn ({embedded} embedded): "
              f"{embed_s / ingest_s:.1f}x the lexical ingest; {uptime()}")

        off, on = [], []
        state_file = root / STATE
        saved = state_file.read_bytes()
        for _ in range(3):
            for question in questions:
                state_file.unlink()
                t = time.perf_counter()
                search_sessions(root, question, 20)
                off.append(time.perf_counter() - t)
                state_file.write_bytes(saved)
                t = time.perf_counter()
                search_sessions(root, question, 20)
                on.append(time.perf_counter() - t)
        print(f"query: search_sessions p50 off {p50(off)} ms, on {p50(on)} ms: "
              f"{statistics.median(on) / statistics.median(off):.2f}x; {uptime()}")

        state_file.unlink()
        before = uptime()
        with RunningServer(root):
            lexical = hook_rounds(root, questions, args.runs, "off")
        print(f"hook, server running, semantic off: {lexical}; {before} / {uptime()}")
        state_file.write_bytes(saved)
        before = uptime()
        with RunningServer(root):
            cache = VectorCache(root, state.model, state.dimension)
            deadline = time.monotonic() + 120
            while cache.counts().get(KIND, 0) < len(turns) and time.monotonic() < deadline:
                time.sleep(0.2)
            dense = hook_rounds(root, questions, args.runs, "on")
        print(f"hook, server running, semantic on: {dense}; {before} / {uptime()}")
        print(f"hook p50 on / off: {dense['hook_ms'] / lexical['hook_ms']:.2f}x "
              f"({dense['ratio']}x vs {lexical['ratio']}x the floor)")
    finally:
        shutil.rmtree(root.parent, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
