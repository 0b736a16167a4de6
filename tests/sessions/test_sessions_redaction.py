"""Secrets in sessions (issue 13, item 2): the corpus's 51 forms are redacted before anything is
written, and no secret of the corpus or of its 20 held-out forms reaches a git-tracked file (the
session node holds summarised text only). bench/redaction.py reports the leak rates, the held-out
part and detect-secrets beside them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from secret_corpus import ALL_SECRETS, CORPUS, HELD_OUT

from autology_mcp.cli.main import main
from autology_mcp.sessions.redact import redact
from autology_mcp.sessions.session_node import summarised


@pytest.mark.parametrize("form", CORPUS, ids=[f.name for f in CORPUS])
def test_every_form_of_the_corpus_is_redacted(form):
    out = "\n".join(redact(message) for message in form.messages)  # one message at a time, as the parser does
    assert [s for s in form.secrets if s in out] == []
    assert redact(out) == out  # idempotent


def test_plain_text_is_left_alone():
    for text in ("the token budget is 2,000", "password reset flow for the login page", "Bearer of bad news",
                 "git checkout 8947c48e", "see src/autology_mcp/sessions/redact.py:120", "mkdir -p build/out",
                 "curl -s https://example.com/api", "node 3c3a317e-cf07-461a-b699-fccf272df159"):
        assert redact(text) == text, text


def test_summarised_keeps_words_and_paths_but_not_secret_shaped_words():
    text = "Use the API key UCyznCAi6P0u8IJT6yFrmtM21hvE376x for src/http/client_v2.py, not hunter2"
    assert summarised(text) == "Use the API key […] for src/http/client_v2.py, not hunter2"


def test_no_secret_reaches_a_committed_file_and_the_tuning_corpus_no_file(tmp_path: Path, capsys) -> None:
    project = tmp_path / "project"
    (project / ".autology" / "nodes").mkdir(parents=True)
    lines, n = [], 0
    for form in CORPUS + HELD_OUT:
        for message in form.messages:
            n += 1
            stamp = f"2026-10-02T10:{n // 60:02d}:{n % 60:02d}.000Z"
            for role, content in (("user", message), ("assistant", [{"type": "text", "text": f"Noted: {message}"}])):
                lines.append(json.dumps({"type": role, "uuid": f"{role}{n}", "timestamp": stamp, "sessionId": "s",
                                         "cwd": str(project), "message": {"role": role, "content": content}}))
    transcript = tmp_path / "secrets.jsonl"
    transcript.write_text("\n".join(lines) + "\n")
    assert main(["--root", str(project), "sessions", "ingest", "--node", str(transcript)]) == 0
    capsys.readouterr()
    tracked = b"".join(p.read_bytes() for p in sorted((project / ".autology").rglob("*"))
                       if p.is_file() and p.relative_to(project / ".autology").parts[0] in ("nodes", "graph"))
    assert list((project / ".autology" / "nodes" / "sessions").glob("*.md")), "a session node was written"
    assert [s for s in ALL_SECRETS if s.encode() in tracked] == []
    everything = b"".join(p.read_bytes() for p in sorted((project / ".autology").rglob("*")) if p.is_file())
    assert [s for form in CORPUS for s in form.secrets if s.encode() in everything] == []
