"""Helpers of the session-memory tests: the hand-written transcripts and a project to ingest them into."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
BASIC = FIXTURES / "basic.jsonl"
COMPACTED = FIXTURES / "compacted.jsonl"
MALFORMED = FIXTURES / "malformed.jsonl"
SECRETS = FIXTURES / "secrets.jsonl"

# Every secret planted in secrets.jsonl (and the fragments of them that must not survive either).
PLANTED_SECRETS = [
    "sk-ant-api03-Zx8Qw2Er4Ty6Ui8Op0As2Df4Gh6Jk8Lz1Xc3Vb5Nm7",
    "Zx8Qw2Er4Ty6Ui8Op0As2Df4Gh6Jk8",
    "Sup3rS3cretPw",
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
    "FakeKeyData",
    "ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3s00",
    "R4nd0mT0k3n",
    "7f3k2m9x1q8w4e6r5t0yLmNo",
    "AKIAZ7QW3EXAMPLEKEY9",
    "wJalrXUtnFEMIK7MDENGbPxRfiCYzEXAMPLEKEYq",
    "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx",
    "AbCdEfGhIjKlMnOpQrStUvWx",
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
    "Xb3kQ9vT7mLp2sR8wY4nZ1cF6hJ0dG5aE",
    "correct-horse-battery-staple",
    "hunter2hunter2",
    "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGH",
    "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "4eC39HqLyjWDarjtT1zdp7dc",
]


def copy_fixture(src: Path, dest_dir: Path, name: str | None = None) -> Path:
    """A copy of a fixture transcript (tests append to their copy, never to the fixture)."""
    dest_dir.mkdir(parents=True, exist_ok=True)
    dest = dest_dir / (name or src.name)
    shutil.copyfile(src, dest)
    return dest


def user_line(session_id: str, text: str, timestamp: str, uuid: str) -> str:
    """One user prompt line in Claude Code's transcript shape."""
    return json.dumps(
        {
            "parentUuid": None,
            "isSidechain": False,
            "type": "user",
            "message": {"role": "user", "content": text},
            "uuid": uuid,
            "timestamp": timestamp,
            "userType": "external",
            "entrypoint": "cli",
            "cwd": "/home/dev/shop",
            "sessionId": session_id,
            "version": "2.1.197",
            "gitBranch": "main",
        }
    )


def assistant_line(session_id: str, text: str, timestamp: str, uuid: str) -> str:
    return json.dumps(
        {
            "parentUuid": None,
            "isSidechain": False,
            "type": "assistant",
            "message": {
                "id": "msg_x",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
            },
            "uuid": uuid,
            "timestamp": timestamp,
            "userType": "external",
            "entrypoint": "cli",
            "cwd": "/home/dev/shop",
            "sessionId": session_id,
            "version": "2.1.197",
            "gitBranch": "main",
        }
    )


def project_with_one_session(tmp_path: Path) -> Path:
    """A project with a store and one ingested session of one user turn ("John signed a Nike shoe deal")."""
    from autology_mcp.knowledge.store import NodeStore
    from autology_mcp.sessions.ingest import ingest_transcript

    root = tmp_path / "project"
    root.mkdir()
    NodeStore(root).init()
    (tmp_path / "s1.jsonl").write_text(user_line("s1", "John signed a Nike shoe deal", "2026-11-01T10:00:00Z", "u1") + "\n")
    ingest_transcript(root, tmp_path / "s1.jsonl")
    return root
