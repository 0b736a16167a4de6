"""Parsing Claude Code transcripts: turns, tool summaries, titles, compaction, malformed lines."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from sessions_helpers import BASIC, COMPACTED, MALFORMED

from autology_mcp.sessions.transcript import ParseState, parse_lines


def parse_file(path, cwd: str = "/home/dev/shop"):
    return parse_lines(path.read_text().splitlines(), cwd=cwd)


def test_basic_session_turns_and_tool_summaries() -> None:
    turns, state = parse_file(BASIC)
    assert [t.n for t in turns] == list(range(len(turns)))
    assert [t.role for t in turns][:3] == ["user", "assistant", "user"]
    assert turns[0].text.startswith("The HTTP client hammers the payments API")
    assert turns[1].text == "Let me look at the client first.\n[tool Read src/http/client.py]"
    # a tool result is one line: outcome and first output line, never the whole output
    assert turns[2].text.startswith("[result Read src/http/client.py: ok — 1\timport httpx") or turns[2].text.startswith(
        "[result Read src/http/client.py: ok — 1 import httpx"
    )
    assert "PaymentsClient" not in turns[2].text
    failing = next(t for t in turns if "pytest" in t.text and t.text.startswith("[result"))
    assert ": error — F.." in failing.text and "AssertionError" not in failing.text
    assert state.title() == "Retry backoff for the HTTP client"  # the summary line wins over the first prompt
    assert state.files_modified == ["src/http/client.py", "src/http/backoff.py"]
    assert state.files_read == ["src/http/client.py"]
    assert state.tool_counts == {"Read": 1, "Edit": 1, "Write": 1, "Bash": 1}
    assert state.malformed == 0
    assert not any("local-command-caveat" in t.text or "Caveat" in t.text for t in turns)  # isMeta skipped
    assert state.last_timestamp == "2026-10-02T09:14:40.800Z"
    assert state.pending_tools == {}


def test_write_content_is_not_kept() -> None:
    turns, _ = parse_file(BASIC)
    assert not any("random.uniform" in t.text for t in turns)  # the Write tool's file content
    assert any(t.text == "[tool Write src/http/backoff.py]" for t in turns)


def test_compacted_session_keeps_its_summary_as_a_turn() -> None:
    turns, state = parse_file(COMPACTED)
    assert state.compactions == 1
    summaries = [t for t in turns if t.role == "compact_summary"]
    assert len(summaries) == 1 and "dated S3 key" in summaries[0].text
    assert state.title() == "Migrate the order export job from cron to the Celery beat scheduler in jobs/export_orders.py"
    assert turns[-1].text.startswith("The staging run succeeded")


def test_malformed_lines_are_counted_and_skipped() -> None:
    turns, state = parse_file(MALFORMED)
    # broken JSON (line 2 and the unfinished last line), plain text, a list, a string, two objects of bad shape
    assert state.malformed == 7
    assert [t.role for t in turns] == ["user", "assistant", "user", "assistant"][: len(turns)]
    assert any("root cause is a sequential scan" in t.text for t in turns)
    assert not any("SIDECHAIN" in t.text for t in turns)


def test_slash_commands_are_cleaned_and_not_titles() -> None:
    lines = [
        json.dumps({"type": "user", "message": {"role": "user", "content": "<command-name>/compact</command-name>\n"
                    "<command-message>compact</command-message>\n<command-args>keep the API</command-args>"},
                    "timestamp": "2026-01-01T00:00:00Z"}),
        json.dumps({"type": "user", "message": {"role": "user", "content": "Fix the login bug"}, "timestamp": "2026-01-01T00:00:01Z"}),
        json.dumps({"type": "custom-title", "customTitle": "Login fixes", "sessionId": "x"}),
    ]
    turns, state = parse_lines(lines)
    assert turns[0].text == "/compact keep the API"
    assert state.first_prompt == "Fix the login bug"
    assert state.title() == "Login fixes"


def test_incremental_parsing_continues_numbering() -> None:
    lines = BASIC.read_text().splitlines()
    whole, _ = parse_lines(lines, cwd="/home/dev/shop")
    first, state = parse_lines(lines[:8], cwd="/home/dev/shop")
    state = ParseState.from_dict(json.loads(json.dumps(state.to_dict())))  # as saved in the session file
    rest, _ = parse_lines(lines[8:], state, cwd="/home/dev/shop")
    assert first + rest == whole


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=80), st.binary(max_size=40).map(lambda b: b.decode("latin-1")),
                          st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=10),
                                       lambda c: st.lists(c, max_size=3) | st.dictionaries(
                                           st.sampled_from(["type", "message", "content", "role", "text", "name",
                                                            "input", "tool_use_id", "summary", "timestamp"]), c,
                                           max_size=4), max_leaves=12).map(json.dumps)), max_size=20))
def test_any_input_parses_without_raising(lines: list[str]) -> None:
    turns, state = parse_lines(lines)
    assert state.turns == len(turns)
    assert all(t.role in ("user", "assistant", "compact_summary") and t.text for t in turns)


def test_thinking_blocks_and_images_are_not_kept() -> None:
    lines = [
        json.dumps({"type": "user", "timestamp": "2026-01-01T00:00:00Z", "message": {"role": "user", "content": [
            {"type": "text", "text": "What is in this screenshot?"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}]}}),
        json.dumps({"type": "assistant", "timestamp": "2026-01-01T00:00:05Z", "message": {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "private chain of thought", "signature": "EqQBCkYIBxgCKkB"},
            {"type": "redacted_thinking", "data": "EmwKAhgBEgy"},
            {"type": "text", "text": "A login form."}]}}),
    ]
    turns, state = parse_lines(lines)
    assert [t.text for t in turns] == ["What is in this screenshot?", "A login form."]
    assert state.malformed == 0


def test_a_subagent_report_is_kept_other_output_is_not() -> None:
    report = "The retry logic lives in src/payments/retry.py. " + "It backs off exponentially. " * 100
    lines = [
        json.dumps({"type": "assistant", "timestamp": "2026-01-01T00:00:00Z", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_task", "name": "Task", "input": {"description": "Find the retry code",
                                                                            "prompt": "Where is retry?"}}]}}),
        json.dumps({"type": "user", "timestamp": "2026-01-01T00:01:00Z", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_task", "content": [{"type": "text", "text": report}]}]}}),
    ]
    turns, _ = parse_lines(lines)
    assert turns[0].text == "[tool Task Find the retry code]"
    assert turns[1].text.startswith("[result Task Find the retry code: ok]\nThe retry logic lives in src/payments/retry.py.")
    assert 1900 < len(turns[1].text.split("\n", 1)[1]) <= 2000
