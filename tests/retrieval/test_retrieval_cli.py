"""`autology search` and `autology context`: pretty by default, --json is the tool's answer."""

from __future__ import annotations

import json

import jsonschema
import pytest
from retrieval_fixtures import project  # noqa: F401
from test_bundle import SCHEMA

from autology_mcp.cli.main import main


def cli(project, capsys, *args):
    code = main(["--root", str(project.root), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_search_pretty(project, capsys):
    code, out, err = cli(project, capsys, "search", "websocket", "reconnect", "backoff", "-n", "3")
    assert code == 0, err
    first = out.split("\n", 1)[0]
    assert first.startswith("✓ grounded — 3 hit(s) for 'websocket reconnect backoff'")
    assert "decision: Reconnect websockets with exponential backoff" in out
    assert "code: src/net/websocket.py:" in out
    assert "│ " in out and "trace: node_bm25" in out


def test_search_json_matches_the_engine(project, capsys):
    code, out, _ = cli(project, capsys, "search", "integer", "cents", "--scope", "nodes", "--json")
    assert code == 0
    answer = json.loads(out)
    assert answer["hits"][0]["node_id"] == project.ids["cents"]
    assert answer["trace"]["scope"] == ["nodes"]


def test_search_no_evidence_pretty(project, capsys):
    code, out, _ = cli(project, capsys, "search", "quantum", "teleportation")
    assert code == 0
    assert out.startswith("✗ no evidence")
    assert 'The project memory does not know about "quantum teleportation"' in out
    code, out, _ = cli(project, capsys, "search", "our", "quantum", "teleportation")
    assert 'No decision is recorded about "our quantum teleportation"' in out


def test_search_errors(project, capsys):
    code, _, err = cli(project, capsys, "search", "websocket", "--max-tokens", "5")
    assert code == 1 and "max_tokens" in err
    with pytest.raises(SystemExit) as usage:
        cli(project, capsys, "search", "websocket", "--scope", "wiki")
    assert usage.value.code == 2


def test_context_pretty_and_json(project, capsys):
    code, out, err = cli(project, capsys, "context", "change", "the", "websocket", "backoff", "--module", "src/net")
    assert code == 0, err
    assert out.startswith("autology_bundle_v1 for 'change the websocket backoff' (module src/net)")
    assert "decisions:" in out and "code and docs:" in out
    code, out, _ = cli(project, capsys, "context", "invoice", "cents", "--json", "--max-tokens", "800")
    assert code == 0
    bundle = json.loads(out)
    jsonschema.Draft202012Validator(SCHEMA).validate(bundle)
    assert bundle["cut"]["used_tokens"] <= 800
