"""Does semantic recall make the prompt hook inject for prompts the memory does not know? (issue 31)

    python bench/gate_sets.py --mirrors /work/.mirror --json /tmp/gate-sets.json      # the off-topic prompts
    python bench/semantic_gate.py DATA MODEL_DIR --sets /tmp/gate-sets.json [--conversations 44 47 48]

DATA is LoCoMo (as in bench/sessions_locomo_eval.py), MODEL_DIR a local model folder the optional
extra loads. One project holds the given LoCoMo conversations as session memory (the only part
semantic recall ranks). Every prompt goes through the prompt hook (``user_prompt_submit``, a new
session per prompt, the default configuration), semantic recall off and then on, in one run:

- off-topic: bench/gate_sets.py's prompts no project answers (TruthfulQA, OpenTriviaQA, GSM8K), the
  held-out split: the share the hook injects for (the issue: not above the lexical default's);
- on-topic: the conversations' own questions (LoCoMo's categories 1-4): the share injected, and the
  share whose block holds one of the question's evidence turns.
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

from sessions_locomo_eval import ingest_conversation  # noqa: E402

from autology_mcp.hooks.prompt import user_prompt_submit  # noqa: E402
from autology_mcp.semantic.runtime import enable  # noqa: E402
from autology_mcp.semantic.state import STATE  # noqa: E402
from autology_mcp.sessions.semantic import sync_turn_vectors  # noqa: E402


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def injected(root: Path, prompt: str, n: int, label: str) -> str:
    out = user_prompt_submit({"session_id": f"gate-{label}-{n}", "cwd": str(root), "prompt": prompt}, root)
    return out["hookSpecificOutput"]["additionalContext"] if out else ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", type=Path)
    ap.add_argument("model", type=Path)
    ap.add_argument("--sets", type=Path, required=True, help="bench/gate_sets.py --json output")
    ap.add_argument("--conversations", nargs="+", default=["44", "47", "48"])
    args = ap.parse_args()
    sets = json.loads(args.sets.read_text())
    off_topic = [p["prompt"] for p in sets["off_topic"] if p["split"] == "held-out"]
    root = Path(tempfile.mkdtemp(prefix="autology-semantic-gate-")) / "project"
    root.mkdir()
    print(f"# bench/semantic_gate.py, LoCoMo {' '.join(args.conversations)}, model {args.model.name}; {uptime()}")
    try:
        on_topic: list[tuple[str, list[str]]] = []
        turn_count = 0
        for conv in args.conversations:
            data = json.loads((args.data / f"{conv}.json").read_text(encoding="utf-8"))
            turns, _ = ingest_conversation(conv, data, root)  # every conversation into the one project
            turn_count += len(turns)
            for qa in data["qa"]:
                evidence = [turns[d] for d in qa.get("evidence", []) if d in turns]
                if qa.get("category") != 5 and evidence:
                    on_topic.append((qa["question"], evidence))
        enable(root, args.model)
        t = time.perf_counter()
        embedded = sync_turn_vectors(root)
        print(f"{turn_count} turns, {embedded} embedded in {time.perf_counter() - t:.1f} s; "
              f"{len(off_topic)} off-topic prompts (held out), {len(on_topic)} on-topic questions; {uptime()}")
        saved = (root / STATE).read_bytes()
        results = {}
        for mode in ("off", "on"):
            if mode == "off":
                (root / STATE).unlink()
            else:
                (root / STATE).write_bytes(saved)
            before = uptime()
            off_rate = sum(bool(injected(root, p, i, f"{mode}-off")) for i, p in enumerate(off_topic)) / len(off_topic)
            blocks = [injected(root, q, i, f"{mode}-on") for i, (q, _) in enumerate(on_topic)]
            # a block holds an evidence turn when the first 40 characters of one's text are in it
            found = sum(any(e.split(": ", 1)[-1][:40] in b for e in ev) for b, (_, ev) in zip(blocks, on_topic) if b)
            results[mode] = {"off_topic_injected": round(off_rate, 4),
                             "on_topic_injected": round(sum(map(bool, blocks)) / len(blocks), 4),
                             "on_topic_block_holds_evidence": round(found / len(blocks), 4)}
            print(f"semantic {mode}: {results[mode]}; {before} / {uptime()}")
    finally:
        shutil.rmtree(root.parent, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
