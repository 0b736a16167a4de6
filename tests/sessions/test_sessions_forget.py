"""`autology sessions forget` removes the session's text from every file under .autology/ (issue 13,
item 3): before, its words (passwords and a bearer token among them) stayed in the FTS5 index
segments, free pages and the WAL of cache/sessions.sqlite. Checked on the raw bytes."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from sessions_helpers import assistant_line, user_line

from autology_mcp.cli.main import main
from autology_mcp.sessions.search import search_sessions

KEPT_WORDS = ["pelicanmarker", "otterbeacon"]


def transcript(folder: Path, session_id: str, words: list[str]) -> Path:
    lines = []
    for n, word in enumerate(words):
        stamp = f"2026-10-02T09:{n:02d}:00.000Z"
        lines.append(user_line(session_id, f"Please look at the {word} handling in src/app.py, turn {n}.", stamp, str(uuid.uuid4())))
        lines.append(assistant_line(session_id, f"The {word} handling retries twice; I changed it to back off.", stamp, str(uuid.uuid4())))
    path = folder / f"{session_id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def raw_bytes_under(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


def test_forget_leaves_no_byte_of_the_session_in_any_file(project: Path, tmp_path: Path, capsys) -> None:
    secret_words = [f"zebrasecret{i}" for i in range(40)] + ["walrusprivate"]
    forgotten = [transcript(tmp_path / "t", "private-one", secret_words[:20]),
                 transcript(tmp_path / "t", "private-two", secret_words[20:])]
    kept = transcript(tmp_path / "t", "kept", KEPT_WORDS)
    root = ["--root", str(project)]
    assert main([*root, "sessions", "ingest", *map(str, [*forgotten, kept])]) == 0
    assert search_sessions(project, "zebrasecret3 handling")  # indexed and searched (the FTS5 index holds it)
    capsys.readouterr()
    assert any(word.encode() in raw_bytes_under(project / ".autology") for word in secret_words)

    assert main([*root, "sessions", "forget", "private-one", "private-two", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["scrubbed"] is True

    data = raw_bytes_under(project / ".autology")
    leaked = [word for word in secret_words if word.encode() in data]
    assert leaked == []
    assert search_sessions(project, "zebrasecret3") == []
    assert search_sessions(project, "pelicanmarker")  # the other session is still there and searchable
