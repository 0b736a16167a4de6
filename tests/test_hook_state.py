"""Whether each agent set up in a project will run autology's hooks (issue 39, autology_mcp/setup/hook_state.py):
for each agent, its own configuration files written in a temporary home in the agent's own format (the
forms the real CLIs wrote when driven under tmux: Codex CLI 0.171.0, Gemini CLI 0.61.0, Copilot CLI
1.0.102, Claude Code 2.1.197), the trust state set both ways, and `autology doctor` / `autology setup`
saying "hooks run" or "hooks off" with the step that turns them on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from autology_mcp.cli.main import main
from autology_mcp.setup import hook_state as hs
from autology_mcp.setup.agents import HOOKS_FILE

HOME_VARS = ("HOME", "CODEX_HOME", "GEMINI_CLI_HOME", "GEMINI_CLI_TRUSTED_FOLDERS_PATH", "GEMINI_CLI_TRUST_WORKSPACE",
             "GEMINI_RESTRICTED_MODE", "GEMINI_CLI_SYSTEM_SETTINGS_PATH", "COPILOT_HOME", "COPILOT_ALLOW_ALL",
             "CLAUDE_CONFIG_DIR")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty home for every agent: HOME, and no other variable that moves an agent's files."""
    home = tmp_path / "home"
    home.mkdir()
    for var in HOME_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH", str(tmp_path / "no-system-settings.json"))
    return home


def setup(tmp_path: Path, *agents: str) -> Path:
    root = tmp_path / "project"
    root.mkdir(exist_ok=True)
    for agent in agents:
        assert main(["--root", str(root), "setup", agent, "--yes"]) == 0
    return root


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def doctor(root: Path, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(["--root", str(root), "doctor"]) == 0
    return capsys.readouterr().out


def doctor_json(root: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, dict]:
    capsys.readouterr()
    main(["--root", str(root), "doctor", "--json"])
    return {h["agent"]: h for h in json.loads(capsys.readouterr().out)["hooks"]}


# --- Codex ----------------------------------------------------------------------------------------------


def codex_config(home: Path, root: Path, *, trust: str | None = "trusted", reviewed: bool = True,
                 disabled: str | None = None, hashes: dict[str, str] | None = None) -> Path:
    """~/.codex/config.toml as Codex 0.171.0 writes it: "Trust and continue" adds the [projects] table,
    "Trust all and continue" (or /hooks, t) one [hooks.state."<hooks.json>:<event>:0:0"] per hook,
    toggling a hook off in /hooks adds enabled = false."""
    hooks = json.loads((root / ".codex" / "hooks.json").read_text())["hooks"]
    text = 'model = "o3"\n'
    if trust:
        text += f'\n[projects.{json.dumps(str(root))}]\ntrust_level = "{trust}"\n'
    if reviewed:
        text += "\n[hooks.state]\n"
        for event, groups in hooks.items():
            key = f"{root / '.codex' / 'hooks.json'}:{hs._snake(event)}:0:0"
            handler = groups[0]["hooks"][0]
            digest = (hashes or {}).get(event) or hs.codex_hook_hash(event, groups[0].get("matcher"), handler)
            text += f'\n[hooks.state.{json.dumps(key)}]\ntrusted_hash = "{digest}"\n'
            if event == disabled:
                text += "enabled = false\n"
    return write(home / ".codex" / "config.toml", text)


# The hashes the real Codex CLI 0.171.0 wrote into hooks.state for the four hooks of `autology setup codex`
# (its "Trust all and continue"), with the hook commands naming this interpreter: /work/main/.venv/bin/python.
REAL_CODEX = {
    "SessionStart": ("startup|resume|clear|compact", "session-start",
                     "sha256:5a3092bf49b6296da443afd194c8cc9bb06f22a4265dff6c2f251dcc3febec5f"),
    "UserPromptSubmit": (None, "user-prompt-submit",
                         "sha256:8c025914898b8c96799c1441700e5220ffae904094d58a5702377537eb23e03a"),
    "PostToolUse": ("Bash|apply_patch|Edit|Write", "post-tool-use",
                    "sha256:c20e359e930f873d0cd0132ae75f998e0349806d2521f16d4b2c477c0e5b68f9"),
    "Stop": (None, "session-end", "sha256:e351b106073bb807027387da82ecbc70f14ac5fe9997358dd0f70ece5eca4710"),
}


@pytest.mark.parametrize("event", sorted(REAL_CODEX))
def test_codex_hook_hash_is_the_one_codex_wrote(event: str) -> None:
    matcher, ours, digest = REAL_CODEX[event]
    handler = {"type": "command", "command": f"/work/main/.venv/bin/python -m autology_mcp.hooks --agent codex {ours}",
               "timeout": 10}
    assert hs.codex_hook_hash(event, matcher, handler) == digest
    assert hs.codex_hook_hash(event, matcher, {**handler, "timeout": 11}) != digest  # a change is a new hash


def test_codex_runs_once_trusted_and_reviewed(tmp_path: Path, home: Path, capsys) -> None:
    root = setup(tmp_path, "codex")
    codex_config(home, root)
    out = doctor(root, capsys)
    assert "✓ codex: hooks run: project trusted and its 4 hooks reviewed" in out
    assert doctor_json(root, capsys)["codex"]["state"] == "runs"


def test_codex_off_when_the_project_is_not_trusted(tmp_path: Path, home: Path, capsys) -> None:
    root = setup(tmp_path, "codex")
    codex_config(home, root, trust=None)
    out = doctor(root, capsys)
    assert "✗ codex: hooks off: the project is not trusted" in out
    assert f"→ start `codex` in {root}, choose “Trust and continue”" in out
    codex_config(home, root, trust="untrusted")
    state = doctor_json(root, capsys)["codex"]
    assert state["state"] == "off" and "'untrusted'" in state["why"]
    assert f'set trust_level = "trusted" under [projects."{root}"]' in state["step"]


def test_codex_off_until_the_hooks_are_reviewed(tmp_path: Path, home: Path, capsys) -> None:
    root = setup(tmp_path, "codex")
    codex_config(home, root, reviewed=False)  # trusted (as `codex exec --trust` leaves it), hooks not reviewed
    out = doctor(root, capsys)
    assert "✗ codex: hooks off: the project is trusted, but SessionStart, UserPromptSubmit, PostToolUse, Stop not " \
           "reviewed" in out
    assert "choose “Trust all and continue” when it says “Hooks need review”" in out
    assert "`codex exec` skips unreviewed hooks silently" in out


def test_codex_off_when_a_hook_changed_since_review_or_was_turned_off(tmp_path: Path, home: Path, capsys) -> None:
    root = setup(tmp_path, "codex")
    codex_config(home, root, hashes={"Stop": "sha256:" + "0" * 64})  # reviewed before the command changed
    state = doctor_json(root, capsys)["codex"]
    assert state["state"] == "off" and "Stop changed since reviewed" in state["why"]
    codex_config(home, root, disabled="PostToolUse")
    state = doctor_json(root, capsys)["codex"]
    assert state["state"] == "off" and "PostToolUse turned off in /hooks" in state["why"]
    assert "open /hooks, turn them on (space)" in state["step"]


def test_codex_home_is_read_from_codex_home(tmp_path: Path, home: Path, capsys, monkeypatch) -> None:
    root = setup(tmp_path, "codex")
    elsewhere = tmp_path / "codex-home"
    codex_config(elsewhere / "x", root)  # writes elsewhere/x/.codex/config.toml
    monkeypatch.setenv("CODEX_HOME", str(elsewhere / "x" / ".codex"))
    assert doctor_json(root, capsys)["codex"]["state"] == "runs"
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "empty"))
    assert doctor_json(root, capsys)["codex"]["state"] == "off"


def test_codex_cannot_tell_from_a_broken_config(tmp_path: Path, home: Path, capsys) -> None:
    root = setup(tmp_path, "codex")
    write(home / ".codex" / "config.toml", "[projects\n")
    state = doctor_json(root, capsys)["codex"]
    assert state["state"] == "cannot tell" and "config.toml" in state["why"]


# --- Gemini ---------------------------------------------------------------------------------------------


def test_gemini_runs_in_a_trusted_folder_and_is_off_otherwise(tmp_path: Path, home: Path, capsys) -> None:
    root = setup(tmp_path, "gemini")
    out = doctor(root, capsys)
    assert "✗ gemini: hooks off: the folder is not trusted" in out
    assert f"→ start `gemini` in {root} and choose “Trust folder”" in out
    folders = home / ".gemini" / "trustedFolders.json"
    write(folders, json.dumps({str(root): "TRUST_FOLDER"}, indent=2))  # what "Trust folder" wrote (0.61.0)
    assert "✓ gemini: hooks run" in doctor(root, capsys)
    write(folders, json.dumps({str(tmp_path / "x"): "TRUST_PARENT"}))  # "Trust parent folder" from a sibling
    assert doctor_json(root, capsys)["gemini"]["state"] == "runs"
    write(folders, json.dumps({str(tmp_path): "TRUST_FOLDER", str(root): "DO_NOT_TRUST"}))  # the longest rule wins
    state = doctor_json(root, capsys)["gemini"]
    assert state["state"] == "off" and "DO_NOT_TRUST" in state["why"]


def test_gemini_settings_and_environment(tmp_path: Path, home: Path, capsys, monkeypatch) -> None:
    root = setup(tmp_path, "gemini")
    settings = home / ".gemini" / "settings.json"
    write(settings, '{\n  // mine\n  "security": {"folderTrust": {"enabled": false}}\n}\n')
    assert doctor_json(root, capsys)["gemini"]["state"] == "runs"  # folder trust not enforced
    write(settings, '{"hooksConfig": {"enabled": false}}')
    state = doctor_json(root, capsys)["gemini"]
    assert state["state"] == "off" and "hooksConfig.enabled is false" in state["why"]
    write(settings, '{"hooksConfig": {"disabled": ["autology"]}}')
    assert doctor_json(root, capsys)["gemini"]["state"] == "off"
    write(settings, "{}")
    monkeypatch.setenv("GEMINI_CLI_TRUST_WORKSPACE", "true")
    assert doctor_json(root, capsys)["gemini"]["state"] == "runs"
    monkeypatch.delenv("GEMINI_CLI_TRUST_WORKSPACE")
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "gh"))  # Gemini's home moves, its trustedFolders with it
    write(tmp_path / "gh" / ".gemini" / "trustedFolders.json", json.dumps({str(root): "TRUST_FOLDER"}))
    assert doctor_json(root, capsys)["gemini"]["state"] == "runs"
    write(tmp_path / "gh" / ".gemini" / "trustedFolders.json", json.dumps({str(root): "TRUST_EVERYTHING"}))
    assert doctor_json(root, capsys)["gemini"]["state"] == "off"  # Gemini refuses to start


# --- Copilot --------------------------------------------------------------------------------------------


def copilot_config(home: Path, folders: list[str]) -> Path:
    """$COPILOT_HOME/config.json as Copilot CLI 1.0.102 writes it ("Yes, and remember this folder")."""
    text = "// User settings belong in settings.json.\n// This file is managed automatically.\n"
    return write(home / ".copilot" / "config.json",
                 text + json.dumps({"firstLaunchAt": "2026-11-29T03:37:45.012Z", "trustedFolders": folders}, indent=2))


def test_copilot_runs_in_a_remembered_folder_and_is_off_otherwise(tmp_path: Path, home: Path, capsys) -> None:
    root = setup(tmp_path, "copilot")
    copilot_config(home, [str(tmp_path / "elsewhere")])
    out = doctor(root, capsys)
    assert "✗ copilot: hooks off: the folder is not among the trustedFolders" in out
    assert "choose “Yes, and remember this folder for future sessions”" in out
    copilot_config(home, [str(root)])
    assert "✓ copilot: hooks run" in doctor(root, capsys)
    copilot_config(home, [str(tmp_path)])  # a remembered parent folder covers the project
    assert doctor_json(root, capsys)["copilot"]["state"] == "runs"
    copilot_config(home, [])
    write(home / ".copilot" / "settings.json", json.dumps({"trustedFolders": [str(root)]}))  # also read there
    assert doctor_json(root, capsys)["copilot"]["state"] == "runs"


def test_copilot_home_is_read_from_copilot_home(tmp_path: Path, home: Path, capsys, monkeypatch) -> None:
    root = setup(tmp_path, "copilot")
    copilot_config(tmp_path / "c", [str(root)])
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "c" / ".copilot"))
    assert doctor_json(root, capsys)["copilot"]["state"] == "runs"
    write(tmp_path / "c" / ".copilot" / "config.json", "{ not json")
    assert doctor_json(root, capsys)["copilot"]["state"] == "cannot tell"


# --- Claude Code ----------------------------------------------------------------------------------------


def test_claude_code_runs_unless_hooks_are_disabled(tmp_path: Path, home: Path, capsys, monkeypatch) -> None:
    root = setup(tmp_path, "claude-code")
    write(home / ".claude.json", json.dumps({"hasCompletedOnboarding": True, "projects": {}}))
    out = doctor(root, capsys)  # `claude` asks before it starts here, and `claude -p` runs them unasked
    assert "✓ claude-code: hooks run: in every session Claude Code starts here: the folder is not trusted yet" in out
    assert "“Yes, I trust this folder”" in out
    project = {"allowedTools": [], "hasTrustDialogAccepted": True, "projectOnboardingSeenCount": 0}
    write(home / ".claude.json", json.dumps({"projects": {str(root): project}}))  # what the dialog wrote (2.1.197)
    assert "✓ claude-code: hooks run" in doctor(root, capsys)
    write(home / ".claude.json", json.dumps({"projects": {str(tmp_path): project}}))  # a trusted parent folder
    assert doctor_json(root, capsys)["claude-code"]["state"] == "runs"
    write(root / ".claude" / "settings.local.json", '{"disableAllHooks": true}')
    state = doctor_json(root, capsys)["claude-code"]
    assert state["state"] == "off" and "settings.local.json" in state["step"]
    (root / ".claude" / "settings.local.json").unlink()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))  # then .claude.json is in that folder
    assert "not trusted yet" in doctor_json(root, capsys)["claude-code"]["why"]
    write(tmp_path / "cfg" / ".claude.json", json.dumps({"projects": {str(root): project}}))
    assert "is trusted in" in doctor_json(root, capsys)["claude-code"]["why"]
    write(tmp_path / "cfg" / "settings.json", '{"disableAllHooks": true}')  # the user's settings move too
    assert doctor_json(root, capsys)["claude-code"]["state"] == "off"


# --- all agents -----------------------------------------------------------------------------------------


def test_doctor_names_only_the_agents_set_up(tmp_path: Path, home: Path, capsys) -> None:
    root = tmp_path / "project"
    (root / ".autology" / "nodes").mkdir(parents=True)
    main(["--root", str(root), "init", "--no-git"])
    assert "hooks: no agent set up here" in doctor(root, capsys)
    setup(tmp_path, "gemini", "copilot")
    states = doctor_json(root, capsys)
    assert sorted(states) == ["copilot", "gemini"]
    assert all(s["state"] == "off" and s["step"] for s in states.values())
    assert main(["--root", str(root), "setup", "gemini", "--remove", "--yes"]) == 0
    assert sorted(doctor_json(root, capsys)) == ["copilot"]
    assert set(HOOKS_FILE) == set(hs.READERS)


def test_setup_ends_with_the_agents_hook_state(tmp_path: Path, home: Path, capsys) -> None:
    root = tmp_path / "project"
    root.mkdir()
    capsys.readouterr()
    assert main(["--root", str(root), "setup", "copilot", "--yes"]) == 0
    out = capsys.readouterr().out
    assert "✗ copilot: hooks off" in out and "→ start `copilot` in" in out
    copilot_config(home, [str(root)])
    assert main(["--root", str(root), "setup", "copilot", "--yes"]) == 0  # nothing to change: the state still
    out = capsys.readouterr().out
    assert "already set up" in out and "✓ copilot: hooks run" in out and "Each user takes" not in out


@given(st.dictionaries(st.text(), st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                                                lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
                                                max_leaves=8)),
       st.text(alphabet=st.characters(blacklist_characters="\n\r*/"), max_size=20))
def test_comments_are_stripped_outside_strings_only(value: dict, comment: str) -> None:
    text = json.dumps(value, indent=1)
    lines = text.split("\n")
    commented = "\n".join(f"{line} // {comment}" if i % 2 else f"/* {comment} */ {line}" for i, line in enumerate(lines))
    assert json.loads(hs.strip_json_comments(commented)) == value
    assert hs.strip_json_comments(text) == text
