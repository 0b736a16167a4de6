"""Every ingest step costs the same however long the session already is (issue 29): the session file
is appended to (turns, then a checkpoint), the index takes in only the new turns, the prefix is
checked by a bounded fingerprint. These tests hold the results to those of one ingest of the whole:
after steps, after a step killed mid-write, after a changed prefix, and from an old (format 1) file."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pytest
from sessions_helpers import BASIC, COMPACTED, assistant_line, copy_fixture, user_line

from autology_mcp.sessions import store
from autology_mcp.sessions.index import SessionIndex
from autology_mcp.sessions.ingest import ingest_transcript
from autology_mcp.sessions.search import search_sessions
from autology_mcp.sessions.store import load_header, load_session, session_file

QUERIES = ["retry backoff jitter", "circuit breaker payments", "decided cache", "schema migration index",
           "parser token", "summary compaction"]


def new_project(tmp_path: Path, name: str) -> Path:
    from autology_mcp.knowledge.store import NodeStore

    root = tmp_path / name
    root.mkdir()
    node_store = NodeStore(root)
    node_store.init()
    node_store.close()
    return root


def synthetic(path: Path, session_id: str, turns: int, seed: int = 3, stamps: bool = True) -> Path:
    """A transcript with what the summaries read: prompts, answers, decisions, node ids, tool calls
    and results, a compaction, long turns cut into pieces, and (``stamps=False``) turns without timestamps."""
    rng = random.Random(seed)
    words = "retry backoff jitter client cache token parser schema migration index payments breaker".split()
    lines = []
    for n in range(turns):
        stamp = f"2026-10-0{1 + n // 500}T{n // 60 % 24:02d}:{n % 60:02d}:00Z" if stamps or n % 3 else ""
        text = " ".join(rng.choice(words) for _ in range(rng.choice((8, 40, 400))))
        kind = n % 7
        if kind == 0:
            lines.append(user_line(session_id, f"Prompt {n}: {text}", stamp, f"u-{n}"))
        elif kind == 1:
            lines.append(assistant_line(session_id, f"We decided to use {rng.choice(words)} for the {rng.choice(words)} "
                                        f"layer because it is simpler. {text}", stamp, f"a-{n}"))
        elif kind == 2:
            node = f"{rng.getrandbits(32):08x}-1234-4abc-8def-{rng.getrandbits(48):012x}"
            lines.append(assistant_line(session_id, f"Updated node {node}. {text}", stamp, f"a-{n}"))
        elif kind == 3:
            lines.append(json.dumps({"type": "assistant", "timestamp": stamp, "sessionId": session_id, "cwd": "/home/dev/shop",
                                     "message": {"role": "assistant", "content": [
                                         {"type": "tool_use", "id": f"t-{n}", "name": "Edit",
                                          "input": {"file_path": f"/home/dev/shop/src/m{n % 13}.py"}}]}}))
        elif kind == 4:
            lines.append(json.dumps({"type": "user", "timestamp": stamp, "sessionId": session_id, "cwd": "/home/dev/shop",
                                     "message": {"role": "user", "content": [
                                         {"type": "tool_result", "tool_use_id": f"t-{n - 1}", "content": text}]}}))
        elif kind == 5 and n % 5 == 0:
            lines.append(json.dumps({"type": "user", "isCompactSummary": True, "timestamp": stamp, "sessionId": session_id,
                                     "message": {"role": "user", "content": f"This session is being continued. {text}"}}))
        else:
            lines.append(assistant_line(session_id, f"The fix was to cap the {rng.choice(words)}. " + text * 3, stamp, f"a-{n}"))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def index_dump(root: Path) -> dict[str, list]:
    with SessionIndex.for_root(root).reading() as conn:
        return {
            "docs": conn.execute("SELECT doc_id, doc_type, session_id, title, text, timestamp, turn_start, turn_end"
                                 " FROM docs ORDER BY doc_id").fetchall(),
            "insights": conn.execute("SELECT * FROM insights ORDER BY session_id, turn, text").fetchall(),
            "sources": conn.execute("SELECT session_id, title, last_timestamp, turns, handoff, error FROM sources"
                                    " ORDER BY session_id").fetchall(),
        }


def searches(root: Path) -> list:
    return [[(h.doc_id, h.score, h.turn_start, h.turn_end) for h in search_sessions(root, q)] for q in QUERIES]


def turn_lines(root: Path, sid: str) -> list[bytes]:
    return [line for line in session_file(root, sid).read_bytes().split(b"\n") if line.startswith(b'{"kind":"turn"')]


def same_record(a, b) -> None:
    assert a.turns == b.turns and a.handoff == b.handoff
    assert (a.offset, a.sha256, a.complete) == (b.offset, b.sha256, b.complete)
    assert a.state == b.state and a.summary == b.summary


def stepped(root: Path, transcript: Path, step: int, index: bool = True) -> int:
    steps = 0
    while True:
        steps += 1
        if ingest_transcript(root, transcript, index=index, step_bytes=step).complete:
            return steps


@pytest.mark.parametrize("fixture", [BASIC, COMPACTED, "synthetic", "no-stamps"])
def test_stepped_ingest_appends_what_one_ingest_writes(tmp_path: Path, fixture, monkeypatch) -> None:
    """The session file a stepped ingest appends to holds the same turns, state, summary and handoff
    as one ingest of the whole; the index built step by step (each step taking in only its new
    turns) holds the same documents, and every search gives the same hits."""
    from autology_mcp.sessions import index

    whole_reads = []
    add = index.SessionIndex._add
    monkeypatch.setattr(index.SessionIndex, "_add", staticmethod(lambda *a: whole_reads.append(a[1]) or add(*a)))
    if isinstance(fixture, Path):
        source = fixture
    else:
        source = synthetic(tmp_path / "src" / "s.jsonl", "s", 300, stamps=fixture == "synthetic")
    once, steps = new_project(tmp_path, "once"), new_project(tmp_path, "steps")
    whole = copy_fixture(source, tmp_path / "a", "s.jsonl")
    parts = copy_fixture(source, tmp_path / "b", "s.jsonl")
    assert ingest_transcript(once, whole, until_complete=True).complete
    assert stepped(steps, parts, 2048 if isinstance(fixture, Path) else 16384) > 2  # a step holds the longest line
    assert whole_reads == ["s", "s"]  # once per project: the first step; the others were taken in from where it stopped
    same_record(load_session(once, "s"), load_session(steps, "s"))
    assert turn_lines(once, "s") == turn_lines(steps, "s")  # byte for byte
    assert index_dump(once) == index_dump(steps)
    assert searches(once) == searches(steps)
    SessionIndex.for_root(steps).rebuild()  # and the index rebuilt from the appended file is the same too
    assert index_dump(once) == index_dump(steps)


def test_a_growing_transcript_indexed_at_every_step_equals_one_ingest(tmp_path: Path) -> None:
    """A session ingested at each SessionEnd while it grows (the open last chunk extended, the
    handoff replaced, chunks with no timestamp of their own following the session's last)."""
    source = synthetic(tmp_path / "src" / "g.jsonl", "g", 240, stamps=False).read_text().splitlines(keepends=True)
    once, grown = new_project(tmp_path, "once"), new_project(tmp_path, "grown")
    path = tmp_path / "live" / "g.jsonl"
    path.parent.mkdir()
    for cut in (1, 2, 5, 31, 32, 100, 101, 200, 240):
        path.write_text("".join(source[:cut]))
        result = ingest_transcript(grown, path)
        assert result.mode == ("full" if cut == 1 else "appended")
        search_sessions(grown, "retry")  # a search in between syncs too
    whole = tmp_path / "whole" / "g.jsonl"
    whole.parent.mkdir()
    whole.write_text("".join(source))
    ingest_transcript(once, whole)
    same_record(load_session(once, "g"), load_session(grown, "g"))
    assert index_dump(once) == index_dump(grown)
    assert searches(once) == searches(grown)


def test_a_step_reads_neither_the_session_file_nor_the_transcript_prefix(project: Path, tmp_path: Path, monkeypatch) -> None:
    """What makes a step's cost independent of the session's size: no whole read of the session
    file (ingest, index, session node), no hash of the whole transcript prefix."""
    from autology_mcp.hooks.handlers import session_end
    from autology_mcp.sessions import ingest

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    transcript = synthetic(tmp_path / "projects" / "-p" / "big.jsonl", "big", 120)
    payload = {"session_id": "big", "transcript_path": str(transcript), "cwd": str(project), "hook_event_name": "SessionEnd"}
    monkeypatch.setattr(ingest, "STEP_BYTES", 16384)
    session_end(payload, project)  # the first step writes the file
    search_sessions(project, "retry")

    def whole_read(*args, **kwargs):
        raise AssertionError("a whole read in an ingest step")

    monkeypatch.setattr(store, "read_session", whole_read)
    monkeypatch.setattr(store, "parse_bytes", whole_read)
    monkeypatch.setattr(ingest, "load_session", whole_read)
    monkeypatch.setattr(ingest, "_hash_prefix", whole_read)
    for _ in range(200):
        message = session_end(payload, project)["systemMessage"]
        if "the rest follows" not in message:
            break
    assert "indexed" in message and "session node" in message
    assert load_header(project, "big").complete
    monkeypatch.undo()
    once = new_project(tmp_path, "once")
    ingest_transcript(once, transcript, until_complete=True)
    same_record(load_session(once, "big"), load_session(project, "big"))
    assert index_dump(once) == index_dump(project)


@pytest.mark.parametrize("cut", [0.0, 0.3, 0.7, "before-newline", "newline"])
def test_a_step_killed_mid_write_loses_nothing_ingested(tmp_path: Path, cut) -> None:
    """A hook killed while it appends leaves a partial step: readers see the session as before that
    step, the next step ends the partial line and goes on, and the result is that of one ingest."""
    source = synthetic(tmp_path / "src" / "k.jsonl", "k", 200)
    root, once = new_project(tmp_path, "killed"), new_project(tmp_path, "once")
    transcript = copy_fixture(source, tmp_path / "t", "k.jsonl")
    for _ in range(3):
        ingest_transcript(root, transcript, step_bytes=16384)
    path = session_file(root, "k")
    before = path.read_bytes()
    record_before, index_before = load_session(root, "k"), index_dump(root)
    ingest_transcript(root, transcript, step_bytes=16384, index=False)  # the step the kill interrupts
    step = path.read_bytes()[len(before):]
    if cut == "before-newline":
        kept = step[:-1]  # the checkpoint whole but its newline: still unfinished
    elif cut == "newline":
        kept = step[: step.rfind(b'\n{"kind":"checkpoint"') + 1]  # every turn line, no checkpoint
    else:
        kept = step[: int(len(step) * cut)]
    path.write_bytes(before + kept)
    same_record(load_session(root, "k"), record_before)
    assert load_header(root, "k").offset == record_before.offset
    assert index_dump(root) == index_before
    stepped(root, transcript, 16384)
    ingest_transcript(once, copy_fixture(source, tmp_path / "o", "k.jsonl"), until_complete=True)
    same_record(load_session(once, "k"), load_session(root, "k"))
    assert index_dump(once) == index_dump(root)
    assert searches(once) == searches(root)
    SessionIndex.for_root(root).rebuild()
    assert index_dump(once) == index_dump(root)


def test_a_first_write_killed_leaves_no_session_and_the_next_starts_over(project: Path, tmp_path: Path, monkeypatch) -> None:
    import os

    transcript = copy_fixture(BASIC, tmp_path / "t")

    def killed(src, dst):
        raise KeyboardInterrupt  # the process dies before the rename

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        ingest_transcript(project, transcript)
    monkeypatch.undo()
    assert load_header(project, "basic") is None and search_sessions(project, "backoff") == []
    assert ingest_transcript(project, transcript).mode == "full"
    assert search_sessions(project, "backoff")


def big_transcript(path: Path, megabytes: float) -> Path:
    """A transcript past the fingerprint's windows (2 MiB), its prompts numbered."""
    lines, size, n = [], 0, 0
    while size < megabytes * 1024 * 1024:
        line = user_line("big", f"Prompt {n} about the retry budget " + "filler " * 200, f"2026-10-03T10:{n % 60:02d}:00Z", f"u-{n}")
        lines.append(line + "\n")
        size += len(line) + 1
        n += 1
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(lines))
    return path


def flip(path: Path, at: int) -> None:
    """Change one byte of the file in place (same inode, same size), inside a JSON string."""
    with open(path, "r+b") as handle:
        handle.seek(at)
        byte = handle.read(1)
        assert byte in b"filer "
        handle.seek(at)
        handle.write(b"X" if byte != b"X" else b"Y")


def filler_byte(path: Path, near: int) -> int:
    data = path.read_bytes()
    return data.index(b"filler", near)


@pytest.mark.parametrize("where", ["head", "sample", "tail", "end"])
def test_a_changed_prefix_is_detected_and_ingested_again(project: Path, tmp_path: Path, where: str) -> None:
    transcript = big_transcript(tmp_path / "t" / "big.jsonl", 4)
    ingest_transcript(project, transcript, step_bytes=1 << 20)
    record = load_header(project, "big")
    assert not record.complete
    offset = record.offset
    spots = {
        "head": 100,
        "sample": (1 << 20) + (offset - (2 << 20)) * 8 // 17 + 10,  # inside the 8th sampled block
        "tail": offset - 5000,
        "end": offset - 300,
    }
    flip(transcript, filler_byte(transcript, spots[where]) if where != "end" else transcript.read_bytes().rindex(b"filler", 0, offset))
    result = ingest_transcript(project, transcript, step_bytes=1 << 20)
    assert result.mode == "full" and result.bytes_read <= 1 << 20


def test_an_unchanged_prefix_goes_on_and_another_file_starts_over(project: Path, tmp_path: Path) -> None:
    transcript = big_transcript(tmp_path / "t" / "big.jsonl", 3)
    assert ingest_transcript(project, transcript, step_bytes=1 << 20).mode == "full"
    assert ingest_transcript(project, transcript, step_bytes=1 << 20).mode == "appended"
    copy = transcript.with_suffix(".tmp")
    copy.write_bytes(transcript.read_bytes())
    copy.replace(transcript)  # the same bytes in another file (another inode): read again from the start
    assert ingest_transcript(project, transcript, step_bytes=1 << 20).mode == "full"
    assert ingest_transcript(project, transcript, until_complete=True).complete
    once = new_project(tmp_path, "once")
    ingest_transcript(once, transcript, until_complete=True)
    same_record(load_session(once, "big"), load_session(project, "big"))


def format1(root: Path, record, transcript: Path) -> None:
    """Write ``record`` as autology wrote session files before issue 29 (format 1)."""
    data = transcript.read_bytes()[: record.offset]
    header = {"kind": "header", "format": 1, "session_id": record.session_id, "title": record.title,
              "transcript": str(transcript), "size": record.size, "mtime_ns": record.mtime_ns, "offset": record.offset,
              "sha256": hashlib.sha256(data).hexdigest(), "complete": record.complete, "state": record.state.to_dict()}
    lines = [json.dumps(header, ensure_ascii=False, separators=(",", ":"))]
    lines += [json.dumps({"kind": "turn", "n": t.n, "role": t.role, "ts": t.timestamp, "text": t.text},
                         ensure_ascii=False, separators=(",", ":")) for t in record.turns]
    if record.handoff:
        lines.append(json.dumps({"kind": "handoff", "text": record.handoff}, ensure_ascii=False))
    session_file(root, record.session_id).write_text("\n".join(lines) + "\n")


def test_old_format_session_files_are_read_searched_and_converted(tmp_path: Path) -> None:
    from autology_mcp.knowledge.service import Autology
    from autology_mcp.sessions.session_node import write_session_node

    source = synthetic(tmp_path / "src" / "o.jsonl", "o", 150).read_text().splitlines(keepends=True)
    old, once = new_project(tmp_path, "old"), new_project(tmp_path, "once")
    transcript = tmp_path / "t" / "o.jsonl"
    transcript.parent.mkdir()
    transcript.write_text("".join(source[:90]))
    ingest_transcript(old, transcript)
    format1(old, load_session(old, "o"), transcript)
    SessionIndex.for_root(old).rebuild()
    whole = tmp_path / "w" / "o.jsonl"
    whole.parent.mkdir()
    whole.write_text("".join(source[:90]))
    ingest_transcript(once, whole)
    assert session_file(old, "o").read_text().startswith('{"kind":"header","format":1,')
    same_record_v1 = load_session(old, "o")
    assert same_record_v1.turns == load_session(once, "o").turns and same_record_v1.handoff == load_session(once, "o").handoff
    assert ingest_transcript(old, transcript).mode == "unchanged"  # read from its header, left as it is
    assert index_dump(old) == index_dump(once) and searches(old) == searches(once)
    for root in (old, once):  # the node from a format 1 file is the one from its format 2 twin
        service = Autology.open(root)
        write_session_node(service, "o")
        service.close()
    nodes = [sorted(p.read_text().split("\n---\n", 1)[1] for p in (r / ".autology" / "nodes").rglob("*.md")) for r in (old, once)]
    assert nodes[0] == nodes[1] and nodes[0]
    transcript.write_text("".join(source))  # the session went on: the old file is checked whole once, converted
    whole.write_text("".join(source))
    assert ingest_transcript(old, transcript, step_bytes=16384).mode == "appended"
    assert session_file(old, "o").read_text().startswith('{"kind":"header","format":2,')
    stepped(old, transcript, 16384)
    ingest_transcript(once, whole)
    same_record(load_session(once, "o"), load_session(old, "o"))
    assert index_dump(once) == index_dump(old) and searches(once) == searches(old)


def test_a_new_title_reindexes_every_chunk(project: Path, tmp_path: Path) -> None:
    transcript = copy_fixture(BASIC, tmp_path / "t")
    ingest_transcript(project, transcript)
    with transcript.open("a") as handle:
        handle.write(json.dumps({"type": "custom-title", "customTitle": "Jittered retries", "sessionId": "basic"}) + "\n")
        handle.write(assistant_line("basic", "Renamed the session.", "2026-10-02T10:00:09Z", "u-9") + "\n")
    assert ingest_transcript(project, transcript).mode == "appended"
    hits = search_sessions(project, "backoff")
    assert hits and all(h.title == "Jittered retries" and h.text.startswith("Jittered retries\n") for h in hits)
    once = new_project(tmp_path, "once")
    ingest_transcript(once, transcript)
    assert index_dump(once) == index_dump(project)


def test_the_checkpoint_is_found_from_the_end_past_a_killed_steps_lines(project: Path, tmp_path: Path) -> None:
    """load_header reads the file's first line and its tail: a long unfinished tail (a killed step's
    turns) is passed over, block by block, to the last complete checkpoint."""
    transcript = copy_fixture(BASIC, tmp_path / "t")
    ingest_transcript(project, transcript)
    path = session_file(project, "basic")
    expected = load_session(project, "basic")
    orphan = json.dumps({"kind": "turn", "n": 10, "role": "user", "ts": "", "text": "x" * 50_000}) + "\n"
    with path.open("a") as handle:
        handle.write(orphan * 5 + '{"kind":"checkpoint","lines":5,"tit')
    found = load_header(project, "basic")
    assert (found.offset, found.handoff, found.state) == (expected.offset, expected.handoff, expected.state)
    assert found.end == len(path.read_bytes()) - len(orphan) * 5 - len('{"kind":"checkpoint","lines":5,"tit')
    assert load_session(project, "basic").turns == expected.turns


def test_indexing_a_session_file_from_its_start_reads_it_in_blocks(tmp_path: Path, monkeypatch) -> None:
    """A rebuild (or a new file generation) indexes a format 2 file a few steps at a time, with the
    title of its last checkpoint: the same documents as reading it at once, memory bounded."""
    from autology_mcp.sessions import index

    lines = synthetic(tmp_path / "src" / "r.jsonl", "r", 200, stamps=False).read_text().splitlines(keepends=True)
    lines.insert(120, json.dumps({"type": "custom-title", "customTitle": "Retry budget", "sessionId": "r"}) + "\n")
    transcript = tmp_path / "t" / "r.jsonl"
    transcript.parent.mkdir()
    transcript.write_text("".join(lines))
    root = new_project(tmp_path, "p")
    stepped(root, transcript, 16384, index=False)
    SessionIndex.for_root(root).rebuild()
    at_once, found = index_dump(root), searches(root)
    assert at_once["sources"][0][1] == "Retry budget"
    monkeypatch.setattr(index, "READ_BLOCK", 4096)
    SessionIndex.for_root(root).rebuild()
    assert index_dump(root) == at_once and searches(root) == found
