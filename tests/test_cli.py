"""The `autology` command line (autology_mcp.cli.main.main): --root, --json output, exit codes."""

from __future__ import annotations

import io
import json

import pytest
from core_helpers import ADR, assert_graph_index_matches_files, relations_in_files, snapshot

from autology_mcp.cli.main import main


@pytest.fixture
def cli(root, capsys):
    """Run ``autology --root ROOT ARGS...``; returns (exit code, stdout, stderr)."""

    def run(*args: str):
        code = main(["--root", str(root), *args])
        out, err = capsys.readouterr()
        return code, out, err

    return run


def run_json(cli, *args):
    code, out, err = cli(*args, "--json")
    assert code == 0, err
    return json.loads(out)


def test_init(cli, root):
    code, out, _ = cli("init")
    assert code == 0
    assert "✓ autology store ready" in out
    assert (root / ".autology" / "nodes" / "decisions").is_dir()
    assert cli("init")[0] == 0  # idempotent


def test_capture_query_show_status(cli, root):
    data = run_json(cli, "capture", "Use SQLite FTS5", "--type", "decision", "--content", ADR, "--tag", "search")
    assert set(data) == {"id", "type", "confidence", "warnings"}
    assert (data["type"], data["confidence"], data["warnings"]) == ("decision", 0.9, [])
    node_id = data["id"]
    assert (root / ".autology" / "nodes" / "decisions" / f"{node_id}.md").is_file()

    code, out, _ = cli("capture", "Flaky upload test", "-c", "Bug: the upload test fails intermittently.")
    assert code == 0 and out.startswith("✓ Captured issue ") and "(confidence 0.7)" in out

    hits = run_json(cli, "query", "sqlite")
    assert [h["node"]["id"] for h in hits] == [node_id]
    assert 0 < hits[0]["score"] <= 1
    code, out, _ = cli("query", "sqlite")
    assert code == 0 and "Use SQLite FTS5" in out and node_id in out and "#search" in out
    assert run_json(cli, "query", "--type", "issue", "--limit", "5")[0]["node"]["type"] == "issue"
    assert [h["score"] for h in run_json(cli, "query")] == [None, None]  # a listing: no made-up score
    assert cli("query", "zebra")[1].strip() == "no matching nodes"

    node = run_json(cli, "show", node_id)
    assert node["id"] == node_id and node["tags"] == ["search"]
    code, out, _ = cli("show", node_id)
    assert out.startswith("---\nid: ") and "# Use SQLite FTS5" in out

    status = run_json(cli, "status")
    assert status["totalNodes"] == 2 and status["nodesByType"]["decision"] == 1
    code, out, _ = cli("status")
    assert out.startswith("2 nodes, 0 relations") and "decision 1" in out


def test_status_of_an_empty_store(cli):
    cli("init")  # an empty store, not a folder without one (that is refused: see below)
    code, out, _ = cli("status")
    assert code == 0
    assert "0 nodes, 0 relations" in out
    assert "nodes:     -" in out and "relations: -" in out


def test_capture_content_from_stdin_and_file(cli, root, tmp_path, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("From standard input."))
    data = run_json(cli, "capture", "Stdin", "--type", "concept", "--content-file", "-")
    assert run_json(cli, "show", data["id"])["content"] == "From standard input."
    body = tmp_path / "body.md"
    body.write_text("From a file.\n")
    data = run_json(cli, "capture", "File", "-t", "concept", "-f", str(body))
    assert run_json(cli, "show", data["id"])["content"] == "From a file."


def test_update_relate_unrelate_delete(cli, root):
    a = run_json(cli, "capture", "A", "-t", "component", "-c", "a")["id"]
    b = run_json(cli, "capture", "B", "-t", "component", "-c", "b")["id"]
    assert run_json(cli, "update", a, "--title", "A2", "--tag", "x", "--tag", "y") == {
        "message": "✓ Updated: A2 (component)\nFields changed: title, tags"
    }
    assert run_json(cli, "show", a)["tags"] == ["x", "y"]
    code, out, _ = cli("update", a, "--clear-tags")
    assert code == 0 and "Fields changed: tags" in out
    assert run_json(cli, "show", a)["tags"] == []

    code, out, _ = cli("relate", a, "uses", b, "-d", "A calls B", "--confidence", "0.7")
    assert (code, out.strip()) == (0, f"✓ Related: {a} (A2) —[uses]→ {b} (B)")  # titles beside ids
    assert relations_in_files(root) == {(a, b, "uses", "A calls B", 0.7)}
    assert_graph_index_matches_files(root)
    code, out, _ = cli("unrelate", a, "uses", b)
    assert (code, out.strip()) == (0, f"✓ Removed relation: {a} (A2) —[uses]→ {b} (B)")
    assert relations_in_files(root) == set()

    cli("relate", b, "depends_on", a)
    code, out, _ = cli("delete", a)
    assert (code, out.strip()) == (0, "✓ Deleted: A2 (component)\nRelations removed: 1")
    assert relations_in_files(root) == set()
    assert_graph_index_matches_files(root)


def test_rebuild(cli, root):
    a = run_json(cli, "capture", "Alpha", "-t", "concept", "-c", "alpha")["id"]
    (root / ".autology" / "nodes" / "concepts" / "bad.md").write_text("nope")
    data = run_json(cli, "rebuild")
    assert (data["files"], data["nodes"]) == (2, 1)
    assert data["malformed"][0]["path"] == ".autology/nodes/concepts/bad.md"
    code, out, _ = cli("rebuild")
    assert code == 0 and "✓ rebuilt" in out and "✗ skipped .autology/nodes/concepts/bad.md" in out
    assert [h["node"]["id"] for h in run_json(cli, "query", "alpha")] == [a]


def test_doctor_exit_codes(cli, root):
    a = run_json(cli, "capture", "Alpha", "-t", "concept", "-c", "alpha")["id"]
    code, out, _ = cli("doctor")
    assert code == 0 and "✓ no problems found" in out
    assert run_json(cli, "doctor")["ok"] is True
    (root / ".autology" / "nodes" / "concepts" / "bad.md").write_text("nope")
    code, out, _ = cli("doctor")
    assert code == 1 and "[malformed]" in out
    assert a


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["update", "../../etc/passwd", "--title", "x"], "Node not found: '../../etc/passwd' (no node has this id, id prefix or title)"),
        (["update", "3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f", "--title", "x"], "Node not found"),
        (["delete", "3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f"], "Node not found"),
        (["capture", "T", "-t", "decision", "-c", "no sections"], "missing section(s)"),
        (["capture", "T", "-t", "concept", "-c", "x", "--tag", "Bad Tag"], "Invalid tags"),
        (["capture", "T", "-t", "concept", "-c", "x", "-r", "../../x"], "inside the project"),
        (["capture", "T", "-t", "concept", "-c", "x", "--confidence", "0.3"], "below the minimum"),
        (["query", "x", "--limit", "500"], "Invalid limit"),
        (["relate", "3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f", "uses", "../x"], "Node not found: '../x'"),
        (["show", "nope"], "Node not found: 'nope'"),
    ],
)
def test_errors_exit_1_with_a_message_and_change_nothing(cli, root, args, message):
    cli("init")
    before = snapshot(root)
    code, out, err = cli(*args)
    assert code == 1
    assert err.startswith("error: ") and message in err
    assert out == ""
    assert snapshot(root) == before


@pytest.mark.parametrize(
    "args",
    [
        ["capture"],
        ["capture", "T", "--type", "idea", "-c", "x"],
        ["relate", "a", "likes", "b"],
        ["query", "--limit", "ten"],
        ["no-such-command"],
    ],
)
def test_usage_errors_exit_2(root, args, capsys):
    with pytest.raises(SystemExit) as info:
        main(["--root", str(root), *args])
    assert info.value.code == 2
    assert "usage:" in capsys.readouterr().err


def test_capture_without_content_is_a_usage_error(cli, root):
    code, out, err = cli("capture", "No content", "-t", "concept")
    assert code == 2
    assert "--content" in err
    assert not (root / ".autology" / "nodes" / "concepts").exists() or not any(
        (root / ".autology" / "nodes" / "concepts").iterdir()
    )


def test_no_command_prints_help_and_exits_2(capsys):
    assert main([]) == 2
    assert "usage:" in capsys.readouterr().err


def test_root_from_the_environment(root, capsys, monkeypatch):
    monkeypatch.setenv("AUTOLOGY_ROOT", str(root))
    assert main(["capture", "Env root", "-t", "concept", "-c", "x", "--json"]) == 0
    node_id = json.loads(capsys.readouterr().out)["id"]
    assert (root / ".autology" / "nodes" / "concepts" / f"{node_id}.md").is_file()


def test_capture_from_a_hook_with_session(cli, root):
    data = run_json(
        cli, "capture", "Commit summary", "-t", "session", "-c", "Committed the parser.",
        "--source", "hook_post_commit", "--session", "s-42",
    )  # fmt: skip
    assert data["confidence"] == 0.85
    node = run_json(cli, "show", data["id"])
    assert (node["source"], node["session"]) == ("hook_post_commit", "s-42")
    code, _, err = cli("capture", "X", "-t", "session", "-c", "x", "--source", "robot")
    assert code == 1 and "Invalid source" in err


def test_a_title_with_line_breaks_is_joined_with_a_warning_as_over_mcp(cli, root):
    """Issue 29: `autology capture` and `autology update` behave as the MCP tools do."""
    code, out, err = cli("capture", "Evil\n---\nid: evil\n---", "-t", "concept", "-c", "Body.")
    assert code == 0, err
    assert "\n  Warning: " in out and "stored as 'Evil --- id: evil ---'" in out
    data = run_json(cli, "capture", "Second\nline", "-t", "concept", "-c", "Body.")
    assert len(data["warnings"]) == 1 and "stored as 'Second line'" in data["warnings"][0]
    assert run_json(cli, "show", data["id"])["title"] == "Second line"
    code, out, err = cli("update", data["id"], "--title", "Third\nline")
    assert code == 0, err
    assert out.startswith("✓ Updated: Third line (concept)\nFields changed: title\nWarning: ") and "'Third line'" in out


def test_commands_take_an_id_prefix_or_a_title_and_refuse_an_ambiguous_one(cli, root):
    """Issue 14: `autology relate 34f7df65 affects 7e44e9cb` was refused; only full UUIDs worked."""
    gateway = run_json(cli, "capture", "API gateway", "-t", "component", "-c", "routes requests")["id"]
    auth = run_json(cli, "capture", "Auth service", "-t", "component", "-c", "issues tokens")["id"]
    code, out, err = cli("relate", gateway[:8], "uses", "auth service")  # a prefix and a title, case aside
    assert code == 0, err
    assert out.strip() == f"✓ Related: {gateway} (API gateway) —[uses]→ {auth} (Auth service)"
    assert run_json(cli, "show", "API gateway")["id"] == gateway
    code, out, _ = cli("graph", "neighbours", gateway[:6])
    assert code == 0 and "Auth service" in out
    cli("capture", "Auth service", "-t", "concept", "-c", "the idea of it")  # a second node with that title
    code, _, err = cli("show", "Auth service")
    assert code == 1 and "2 nodes are titled 'Auth service'" in err and auth[:8] in err
    code, _, err = cli("show", gateway[:5])  # under 6 characters: not taken as a prefix
    assert code == 1 and "Node not found" in err


def test_read_commands_in_a_folder_without_a_store_say_so_and_create_nothing(cli, root):
    """Issue 16: status, query, show, search, doctor and analyze created .autology/ where there was none
    (and so did context, the graph walks and export, and sessions insights)."""
    for args in (
        ["status"], ["query", "x"], ["query"], ["show", "abc123"], ["search", "x"], ["doctor"], ["analyze"],
        ["context", "x"], ["graph", "export"], ["graph", "neighbours", "abc123"], ["graph", "path", "abc123", "def456"],
        ["graph", "impact", "abc123"], ["graph", "supersession", "abc123"], ["sessions", "insights"],
    ):
        code, _, err = cli(*args)
        assert code == 1 and "no autology store here" in err and "autology init" in err and "Storage error" not in err, args
    assert not (root / ".autology").exists()


def test_version(capsys):
    from autology_mcp import __version__

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out.strip() == f"autology {__version__}"


def test_a_capture_without_a_clear_type_is_stored_for_review_and_says_so(cli, root):
    """Issue 16: an omitted type always classifies; an unsure one is stored as needs_review, a reference to
    a missing file and a duplicate title are accepted with a warning in the output."""
    cli("init")
    code, out, _ = cli("capture", "Misc", "-c", "Some text.", "--reference", "src/nowhere.py")
    assert code == 0 and out.startswith("✓ Captured concept ") and "(confidence 0.7)" in out
    assert "Warning: the type was unclear" in out and "status needs_review" in out
    assert "Warning: reference 'src/nowhere.py': no such file or folder" in out
    code, out, _ = cli("capture", "misc", "-c", "Other text.", "--type", "concept")
    assert code == 0 and "Warning: another node already has this title" in out and "'Misc'" in out


ORDINARY_TITLES = [  # issue 16: each was refused ("could not classify") when captured without a type
    "A" * 100, "key: value # {weird} [yaml]", "123", "2026-01-01", "Ünïcödé ñ", "🙂 emoji 👩‍👩‍👧", "مرحبا بالعالم",
    "- list item",
]  # fmt: skip


@pytest.mark.parametrize("title", ORDINARY_TITLES)
def test_an_ordinary_capture_without_a_type_always_succeeds(cli, root, title):
    cli("init")
    data = run_json(cli, "capture", title, "-c", f"Some ordinary text about {title}.")
    assert data["confidence"] == 0.7 and data["type"] == "concept"
    assert run_json(cli, "show", data["id"])["title"] == title
