"""Session recall on text nobody here wrote: the LoCoMo benchmark (snap-research/locomo, issue 15).

LoCoMo holds 10 long conversations between two people, 19-32 sessions each (272 sessions, ~6,000
turns), and ~2,000 questions about them, each with the turns that answer it as evidence (dia ids
such as ``D3:5``) and a category: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
5 adversarial. Category 5 asks about things the conversation never says (it has no answer in the
text) and is left out; so are questions without evidence.

Each conversation is one project: its sessions become Claude Code transcripts (speaker A as the
user, speaker B as the assistant, the session's date at the start of its first turn), ingested with
the product's own ingest, and each of its questions searches only that project's sessions, as in
real use. Two systems rank the same indexed documents:

- ``product``: ``autology_mcp.sessions.search.search_sessions`` (the session channel of unified search);
- ``bm25``: plain FTS5 BM25 over the same documents (the session index's own ``docs_fts``, the
  query's terms OR-ed), nothing else;
- ``bm25_chunks``: the same over the chunks only (no handoffs): the baseline for the ranking alone,
  since most of ``product``'s lead over ``bm25`` is leaving out handoffs that repeat their chunks.

With ``--semantic DIR`` (issue 31; the optional extra installed, DIR a local model folder), each
project also turns semantic recall on with that model, embeds its turns, and ranks again with
``search_sessions``, now fused with the dense channel: ``semantic a,d`` per weighting of ``--weights``
(best turn, mean of turns; :data:`autology_mcp.sessions.semantic.WEIGHTS` is the product's), side by side
with the lexical rows in the same run. Choose the weighting on ``--part tuning``, report it on
``--part held-out``:

    python bench/sessions_locomo_eval.py DATA --part tuning --semantic MODEL_DIR --weights 0.4,0.2 0.6,0.2 1.0,0.4
    python bench/sessions_locomo_eval.py DATA --part held-out --semantic MODEL_DIR --weights 0.6,0.2

A large model embeds the turns once with ``--keep-vectors DIR`` (each conversation's vectors kept there,
per model folder name) and each question once per run, whatever the number of weightings.

Metrics over the top hits: **evidence recall@5**, the share of a question's evidence turns whose
text is inside one of the top-5 hits' texts (mean over questions); **any@5**, at least one evidence
turn inside the top 5; MRR@10 of the first hit holding an evidence turn. By category too.

Split, fixed before any tuning: conversations 26, 30, 41, 42, 43 (LoCoMo's conv ids; files
``<id>.json``) are the tuning part, 44, 47, 48, 49, 50 the held-out part. Tune on the first only.

Data: the release's ``data/locomo10.zip`` holds one JSON file per conversation. Extract it:

    mkdir -p /tmp/locomo && cd /tmp/locomo
    git -C <clone or mirror of snap-research/locomo> show HEAD:data/locomo10.zip > l.zip
    python3 -c "import zipfile; zipfile.ZipFile('l.zip').extractall('.')"
    python bench/sessions_locomo_eval.py /tmp/locomo/data/multimodal_dialog/locomo10_v2 --json /tmp/locomo.json
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from autology_mcp.common.text import node_query_terms  # noqa: E402
from autology_mcp.knowledge.store import NodeStore  # noqa: E402
from autology_mcp.sessions.index import SessionIndex  # noqa: E402
from autology_mcp.sessions.ingest import ingest_transcript  # noqa: E402
from autology_mcp.sessions.search import search_sessions  # noqa: E402

TUNING = ("26", "30", "41", "42", "43")
HELD_OUT = ("44", "47", "48", "49", "50")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
TOP = 10
NS = uuid.UUID("0c0c0c0c-1d1d-4e4e-8f8f-2a2a2a2a2a2a")


def session_keys(conv: dict) -> list[str]:
    keys = [k for k in conv if re.fullmatch(r"session_\d+", k) and isinstance(conv[k], list)]
    return sorted(keys, key=lambda k: int(k.split("_")[1]))


def parse_date(text: str) -> datetime:
    """LoCoMo's ``1:56 pm on 8 May, 2023``."""
    try:
        return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)
    except ValueError:
        return datetime(2023, 1, 1, tzinfo=timezone.utc)


def turn_text(turn: dict) -> str:
    text = turn.get("text", "")
    if turn.get("blip_caption"):
        text += f" [shares a photo: {turn['blip_caption']}]"
    return text


def transcript(conv_id: str, key: str, conv: dict) -> tuple[str, str]:
    """(session id, JSONL text) of one LoCoMo session in Claude Code's transcript shape."""
    sid = str(uuid.uuid5(NS, f"{conv_id}-{key}"))
    when = parse_date(conv.get(f"{key}_date_time", ""))
    a = conv["speaker_a"]
    lines, parent = [], None
    for n, turn in enumerate(conv[key]):
        when += timedelta(seconds=30)
        uid = str(uuid.uuid5(NS, f"{conv_id}-{key}-{n}"))
        text = f"{turn['speaker']}: {turn_text(turn)}"
        if n == 0:
            text = f"({conv.get(f'{key}_date_time', '')}) {text}"
        base = {"parentUuid": parent, "isSidechain": False, "uuid": uid, "timestamp": when.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                "cwd": f"/home/{conv_id}", "sessionId": sid, "version": "2.1.197"}
        if turn["speaker"] == a:
            lines.append(base | {"type": "user", "message": {"role": "user", "content": text}})
        else:
            lines.append(base | {"type": "assistant", "message": {"role": "assistant", "type": "message",
                                 "content": [{"type": "text", "text": text}], "stop_reason": "end_turn"}})
        parent = uid
    return sid, "\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n"


def _quoted(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def bm25_hits(conn: sqlite3.Connection, question: str, limit: int, chunks_only: bool = False) -> list[str]:
    terms = node_query_terms(question)
    if not terms:
        return []
    only = " AND d.doc_type = 'session_chunk'" if chunks_only else ""
    rows = conn.execute(
        "SELECT d.text FROM docs_fts JOIN docs d ON d.rowid = docs_fts.rowid WHERE docs_fts MATCH ?"
        f"{only} ORDER BY bm25(docs_fts), d.rowid LIMIT ?",
        (" OR ".join(_quoted(t) for t in terms), limit),
    ).fetchall()
    return [r[0] for r in rows]


def judge(texts: list[str], evidence: list[str]) -> dict:
    """Recall@5 of the evidence turns, any@5, and MRR@10 of the first hit holding one."""
    norm = [" ".join(t.split()) for t in texts]
    ev = [" ".join(e.split()) for e in evidence]
    found5 = [any(e in t for t in norm[:5]) for e in ev]
    rr = 0.0
    for rank, t in enumerate(norm[:TOP], 1):
        if any(e in t for e in ev):
            rr = 1.0 / rank
            break
    return {"recall@5": sum(found5) / len(ev), "any@5": float(any(found5)), "mrr@10": rr}


def mean(rows: list[dict]) -> dict:
    return {k: round(sum(r[k] for r in rows) / len(rows), 4) for k in rows[0]} if rows else {}


def ingest_conversation(conv_id: str, data: dict, root: Path) -> tuple[dict[str, str], SessionIndex]:
    """A store at ``root`` holding the conversation's sessions, each written as a Claude Code
    transcript beside it and ingested with the product's ingest: (each turn's text by dia id, the
    synced session index). Several conversations may go into one store (bench/semantic_gate.py)."""
    NodeStore(root).init()
    folder = root.parent / f"transcripts-{conv_id}"
    folder.mkdir()
    turns: dict[str, str] = {}
    for key in session_keys(data):
        sid, text = transcript(conv_id, key, data)
        path = folder / f"{sid}.jsonl"
        path.write_text(text, encoding="utf-8")
        ingest_transcript(root, path, index=False, until_complete=True)
        for turn in data[key]:
            turns[turn["dia_id"]] = f"{turn['speaker']}: {turn_text(turn)}"
    index = SessionIndex.for_root(root)
    index.sync()
    return turns, index


def evaluate(conv_path: Path, keep: bool = False, semantic: Path | None = None,
             weights: list[tuple[float, float]] = (), vectors: Path | None = None) -> dict:
    data = json.loads(conv_path.read_text(encoding="utf-8"))
    conv_id = conv_path.stem
    root = Path(tempfile.mkdtemp(prefix=f"autology-locomo-{conv_id}-")) / "project"
    root.mkdir()
    try:
        t0 = time.perf_counter()
        turns, index = ingest_conversation(conv_id, data, root)
        ingest_s = time.perf_counter() - t0
        conn = index.connection()
        rows: dict[str, list[tuple[int, dict]]] = {"product": [], "bm25": [], "bm25_chunks": []}
        skipped = {"adversarial": 0, "no evidence": 0}
        ms = []
        for qa in data["qa"]:
            if qa.get("category") == 5:
                skipped["adversarial"] += 1
                continue
            evidence = [turns[d] for d in qa.get("evidence", []) if d in turns]
            if not evidence:
                skipped["no evidence"] += 1
                continue
            t = time.perf_counter()
            product = [h.text for h in search_sessions(root, qa["question"], TOP)]
            ms.append((time.perf_counter() - t) * 1000)
            rows["product"].append((qa["category"], judge(product, evidence)))
            rows["bm25"].append((qa["category"], judge(bm25_hits(conn, qa["question"], TOP), evidence)))
            rows["bm25_chunks"].append((qa["category"], judge(bm25_hits(conn, qa["question"], TOP, True), evidence)))
        docs = conn.execute("SELECT count(*) FROM docs").fetchone()[0]
        extra = _semantic_rows(root, data, turns, semantic, weights, rows, vectors, conv_id) if semantic else {}
        return {"conversation": conv_id, "sessions": len(session_keys(data)), "turns": len(turns), "documents": docs,
                "questions": len(rows["product"]), "skipped": skipped, "ingest_s": round(ingest_s, 2),
                "search_ms_median": round(sorted(ms)[len(ms) // 2], 2) if ms else None, "rows": rows, **extra}
    finally:
        if not keep:
            shutil.rmtree(root.parent, ignore_errors=True)


def _semantic_rows(root: Path, data: dict, turns: dict[str, str], folder: Path,
                   weights: list[tuple[float, float]], rows: dict, vectors: Path | None, conv: str) -> dict:
    """Semantic recall on with the model in ``folder``: the turns embedded (starting from the vectors kept
    in ``vectors`` by an earlier run, if any), then the questions ranked again per weighting (rows
    ``semantic a,d``); the embedding and query times."""
    from autology_mcp.semantic.runtime import enable
    from autology_mcp.sessions import semantic

    _, model = enable(root, folder)
    asked: dict = {}  # a question's vector, computed once whatever the weighting (a large model takes 0.1 s)
    plain = model.encode_query
    model.encode_query = lambda text: asked[text] if text in asked else asked.setdefault(text, plain(text))
    kept = vectors / f"{folder.name}-{conv}.sqlite" if vectors else None
    cache = root / ".autology" / "cache" / "semantic.sqlite"
    if kept and kept.exists():  # the same turns embedded by an earlier run: only what changed is embedded
        cache.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(kept, cache)
    t0 = time.perf_counter()
    embedded = semantic.sync_turn_vectors(root)
    embed_s = time.perf_counter() - t0
    if kept:
        sqlite3.connect(cache).execute("PRAGMA wal_checkpoint(TRUNCATE)").connection.close()
        shutil.copyfile(cache, kept)
    ms = []
    for a, d in weights:
        semantic.WEIGHTS = (a, d)
        name = f"semantic {a:g},{d:g}"
        rows[name] = []
        for qa in data["qa"]:
            evidence = [turns[x] for x in qa.get("evidence", []) if x in turns]
            if qa.get("category") == 5 or not evidence:
                continue
            t = time.perf_counter()
            hits = [h.text for h in search_sessions(root, qa["question"], TOP)]
            if (a, d) == weights[0]:  # the question embedded: later weightings reuse its vector
                ms.append((time.perf_counter() - t) * 1000)
            rows[name].append((qa["category"], judge(hits, evidence)))
    return {"embedded_turns": embedded, "embed_s": round(embed_s, 2),
            "semantic_search_ms_median": round(sorted(ms)[len(ms) // 2], 2) if ms else None}


def summarise(results: list[dict]) -> dict:
    out = {}
    for system in results[0]["rows"] if results else ():
        rows = [r for res in results for r in res["rows"][system]]
        out[system] = {"all": mean([m for _, m in rows]),
                       **{name: mean([m for c, m in rows if c == cat]) for cat, name in CATEGORIES.items()}}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", type=Path, help="folder of LoCoMo conversation files (<conv id>.json)")
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--part", choices=("tuning", "held-out", "both"), default="both")
    ap.add_argument("--semantic", type=Path, help="a local model folder: also rank with semantic recall on (issue 31)")
    ap.add_argument("--weights", nargs="+", default=None,
                    help="with --semantic: the weightings 'a,d' (best turn, mean of turns) to rank with")
    ap.add_argument("--keep-vectors", type=Path, help="with --semantic: keep each conversation's vectors in this "
                                                      "folder and start from them next time (a large model embeds once)")
    args = ap.parse_args()
    from autology_mcp.sessions.semantic import WEIGHTS

    if args.keep_vectors:
        args.keep_vectors.mkdir(parents=True, exist_ok=True)

    weights = [tuple(float(x) for x in w.split(",")) for w in args.weights] if args.weights else [WEIGHTS]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=Path(__file__).parent, capture_output=True,
                            text=True).stdout.strip()
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"# LoCoMo session recall at {commit}; {platform.machine()}, Python {platform.python_version()}; {uptime}")
    parts = {"tuning": TUNING, "held-out": HELD_OUT}
    report: dict = {"commit": commit, "uptime_start": uptime, "parts": {}}
    for part, ids in parts.items():
        if args.part not in (part, "both"):
            continue
        results = [evaluate(args.data / f"{cid}.json", semantic=args.semantic, weights=weights, vectors=args.keep_vectors)
                   for cid in ids]
        summary = summarise(results)
        report["parts"][part] = {"conversations": [{k: v for k, v in r.items() if k != "rows"} for r in results],
                                 "summary": summary}
        n = sum(r["questions"] for r in results)
        print(f"\n{part}: {len(ids)} conversations, {sum(r['sessions'] for r in results)} sessions, {n} questions"
              f" (skipped: {sum(r['skipped']['adversarial'] for r in results)} adversarial,"
              f" {sum(r['skipped']['no evidence'] for r in results)} without evidence);"
              f" search median {sorted(r['search_ms_median'] for r in results)[len(results) // 2]} ms")
        if args.semantic:
            turns = sum(r["turns"] for r in results)
            embed_s = sum(r["embed_s"] for r in results)
            print(f"semantic ({args.semantic.name}): {turns} turns embedded in {embed_s:.1f} s"
                  f" ({embed_s / max(turns, 1) * 1000:.2f} ms a turn; ingest {sum(r['ingest_s'] for r in results):.1f} s"
                  f" for the same turns), search median"
                  f" {sorted(r['semantic_search_ms_median'] for r in results)[len(results) // 2]} ms")
        print(f"{'system':<16} {'slice':<12} {'recall@5':>9} {'any@5':>7} {'mrr@10':>7}")
        for system, slices in summary.items():
            for name, m in slices.items():
                print(f"{system:<16} {name:<12} {m['recall@5']:>9.3f} {m['any@5']:>7.3f} {m['mrr@10']:>7.3f}")
    report["uptime_end"] = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"\n{report['uptime_end']}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
