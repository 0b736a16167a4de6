"""The CLI as a person meets it (issue 16): help on every argument, ``--root`` after the command
too, one spelling for output files, ``delete`` that asks on a terminal, an empty query that says it
lists recent nodes."""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from autology_mcp.cli.main import build_parser, main


def _parsers(parser: argparse.ArgumentParser, path: str = "autology"):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _parsers(child, f"{path} {name}")


def test_every_argument_of_every_command_has_help():
    missing = [
        f"{path}: {action.dest}"
        for path, parser in _parsers(build_parser())
        for action in parser._actions
        if not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)) and not action.help
    ]
    assert missing == []


def test_every_command_takes_root_after_its_name_too():
    for path, parser in _parsers(build_parser()):
        assert any("--root" in a.option_strings for a in parser._actions), path
    args = build_parser().parse_args(["serve", "--root", "/tmp/x"])
    assert args.root == "/tmp/x"
    args = build_parser().parse_args(["--root", "/tmp/y", "index", "status"])
    assert args.root == "/tmp/y"  # given before the command, not overwritten by the subcommand's default
    args = build_parser().parse_args(["index", "status", "--root", "/tmp/z"])
    assert args.root == "/tmp/z"


def test_output_files_are_spelled_o_output_everywhere():
    for path, parser in _parsers(build_parser()):
        for action in parser._actions:
            if action.dest in ("out", "output"):
                assert {"-o", "--output"} <= set(action.option_strings), path



def _capture(project: Path, title: str) -> str:
    out = io.StringIO()
    sys_stdout, sys.stdout = sys.stdout, out
    try:
        assert main(["--root", str(project), "capture", title, "-t", "concept", "-c", "x", "--json"]) == 0
    finally:
        sys.stdout = sys_stdout
    return json.loads(out.getvalue())["id"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    root.mkdir()
    assert main(["--root", str(root), "init", "--no-git"]) == 0
    return root


def test_delete_asks_on_a_terminal_and_not_with_yes(project: Path, monkeypatch, capsys):
    node = _capture(project, "Keep me")
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True, raising=False)
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    assert main(["--root", str(project), "delete", node[:8]]) == 1
    assert "not deleted" in capsys.readouterr().err
    assert (project / ".autology" / "nodes" / "concepts" / f"{node}.md").is_file()
    asked = []
    monkeypatch.setattr("builtins.input", lambda prompt: asked.append(prompt) or "y")
    assert main(["--root", str(project), "delete", node[:8]]) == 0
    assert "Keep me" in asked[0] and "[y/N]" in asked[0]
    other = _capture(project, "Gone without asking")
    monkeypatch.setattr("builtins.input", lambda prompt: pytest.fail("--yes must not ask"))
    assert main(["--root", str(project), "delete", other, "--yes"]) == 0
    assert not (project / ".autology" / "nodes" / "concepts" / f"{other}.md").exists()


def test_delete_in_a_pipe_does_not_block(project: Path):
    node = _capture(project, "Scripted")
    done = subprocess.run([sys.executable, "-m", "autology_mcp", "--root", str(project), "delete", node],
                          stdin=subprocess.PIPE, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "Deleted: Scripted" in done.stdout


def test_an_empty_query_says_it_lists_recent_nodes_without_scores(project: Path, capsys):
    _capture(project, "First")
    _capture(project, "Second")
    capsys.readouterr()
    assert main(["--root", str(project), "query"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("no search text: the 2 most recently modified nodes")
    assert "1.00" not in out and "Second" in out
    assert main(["--root", str(project), "query", "first"]) == 0
    assert "no search text" not in capsys.readouterr().out
