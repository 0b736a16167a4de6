"""Issue 39: every agent's sessions name the agent that spoke, and the sessions CLI behaves (id
prefixes, a closed pipe, sessions without a turn). Transcripts of all four formats, in the shapes of
tests/sessions/test_transcript_agents.py (Claude Code's from the fixtures)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sessions_helpers import BASIC, assistant_line, copy_fixture, user_line
from test_transcript_agents import (  # noqa: F401 - agent_homes is a fixture
    CODEX_ID,
    COPILOT_ID,
    GEMINI_ID,
    agent_homes,
    codex_first_part,
    codex_message,
    codex_transcript,
    copilot_transcript,
    dumps,
    gemini_rows,
    gemini_transcript,
)

from autology_mcp.cli.main import main
from autology_mcp.hooks.handlers import session_end
from autology_mcp.sessions.index import SessionIndex
from autology_mcp.sessions.ingest import ingest_transcript
from autology_mcp.sessions.store import session_file

CLAUDE_ID = "basic"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def four_sessions(project: Path, agent_homes: Path) -> dict[str, str]:  # noqa: F811
    """One session of each agent, ingested: {session id: the name its answers must be shown under}."""
    cwd = str(project)
    claude = copy_fixture(BASIC, agent_homes / "claude-copy", f"{CLAUDE_ID}.jsonl")
    transcripts = [claude, codex_transcript(agent_homes, cwd), gemini_transcript(agent_homes / "gemini-home", cwd, gemini_rows(cwd)),
                   copilot_transcript(agent_homes / "copilot", cwd)]
    for path in transcripts:
        assert ingest_transcript(project, path).mode == "full"
    return {CLAUDE_ID: "Claude", CODEX_ID: "Codex", GEMINI_ID: "Gemini", COPILOT_ID: "Copilot"}


def test_each_agents_answers_are_indexed_under_its_own_name(project: Path, four_sessions: dict[str, str]) -> None:
    with SessionIndex.for_root(project).reading() as conn:
        rows = conn.execute("SELECT session_id, text FROM docs WHERE doc_type = 'session_chunk'").fetchall()
    text_of = {sid: "\n".join(t for s, t in rows if s == sid) for sid in four_sessions}
    for sid, name in four_sessions.items():
        assert f"\n{name}: " in text_of[sid], (sid, text_of[sid][:300])
        others = {n for n in four_sessions.values() if n != name}
        assert not any(f"\n{other}: " in text_of[sid] for other in others), sid


def test_sessions_list_and_show_name_the_agent(project: Path, four_sessions: dict[str, str], capsys) -> None:
    code, out, err = run(capsys, "--root", str(project), "sessions", "list")
    assert code == 0, err
    for sid, name in four_sessions.items():
        line = next(line for line in out.splitlines() if sid in line)
        assert f" {name} " in line, line
    code, out, _ = run(capsys, "--root", str(project), "sessions", "list", "--json")
    agents = {row["session_id"]: row["agent"] for row in json.loads(out)}
    assert agents == {CLAUDE_ID: "claude-code", CODEX_ID: "codex", GEMINI_ID: "gemini", COPILOT_ID: "copilot"}
    code, out, err = run(capsys, "--root", str(project), "sessions", "show", CODEX_ID)
    assert code == 0, err
    assert f"({CODEX_ID}, Codex, " in out.splitlines()[0]
    assert "\nCodex: We decided to use exponential backoff" in out and "Claude:" not in out


def test_show_and_forget_take_a_unique_start_of_an_id(project: Path, four_sessions: dict[str, str], capsys) -> None:
    root = str(project)
    code, out, err = run(capsys, "--root", root, "sessions", "show", COPILOT_ID[:8], "--json")
    assert code == 0, err and json.loads(out)["session_id"] == COPILOT_ID
    assert json.loads(out)["session_id"] == COPILOT_ID
    code, _, err = run(capsys, "--root", root, "sessions", "show", COPILOT_ID[:3])  # too short to be a choice
    assert code == 1 and "not found" in err.lower()
    twin = copy_fixture(BASIC, project.parent / "twin", f"{COPILOT_ID[:8]}-twin.jsonl")
    assert ingest_transcript(project, twin).mode == "full"
    code, _, err = run(capsys, "--root", root, "sessions", "show", COPILOT_ID[:8])
    assert code == 1 and "starts 2 sessions" in err and COPILOT_ID in err and "give more of the id" in err
    code, out, err = run(capsys, "--root", root, "sessions", "forget", GEMINI_ID[:10])
    assert code == 0, err
    assert f"forgot {GEMINI_ID}" in out and not session_file(project, GEMINI_ID).exists()
    assert session_file(project, CODEX_ID).exists()


def test_a_session_without_a_turn_is_neither_stored_nor_listed(project: Path, agent_homes: Path, capsys) -> None:  # noqa: F811
    """Opening Codex's interface and leaving without a prompt writes a rollout with no turn."""
    cwd = str(project)
    path = codex_transcript(agent_homes, cwd)
    meta_only = [row for row in codex_first_part(cwd) if row["type"] == "session_meta"]
    assert meta_only
    path.write_text(dumps(meta_only))
    result = ingest_transcript(project, path)
    assert result.mode == "empty" and result.turns == 0
    assert not session_file(project, CODEX_ID).exists()
    code, out, _ = run(capsys, "--root", cwd, "sessions", "list")
    assert code == 0 and out.strip() == "no session stored"
    with path.open("a") as handle:  # the person comes back and asks something: the whole session is read
        handle.write(dumps([codex_message(40, "user", "Why exponential backoff?"),
                            codex_message(41, "assistant", "Full jitter spreads retries.")]))
    again = ingest_transcript(project, path)
    assert again.mode == "full" and again.turns == 2
    code, out, _ = run(capsys, "--root", cwd, "sessions", "list")
    assert CODEX_ID in out and " Codex " in out


@pytest.mark.parametrize("argv", [["sessions", "list"], ["graph", "export", "-f", "html"]])
def test_a_closed_pipe_ends_quietly(project: Path, four_sessions: dict[str, str], argv: list[str]) -> None:
    """`autology … | head`: the reader has stopped reading. No "Broken pipe" error, no traceback, as with
    `git log | head`: a short listing (flushed at the end) and a long page (written as it goes)."""
    env = os.environ | {"PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[2]),
                                                                       os.environ.get("PYTHONPATH", "")]))}
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first byte is written
    try:
        proc = subprocess.run([sys.executable, "-m", "autology_mcp", "--root", str(project), *argv],
                              stdout=write_end, stderr=subprocess.PIPE, env=env, timeout=60)
    finally:
        os.close(write_end)
    assert proc.stderr.decode() == ""
    assert proc.returncode == 141


# ------------------------------------------------------------------------------ the end-of-session nudge

BANANA = "what's a good recipe for banana bread?"
NUDGE = "before you go"


def banana_chat(cwd: str) -> list[dict]:
    """A Gemini chat of one off-topic question and its answer (an "always" in it is no decision)."""
    rows = gemini_rows(cwd)[:2]
    return rows + [
        {"id": "u-1", "timestamp": "2026-11-27T12:55:01.000Z", "type": "user", "content": [{"text": BANANA}]},
        {"id": "g-1", "timestamp": "2026-11-27T12:55:02.000Z", "type": "gemini", "model": "gemini-3.8-flash", "thoughts": [],
         "content": "Mash three ripe bananas, mix in melted butter, sugar, an egg and flour, and bake for an hour. "
                    "Always let it cool before slicing."},
    ]


@pytest.mark.parametrize("memory", ["on", "off"])
def test_the_nudge_follows_an_edit_session_not_a_single_question(project: Path, agent_homes: Path, tmp_path: Path,  # noqa: F811
                                                               memory: str) -> None:
    root = project if memory == "on" else tmp_path / "bare"  # off: no store, so nothing is ingested
    root.mkdir(exist_ok=True)
    cwd = str(root)
    home = agent_homes / "gemini-home"
    edited = gemini_transcript(home, cwd, gemini_rows(cwd))
    asked = gemini_transcript(home, cwd, banana_chat(cwd), "session-2026-11-27T13-00-0b1c2d3e.jsonl")

    def end(transcript: Path, sid: str) -> dict:
        return session_end({"agent": "gemini", "session_id": sid, "transcript_path": str(transcript), "cwd": cwd,
                            "hook_event_name": "SessionEnd", "reason": "exit"}, root)

    message = end(edited, GEMINI_ID)["systemMessage"]
    assert NUDGE in message and "autology_capture" in message and "claude" not in message.lower()
    quiet = end(asked, "0b1c2d3e-0000-4000-8000-000000000002")
    assert NUDGE not in quiet.get("systemMessage", "")
    if memory == "on":
        assert "session memory" in quiet["systemMessage"]  # what was done is still said, in one line
    else:
        assert quiet == {}


def test_a_decision_said_without_an_edit_is_worth_the_nudge(project: Path, agent_homes: Path) -> None:  # noqa: F811
    folder = agent_homes / "claude" / "projects" / "-project"
    folder.mkdir(parents=True)
    sid = "6f1e2d3c-0000-4000-8000-0000000000aa"
    transcript = folder / f"{sid}.jsonl"
    transcript.write_text("\n".join([
        user_line(sid, "Should the payments client retry on 503?", "2026-11-27T12:00:00.000Z", "u1"),
        assistant_line(sid, "We decided to retry 503s three times with exponential backoff and full jitter.",
                       "2026-11-27T12:00:05.000Z", "a1"),
    ]) + "\n")
    message = session_end({"session_id": sid, "transcript_path": str(transcript), "cwd": str(project),
                           "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}, project)["systemMessage"]
    assert NUDGE in message and "/autology:capture" in message
