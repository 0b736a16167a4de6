"""``autology setup <agent>``: on projects that already have their own configuration for each agent, nothing
of the user's is lost, a second run changes nothing, the hooks it writes run, and ``--remove`` gives back the
files byte for byte."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from autology_mcp.cli.main import main
from autology_mcp.setup.agents import AGENTS, INSTRUCTIONS_FILE
from autology_mcp.setup.edits import block_edit, is_ours

# Each agent's files as a user might already have them: odd formatting, their own hooks and servers,
# a file without a final line break.
USER_FILES = {
    "claude-code": {
        ".mcp.json": '{"mcpServers": {"github": {"command": "gh-mcp", "args": []}}}',
        ".claude/settings.json": '{\n    "permissions": {"allow": ["Bash(npm test)"]},\n    "hooks": {"PostToolUse": '
                                 '[{"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh"}]}]}\n}\n',
        "CLAUDE.md": "# Project\n\nUse tabs.",
    },
    "codex": {
        ".codex/config.toml": '# mine\nmodel = "o3"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n\n[profiles.fast]\nmodel="x"',
        ".codex/hooks.json": '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],'
                             ' "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./audit"}]}]}}',
        "AGENTS.md": "# Agents\n\nRun `make test` before committing.\n",
    },
    "gemini": {
        ".gemini/settings.json": '{"ui": {"theme": "GitHub"}, "mcpServers": {"db": {"command": "db-mcp"}},\n'
                                 ' "hooks": {"BeforeAgent": [{"matcher": "", "hooks": [{"name": "mine", "type": '
                                 '"command", "command": "./guard.sh", "timeout": 5000}]}]}}\n',
        "GEMINI.md": "Answer in French.\n",
    },
    "copilot": {
        ".mcp.json": '{\n  "mcpServers": {\n    "web": {"type": "http", "url": "https://example.com/mcp"}\n  }\n}\n',
        ".github/hooks/security.json": '{"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "./check"}]}}',
        ".github/copilot-instructions.md": "Prefer small functions.\n",
    },
}


def autology(root: Path, *args: str) -> int:
    return main(["--root", str(root), "setup", *args])


def project(tmp_path: Path, agent: str) -> Path:
    root = tmp_path / "project"
    for rel, text in USER_FILES[agent].items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / ".autology").mkdir(parents=True, exist_ok=True)
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.relative_to(root).as_posix().startswith(".autology/")}


def ours_everywhere(root: Path, agent: str) -> list[str]:
    """Every hook command autology wrote, whatever the file."""
    text = "\n".join(p.read_text() for p in root.rglob("*.json") if ".autology" not in p.parts)
    return [line for line in text.splitlines() if f"--agent {agent}" in line]


@pytest.mark.parametrize("agent", AGENTS)
def test_setup_keeps_the_users_configuration_and_remove_restores_it_byte_for_byte(
        tmp_path: Path, agent: str, capsys: pytest.CaptureFixture[str]) -> None:
    root = project(tmp_path, agent)
    before = snapshot(root)
    assert autology(root, agent, "--yes") == 0
    shown = capsys.readouterr().out
    assert "Setting up autology for" in shown and "+++ b/" in shown  # the diff, before writing
    after = snapshot(root)
    # every file of the user's is still there, with every entry of theirs
    for rel, text in USER_FILES[agent].items():
        if rel.endswith(".json"):
            old, new = json.loads(text), json.loads(after[rel])
            for key, value in old.items():
                if key == "hooks":
                    for event, entries in value.items():
                        assert new["hooks"][event][: len(entries)] == entries
                elif key == "mcpServers":
                    assert all(new["mcpServers"][k] == v for k, v in value.items())
                else:
                    assert new[key] == value
        else:
            assert after[rel].startswith(text.encode())  # text files: the user's text, then our block
    assert ours_everywhere(root, agent)
    instructions = after[INSTRUCTIONS_FILE[agent]].decode()
    assert "autology_search" in instructions and "autology_capture" in instructions
    # a second run changes nothing
    assert autology(root, agent, "--yes") == 0
    assert "already set up, nothing to change" in capsys.readouterr().out
    assert snapshot(root) == after
    # --remove gives back the exact bytes, and removes the files and folders it created
    assert autology(root, agent, "--remove", "--yes") == 0
    assert snapshot(root) == before
    assert not (root / ".autology" / "local" / "setup.json").exists()
    assert autology(root, agent, "--remove", "--yes") == 0
    assert "nothing to take out" in capsys.readouterr().out.splitlines()[-1]


@pytest.mark.parametrize("agent", AGENTS)
def test_setup_in_an_empty_project_and_remove_leaves_nothing(tmp_path: Path, agent: str) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    assert autology(root, agent, "--yes") == 0
    assert (root / ".autology" / "nodes").is_dir()  # the knowledge graph was created too
    assert autology(root, agent, "--remove", "--yes") == 0
    assert snapshot(root) == {}
    assert sorted(p.name for p in root.iterdir()) == [".autology"]


def test_remove_after_the_user_changed_the_files_keeps_their_changes(tmp_path: Path) -> None:
    root = project(tmp_path, "codex")
    assert autology(root, "codex", "--yes") == 0
    hooks = json.loads((root / ".codex/hooks.json").read_text())
    hooks["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "./later"}]})
    (root / ".codex/hooks.json").write_text(json.dumps(hooks))
    with (root / "AGENTS.md").open("a") as f:
        f.write("\nA line added after setup.\n")
    assert autology(root, "codex", "--remove", "--yes") == 0
    hooks = json.loads((root / ".codex/hooks.json").read_text())
    assert [h["hooks"][0]["command"] for h in hooks["hooks"]["Stop"]] == ["notify-send done", "./later"]
    assert not any(is_ours(e) for entries in hooks["hooks"].values() for e in entries)
    assert set(hooks["hooks"]) == {"Stop", "PostToolUse"}
    text = (root / "AGENTS.md").read_text()
    assert "autology" not in text and text.startswith(USER_FILES["codex"]["AGENTS.md"]) and "added after" in text
    # the TOML file was not touched by the user: its exact bytes come back
    assert (root / ".codex/config.toml").read_text() == USER_FILES["codex"][".codex/config.toml"]


def test_nothing_is_written_without_yes_off_a_terminal_or_on_a_dry_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    root = project(tmp_path, "gemini")
    before = snapshot(root)
    monkeypatch.setattr(sys, "stdin", open("/dev/null"))
    assert autology(root, "gemini") == 1
    assert "run again with --yes" in capsys.readouterr().err
    assert autology(root, "gemini", "--dry-run") == 0
    out = capsys.readouterr().out
    assert "== .gemini/settings.json: update" in out and "(dry run: nothing written)" in out
    assert snapshot(root) == before


def test_a_file_that_is_not_json_is_never_rewritten(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = project(tmp_path, "gemini")
    (root / ".gemini/settings.json").write_text('{"ui": {"theme": "GitHub"},}  // trailing comma\n')
    before = snapshot(root)
    assert autology(root, "gemini", "--yes") == 1
    assert "Invalid .gemini/settings.json: not valid JSON" in capsys.readouterr().err
    assert snapshot(root) == before


def test_claude_code_and_copilot_share_the_server_entry(tmp_path: Path) -> None:
    root = tmp_path / "both"
    root.mkdir()
    assert autology(root, "claude-code", "--yes") == 0
    assert autology(root, "copilot", "--yes") == 0
    assert autology(root, "copilot", "--remove", "--yes") == 0
    assert "autology" in json.loads((root / ".mcp.json").read_text())["mcpServers"]  # Claude Code still uses it
    assert not (root / ".github").exists()
    assert autology(root, "claude-code", "--remove", "--yes") == 0
    assert snapshot(root) == {}


@pytest.mark.parametrize("agent, file, event, payload", [
    ("codex", ".codex/hooks.json", "UserPromptSubmit",
     {"session_id": "s", "hook_event_name": "UserPromptSubmit", "prompt": "How do retries back off?"}),
    ("gemini", ".gemini/settings.json", "BeforeAgent",
     {"session_id": "s", "hook_event_name": "BeforeAgent", "prompt": "How do retries back off?"}),
    ("copilot", ".github/hooks/autology.json", "userPromptSubmitted",
     {"sessionId": "s", "timestamp": 1, "prompt": "How do retries back off?"}),
])
def test_the_hook_commands_written_run(tmp_path: Path, agent: str, file: str, event: str, payload: dict) -> None:
    root = tmp_path / "p"
    root.mkdir()
    assert autology(root, agent, "--yes") == 0
    from autology_mcp.knowledge.service import Autology

    service = Autology.open(root)
    node = service.capture("Retries back off exponentially", "## Context\nc\n\n## Decision\nRetries back off "
                           "exponentially.\n\n## Alternatives\na\n\n## Consequences\nc", type="decision").id
    service.close()
    entries = json.loads((root / file).read_text())["hooks"][event]
    command = entries[0]["bash"] if agent == "copilot" else entries[0]["hooks"][0]["command"]
    done = subprocess.run(command, shell=True, input=json.dumps(payload | {"cwd": str(root)}), text=True,
                          capture_output=True, cwd=root, timeout=60)
    assert done.returncode == 0, done.stderr
    assert node in done.stdout


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200))
def test_a_block_taken_out_gives_back_the_same_bytes(text: str) -> None:
    add = block_edit("<!-- a -->", "<!-- b -->", "body\n")
    remove = block_edit("<!-- a -->", "<!-- b -->", None)
    data = text.encode("utf-8")
    added = add(data)
    assert add(added) == added  # idempotent
    assert remove(added) == data or (not data and remove(added) is None)


@pytest.mark.parametrize("first, second", [("claude-code", "codex"), ("codex", "claude-code")])
@pytest.mark.parametrize("remove_first", [True, False])
def test_a_linked_instructions_file_gets_one_block_and_stays_a_link(
        tmp_path: Path, first: str, second: str, remove_first: bool) -> None:
    """CLAUDE.md is a link to AGENTS.md (as in colinhacks/zod): one block for both agents, written
    through the link, kept while either agent is set up, and the link and its target come back as they were."""
    root = tmp_path / "linked"
    root.mkdir()
    (root / "AGENTS.md").write_text("# Agents\n\nUse pnpm.\n")
    (root / "CLAUDE.md").symlink_to("AGENTS.md")
    before = (root / "AGENTS.md").read_bytes()
    assert autology(root, first, "--yes") == 0
    assert autology(root, second, "--yes") == 0
    assert (root / "CLAUDE.md").is_symlink()
    assert (root / "AGENTS.md").read_text().count("## Project memory (autology)") == 1
    for agent in ((first, second) if remove_first else (second, first)):
        assert autology(root, agent, "--remove", "--yes") == 0
        if agent != (second if remove_first else first):
            assert "## Project memory (autology)" in (root / "AGENTS.md").read_text()  # the other still uses it
    assert (root / "CLAUDE.md").is_symlink() and (root / "AGENTS.md").read_bytes() == before


def test_a_link_out_of_the_project_is_left_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "p"
    root.mkdir()
    outside = tmp_path / "elsewhere.md"
    outside.write_text("shared notes\n")
    (root / "GEMINI.md").symlink_to(outside)
    assert autology(root, "gemini", "--yes") == 1
    err = capsys.readouterr().err
    assert "Invalid GEMINI.md: a link to" in err and "outside the project" in err
    assert outside.read_text() == "shared notes\n" and not (root / ".gemini").exists()


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)


@given(st.dictionaries(st.text(max_size=10), JSON, max_size=5), st.sampled_from(["  ", "    ", "\t"]))
def test_json_is_written_back_with_the_same_values(value: dict, indent: str) -> None:
    from autology_mcp.setup.edits import dump_json, indent_of

    data = dump_json(value, indent)
    assert json.loads(data) == value
    assert data.endswith(b"\n")
    if value:  # the file's own indentation is found again
        assert indent_of(data) == indent


def test_the_autology_command_is_named_when_it_is_this_installation(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With this installation's `autology` on PATH (pip/pipx), the files name `autology`, portable to a
    teammate who installed it too; otherwise this interpreter by absolute path."""
    from autology_mcp.setup.apply import commands

    script = Path(sys.executable).with_name("autology")
    if not script.exists():
        pytest.skip("no autology script beside this interpreter")
    monkeypatch.setenv("PATH", f"{script.parent}:/usr/bin:/bin")
    assert commands() == (["autology"], ["autology"])
    root = tmp_path / "p"
    root.mkdir()
    assert autology(root, "copilot", "--yes") == 0
    entry = json.loads((root / ".github/hooks/autology.json").read_text())["hooks"]["userPromptSubmitted"][0]
    assert entry["bash"] == "autology hook --agent copilot user-prompt-submit"
    assert json.loads((root / ".mcp.json").read_text())["mcpServers"]["autology"] == {"command": "autology",
                                                                                    "args": ["serve"]}
    done = subprocess.run(entry["bash"], shell=True, input=json.dumps({"sessionId": "s", "cwd": str(root),
                          "prompt": "How do retries back off?"}), text=True, capture_output=True, cwd=root, timeout=60)
    assert done.returncode == 0, done.stderr  # the command runs (nothing to say: the store is empty)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert commands() == ([sys.executable, "-m", "autology_mcp.hooks"], [sys.executable, "-m", "autology_mcp"])


def test_gemini_names_each_hook_by_its_event(tmp_path: Path) -> None:
    """Gemini CLI's status line says "Executing Hooks: <names>": one name per event, not "autology" for all
    (issue 39, seen under tmux)."""
    root = tmp_path / "p"
    root.mkdir()
    assert autology(root, "gemini", "--yes") == 0
    hooks = json.loads((root / ".gemini/settings.json").read_text())["hooks"]
    names = {event: [h["name"] for group in groups for h in group["hooks"]] for event, groups in hooks.items()}
    assert names["SessionStart"] == ["autology session-start"] and names["BeforeAgent"] == ["autology user-prompt-submit"]
    assert all(name.startswith("autology ") for found in names.values() for name in found)
    assert len({name for found in names.values() for name in found}) == sum(len(found) for found in names.values())
