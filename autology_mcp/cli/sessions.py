"""``autology sessions ingest|search|insights|status|rebuild``: session memory from the command line."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from autology_mcp.cli.common import command_group, require_store
from autology_mcp.common.errors import AutologyError, ValidationError

AGENTS = ("claude-code", "codex", "gemini", "copilot")


def add_commands(sub: argparse._SubParsersAction) -> None:
    leaf = command_group(
        sub,
        "sessions",
        "session memory: ingest agents' transcripts, search them, mine insights",
        "Session memory: redacted transcripts of Claude Code, Codex, Gemini CLI and Copilot CLI sessions"
        " under .autology/sessions/, searchable.",
    )
    p = leaf("ingest", "ingest transcripts (incremental: unchanged ones are skipped)", _ingest)
    p.add_argument("paths", nargs="*", help="transcript files (.jsonl) or folders of them")
    p.add_argument("--all", action="store_true", help="every transcript of this project: Claude Code's under"
                   " ~/.claude/projects/, Codex's, Gemini CLI's and Copilot CLI's sessions started in it")
    p.add_argument("--agent", choices=AGENTS, help="with --all: only this agent's transcripts")
    p.add_argument("--node", action="store_true", help="also write or update each session's `session` node")
    p = leaf("search", "search past sessions", _search)
    p.add_argument("text", nargs="+", help="what to look for")
    p.add_argument("--limit", "-n", type=int, default=10, help="number of hits (1-200, default 10)")
    p = leaf("insights", "decisions, conventions and discoveries mined from the sessions", _insights)
    p.add_argument("--session", help="only this session id")
    p.add_argument("--min-score", type=float, help="quality threshold (default: the configured one, 0.4)")
    p.add_argument("--all", action="store_true", help="also list those an existing node already holds")
    p.add_argument("--capture", action="store_true", help="capture the new ones as needs_review nodes (confidence 0.7)")
    p = leaf("list", "the stored sessions, most recent first", _list)
    p.add_argument("--limit", "-n", type=int, default=20, help="how many (default 20, 0 for all)")
    p = leaf("show", "print a stored session's redacted conversation", _show)
    p.add_argument("session_id", help="the session id (as `autology sessions list` shows it), or a unique start of it (6+ characters)")
    p.add_argument("--turns", help="only these turns, e.g. 4-9 (the proof span of a search hit)")
    p = leaf("forget", "delete stored sessions and never ingest them again", _forget)
    p.add_argument("session_ids", nargs="+", metavar="SESSION_ID", help="the sessions to forget (ids as `autology sessions list` shows them, or a unique start of one, 6+ characters)")
    leaf("status", "what session memory holds", _status)
    leaf("rebuild", "rebuild the session index from .autology/sessions/", _rebuild)


def _emit(args: argparse.Namespace, data: Any, human: str) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False) if args.json else human)


def _require_enabled(root: Path) -> None:
    from autology_mcp.sessions.config import load_sessions_config

    if not load_sessions_config(root).enabled:
        raise ValidationError("[tool.autology.sessions] enabled", "session memory is turned off for this project")


def _targets(args: argparse.Namespace, root: Path) -> list[Path]:
    from autology_mcp.sessions.config import load_sessions_config
    from autology_mcp.sessions.discover import agent_transcripts, list_transcripts, subfolder_dirs, transcripts_dir

    if not args.paths and not args.all:
        raise ValidationError("ingest", "give transcript paths, or --all for this project's transcripts")
    if args.agent and not args.all:
        raise ValidationError("agent", "goes with --all (the transcripts named are read whatever their agent)")
    found: list[Path] = []
    if args.all:
        agents = [args.agent] if args.agent else list(AGENTS)
        missing: ValidationError | None = None
        if "claude-code" in agents:
            configured = load_sessions_config(root).transcripts_dir
            try:
                found += list_transcripts(transcripts_dir(root, configured))
            except ValidationError as exc:
                if configured:
                    raise
                missing = exc  # said only when no agent has a session of this project
            if not configured:  # sessions started in a folder of the project
                for folder in subfolder_dirs(root):
                    found += list_transcripts(folder)
        for agent in agents:
            if agent != "claude-code":
                found += agent_transcripts(root, agent)
        if not found and missing is not None:
            raise ValidationError(missing.field, f"{missing.reason}; no Codex, Gemini CLI or Copilot CLI session"
                                  " was started in it either") if len(agents) > 1 else missing
    for raw in args.paths:
        path = Path(raw).expanduser()
        found += list_transcripts(path) if path.is_dir() else [path]
    return list(dict.fromkeys(found))


def _ingest(args: argparse.Namespace, root: Path) -> int:
    from autology_mcp.knowledge.store import NodeStore
    from autology_mcp.sessions.index import SessionIndex
    from autology_mcp.sessions.ingest import ingest_transcript

    _require_enabled(root)
    targets = _targets(args, root)
    NodeStore(root).init()  # the store's layout and .gitignore (sessions/ stays private)
    started = time.perf_counter()
    results, failed = [], []
    if args.all:  # the transcripts an end hook noted as still being written: ingested now, as they are
        from autology_mcp.sessions.lifecycle import ingest_pending

        ingest_pending(root, force=True)
    for path in targets:
        try:
            results.append(ingest_transcript(root, path, index=False, until_complete=True))
        except AutologyError as exc:
            failed.append({"transcript": str(path), "error": str(exc)})
    SessionIndex.for_root(root).sync()
    nodes = []
    if args.node:
        from autology_mcp.knowledge.service import Autology
        from autology_mcp.sessions.session_node import write_session_node

        autology = Autology.open(root)
        try:
            for result in results:
                written = write_session_node(autology, result.session_id)
                if written:
                    nodes.append(written.to_dict() | {"session_id": result.session_id})
        finally:
            autology.close()
    elapsed = time.perf_counter() - started
    data = {"ingested": [r.to_dict() for r in results], "failed": failed, "nodes": nodes, "seconds": round(elapsed, 3)}
    lines = []
    for r in results:
        extra = f", {r.malformed} malformed line(s) skipped" if r.malformed else ""
        lines.append(f"{r.mode:<9} {r.session_id}  +{r.new_turns} turn(s) ({r.turns} in all{extra})  {r.title}")
    for f in failed:
        print(f"error: {f['transcript']}: {f['error']}", file=sys.stderr)
    lines += [f"  session node {n['node_id']} {n['action']}" for n in nodes]
    changed = sum(r.mode in ("appended", "full") for r in results)
    lines.append(f"✓ {len(results)} transcript(s), {changed} changed, in {elapsed:.2f} s")
    _emit(args, data, "\n".join(lines))
    return 1 if failed else 0


def _search(args: argparse.Namespace, root: Path) -> int:
    from autology_mcp.cli.common import served
    from autology_mcp.sessions.search import LIMIT_MAX, SessionHit, search_sessions

    if not 1 <= args.limit <= LIMIT_MAX:
        raise ValidationError("limit", f"must be from 1 to {LIMIT_MAX}, got {args.limit}")
    _require_enabled(root)
    query = " ".join(args.text)
    found = served(root, "cli-sessions-search", {"query": query, "limit": args.limit})
    hits = [SessionHit(**hit) for hit in found] if isinstance(found, list) else search_sessions(root, query, args.limit)
    lines = []
    for h in hits:
        body = " ".join(h.text.split("\n", 1)[-1].split())
        lines.append(f"{h.score:.2f}  {h.doc_type:<13} {h.doc_id}  turns {h.turn_start}-{h.turn_end}  {h.timestamp[:10]}")
        lines.append(f"      {h.title}\n      {body[:200]}{'…' if len(body) > 200 else ''}")
    _emit(args, [h.to_dict() for h in hits], "\n".join(lines) or "no matching session")
    return 0


def _insights(args: argparse.Namespace, root: Path) -> int:
    from autology_mcp.knowledge.service import Autology
    from autology_mcp.sessions.capture import capture, collect

    _require_enabled(root)
    if args.min_score is not None and not 0 <= args.min_score <= 1:
        raise ValidationError("min-score", f"must be from 0 to 1, got {args.min_score}")
    if not args.capture:  # read-only: in a folder without a store, say so and create nothing
        require_store(args, "sessions insights")
    autology = Autology.open(root)
    try:
        insights = collect(root, autology.store.index, session_id=args.session, threshold=args.min_score)
        shown = insights if args.all else [i for i in insights if not i.duplicate_of]
        report = capture(autology, shown) if args.capture else None
    finally:
        autology.close()
    data: dict[str, Any] = {"insights": [i.to_dict() for i in shown], "known": len(insights) - len([i for i in insights if not i.duplicate_of])}
    lines = [
        f"{i.score:.2f}  {i.kind:<10} {i.text}\n      {i.session_id} turn {i.turn}"
        + (f" — already known as {i.duplicate_of}" if i.duplicate_of else "")
        for i in shown
    ]
    if report is not None:
        data["captured"] = report.captured
        lines.append(f"✓ captured {len(report.captured)} insight(s) as needs_review nodes")
        lines += [f"  {c['id']}  [{c['type']}] {c['text'][:80]}" for c in report.captured]
    if not lines:
        lines.append("no new insight" + (f" ({data['known']} already known)" if data["known"] else ""))
    _emit(args, data, "\n".join(lines))
    return 0


def _status(args: argparse.Namespace, root: Path) -> int:
    from autology_mcp.sessions.config import load_sessions_config
    from autology_mcp.sessions.index import SessionIndex
    from autology_mcp.sessions.paths import sessions_dir
    from autology_mcp.sessions.store import session_files

    config = load_sessions_config(root)
    files = session_files(root)
    data: dict[str, Any] = {
        "enabled": config.enabled,
        "folder": str(sessions_dir(root)),
        "sessions": len(files),
        "bytes": sum(p.stat().st_size for p in files),
        "boosts": config.boosts,
        "capture_insights": config.capture_insights,
    }
    if config.enabled and files:
        with SessionIndex.for_root(root).reading() as conn:
            data["documents"] = dict(conn.execute("SELECT doc_type, COUNT(*) FROM docs GROUP BY doc_type").fetchall())
            data["insight_candidates"] = conn.execute(
                "SELECT COUNT(*) FROM insights WHERE score >= ?", (config.insight_threshold,)
            ).fetchone()[0]
            data["unreadable"] = [
                {"session_id": s, "error": e} for s, e in conn.execute("SELECT session_id, error FROM sources WHERE error IS NOT NULL")
            ]
            latest = conn.execute("SELECT session_id, title, last_timestamp FROM sources ORDER BY last_timestamp DESC LIMIT 1").fetchone()
            data["latest"] = {"session_id": latest[0], "title": latest[1], "timestamp": latest[2]} if latest else None
    from autology_mcp.sessions.pending import entries

    data["pending"] = [e.__dict__ for e in entries(root)]
    lines = [f"session memory {'on' if config.enabled else 'OFF'}: {data['sessions']} session(s), {data['bytes']:,} bytes in {data['folder']}"]
    for e in data["pending"]:
        age = max(0, int(time.time() - e["noted_ms"] / 1000))
        lines.append(f"  … {e['agent']} session {e['session_id']}: its transcript was still being written at its end "
                     f"({age} s ago); " + (f"ingest failed: {e['error']} (`autology sessions ingest --all` retries it)"
                                           if e["error"] else "it is ingested once complete"))
    if "documents" in data:
        docs = data["documents"]
        lines.append(f"  index: {docs.get('session_chunk', 0)} chunk(s), {docs.get('handoff', 0)} handoff(s); "
                     f"{data['insight_candidates']} insight candidate(s)")
        if data["latest"]:
            lines.append(f"  latest: {data['latest']['timestamp'][:19]}  {data['latest']['title']}")
        lines += [f"  ✗ unreadable {u['session_id']}: {u['error']}" for u in data["unreadable"]]
    _emit(args, data, "\n".join(lines))
    return 0


def _agent_of(root: Path, session_id: str) -> str:
    """The agent whose transcript a stored session is (its last checkpoint says; no turn is read)."""
    from autology_mcp.common.errors import AutologyError
    from autology_mcp.sessions.store import load_header
    from autology_mcp.sessions.turns import CLAUDE

    try:
        header = load_header(root, session_id)
    except (AutologyError, OSError):
        return ""
    return (header.state.agent or CLAUDE) if header is not None else ""


def _list(args: argparse.Namespace, root: Path) -> int:
    from autology_mcp.sessions.chunking import speaker
    from autology_mcp.sessions.index import SessionIndex
    from autology_mcp.sessions.paths import sessions_dir

    _require_enabled(root)
    if args.limit < 0:
        raise ValidationError("limit", f"must be 0 (all) or more, got {args.limit}")
    rows: list[tuple[str, str, str, int]] = []
    if sessions_dir(root).is_dir():
        with SessionIndex.for_root(root).reading() as conn:
            rows = conn.execute(
                "SELECT session_id, title, last_timestamp, turns FROM sources WHERE error IS NULL AND turns > 0"
                " ORDER BY last_timestamp DESC, session_id LIMIT ?",
                (args.limit or -1,),
            ).fetchall()
    agents = [_agent_of(root, r[0]) for r in rows]
    data = [{"session_id": r[0], "agent": a, "title": r[1], "timestamp": r[2], "turns": r[3]} for r, a in zip(rows, agents)]
    lines = [f"{r[2][:16].replace('T', ' ') or '-':<16}  {r[3]:>4} turns  {speaker(a):<7}  {r[0]}  {r[1]}"
             for r, a in zip(rows, agents)]
    _emit(args, data, "\n".join(lines) or "no session stored")
    return 0


def _span(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    start, _, end = text.partition("-")
    try:
        span = (int(start), int(end or start))
    except ValueError:
        raise ValidationError("turns", f"must be N or N-M (turn numbers), got {text!r}") from None
    if span[0] < 0 or span[1] < span[0]:
        raise ValidationError("turns", f"must be N or N-M with 0 <= N <= M, got {text!r}")
    return span


def _show(args: argparse.Namespace, root: Path) -> int:
    from autology_mcp.common.errors import NotFoundError
    from autology_mcp.sessions.chunking import render_turn, speaker
    from autology_mcp.sessions.store import load_session, resolve_session_id
    from autology_mcp.sessions.turns import CLAUDE

    _require_enabled(root)
    span = _span(args.turns)
    record = load_session(root, resolve_session_id(root, args.session_id))
    if record is None:
        raise NotFoundError(args.session_id, "session")
    turns = [t for t in record.turns if span is None or span[0] <= t.n <= span[1]]
    data = {
        "session_id": record.session_id,
        "agent": record.state.agent or CLAUDE,
        "title": record.title,
        "transcript": record.transcript,
        "first_timestamp": record.state.first_timestamp,
        "last_timestamp": record.state.last_timestamp,
        "handoff": record.handoff,
        "turns": [{"n": t.n, "role": t.role, "timestamp": t.timestamp, "text": t.text} for t in turns],
    }
    lines = [f"{record.title}  ({record.session_id}, {speaker(record.state.agent)}, {len(record.turns)} turns)"]
    if span is None and record.handoff:
        lines += ["", record.handoff]
    for turn in turns:
        lines += ["", f"[{turn.n}] {turn.timestamp[:19].replace('T', ' ')}", render_turn(turn, record.state.agent)]
    _emit(args, data, "\n".join(lines))
    return 0


def _forget(args: argparse.Namespace, root: Path) -> int:
    from autology_mcp.sessions.index import SessionIndex
    from autology_mcp.sessions.store import forget_session, resolve_session_id, session_lock

    ids = list(dict.fromkeys(resolve_session_id(root, i) for i in args.session_ids))
    with session_lock(root).hold():
        deleted = {i: forget_session(root, i) for i in ids}
    scrubbed = SessionIndex.for_root(root).scrub()
    lines = [f"✓ forgot {i}" + ("" if existed else " (it was not stored; it will not be)") for i, existed in deleted.items()]
    if not scrubbed:
        lines.append("! another process was reading the session index: its write-ahead log still holds old pages"
                     " until that process checkpoints (run `autology sessions forget` again to finish now)")
    lines.append("Its transcript in ~/.claude is untouched, and a `session` node, if any, stays (autology delete ID).")
    _emit(args, {"forgotten": [{"session_id": i, "deleted": d} for i, d in deleted.items()], "scrubbed": scrubbed}, "\n".join(lines))
    return 0


def _rebuild(args: argparse.Namespace, root: Path) -> int:
    from autology_mcp.sessions.index import SessionIndex

    _require_enabled(root)
    started = time.perf_counter()
    count = SessionIndex.for_root(root).rebuild()
    elapsed = time.perf_counter() - started
    _emit(args, {"sessions": count, "seconds": round(elapsed, 3)}, f"✓ rebuilt the session index from {count} session file(s) in {elapsed:.2f} s")
    return 0
