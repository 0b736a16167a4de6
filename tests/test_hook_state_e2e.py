"""`autology doctor`'s verdict on each agent's hooks against what the real CLI does (issue 39): in a project
with one decision, set up with `autology setup <agent>`, the agent's trust state is written into a temporary
home both ways, in the agent's own files, and the CLI is run headless against a stand-in model
(tests/agent_standins.py) *without* the flags that bypass trust (`--dangerously-bypass-hook-trust`,
`--skip-trust`, `--trust-folder`). Where doctor says "hooks run", session-start's recall reaches the model;
where it says "off", it does not. For Codex this also checks the trusted_hash autology computes: Codex runs
a project hook only when the recorded hash is the one it computes itself.

Skipped for an agent whose CLI is not installed at its pinned version. Nothing leaves the machine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import agent_standins as standins
from autology_mcp.knowledge.service import Autology
from autology_mcp.setup import hook_state as hs

pytestmark = pytest.mark.slow

RECALL = "autology — project memory: 1 knowledge node(s)"  # session-start's text, when the hooks run
PROMPT = "How do we retry billing calls?"
AGENTS = [
    pytest.param(agent, marks=pytest.mark.skipif(standins.version_problem(agent) is not None,
                                                 reason=standins.version_problem(agent) or ""))
    for agent in ("codex", "gemini", "copilot")
]
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
    model = standins.AGENTS[agent][0]([])
    try:
        run(COMMANDS[agent], project, port_env(model.port))
    finally:
        model.close()
    return any(RECALL in sent for sent in model.sent())


def untrusted_env(agent: str, home: Path, project: Path, port: int) -> dict[str, str]:
    """The stand-in's environment for ``agent`` without the trust it grants: Codex's config.toml without the
    hooks review (the project stays trusted: `codex exec --trust` leaves it so), Gemini without
    GEMINI_CLI_TRUST_WORKSPACE."""
    env = standins.agent_env(agent, home, port, project)
    env.pop("GEMINI_CLI_TRUST_WORKSPACE", None)
    return env


def trust(agent: str, home: Path, project: Path) -> None:
    """What the agent's own trust step writes (the forms the real CLIs wrote under tmux)."""
    if agent == "codex":
        config = home / ".codex" / "config.toml"
        hooks = json.loads((project / ".codex" / "hooks.json").read_text())["hooks"]
        text = config.read_text() + "\n[hooks.state]\n"
        for event, groups in hooks.items():
            key = f"{project / '.codex' / 'hooks.json'}:{hs._snake(event)}:0:0"
            digest = hs.codex_hook_hash(event, groups[0].get("matcher"), groups[0]["hooks"][0])
            text += f'\n[hooks.state.{json.dumps(key)}]\ntrusted_hash = "{digest}"\n'
        config.write_text(text)
    elif agent == "gemini":
        (home / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(project): "TRUST_FOLDER"}, indent=2))
    else:
        (home / ".copilot" / "config.json").write_text(
            "// This file is managed automatically.\n" + json.dumps({"trustedFolders": [str(project)]}, indent=2))


@pytest.mark.parametrize("agent", AGENTS)
def test_doctor_says_what_the_agent_does(agent: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    project = project_with_a_decision(tmp_path, untrusted_env(agent, home, tmp_path / "project", 9), agent)
    trusted = False

    def port_env(port: int) -> dict[str, str]:  # (re)writes the agent's user config for a stand-in on port
        env = untrusted_env(agent, home, project, port)
        if trusted:
            trust(agent, home, project)
        return env

    env = port_env(9)
    assert doctor_says(project, env, agent) == "off"
    assert not hooks_ran(agent, project, port_env), f"{agent} ran the hooks though doctor said off"

    trusted = True
    env = port_env(9)
    assert doctor_says(project, env, agent) == "runs"
    assert hooks_ran(agent, project, port_env), f"{agent} did not run the hooks though doctor said they run"
