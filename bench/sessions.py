"""Session memory benchmark: ingest throughput and recall, with baselines side by side.

    python bench/sessions.py                 # both parts
    python bench/sessions.py --recall-only
    python bench/sessions.py --mb 100        # size of the generated transcript set for throughput

Recall: the 14 hand-written sessions of bench/data/sessions/ (make_sessions.py) are ingested into a
temporary project, and the 48 judged questions of questions.json are asked, without and with 300
generated distractor sessions (same project vocabulary, answering nothing). Reported for the top 5:
- session Recall@5: a hit from the session that answers the question is among the 5;
- chunk Recall@5: a hit from that session whose text holds the answer's phrase is among the 5;
- MRR@5 at session level.
Systems: ``search_sessions`` (coverage + BM25 + type boost), plain FTS5 BM25 over the same documents
(no coverage, no boost), and a grep baseline (documents ranked by how many query words they contain
as substrings).

Throughput: a generated set of long transcripts (the benchmark sessions repeated with extra turns)
is ingested from scratch (parse, redact, write the session files, index), then re-ingested unchanged,
then re-ingested after an append; also search latency over it. Two sets: tool results of 4-30 kB
(as real transcripts, where file reads and command output are most of the bytes; only their first
line is kept) and of 0.2-2 kB (conversation-heavy: most bytes are text that is kept and indexed).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
DATA = REPO / "bench" / "data" / "sessions"

from autology_mcp.common.text import node_query_terms as query_terms  # noqa: E402
from autology_mcp.knowledge.store import NodeStore  # noqa: E402
from autology_mcp.sessions.index import SessionIndex  # noqa: E402
from autology_mcp.sessions.ingest import ingest_transcript  # noqa: E402
from autology_mcp.sessions.search import (
    _quoted,  # noqa: E402
    search_sessions,  # noqa: E402
)

TOP = 5


def load_questions() -> tuple[list[dict], dict[str, str]]:
    sys.path.insert(0, str(DATA))
    from make_sessions import session_ids

    ids = session_ids()
    questions = json.loads((DATA / "questions.json").read_text())["questions"]
    return questions, ids


def new_project() -> Path:
    root = Path(tempfile.mkdtemp(prefix="autology-bench-sessions-")) / "project"
    root.mkdir()
    NodeStore(root).init()
    return root


# ------------------------------------------------------------------------------ recall


def _bm25_only(root: Path, query: str) -> list[tuple[str, str]]:
    terms = query_terms(query)
    if not terms:
        return []
    conn = SessionIndex.for_root(root).connection()
    rows = conn.execute(
        "SELECT d.session_id, d.text FROM docs_fts JOIN docs d ON d.rowid = docs_fts.rowid"
        " WHERE docs_fts MATCH ? ORDER BY bm25(docs_fts) LIMIT ?",
        (" OR ".join(_quoted(t) for t in terms), TOP),
    ).fetchall()
    return [(r[0], r[1]) for r in rows]


def _grep(docs: list[tuple[str, str]], query: str) -> list[tuple[str, str]]:
    terms = query_terms(query)
    scored = []
    for order, (sid, text) in enumerate(docs):
        low = text.lower()
        count = sum(t in low for t in terms)
        if count:
            scored.append((-count, order, sid, text))
    scored.sort()
    return [(s[2], s[3]) for s in scored[:TOP]]


def _judge(hits: list[tuple[str, str]], want_session: str, evidence: str) -> tuple[bool, bool, float]:
    session_hit = chunk_hit = False
    rr = 0.0
    for rank, (sid, text) in enumerate(hits[:TOP], 1):
        if sid == want_session:
            if not session_hit:
                rr = 1.0 / rank
            session_hit = True
            if evidence.lower() in text.lower():
                chunk_hit = True
    return session_hit, chunk_hit, rr


def make_distractors(folder: Path, count: int, seed: int = 3) -> list[Path]:
    """Sessions of the same project's vocabulary that answer none of the questions (the haystack)."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(count):
        sid = f"distractor-{i:04d}"
        path = folder / f"{sid}.jsonl"
        path.write_text("\n".join(_extra_turns(rng, sid, 0, rng.randint(3, 12), blob=(200, 2_000))) + "\n")
        paths.append(path)
    return paths


def recall(distractors: int = 0) -> dict:
    questions, ids = load_questions()
    root = new_project()
    try:
        for transcript in sorted(DATA.glob("*.jsonl")):
            ingest_transcript(root, transcript, index=False)
        for transcript in make_distractors(root.parent / "distractors", distractors):
            ingest_transcript(root, transcript, index=False)
        SessionIndex.for_root(root).sync()
        conn = SessionIndex.for_root(root).connection()
        docs = [(r[0], r[1]) for r in conn.execute("SELECT session_id, text FROM docs ORDER BY rowid")]
        systems = {
            "search_sessions (coverage + BM25 + boost)": lambda q: [(h.session_id, h.text) for h in search_sessions(root, q, TOP)],
            "FTS5 BM25 only (no coverage, no boost)": lambda q: _bm25_only(root, q),
            "grep baseline (query words as substrings)": lambda q: _grep(docs, q),
        }
        results: dict[str, dict] = {}
        misses: dict[str, list[str]] = {}
        chunk_misses: dict[str, list[str]] = {}
        for name, run in systems.items():
            s_hits = c_hits = first = 0
            rr_sum = 0.0
            misses[name] = []
            chunk_misses[name] = []
            for q in questions:
                s, c, rr = _judge(run(q["q"]), ids[q["session"]], q["evidence"])
                s_hits += s
                c_hits += c
                rr_sum += rr
                first += rr == 1.0
                if not s:
                    misses[name].append(q["q"])
                elif not c:
                    chunk_misses[name].append(q["q"])
            n = len(questions)
            results[name] = {"session_recall@1": first / n, "session_recall@5": s_hits / n,
                             "chunk_recall@5": c_hits / n, "mrr@5": rr_sum / n}
        return {
            "questions": len(questions),
            "sessions": len(ids),
            "distractors": distractors,
            "documents": len(docs),
            "results": results,
            "misses": misses,
            "chunk_misses": chunk_misses,
        }
    finally:
        SessionIndex.for_root(root).close()
        shutil.rmtree(root.parent, ignore_errors=True)


# ------------------------------------------------------------------------------ throughput

WORDS = (
    "order payment checkout stock basket customer invoice refund shipping carrier label webhook queue worker "
    "cache index migration schema tenant price discount coupon catalog product variant image upload search "
    "filter facet timeout retry latency error exception trace deploy release rollback config feature flag"
).split()


def _code_blob(rng: random.Random, size: int) -> str:
    lines = []
    while sum(len(line) + 1 for line in lines) < size:
        a, b, c = rng.sample(WORDS, 3)
        lines.append(f"    def {a}_{b}(self, {c}): return self.{c}.{a}({b}={rng.randint(0, 999)})  # {c} {b}")
    return "\n".join(lines)


def _extra_turns(
    rng: random.Random, sid: str, start: int, count: int, blob: tuple[int, int] = (4_000, 30_000)
) -> list[str]:
    out = []
    for k in range(count):
        n = start + k
        ts = f"2026-10-{1 + n % 28:02d}T{n % 24:02d}:{n % 60:02d}:00.000Z"
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 30)))
        base = {"isSidechain": False, "cwd": "/home/dev/shop", "sessionId": sid, "version": "2.1.197", "gitBranch": "main",
                "userType": "external", "entrypoint": "cli"}
        out.append(json.dumps(base | {"type": "user", "uuid": f"{sid}-u{n}", "timestamp": ts,
                                      "message": {"role": "user", "content": f"Please look at the {words}."}}))
        path = f"/home/dev/shop/shop/{rng.choice(WORDS)}/{rng.choice(WORDS)}.py"
        tool_id = f"toolu_{n}"
        out.append(json.dumps(base | {"type": "assistant", "uuid": f"{sid}-a{n}", "timestamp": ts, "message": {
            "role": "assistant", "model": "claude-sonnet-4-5", "content": [
                {"type": "text", "text": f"I checked the {words}. " + " ".join(rng.choice(WORDS) for _ in range(60)) + "."},
                {"type": "tool_use", "id": tool_id, "name": "Read", "input": {"file_path": path}}]}}))
        out.append(json.dumps(base | {"type": "user", "uuid": f"{sid}-r{n}", "timestamp": ts, "message": {
            "role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id,
                                         "content": _code_blob(rng, rng.randint(*blob))}]}}))
    return out


def make_transcripts(
    folder: Path, megabytes: float, seed: int = 7, blob: tuple[int, int] = (4_000, 30_000)
) -> list[Path]:
    rng = random.Random(seed)
    bases = [p.read_text().splitlines() for p in sorted(DATA.glob("*.jsonl"))]
    paths: list[Path] = []
    total = 0
    i = 0
    while total < megabytes * 1_000_000:
        sid = f"bench-{i:05d}"
        turns = rng.randint(10, 40) if blob[1] > 10_000 else rng.randint(60, 200)
        lines = list(bases[i % len(bases)]) + _extra_turns(rng, sid, 0, turns, blob)
        path = folder / f"{sid}.jsonl"
        path.write_text("\n".join(lines) + "\n")
        total += path.stat().st_size
        paths.append(path)
        i += 1
    return paths


def throughput(megabytes: float, blob: tuple[int, int]) -> dict:
    root = new_project()
    folder = root.parent / "transcripts"
    folder.mkdir()
    try:
        paths = make_transcripts(folder, megabytes, blob=blob)
        size = sum(p.stat().st_size for p in paths)
        started = time.perf_counter()
        for path in paths:
            ingest_transcript(root, path, index=False)
        parsed = time.perf_counter() - started
        SessionIndex.for_root(root).sync()
        total = time.perf_counter() - started

        started = time.perf_counter()
        modes = {ingest_transcript(root, path).mode for path in paths}
        unchanged = time.perf_counter() - started
        assert modes == {"unchanged"}, modes

        rng = random.Random(11)
        appended = paths[: min(20, len(paths))]
        added = 0
        for path in appended:
            extra = "\n".join(_extra_turns(rng, path.stem, 1000, 5)) + "\n"
            added += len(extra.encode())
            with path.open("a") as handle:
                handle.write(extra)
        started = time.perf_counter()
        for path in appended:
            ingest_transcript(root, path, index=False)
        SessionIndex.for_root(root).sync()
        incremental = time.perf_counter() - started

        # Steady state: searches come later than ingests. (Within 2 s of a change to the sessions folder
        # each search lists the folder to check for more changes: reported separately, as "fresh".)
        questions, _ = load_questions()
        fresh = []
        for q in questions[:10]:
            t0 = time.perf_counter()
            search_sessions(root, q["q"], 20)
            fresh.append((time.perf_counter() - t0) * 1000)
        time.sleep(2.5)
        latencies = []
        for _ in range(3):
            for q in questions:
                t0 = time.perf_counter()
                search_sessions(root, q["q"], 20)
                latencies.append((time.perf_counter() - t0) * 1000)
        stored = sum(p.stat().st_size for p in (root / ".autology" / "sessions").iterdir())
        db = SessionIndex.for_root(root).path.stat().st_size
        docs = SessionIndex.for_root(root).connection().execute("SELECT COUNT(*) FROM docs").fetchone()[0]
        return {
            "tool_result_chars": list(blob),
            "transcripts": len(paths),
            "transcript_mb": size / 1e6,
            "ingest_mb_per_s": size / 1e6 / total,
            "ingest_seconds": total,
            "parse_redact_write_seconds": parsed,
            "index_seconds": total - parsed,
            "unchanged_reingest_seconds": unchanged,
            "append": {"transcripts": len(appended), "mb": added / 1e6, "seconds": incremental},
            "session_files_mb": stored / 1e6,
            "index_mb": db / 1e6,
            "documents": docs,
            "search_ms_median": statistics.median(latencies),
            "search_ms_fresh_median": statistics.median(fresh),
            "search_ms_p95": sorted(latencies)[int(0.95 * len(latencies)) - 1],
        }
    finally:
        SessionIndex.for_root(root).close()
        shutil.rmtree(root.parent, ignore_errors=True)


def hook_times(megabytes: float = 10.0) -> list[dict]:
    """Wall time of ``autology hook session-end`` (a whole process, as Claude Code runs it) on one
    long transcript in a git project with a store: the first time, then again with nothing new."""
    import subprocess

    out = []
    for blob in ((4_000, 30_000), (200, 2_000)):
        root = new_project()
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        try:
            rng = random.Random(5)
            # the hook reads transcripts only under Claude Code's projects folder (issue 13)
            config_dir = root.parent / "claude-config"
            path = config_dir / "projects" / "-bench" / "transcript.jsonl"
            path.parent.mkdir(parents=True)
            base = sorted(DATA.glob("*.jsonl"))[0].read_text().splitlines()
            lines = list(base)
            while sum(len(line) + 1 for line in lines) < megabytes * 1_000_000:
                lines += _extra_turns(rng, "hook", len(lines), 20, blob)
            path.write_text("\n".join(lines) + "\n")
            payload = json.dumps({"session_id": "hook", "transcript_path": str(path), "cwd": str(root),
                                  "hook_event_name": "SessionEnd", "reason": "other"})
            times = []
            for _ in range(2):
                t0 = time.perf_counter()
                done = subprocess.run([sys.executable, "-m", "autology_mcp", "--root", str(root), "hook", "session-end"],
                                      input=payload, capture_output=True, text=True, timeout=120,
                                      env={**os.environ, "CLAUDE_CONFIG_DIR": str(config_dir)})
                times.append(time.perf_counter() - t0)
                assert "session memory" in done.stdout, done.stdout + done.stderr
            out.append({"tool_result_chars": list(blob), "transcript_mb": path.stat().st_size / 1e6,
                        "first_seconds": times[0], "unchanged_seconds": times[1]})
        finally:
            shutil.rmtree(root.parent, ignore_errors=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50.0, help="size of the generated transcript set (default 50)")
    parser.add_argument("--recall-only", action="store_true")
    parser.add_argument("--distractors", type=int, default=300,
                        help="generated sessions that answer nothing, added to the recall set (default 300)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    report: dict = {"load_1min": load, "recall": [recall(0), recall(args.distractors)]}
    if not args.recall_only:
        # realistic: tool results (file reads, command output) are most of a transcript's bytes;
        # conversation-heavy: small tool results, so most bytes are text that is kept and indexed
        report["throughput"] = [throughput(args.mb, (4_000, 30_000)), throughput(args.mb, (200, 2_000))]
        report["hook"] = hook_times()
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"load average (1 min) at start: {load:.2f}")
    for r in report["recall"]:
        print(f"\nRecall: {r['questions']} judged questions over {r['sessions']} sessions"
              f" + {r['distractors']} distractor sessions ({r['documents']} documents)")
        print(f"  {'system':<45} {'session R@1':>11} {'session R@5':>11} {'chunk R@5':>10} {'MRR@5':>7}")
        for name, m in r["results"].items():
            print(f"  {name:<45} {m['session_recall@1']:>11.3f} {m['session_recall@5']:>11.3f}"
                  f" {m['chunk_recall@5']:>10.3f} {m['mrr@5']:>7.3f}")
        for name, missed in r["misses"].items():
            if missed:
                print(f"  session missed by {name.split(' (')[0]}: " + "; ".join(missed))
        for name, missed in r["chunk_misses"].items():
            if missed:
                print(f"  session found, answer chunk not in the top 5, by {name.split(' (')[0]}: " + "; ".join(missed))
    for t in report.get("throughput", []):
        lo, hi = t["tool_result_chars"]
        print(f"\nIngest: {t['transcripts']} transcripts, {t['transcript_mb']:.1f} MB (tool results of {lo:,}-{hi:,} characters)")
        print(f"  from scratch: {t['ingest_seconds']:.2f} s = {t['ingest_mb_per_s']:.1f} MB/s "
              f"(parse+redact+write {t['parse_redact_write_seconds']:.2f} s, index {t['index_seconds']:.2f} s)")
        print(f"  re-ingest, nothing changed: {t['unchanged_reingest_seconds']:.2f} s")
        a = t["append"]
        print(f"  after appending {a['mb']:.2f} MB to {a['transcripts']} transcripts: {a['seconds']:.2f} s")
        print(f"  stored: session files {t['session_files_mb']:.1f} MB, index {t['index_mb']:.1f} MB, {t['documents']} documents")
        print(f"  search_sessions over it (limit 20): median {t['search_ms_median']:.1f} ms, p95 {t['search_ms_p95']:.1f} ms"
              f" (within 2 s of an ingest: median {t['search_ms_fresh_median']:.1f} ms)")


    for h in report.get("hook", []):
        lo, hi = h["tool_result_chars"]
        print(f"\nSessionEnd hook (whole process) on a {h['transcript_mb']:.1f} MB transcript (tool results of {lo:,}-{hi:,}"
              f" characters): {h['first_seconds']:.2f} s the first time, {h['unchanged_seconds']:.2f} s with nothing new")


if __name__ == "__main__":
    main()
