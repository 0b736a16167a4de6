"""SessionEnd / SessionStart with session memory, through the hook handler functions; recall; the session node."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from sessions_helpers import BASIC, COMPACTED, PLANTED_SECRETS, SECRETS, assistant_line, copy_fixture, user_line

from autology_mcp.hooks.handlers import session_end, session_start
from autology_mcp.hooks.output import RECALL_MAX_CHARS
from autology_mcp.knowledge.service import Autology
from autology_mcp.knowledge.trust.untrusted import FRAME
from autology_mcp.sessions.recall import keywords
from autology_mcp.sessions.search import search_sessions
from autology_mcp.sessions.session_node import find_session_node

ADR = "## Context\nc\n## Decision\nd\n## Alternatives\na\n## Consequences\nc"


@pytest.fixture(autouse=True)
def claude_config(tmp_path: Path, monkeypatch) -> Path:
    """Claude Code's config folder: the SessionEnd hook ingests only transcripts under its projects/."""
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    return tmp_path / "projects"


def end_payload(root: Path, transcript: Path, session_id: str) -> dict:
    return {
        "session_id": session_id,
        "transcript_path": str(transcript),
        "cwd": str(root),
        "hook_event_name": "SessionEnd",
        "reason": "prompt_input_exit",
    }


def start_payload(root: Path, session_id: str = "new-session", source: str = "startup") -> dict:
    return {
        "session_id": session_id,
        "transcript_path": str(root / "none.jsonl"),
        "cwd": str(root),
        "hook_event_name": "SessionStart",
        "source": source,
    }


def context_of(output: dict) -> str:
    return output["hookSpecificOutput"]["additionalContext"]


def transcript_in_project(project: Path, tmp_path: Path, fixture: Path, name: str, month: str = "") -> Path:
    """A fixture rewritten as if recorded in ``project`` (its cwd and file paths), so references resolve."""
    text = fixture.read_text().replace("/home/dev/shop", str(project))
    if month:
        text = text.replace("2026-10-", f"2026-{month}-")
    dest = tmp_path / "projects" / "-project" / f"{name}.jsonl"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(text)
    return dest


# ------------------------------------------------------------------------------ recall keywords


def test_keywords_prefer_files_identifiers_and_title_case_terms() -> None:
    text = (
        "Retry backoff for the HTTP client\n"
        "Asked: Add a retry to src/http/client.py | Wire with_backoff into PaymentsClient\n"
        "Done: The Payments Gateway now retries; with_backoff lives in backoff.py. Tools: Edit ×3, Bash ×1\n"
        "Decisions: We decided to use exponential backoff with full jitter."
    )
    words = keywords(text)
    assert len(words) == 5
    assert words[:3] == ["with_backoff", "client.py", "backoff.py"] or set(words[:3]) == {"with_backoff", "client.py", "backoff.py"}
    assert "PaymentsClient" in words and "Edit" not in words and "Retry" not in words
    assert keywords("") == [] and keywords("nothing to see here.") == []
    # too few named things: repeated long words fill the list
    assert keywords("Asked: the checkout hangs | fix checkout latency in reserve.py") == ["reserve.py", "checkout"]


# ------------------------------------------------------------------------------ session end


def test_session_end_ingests_and_writes_the_session_node(project: Path, tmp_path: Path) -> None:
    (project / "src" / "http").mkdir(parents=True)
    (project / "src" / "http" / "client.py").write_text("x = 1\n")
    (project / "src" / "http" / "backoff.py").write_text("y = 1\n")
    service = Autology.open(project)
    retry = service.capture("Retry component", "The HTTP retry.", type="component", references=["src/http/client.py"]).id
    other = service.capture("Unrelated", "Billing.", type="concept").id
    service.close()
    transcript = transcript_in_project(project, tmp_path, BASIC, "5f3a9c2e-1b7d-4e8f-a6c4-2d9b8e7f1a03")
    sid = transcript.stem

    output = session_end(end_payload(project, transcript, sid), project)

    message = output["systemMessage"]
    assert "/autology:capture" in message and "10 new turn(s)" in message and "created" in message
    assert any(h.session_id == sid for h in search_sessions(project, "exponential backoff"))
    service = Autology.open(project)
    try:
        node_id = find_session_node(service, sid)
        assert node_id is not None
        node = service.get(node_id)
        assert node.type == "session" and node.source == "hook_session_end" and node.confidence == 0.85
        assert node.session == sid and node.title == "Session: Retry backoff for the HTTP client"
        assert "## What was done" in node.content and "## Files touched" in node.content
        assert "We decided to use exponential backoff with full jitter" in node.content
        assert node.references == ["src/http/client.py", "src/http/backoff.py"]
        targets = {(r.target, r.type) for r in node.relations}
        assert (retry, "relates_to") in targets and all(t != other for t, _ in targets)
    finally:
        service.close()

    # the session goes on (resumed), then ends again: the same node is updated, nothing duplicated
    with transcript.open("a") as handle:
        handle.write(user_line(sid, f"Also note the retry policy in node {other}", "2026-10-02T11:00:00Z", "u-9") + "\n")
        handle.write(assistant_line(sid, "Noted; the billing concept is unaffected.", "2026-10-02T11:00:05Z", "u-10") + "\n")
    again = session_end(end_payload(project, transcript, sid), project)
    assert "2 new turn(s)" in again["systemMessage"] and "updated" in again["systemMessage"]
    unchanged = session_end(end_payload(project, transcript, sid), project)  # an end with nothing new: no "0 new turns"
    assert "session memory" not in unchanged.get("systemMessage", "") and "0 new turn" not in json.dumps(unchanged)
    service = Autology.open(project)
    try:
        sessions = [n for n in service.query(type="session", limit=100)]
        assert len(sessions) == 1
        node = service.get(node_id)
        assert (other, "relates_to") in {(r.target, r.type) for r in node.relations}  # named by id in the session
    finally:
        service.close()


def test_session_end_without_transcript_says_nothing_and_without_store_still_gives_tips(project: Path, tmp_path: Path) -> None:
    missing = end_payload(project, tmp_path / "gone.jsonl", "gone")
    assert session_end(missing, project) == {}  # nothing to tell whether the session is worth recording
    assert not (project / ".autology" / "sessions").exists()
    bare = tmp_path / "bare"
    bare.mkdir()
    transcript = copy_fixture(BASIC, tmp_path / "projects" / "t")
    output = session_end(end_payload(bare, transcript, "basic"), bare)
    assert "/autology:capture" in output["systemMessage"]
    assert not (bare / ".autology").exists()  # a hook never creates a store


def test_session_end_fails_open(project: Path, tmp_path: Path) -> None:
    (project / ".autology" / "config.toml").write_text("[sessions]\nboosts = 'high'\n")
    transcript = copy_fixture(BASIC, tmp_path / "projects" / "t")
    output = session_end(end_payload(project, transcript, "basic"), project)
    assert "/autology:capture" in output["systemMessage"] and "session memory" not in output["systemMessage"]


def test_capture_insights_setting(project: Path, tmp_path: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.autology.sessions]\ncapture_insights = true\n")
    transcript = transcript_in_project(project, tmp_path, COMPACTED, "8d2b6e4f-3c1a-4f7e-b9d0-5a6c7e8f9a12")
    output = session_end(end_payload(project, transcript, transcript.stem), project)
    assert "insight(s) captured for review" in output["systemMessage"]
    service = Autology.open(project)
    try:
        review = [n for n in service.query(limit=100) if n.node.status == "needs_review"]
        assert review and all(n.node.confidence == 0.7 and "mined-insight" in n.node.tags for n in review)
        session_node = find_session_node(service, transcript.stem)
        assert all((session_node, "derived_from") in {(r.target, r.type) for r in n.node.relations} for n in review)
    finally:
        service.close()


# ------------------------------------------------------------------------------ session start


def test_session_start_recalls_the_latest_session(project: Path, tmp_path: Path) -> None:
    service = Autology.open(project)
    decision = service.capture("Exponential backoff with jitter in client.py", ADR, type="decision").id
    service.close()
    old = transcript_in_project(project, tmp_path, COMPACTED, "older", month="09")
    latest = transcript_in_project(project, tmp_path, BASIC, "latest")
    for transcript in (old, latest):
        session_end(end_payload(project, transcript, transcript.stem), project)

    text = context_of(session_start(start_payload(project), project))

    assert "autology — project memory" in text  # the existing recall is still there, first
    header = next(line for line in text.split("\n") if line.startswith("autology — last session (2026-10-02; "))
    assert FRAME in header and header.endswith(': "Retry backoff for the HTTP client"')  # quoted, under the frame
    assert 'Key topics: "client.py' in text
    assert decision in text  # a node the keywords retrieve
    assert "`autology sessions search WORDS …`" in text and "<" not in text  # Gemini shows a <…> HTML-escaped
    assert len(text) <= RECALL_MAX_CHARS
    # resuming "latest" recalls the session before it, not itself
    resumed = context_of(session_start(start_payload(project, "latest", "resume"), project))
    assert "Celery" in resumed and '"Retry backoff' not in resumed


def test_session_start_recall_stays_within_the_limit(project: Path, tmp_path: Path) -> None:
    service = Autology.open(project)
    for i in range(60):
        service.capture(f"Convention number {i} about client.py and a rather long subject", "Always.", type="convention")
    service.close()
    session_end(end_payload(project, transcript_in_project(project, tmp_path, BASIC, "s1"), "s1"), project)
    text = context_of(session_start(start_payload(project), project))
    assert len(text) <= RECALL_MAX_CHARS
    assert "Key topics:" in text and text.count("\n- [convention]") >= 5


def test_disabled_session_memory_does_nothing(project: Path, tmp_path: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.autology.sessions]\nenabled = false\n")
    transcript = transcript_in_project(project, tmp_path, BASIC, "off")
    output = session_end(end_payload(project, transcript, "off"), project)
    assert "session memory" not in output["systemMessage"]
    assert not (project / ".autology" / "sessions").exists()
    assert not (project / ".autology" / "cache" / "sessions.sqlite").exists()
    text = context_of(session_start(start_payload(project), project))
    assert "last session" not in text
    assert search_sessions(project, "backoff") == []


def test_no_secret_in_nodes_or_anywhere_after_the_hooks(project: Path, tmp_path: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.autology.sessions]\ncapture_insights = true\n")
    transcript = transcript_in_project(project, tmp_path, SECRETS, "b41f7d2c-9e3a-4c5b-8d6f-0a1b2c3d4e5f")
    session_end(end_payload(project, transcript, transcript.stem), project)
    session_start(start_payload(project), project)
    for path in (p for p in (project / ".autology").rglob("*") if p.is_file()):
        data = path.read_bytes()
        for secret in PLANTED_SECRETS:
            assert secret.encode() not in data, f"{secret!r} in {path}"


@pytest.mark.slow
def test_hook_command_end_to_end(project: Path, tmp_path: Path) -> None:
    """`autology hook session-end` as Claude Code runs it: payload on stdin, JSON on stdout, exit 0."""
    transcript = transcript_in_project(project, tmp_path, BASIC, "cmd-session")
    result = subprocess.run(
        [sys.executable, "-m", "autology_mcp", "--root", str(project), "hook", "session-end"],
        input=json.dumps(end_payload(project, transcript, "cmd-session")),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "session memory" in json.loads(result.stdout)["systemMessage"]
    assert (project / ".autology" / "sessions" / "cmd-session.jsonl").is_file()


def test_small_sessions_get_no_node_and_nodes_can_be_turned_off(project: Path, tmp_path: Path) -> None:
    small = tmp_path / "projects" / "small.jsonl"
    small.parent.mkdir(parents=True, exist_ok=True)
    small.write_text(
        user_line("small", "What does the export job do?", "2026-10-03T10:00:00Z", "s-1") + "\n"
        + assistant_line("small", "It writes yesterday's orders to a CSV file.", "2026-10-03T10:00:05Z", "s-2") + "\n"
    )
    output = session_end(end_payload(project, small, "small"), project)
    assert "2 new turn(s)" in output["systemMessage"] and "session node" not in output["systemMessage"]
    assert any(h.session_id == "small" for h in search_sessions(project, "export job"))  # still searchable

    (project / "pyproject.toml").write_text("[tool.autology.sessions]\nsession_nodes = false\n")
    big = transcript_in_project(project, tmp_path, BASIC, "big")
    output = session_end(end_payload(project, big, "big"), project)
    assert "10 new turn(s)" in output["systemMessage"] and "session node" not in output["systemMessage"]
    service = Autology.open(project)
    try:
        assert service.query(type="session") == []
    finally:
        service.close()


def test_a_forgotten_session_is_not_ingested_again_at_session_end(project: Path, tmp_path: Path) -> None:
    from autology_mcp.sessions.store import forget_session, session_lock

    transcript = transcript_in_project(project, tmp_path, BASIC, "private-session")
    with session_lock(project).hold():
        forget_session(project, "private-session")
    output = session_end(end_payload(project, transcript, "private-session"), project)
    assert "session memory" not in output["systemMessage"]
    assert not (project / ".autology" / "sessions" / "private-session.jsonl").exists()


def test_session_end_reads_only_transcripts_under_claude_codes_projects_folder(project: Path, tmp_path: Path) -> None:
    """A hook payload can name any path: the hook ingests only a .jsonl file Claude Code could have written."""
    outside = copy_fixture(BASIC, tmp_path / "elsewhere", "outside.jsonl")
    inside = copy_fixture(BASIC, tmp_path / "projects" / "-project", "inside.jsonl")
    link = tmp_path / "projects" / "-project" / "link.jsonl"
    link.symlink_to(outside)  # a link out of the folder counts as outside
    for transcript in (outside, link, Path("/etc/passwd"), Path("/proc/self/environ")):
        output = session_end(end_payload(project, transcript, transcript.stem), project)
        assert output == {}, transcript  # not read: neither ingested nor judged worth recording
    assert not (project / ".autology" / "sessions").exists() or not list((project / ".autology" / "sessions").glob("*.jsonl"))
    output = session_end(end_payload(project, inside, "inside"), project)
    assert "session memory" in output["systemMessage"]
