"""The echo rule (issue 38, :mod:`autology_mcp.retrieval.echo`) on text nobody here wrote: LoCoMo.

A past session's user turn that only repeats a prompt is not evidence for it. This measures the rule
on both sides at once, each side with the rule off (a session hit weighed on all its text, as before
issue 38) and on, over LoCoMo's conversations (snap-research/locomo; ingested as
bench/sessions_locomo_eval.py does, speaker A as the user, speaker B as the assistant):

- **kept** (what must still ground): each question (categories 1-4, with evidence turns) searched in
  the sessions alone through the unified engine, as the prompt hook's evidence gate weighs it.
  ``evidence passes``: a hit holding one of the question's evidence turns reaches
  ``gate_item_threshold`` (the prompt hook could inject it); ``grounded``: the verdict. The evidence
  turns answer the question, so the rule must not take these away. ``false echo``: the share of the
  evidence turns spoken by the user that the rule's test calls an echo of their question.
- **caught** (what must not ground): the same conversation plus, for each question, a past session
  that only asked it: the question as its user turn (every other one wrapped as a chat prompt:
  "Hey, quick question: … Thanks!"), then a reply that answers nothing (:data:`NO_ANSWERS` in turn:
  "Let me look into that.", "Good question, I'll check and get back to you.", …).
  ``echo passes``: a hit from an echo session reaches ``gate_item_threshold``.

Split as sessions_locomo_eval.py's, fixed before any tuning: conversations 26, 30, 41, 42, 43 are the
tuning part, 44, 47, 48, 49, 50 the held-out part.

With ``--project``, the same two sides on the 14 hand-written project sessions of bench/data/sessions/
and bench/sessions.py's 48 judged questions (:func:`evaluate_project`).

    python bench/session_echo_eval.py /tmp/locomo/data/multimodal_dialog/locomo10_v2 --part held-out --project
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from sessions_locomo_eval import HELD_OUT, NS, TUNING, ingest_conversation  # noqa: E402

from autology_mcp.retrieval import echo  # noqa: E402
from autology_mcp.retrieval.config import project_configs  # noqa: E402
from autology_mcp.retrieval.engine import search  # noqa: E402
from autology_mcp.sessions.index import SessionIndex  # noqa: E402
from autology_mcp.sessions.ingest import ingest_transcript  # noqa: E402

# replies that answer nothing, in turn (the second and third hold words of their own)
NO_ANSWERS = ("Let me look into that.", "Good question, I'll check and get back to you.",
              "I don't know yet; I'll have a look at the notes later.")
WRAP = "Hey, quick question: {q} Thanks!"
_RULE = echo.without_echoes


def rule(on: bool) -> None:
    """The echo rule on, or off (every session hit weighed on all its text, its title included)."""
    echo.without_echoes = _RULE if on else (lambda subject, stems, kind, title, text: echo.Weighed(text, title, text, 0))


def questions(data: dict, turns: dict[str, str]) -> list[tuple[str, list[str]]]:
    out = []
    for qa in data["qa"]:
        evidence = [turns[d] for d in qa.get("evidence", []) if d in turns]
        if qa.get("category") != 5 and evidence:
            out.append((str(qa["question"]), evidence))
    return out


def echo_transcript(conv_id: str, n: int, question: str) -> tuple[str, str]:
    sid = str(uuid.uuid5(NS, f"{conv_id}-echo-{n}"))
    asked = WRAP.format(q=question) if n % 2 else question
    base = {"parentUuid": None, "isSidechain": False, "cwd": f"/home/{conv_id}", "sessionId": sid, "version": "2.1.197"}
    lines = [base | {"type": "user", "uuid": f"{sid}-0", "timestamp": "2024-01-01T10:00:00.000Z",
                     "message": {"role": "user", "content": asked}},
             base | {"type": "assistant", "uuid": f"{sid}-1", "timestamp": "2024-01-01T10:00:30.000Z",
                     "message": {"role": "assistant", "type": "message", "content": [{"type": "text", "text": NO_ANSWERS[n % 3]}],
                                 "stop_reason": "end_turn"}}]
    return sid, "\n".join(json.dumps(x) for x in lines) + "\n"


def passing(root: Path, question: str, threshold: float) -> tuple[str, list[str]]:
    """The verdict and the doc ids of the session hits reaching ``threshold``."""
    answer = search(root, question, scope=["sessions"], limit=10, detail="brief")
    return answer["verdict"], [h["ref"] for h in answer["hits"] if h["components"].get("support", 0.0) >= threshold]


def evaluate(conv_path: Path) -> dict:
    data = json.loads(conv_path.read_text(encoding="utf-8"))
    conv_id = conv_path.stem
    root = Path(tempfile.mkdtemp(prefix=f"autology-echo-{conv_id}-")) / "project"
    root.mkdir()
    try:
        turns, index = ingest_conversation(conv_id, data, root)
        threshold = project_configs(root)[0].gate_item_threshold
        asked = questions(data, turns)
        a = data.get("speaker_a")
        out: dict = {"conversation": conv_id, "questions": len(asked)}
        user_evidence = [(q, e) for q, ev in asked for e in ev if a is None or e.startswith(f"{a}: ")]
        out["user_evidence_turns"] = len(user_evidence)
        out["false_echo"] = sum(echo.is_echo(echo.content_stems(q), e) for q, e in user_evidence)
        conn = index.connection()
        text_of = lambda doc_id: (conn.execute("SELECT text FROM docs WHERE doc_id = ?", (doc_id,)).fetchone() or [""])[0]  # noqa: E731
        for on in (False, True):
            rule(on)
            evidence_passes = grounded = 0
            for question, evidence in asked:
                verdict, refs = passing(root, question, threshold)
                grounded += verdict == "grounded"
                texts = [" ".join(text_of(r).split()) for r in refs]
                evidence_passes += any(" ".join(e.split()) in t for e in evidence for t in texts)
            out["on" if on else "off"] = {"evidence_passes": evidence_passes, "grounded": grounded}
        # the caught side: the same conversation with a session per question that only asked it
        echo_side(root, conv_id, [question for question, _ in asked], threshold, out)
        rule(True)
        return out
    finally:
        rule(True)
        SessionIndex.for_root(root).close()
        shutil.rmtree(root.parent, ignore_errors=True)


def echo_side(root: Path, name: str, asked: list[str], threshold: float, out: dict) -> None:
    """The caught side: a session per question that only asked it (``echo_transcript``), ingested, then
    each question searched with the rule off and on: ``echo_passes``, a hit of any echo session reaches
    the item threshold; ``own_echo_passes``, its own echo's does. Added to ``out["off"]`` and ``out["on"]``."""
    folder = root.parent / "echoes"
    folder.mkdir()
    echo_ids = set()
    for n, question in enumerate(asked):
        sid, text = echo_transcript(name, n, question)
        (folder / f"{sid}.jsonl").write_text(text, encoding="utf-8")
        ingest_transcript(root, folder / f"{sid}.jsonl", index=False, until_complete=True)
        echo_ids.add(sid)
    SessionIndex.for_root(root).sync()
    for on in (False, True):
        rule(on)
        echo_passes = own = 0
        for n, question in enumerate(asked):
            _, refs = passing(root, question, threshold)
            sessions = {r.rsplit(":", 1)[0] for r in refs}
            echo_passes += bool(sessions & echo_ids)
            own += str(uuid.uuid5(NS, f"{name}-echo-{n}")) in sessions
        out["on" if on else "off"] |= {"echo_passes": echo_passes, "own_echo_passes": own}


def evaluate_project() -> dict:
    """The same two sides on the 14 hand-written project sessions of bench/data/sessions/ and their 48
    judged questions (bench/sessions.py's recall set; paraphrased, as asked weeks later): ``answer
    passes``, a hit of the answering session holding the answer's phrase reaches the item threshold; the
    echo sessions as above. Written here, never tuned on: a check in a project's own words."""
    from sessions import DATA, load_questions

    asked, ids = load_questions()
    root = Path(tempfile.mkdtemp(prefix="autology-echo-project-")) / "project"
    root.mkdir()
    try:
        from autology_mcp.knowledge.store import NodeStore

        NodeStore(root).init()
        for transcript in sorted(DATA.glob("*.jsonl")):
            ingest_transcript(root, transcript, index=False)
        index = SessionIndex.for_root(root)
        index.sync()
        threshold = project_configs(root)[0].gate_item_threshold
        conn = index.connection()
        out: dict = {"conversation": "project", "questions": len(asked)}

        def answered(question: dict) -> bool:
            _, refs = passing(root, question["q"], threshold)
            for ref in refs:
                row = conn.execute("SELECT session_id, text FROM docs WHERE doc_id = ?", (ref,)).fetchone()
                if row and row[0] == ids[question["session"]] and question["evidence"].lower() in row[1].lower():
                    return True
            return False

        for on in (False, True):
            rule(on)
            out["on" if on else "off"] = {"answer_passes": sum(answered(q) for q in asked)}
        echo_side(root, "project", [question["q"] for question in asked], threshold, out)
        return out
    finally:
        rule(True)
        SessionIndex.for_root(root).close()
        shutil.rmtree(root.parent, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data", type=Path, help="the folder of LoCoMo's <conv id>.json files")
    parser.add_argument("--part", choices=("tuning", "held-out", "all"), default="held-out")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--project", action="store_true", help="also the hand-written project sessions (bench/data/sessions)")
    args = parser.parse_args()
    ids = {"tuning": TUNING, "held-out": HELD_OUT, "all": TUNING + HELD_OUT}[args.part]
    t0 = time.perf_counter()
    results = [evaluate(args.data / f"{i}.json") for i in ids]
    total = {"questions": sum(r["questions"] for r in results),
             "user_evidence_turns": sum(r["user_evidence_turns"] for r in results),
             "false_echo": sum(r["false_echo"] for r in results)}
    for side in ("off", "on"):
        total[side] = {k: sum(r[side][k] for r in results) for k in results[0][side]}
    q = total["questions"]
    print(f"LoCoMo {args.part}: {q} questions, {len(results)} conversations, {time.perf_counter() - t0:.0f} s "
          f"(python {platform.python_version()}); echo share {echo.ECHO_SHARE}, context share {echo.CONTEXT_SHARE}")
    print(f"false echo: {total['false_echo']} of {total['user_evidence_turns']} evidence turns spoken by the user")
    print(f"{'rule':5} {'evidence passes':>16} {'grounded':>9} {'echo passes':>12} {'own echo passes':>16}")
    for side in ("off", "on"):
        t = total[side]
        print(f"{side:5} {t['evidence_passes'] / q:16.3f} {t['grounded'] / q:9.3f} {t['echo_passes'] / q:12.3f} "
              f"{t['own_echo_passes'] / q:16.3f}")
    project = evaluate_project() if args.project else None
    if project:
        n = project["questions"]
        print(f"project sessions (bench/data/sessions): {n} questions")
        print(f"{'rule':5} {'answer passes':>14} {'echo passes':>12} {'own echo passes':>16}")
        for side in ("off", "on"):
            t = project[side]
            print(f"{side:5} {t['answer_passes'] / n:14.3f} {t['echo_passes'] / n:12.3f} {t['own_echo_passes'] / n:16.3f}")
    if args.json:
        args.json.write_text(json.dumps({"total": total, "conversations": results, "project": project}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
