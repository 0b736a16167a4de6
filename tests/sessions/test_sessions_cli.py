"""`autology sessions …` (through cli.main, in-process) and transcript discovery under ~/.claude/projects/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sessions_helpers import BASIC, COMPACTED, MALFORMED, copy_fixture

from autology_mcp.cli.main import main
from autology_mcp.common.errors import ValidationError
from autology_mcp.sessions.discover import encode_project_path, list_transcripts, transcripts_dir
from autology_mcp.sessions.search import search_sessions


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def claude_home(tmp_path: Path, monkeypatch, project: Path) -> Path:
    config = tmp_path / "claude-config"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    folder = config / "projects" / encode_project_path(project)
    folder.mkdir(parents=True)
    return folder


def test_encode_project_path_matches_claude_code() -> None:
    assert encode_project_path(Path("/tmp/hk")) == "-tmp-hk"
    assert encode_project_path(Path("/home/me/my_app.v2/Open Source")) == "-home-me-my-app-v2-Open-Source"


def test_discovery_exact_folder_configured_folder_and_cwd_fallback(project: Path, tmp_path: Path, monkeypatch) -> None:
    folder = claude_home(tmp_path, monkeypatch, project)
    assert transcripts_dir(project) == folder
    folder.rmdir()
    other = folder.parent / "-shortened-name-abc123"
    other.mkdir()
    (other / "s.jsonl").write_text(json.dumps({"type": "user", "cwd": str(project.resolve()), "message": {}}) + "\n")
    assert transcripts_dir(project) == other  # found by the cwd its transcripts record
    (other / "s.jsonl").write_text(json.dumps({"type": "user", "cwd": "/elsewhere", "message": {}}) + "\n")
    with pytest.raises(ValidationError, match="transcripts_dir"):
        transcripts_dir(project)
    assert transcripts_dir(project, str(other)) == other
    with pytest.raises(ValidationError, match="not a folder"):
        transcripts_dir(project, str(tmp_path / "nowhere"))
    (other / "s").mkdir()
    (other / "s" / "subagent.jsonl").write_text("")
    assert list_transcripts(other) == [other / "s.jsonl"]


def test_ingest_all_search_status_insights_rebuild(project: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    folder = claude_home(tmp_path, monkeypatch, project)
    for fixture in (BASIC, COMPACTED, MALFORMED):
        copy_fixture(fixture, folder)
    root = ["--root", str(project)]

    code, out, _ = run(capsys, *root, "sessions", "ingest", "--all")
    assert code == 0 and "✓ 3 transcript(s), 3 changed" in out and "6 malformed line(s) skipped" in out
    code, out, _ = run(capsys, *root, "sessions", "ingest", "--all", "--json")
    data = json.loads(out)
    assert code == 0 and {r["mode"] for r in data["ingested"]} == {"unchanged"}

    code, out, _ = run(capsys, *root, "sessions", "search", "celery", "beat", "--json")
    hits = json.loads(out)
    assert code == 0 and hits[0]["session_id"] == "compacted" and set(hits[0]) >= {"doc_id", "score", "turn_start"}
    code, out, _ = run(capsys, *root, "sessions", "search", "sequential", "scan")
    assert code == 0 and "malformed" in out and "turns" in out
    code, out, _ = run(capsys, *root, "sessions", "search", "zebra")
    assert out.strip() == "no matching session"

    code, out, _ = run(capsys, *root, "sessions", "status", "--json")
    status = json.loads(out)
    assert status["sessions"] == 3 and status["documents"]["handoff"] == 3 and status["enabled"] is True

    code, out, _ = run(capsys, *root, "sessions", "insights", "--json")
    insights = json.loads(out)["insights"]
    assert code == 0 and any(i["kind"] == "decision" for i in insights)
    code, out, _ = run(capsys, *root, "sessions", "insights", "--capture", "--session", "malformed")
    assert code == 0 and "captured 1 insight(s)" in out
    code, out, _ = run(capsys, *root, "sessions", "insights", "--session", "malformed")
    assert "no new insight (1 already known)" in out

    code, out, _ = run(capsys, *root, "sessions", "rebuild")
    assert code == 0 and "from 3 session file(s)" in out


def test_ingest_paths_and_node_option(project: Path, tmp_path: Path, capsys) -> None:
    transcript = copy_fixture(BASIC, tmp_path / "t")
    code, out, _ = run(capsys, "--root", str(project), "sessions", "ingest", str(transcript), "--node", "--json")
    data = json.loads(out)
    assert code == 0 and data["nodes"][0]["action"] == "created"
    code, _, err = run(capsys, "--root", str(project), "sessions", "ingest", str(tmp_path / "missing.jsonl"))
    assert code == 1 and "does not exist" in err


def test_errors_are_clear(project: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "empty"))
    code, _, err = run(capsys, "--root", str(project), "sessions", "ingest")
    assert code == 1 and "--all" in err
    code, _, err = run(capsys, "--root", str(project), "sessions", "ingest", "--all")
    assert code == 1 and "no Claude Code transcripts" in err
    code, _, err = run(capsys, "--root", str(project), "sessions", "search", "x", "--limit", "0")
    assert code == 1 and "limit" in err
    (project / "pyproject.toml").write_text("[tool.autology.sessions]\nenabled = false\n")
    code, _, err = run(capsys, "--root", str(project), "sessions", "search", "x")
    assert code == 1 and "turned off" in err
    code, out, _ = run(capsys, "--root", str(project), "sessions", "status")
    assert code == 0 and "OFF" in out
    (project / "pyproject.toml").write_text("[tool.autology.sessions]\ncolour = 'blue'\n")
    code, _, err = run(capsys, "--root", str(project), "sessions", "status")
    assert code == 1 and "unknown setting" in err and "capture_insights" in err


def test_ingest_all_includes_sessions_started_in_a_subfolder(project: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    folder = claude_home(tmp_path, monkeypatch, project)
    copy_fixture(BASIC, folder)
    sub = folder.parent / (encode_project_path(project) + "-src")
    sub.mkdir()
    (sub / "sub-session.jsonl").write_text(COMPACTED.read_text().replace("/home/dev/shop", str(project.resolve() / "src")))
    lookalike = folder.parent / (encode_project_path(project) + "-other")  # /…/project-other, another project
    lookalike.mkdir()
    (lookalike / "other.jsonl").write_text(MALFORMED.read_text().replace("/home/dev/shop", str(project.resolve()) + "-other"))
    code, out, _ = run(capsys, "--root", str(project), "sessions", "ingest", "--all", "--json")
    assert code == 0
    assert sorted(r["session_id"] for r in json.loads(out)["ingested"]) == ["basic", "sub-session"]


def test_list_show_and_forget(project: Path, tmp_path: Path, capsys) -> None:
    transcripts = [copy_fixture(f, tmp_path / "t") for f in (BASIC, COMPACTED)]
    root = ["--root", str(project)]
    assert run(capsys, *root, "sessions", "ingest", *map(str, transcripts))[0] == 0

    code, out, _ = run(capsys, *root, "sessions", "list", "--json")
    assert [s["session_id"] for s in json.loads(out)] == ["compacted", "basic"]  # most recent first
    code, out, _ = run(capsys, *root, "sessions", "show", "basic", "--turns", "3-4", "--json")
    shown = json.loads(out)
    assert [t["n"] for t in shown["turns"]] == [3, 4] and "full jitter" in shown["turns"][0]["text"]
    code, out, _ = run(capsys, *root, "sessions", "show", "basic")
    assert out.startswith("Retry backoff for the HTTP client") and "[9]" in out
    code, _, err = run(capsys, *root, "sessions", "show", "basic", "--turns", "5-2")
    assert code == 1 and "turns" in err
    code, _, err = run(capsys, *root, "sessions", "show", "ghost")
    assert code == 1 and "not found" in err

    code, out, _ = run(capsys, *root, "sessions", "forget", "basic")
    assert code == 0 and "forgot basic" in out
    assert not (project / ".autology" / "sessions" / "basic.jsonl").exists()
    assert search_sessions(project, "exponential backoff jitter") == []
    code, out, _ = run(capsys, *root, "sessions", "ingest", str(transcripts[0]), "--json")
    assert json.loads(out)["ingested"][0]["mode"] == "forgotten"  # never stored again
    assert not (project / ".autology" / "sessions" / "basic.jsonl").exists()
    code, out, _ = run(capsys, *root, "sessions", "list", "--json")
    assert [s["session_id"] for s in json.loads(out)] == ["compacted"]
