"""The Claude Code plugin: its files, Claude Code's own validator, the launcher, and the MCP prompts
and resources that mirror the skills for other clients."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from autology_mcp.server.skills import SKILLS, TOOL_PREFIX

REPO = Path(__file__).resolve().parents[1]
READ_ONLY_TOOLS = {TOOL_PREFIX + "autology_search", TOOL_PREFIX + "autology_query", TOOL_PREFIX + "autology_status"}


def frontmatter(path: Path) -> tuple[dict, str]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n"), path
    head, body = text[4:].split("\n---\n", 1)
    return yaml.safe_load(head), body.lstrip("\n")


# ------------------------------------------------------------------------------ Claude Code's validator


@pytest.mark.skipif(
    shutil.which("claude") is None, reason="Claude Code (npm i -g @anthropic-ai/claude-code) is not installed"
)
@pytest.mark.parametrize("target", [".", ".claude-plugin/plugin.json"])
def test_claude_plugin_validate_strict(target: str, tmp_path: Path) -> None:
    """`.` validates the marketplace manifest; the plugin manifest path validates the plugin and its components."""
    env = os.environ | {"HOME": str(tmp_path), "DISABLE_AUTOUPDATER": "1"}
    out = subprocess.run(
        ["claude", "plugin", "validate", "--strict", target],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Validation passed" in out.stdout


# ------------------------------------------------------------------------------ the files


def test_manifests() -> None:
    plugin = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())
    assert plugin["name"] == "autology"
    (entry,) = market["plugins"]
    assert entry["name"] == "autology" and entry["source"] == "./"
    assert entry["version"] == plugin["version"]


def test_mcp_json_launches_the_server_from_the_plugin_root_on_the_project() -> None:
    server = json.loads((REPO / ".mcp.json").read_text())["mcpServers"]["autology"]
    assert server["command"] == "sh"
    assert server["args"] == ["${CLAUDE_PLUGIN_ROOT}/hooks/run.sh", "--root", "${CLAUDE_PROJECT_DIR}", "serve"]


def test_hooks_json_events_and_matchers() -> None:
    hooks = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]
    expected = {
        "PostToolUse": [("Bash", "post-commit"), ("Read", "post-read")],
        "PreCompact": [("*", "pre-compact")],
        "SessionEnd": [(None, "session-end")],
        "SessionStart": [("startup|resume|compact", "session-start")],
        "UserPromptSubmit": [(None, "user-prompt-submit")],
        "PreToolUse": [("Edit|Write|MultiEdit|NotebookEdit", "pre-tool-use")],
    }
    assert set(hooks) == set(expected)
    for event, groups in expected.items():
        assert len(hooks[event]) == len(groups), event
        for group, (matcher, subcommand) in zip(hooks[event], groups):
            assert group.get("matcher") == matcher, event
            (hook,) = group["hooks"]
            assert hook["type"] == "command"
            assert hook["command"] == f'sh "${{CLAUDE_PLUGIN_ROOT}}/hooks/run.sh" hook {subcommand}'


@pytest.mark.parametrize("name", sorted(SKILLS))
def test_skill_files_are_the_skills_module(name: str) -> None:
    meta, body = frontmatter(REPO / "skills" / name / "SKILL.md")
    skill = SKILLS[name]
    assert meta["name"] == name and meta["description"] == skill.description
    tools = [t.strip() for t in meta["allowed-tools"].split(",")]
    assert tools and all(t.startswith(TOOL_PREFIX) for t in tools)
    assert body == skill.body, (
        "skills/*/SKILL.md drifted from autology_mcp/server/skills.py: run python -m autology_mcp.server.skills ."
    )


def test_skill_workflows_cover_the_spec() -> None:
    tutorial = SKILLS["tutorial"].body
    assert all(f"## Step {n}" in tutorial for n in range(1, 6)) and "confirmation" in tutorial
    capture = SKILLS["capture"].body
    for section in (
        "## Create",
        "## Update",
        "## Delete",
        "## Supersede",
        "## Context",
        "## Alternatives",
        "autology_query",
    ):
        assert section in capture
    explore = SKILLS["explore"].body
    assert "autology_status" in explore and "tagged" in explore and "type" in explore
    assert "autology_analyze" in SKILLS["analyze"].body


def test_advisor_agent() -> None:
    meta, body = frontmatter(REPO / "agents" / "autology-advisor.md")
    assert meta["name"] == "autology-advisor" and meta["model"] == "haiku"
    assert {t.strip() for t in meta["tools"].split(",")} == READ_ONLY_TOOLS
    assert "Do NOT trigger for coding" in meta["description"]
    for signal in ("Knowledge capture", "Knowledge search", "Meta-analysis", "Updates", "Supersessions"):
        assert signal in body
    for line in ("RECOMMEND: /autology:<skill>", "REASON:", "CONTEXT:", "ARGS:"):
        assert line in body


# ------------------------------------------------------------------------------ the launcher (hooks/run.sh)


def launcher(args: list[str], stdin: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["sh", str(REPO / "hooks" / "run.sh"), *args], input=stdin, capture_output=True, text=True, env=env, cwd=cwd
    )


def test_launcher_runs_a_hook_with_the_given_python(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "AUTOLOGY_PYTHON": sys.executable, "HOME": str(tmp_path)}
    out = launcher(["hook", "pre-compact"], '{"hook_event_name": "PreCompact", "trigger": "auto"}', env, tmp_path)
    assert out.returncode == 0
    assert "/autology:capture" in json.loads(out.stdout)["systemMessage"]


def test_launcher_fails_open_without_autology(tmp_path: Path) -> None:
    if (REPO / ".venv" / "bin" / "python").exists():
        pytest.skip("the checkout has a .venv, which the launcher would use")
    env = {"PATH": str(tmp_path), "HOME": str(tmp_path)}  # no python, no autology
    hook = subprocess.run(
        ["/bin/sh", str(REPO / "hooks" / "run.sh"), "hook", "post-commit"],
        input="{}",
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert hook.returncode == 0 and hook.stdout == ""
    serve = subprocess.run(
        ["/bin/sh", str(REPO / "hooks" / "run.sh"), "serve"], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert serve.returncode == 1 and "not installed" in serve.stderr


def test_launcher_exits_zero_when_the_python_is_broken(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "AUTOLOGY_PYTHON": str(tmp_path / "missing-python"), "HOME": str(tmp_path)}
    out = launcher(["hook", "session-start"], "{}", env, tmp_path)
    assert out.returncode == 0 and out.stdout == ""


# ------------------------------------------------------------------------------ MCP prompts and resources


@pytest.fixture
def service(tmp_path: Path):
    from autology_mcp.knowledge.service import Autology

    s = Autology.open(tmp_path)
    yield s
    s.close()


async def test_prompts_mirror_the_skills(service) -> None:
    from mcp import Client

    from autology_mcp.server.app import build_server

    async with Client(build_server(service)) as client:
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        assert set(prompts) == set(SKILLS)
        result = await client.get_prompt("explore", {"request": "tagged auth"})
        (message,) = result.messages
        assert message.role == "user"
        assert message.content.text == SKILLS["explore"].body.replace("$ARGUMENTS", "tagged auth")
        plain = await client.get_prompt("tutorial", {})
        assert "$ARGUMENTS" not in plain.messages[0].content.text


async def test_node_and_status_resources(service) -> None:
    from mcp import Client

    from autology_mcp.server.app import build_server

    node_id = service.capture("Use SQLite FTS5", "We use FTS5 for search.", type="concept").id
    async with Client(build_server(service)) as client:
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["autology://node/{id}"]
        node = await client.read_resource(f"autology://node/{node_id}")
        text = node.contents[0].text
        assert text.startswith("---\n") and f"id: {node_id}" in text and "# Use SQLite FTS5" in text
        status = json.loads((await client.read_resource("autology://status")).contents[0].text)
        assert status["totalNodes"] == 1 and status["nodesByType"]["concept"] == 1
        with pytest.raises(Exception, match="UUID"):
            await client.read_resource("autology://node/not-a-node")


def test_launcher_skips_python_for_bash_calls_without_git(tmp_path: Path) -> None:
    marker = tmp_path / "python-started"
    fake_python = tmp_path / "python"
    fake_python.write_text(f"#!/bin/sh\ntouch {marker}\ncat >/dev/null\n")
    fake_python.chmod(0o755)
    env = {"PATH": "/usr/bin:/bin", "AUTOLOGY_PYTHON": str(fake_python), "HOME": str(tmp_path)}
    plain = {
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls -la"},
        "tool_response": {"stdout": "total 0"},
    }
    out = launcher(["hook", "post-commit"], json.dumps(plain), env, tmp_path)
    assert out.returncode == 0 and out.stdout == "" and not marker.exists()
    commit = plain | {"tool_input": {"command": "git commit -m x"}}
    launcher(["hook", "post-commit"], json.dumps(commit), env, tmp_path)
    assert marker.exists()


async def test_every_surface_says_when_to_use_each_search_tool() -> None:
    """The server instructions, the search tools' descriptions, the explore and tutorial skills, the
    advisor and the session-start recall all point at autology_search for questions (not only at
    autology_query), and the instructions say when to use each of the four."""
    import tempfile

    from mcp import Client

    from autology_mcp.hooks.handlers import recall_text
    from autology_mcp.knowledge.service import Autology
    from autology_mcp.server.app import INSTRUCTIONS, build_server

    for tool in ("autology_search", "autology_context", "autology_query", "autology_code_search"):
        assert tool in INSTRUCTIONS
    autology = Autology.open(tempfile.mkdtemp())
    try:
        async with Client(build_server(autology)) as client:
            tools = {t.name: t.description for t in (await client.list_tools()).tools}
        recall = recall_text(autology.store, [])
    finally:
        autology.close()
    assert tools["autology_search"].startswith("Start here")
    assert tools["autology_context"].startswith("Before starting a task")
    assert "autology_search" in tools["autology_query"] and "autology_search" in tools["autology_code_search"]
    assert "autology_search" in SKILLS["explore"].body and "autology_context" in SKILLS["explore"].body
    assert "autology_search" in SKILLS["tutorial"].body
    assert "autology_search" in (REPO / "agents" / "autology-advisor.md").read_text()
    assert "autology_search" in recall and "autology_context" in recall
