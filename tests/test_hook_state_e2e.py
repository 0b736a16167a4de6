"""`autology doctor`'s verdict on each agent's hooks against what the real CLI does (issue 39): in a project
with one decision, set up with `autology setup <agent>`, the agent's trust state is written into a temporary
home both ways, in the agent's own files, and the CLI is run headless against a stand-in model
(tests/agent_standins.py) *without* the flags that bypass trust (`--dangerously-bypass-hook-trust`,
`--skip-trust`, `--trust-folder`). Where doctor says "hooks run", session-start's recall reaches the model;
where it says "off", it does not. For Codex this also checks the trusted_hash autology computes: Codex runs
a project hook only when the recorded hash is the one it computes itself.

Claude Code (`claude -p`, against the stand-in of tests/test_hooks_claude_e2e.py) runs project hooks in a
folder it was never told to trust, so there doctor says they run whatever the trust state, and "off" only
for `disableAllHooks`.

Skipped for an agent whose CLI is not installed at its pinned version. Nothing leaves the machine."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import agent_standins as standins
from test_hooks_claude_e2e import ScriptedModel, claude_env
from autology_mcp.knowledge.service import Autology
from autology_mcp.setup import hook_state as hs

pytestmark = pytest.mark.slow

RECALL = "autology — project memory: 1 knowledge node(s)"  # session-start's text, when the hooks run
PROMPT = "How do we retry billing calls?"
AGENTS = [
    pytest.param(agent, marks=pytest.mark.skipif(standins.version_problem(agent) is not None,
                                                 reason=standins.version_problem(agent) or ""))
    for agent in ("codex", "gemini", "copilot")
] + [pytest.param("claude-code", marks=pytest.mark.skipif(shutil.which("claude") is None,
                                                          reason="Claude Code is not installed"))]


class _NoModel:
    url = "http://127.0.0.1:9"
    port = 9


NO_MODEL = _NoModel()  # for writing the config and running doctor, when no model is asked
COMMANDS = {  # headless, with no flag that trusts the folder or its hooks
    "codex": ["codex", "exec", "--skip-git-repo-check", "--color", "never", PROMPT],
    "gemini": ["gemini", "-p", PROMPT, "--yolo"],
    "copilot": ["copilot", "-p", PROMPT, "--allow-all", "--no-auto-update"],
}


def run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=180)


def project_with_a_decision(tmp_path: Path, env: dict[str, str], agent: str) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    service = Autology.open(project)
    service.capture("Retry billing calls with exponential backoff", "## Context\nFlaky.\n\n## Decision\nRetry.\n\n"
                    "## Alternatives\nNone.\n\n## Consequences\nSlower.", type="decision")
    service.close()
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "Initial commit"]):
        assert run(["git", *args], project, env).returncode == 0
    out = run([sys.executable, "-m", "autology_mcp", "--root", str(project), "setup", agent, "--yes"], project,
              {**env, "PYTHONPATH": os.environ.get("PYTHONPATH", "")})
    assert out.returncode == 0, out.stdout + out.stderr
    return project


def doctor_says(project: Path, env: dict[str, str], agent: str) -> str:
    out = run([sys.executable, "-m", "autology_mcp", "--root", str(project), "doctor", "--json"], project,
              {**env, "PYTHONPATH": os.environ.get("PYTHONPATH", "")})
    assert out.returncode == 0, out.stdout + out.stderr
    return {h["agent"]: h for h in json.loads(out.stdout)["hooks"]}[agent]["state"]


def hooks_ran(agent: str, project: Path, port_env) -> bool:
    if agent == "claude-code":
        claude = ScriptedModel([])
        try:
            run(["claude", "-p", PROMPT], project, port_env(claude))
        finally:
            claude.close()
        return RECALL in json.dumps(claude.requests, ensure_ascii=False)
    model = standins.AGENTS[agent][0]([])
    try:
        run(COMMANDS[agent], project, port_env(model.port))
    finally:
        model.close()
    return any(RECALL in sent for sent in model.sent())


def untrusted_env(agent: str, home: Path, project: Path, port) -> dict[str, str]:
    """The stand-in's environment for ``agent`` without the trust it grants: Codex's config.toml without the
    hooks review (the project stays trusted: `codex exec --trust` leaves it so), Gemini without
    GEMINI_CLI_TRUST_WORKSPACE. ``port``: Claude Code's stand-in itself."""
    if agent == "claude-code":
        return claude_env(home, port)
    env = standins.agent_env(agent, home, getattr(port, "port", port), project)
    env.pop("GEMINI_CLI_TRUST_WORKSPACE", None)
    return env


def codex_review(home: Path, project: Path, change: dict | None = None, off: bool = False) -> None:
    """The hooks review Codex 0.171.0 writes (“Trust all and continue”): one hooks.state entry per hook, with
    the hash autology computes (of the hook changed by ``change``: a review of an older version) and
    ``enabled = false`` when ``off`` (a hook turned off in /hooks)."""
    config = home / ".codex" / "config.toml"
    hooks = json.loads((project / ".codex" / "hooks.json").read_text())["hooks"]
    text = config.read_text() + "\n[hooks.state]\n"
    for event, groups in hooks.items():
        key = f"{project / '.codex' / 'hooks.json'}:{hs._snake(event)}:0:0"
        digest = hs.codex_hook_hash(event, groups[0].get("matcher"), {**groups[0]["hooks"][0], **(change or {})})
        text += f'\n[hooks.state.{json.dumps(key)}]\ntrusted_hash = "{digest}"\n' + ("enabled = false\n" if off else "")
    config.write_text(text)


def edit_json(path: Path, **values) -> None:
    data = json.loads(path.read_text()) if path.exists() else {}
    path.write_text(json.dumps({**data, **values}, indent=2))


def trusted_folder(home: Path, project: Path, rule: str = "TRUST_FOLDER") -> None:
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(project): rule}, indent=2))


def remembered(home: Path, project: Path) -> None:
    (home / ".copilot" / "config.json").write_text(
        "// This file is managed automatically.\n" + json.dumps({"trustedFolders": [str(project)]}, indent=2))


# Per agent: (what is written into the home after the agent's base config, what doctor must say). The
# writes are the agent's own trust step (the forms its real CLI wrote under tmux) or a user's setting.
SCENARIOS = {
    "codex": [
        ("project trusted, hooks not reviewed", lambda home, project: None, "off"),
        ("hooks reviewed", codex_review, "runs"),
        ("reviewed before a hook changed", lambda home, project: codex_review(home, project, {"timeout": 11}), "off"),
        ("reviewed, turned off in /hooks", lambda home, project: codex_review(home, project, off=True), "off"),
    ],
    "gemini": [
        ("no trust rule", lambda home, project: None, "off"),
        ("Trust folder", trusted_folder, "runs"),
        ("DO_NOT_TRUST", lambda home, project: trusted_folder(home, project, "DO_NOT_TRUST"), "off"),
        ("trusted, hooks turned off in settings", lambda home, project: (
            trusted_folder(home, project), edit_json(home / ".gemini" / "settings.json", hooksConfig={"enabled": False})),
         "off"),
    ],
    "claude-code": [
        ("never trusted (claude -p does not ask)", lambda home, project: None, "runs"),
        ("“Yes, I trust this folder”", lambda home, project: edit_json(
            home / ".claude.json", projects={str(project): {"hasTrustDialogAccepted": True}}), "runs"),
        ("disableAllHooks in the project's local settings", lambda home, project: (
            project / ".claude" / "settings.local.json").write_text('{"disableAllHooks": true}'), "off"),
        ("disableAllHooks in the user's settings", lambda home, project: (
            (home / ".claude").mkdir(exist_ok=True), edit_json(home / ".claude" / "settings.json", disableAllHooks=True)),
         "off"),
    ],
    "copilot": [
        ("not remembered", lambda home, project: None, "off"),
        ("Yes, and remember this folder", remembered, "runs"),
        # Copilot's help says disableAllHooks turns every hook off; 1.0.102 ran them, and doctor does not read it
        ("remembered, disableAllHooks", lambda home, project: (
            remembered(home, project), edit_json(home / ".copilot" / "settings.json", disableAllHooks=True)), "runs"),
    ],
}


@pytest.mark.parametrize("agent", AGENTS)
def test_doctor_says_what_the_agent_does(agent: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    project = project_with_a_decision(tmp_path, untrusted_env(agent, home, tmp_path / "project", NO_MODEL), agent)
    for name, write, expected in SCENARIOS[agent]:
        def port_env(port: int) -> dict[str, str]:  # (re)writes the agent's user config for a stand-in on port
            env = untrusted_env(agent, home, project, port)
            for path in (home / ".gemini" / "trustedFolders.json", home / ".copilot" / "settings.json",
                         home / ".copilot" / "config.json", home / ".claude" / "settings.json",
                         project / ".claude" / "settings.local.json"):
                path.unlink(missing_ok=True)
            write(home, project)
            return env

        said = doctor_says(project, port_env(NO_MODEL), agent)
        ran = hooks_ran(agent, project, port_env)
        assert (said, ran) == (expected, expected == "runs"), f"{agent}, {name}: doctor said {said}, hooks ran: {ran}"
