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
needs_claude = pytest.mark.skipif(
    shutil.which("claude") is None, reason="Claude Code (npm i -g @anthropic-ai/claude-code) is not installed"
)
READ_ONLY_TOOLS = {TOOL_PREFIX + "autology_search", TOOL_PREFIX + "autology_query", TOOL_PREFIX + "autology_status"}


def frontmatter(path: Path) -> tuple[dict, str]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n"), path
    head, body = text[4:].split("\n---\n", 1)
    return yaml.safe_load(head), body.lstrip("\n")


# ------------------------------------------------------------------------------ Claude Code's validator


@needs_claude
@pytest.mark.parametrize("target", [".", ".claude-plugin/plugin.json", "dist/plugin/.claude-plugin/plugin.json"])
def test_claude_plugin_validate_strict(target: str, checkout: Path, tmp_path: Path) -> None:
    """`.` validates the marketplace manifest (and the plugin it points at); a plugin manifest path
    validates the plugin and its components: the sources, and the folder scripts/plugin.sh builds."""
    env = os.environ | {"HOME": str(tmp_path), "DISABLE_AUTOUPDATER": "1"}
    out = subprocess.run(
        ["claude", "plugin", "validate", "--strict", target],
        cwd=checkout,
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
    assert entry["name"] == "autology" and entry["source"] == "./dist/plugin"  # built by scripts/plugin.sh
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


# ---------------------------------------------------------------------- the plugin folder, and what an install copies

# What scripts/plugin.sh puts in dist/plugin/, and all that `claude plugin install` may copy.
PLUGIN_FILES = {
    ".claude-plugin/plugin.json",
    ".mcp.json",
    "hooks/hooks.json",
    "hooks/run.sh",
    "agents/autology-advisor.md",
    *(f"skills/{name}/SKILL.md" for name in SKILLS),
}
RECORDED = "autology-python"  # the one generated file: the interpreter's absolute path
# The plugin is 10 files, about 20 KB; 256 KB leaves room to grow and still catches any copy of the
# package (about 2 MB with its tests and benchmarks) or of a virtualenv (about 100 MB).
INSTALL_BOUND = 256 * 1024


def fresh_checkout(dest: Path, debris: bool = True) -> Path:
    """This checkout's files as a clone of it would hold them (tracked and untracked-not-ignored, as they
    are in the work tree) and, with ``debris``, what development leaves beside them: a .venv (a big file
    and a broken symlink), .hypothesis, .pytest_cache, __pycache__ and a wheel in dist/."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO, capture_output=True
    )
    if listed.returncode != 0:
        pytest.skip("the checkout is not a git work tree")
    for name in listed.stdout.decode().split("\0"):
        source = REPO / name
        if name and source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    if debris:
        (dest / ".venv" / "lib").mkdir(parents=True)
        (dest / ".venv" / "lib" / "big.bin").write_bytes(b"\0" * 2_000_000)
        (dest / ".venv" / "bin").mkdir()
        (dest / ".venv" / "bin" / "python").symlink_to("/nonexistent/python3.11")
        for folder in (".hypothesis/examples", ".pytest_cache/v", "autology_mcp/__pycache__", "dist"):
            (dest / folder).mkdir(parents=True, exist_ok=True)
        (dest / ".hypothesis" / "examples" / "x").write_bytes(b"\0" * 100_000)
        (dest / "autology_mcp" / "__pycache__" / "x.pyc").write_bytes(b"\0" * 10_000)
        (dest / "dist" / "autology_mcp-0.1.0-py3-none-any.whl").write_bytes(b"\0" * 100_000)
    return dest


def build_plugin(checkout: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(checkout / "scripts" / "plugin.sh"), *args], capture_output=True, text=True, timeout=120
    )


def files_under(root: Path) -> dict[str, int]:
    """Every entry under ``root`` (a symlink counts as one), relative path -> size in bytes."""
    return {
        path.relative_to(root).as_posix(): path.lstat().st_size
        for path in root.rglob("*")
        if path.is_symlink() or path.is_file()
    }


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A development checkout with its plugin built, naming this test run's interpreter."""
    root = fresh_checkout(tmp_path_factory.mktemp("checkout"))
    out = build_plugin(root, sys.executable)
    assert out.returncode == 0, out.stderr
    return root


def test_plugin_script_builds_only_what_the_plugin_needs(checkout: Path) -> None:
    plugin = checkout / "dist" / "plugin"
    assert set(files_under(plugin)) == PLUGIN_FILES | {RECORDED}
    for name in PLUGIN_FILES:
        assert (plugin / name).read_bytes() == (REPO / name).read_bytes(), name
    assert (plugin / RECORDED).read_text() == sys.executable + "\n"
    assert sum(files_under(plugin).values()) < INSTALL_BOUND
    # the marketplace points at it
    (entry,) = json.loads((checkout / ".claude-plugin" / "marketplace.json").read_text())["plugins"]
    assert (checkout / entry["source"]).resolve() == plugin


def test_plugin_script_records_the_checkouts_venv_or_nothing(tmp_path: Path) -> None:
    root = fresh_checkout(tmp_path, debris=False)
    # no .venv, no interpreter given: a plugin without autology-python (run.sh then uses $AUTOLOGY_PYTHON or PATH)
    out = build_plugin(root)
    assert out.returncode == 0 and "no interpreter recorded" in out.stderr
    assert set(files_under(root / "dist" / "plugin")) == PLUGIN_FILES
    # the checkout's .venv/bin/python, by absolute path, once there is one
    (root / ".venv" / "bin").mkdir(parents=True)
    (root / ".venv" / "bin" / "python").write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    (root / ".venv" / "bin" / "python").chmod(0o755)
    assert build_plugin(root).returncode == 0
    assert (root / "dist" / "plugin" / RECORDED).read_text() == f"{root}/.venv/bin/python\n"
    # an interpreter without autology is refused, and the plugin already built is left as it was
    bare = tmp_path / "bare-python"
    bare.write_text("#!/bin/sh\nexit 1\n")
    bare.chmod(0o755)
    refused = build_plugin(root, str(bare))
    assert refused.returncode == 1 and "cannot import autology_mcp" in refused.stderr
    assert (root / "dist" / "plugin" / RECORDED).read_text() == f"{root}/.venv/bin/python\n"


@needs_claude
@pytest.mark.slow
def test_install_from_a_checkout_copies_only_the_plugin_and_it_starts(checkout: Path, tmp_path: Path) -> None:
    """`claude plugin marketplace add` + `claude plugin install` from a checkout full of development
    debris: the plugin cache gets the plugin's files only (no .venv, tests, caches or symlinks), under
    INSTALL_BOUND; then, with no $AUTOLOGY_PYTHON and no `autology` on PATH, Claude Code starts the MCP
    server and the hooks run, from the checkout's plugin folder and from the cache's copy alike."""
    # claude (and node, for an npm build that needs it), then the system: no autology, no $AUTOLOGY_PYTHON
    tools = [str(Path(found).parent) for found in (shutil.which("claude"), shutil.which("node")) if found]
    path = ":".join(dict.fromkeys([*tools, *SYSTEM_PATH.split(":")]))
    if shutil.which("autology", path=path):
        pytest.skip(f"autology is on {path}; this test checks that the plugin needs no such thing")
    home = tmp_path / "home"
    home.mkdir()
    env = {"PATH": path, "HOME": str(home), "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
    for step in (
        ["claude", "plugin", "marketplace", "add", str(checkout)],
        ["claude", "plugin", "install", "autology@autology-local"],
    ):
        out = subprocess.run(step, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stdout + out.stderr

    installed = json.loads((home / ".claude" / "plugins" / "installed_plugins.json").read_text())
    (record,) = installed["plugins"]["autology@autology-local"]
    copy = Path(record["installPath"])
    cache = home / ".claude" / "plugins" / "cache"
    assert copy.is_relative_to(cache)
    copied = files_under(copy)
    assert set(copied) == PLUGIN_FILES | {RECORDED}
    assert not any(path.is_symlink() for path in cache.rglob("*"))
    assert sum(files_under(cache).values()) < INSTALL_BOUND

    project = tmp_path / "project"
    project.mkdir()
    listed = subprocess.run(
        ["claude", "mcp", "list"], cwd=project, env=env, capture_output=True, text=True, timeout=120
    )
    line = next(line for line in listed.stdout.splitlines() if line.startswith("plugin:autology:autology:"))
    assert f"--root {project} serve" in line and "Connected" in line, listed.stdout

    command = json.loads((copy / "hooks" / "hooks.json").read_text())["hooks"]["PreCompact"][0]["hooks"][0]["command"]
    for root in (checkout / "dist" / "plugin", copy):
        hook = subprocess.run(
            ["sh", "-c", command],
            input=PRE_COMPACT,
            cwd=project,
            env=env | {"CLAUDE_PLUGIN_ROOT": str(root), "CLAUDE_PROJECT_DIR": str(project)},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert hook.stdout.startswith("autology (auto compaction)") and "/autology:capture" in hook.stdout, (root, hook.stderr)  # plain words (issue 39)


# ------------------------------------------------------------------------------ the launcher (hooks/run.sh)

SYSTEM_PATH = "/usr/bin:/bin"  # no autology here (checked where it matters), so only the launcher's own choice runs
PRE_COMPACT = '{"hook_event_name": "PreCompact", "trigger": "auto"}'


def plugin_root(tmp_path: Path, recorded: str | None = None) -> Path:
    """A plugin folder with the launcher and, when given, an autology-python file naming ``recorded``."""
    root = tmp_path / "plugin"
    (root / "hooks").mkdir(parents=True)
    shutil.copy(REPO / "hooks" / "run.sh", root / "hooks" / "run.sh")
    if recorded is not None:
        (root / "autology-python").write_text(recorded + "\n")
    return root


def launcher(
    args: list[str], stdin: str, env: dict[str, str], cwd: Path, root: Path = REPO
) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["sh", str(root / "hooks" / "run.sh"), *args], input=stdin, capture_output=True, text=True, env=env, cwd=cwd
    )


def fake_python(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """An executable that only leaves a marker file when started: (the executable, its marker)."""
    marker = tmp_path / f"{name}-started"
    exe = tmp_path / name
    exe.write_text(f"#!/bin/sh\ntouch {marker}\ncat >/dev/null\n")
    exe.chmod(0o755)
    return exe, marker


def test_launcher_runs_a_hook_with_the_given_python(tmp_path: Path) -> None:
    env = {"PATH": SYSTEM_PATH, "AUTOLOGY_PYTHON": sys.executable, "HOME": str(tmp_path)}
    out = launcher(["hook", "pre-compact"], PRE_COMPACT, env, tmp_path)
    assert out.returncode == 0
    assert out.stdout.startswith("autology (auto compaction)") and "/autology:capture" in out.stdout  # plain words (issue 39)


def test_launcher_uses_the_interpreter_named_in_autology_python(tmp_path: Path) -> None:
    """What scripts/plugin.sh records is what runs: the hooks and the server, with no variable set."""
    root = plugin_root(tmp_path, recorded=sys.executable)
    env = {"PATH": SYSTEM_PATH, "HOME": str(tmp_path)}
    hook = launcher(["hook", "pre-compact"], PRE_COMPACT, env, tmp_path, root)
    assert hook.returncode == 0
    assert hook.stdout.startswith("autology (auto compaction)") and "/autology:capture" in hook.stdout  # plain words (issue 39)
    version = launcher(["--version"], "", env, tmp_path, root)
    assert version.returncode == 0 and "autology" in version.stdout


def test_autology_python_variable_wins_over_the_recorded_interpreter(tmp_path: Path) -> None:
    recorded, marker = fake_python(tmp_path, "recorded-python")
    root = plugin_root(tmp_path, recorded=str(recorded))
    env = {"PATH": SYSTEM_PATH, "AUTOLOGY_PYTHON": sys.executable, "HOME": str(tmp_path)}
    out = launcher(["hook", "pre-compact"], PRE_COMPACT, env, tmp_path, root)
    assert out.stdout.startswith("autology (auto compaction)") and "/autology:capture" in out.stdout  # plain words (issue 39)
    assert not marker.exists()


def test_launcher_falls_back_to_path_when_the_recorded_interpreter_is_gone(tmp_path: Path) -> None:
    gone = str(tmp_path / "moved-checkout" / ".venv" / "bin" / "python")
    root = plugin_root(tmp_path, recorded=gone)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls"
    (bin_dir / "autology").write_text(f'#!/bin/sh\necho "$@" >>{calls}\ncat >/dev/null\n')
    (bin_dir / "autology").chmod(0o755)
    env = {"PATH": f"{bin_dir}:{SYSTEM_PATH}", "HOME": str(tmp_path)}
    assert launcher(["hook", "pre-compact"], PRE_COMPACT, env, tmp_path, root).returncode == 0
    assert launcher(["serve"], "", env, tmp_path, root).returncode == 0
    assert calls.read_text().splitlines() == ["hook pre-compact", "serve"]
    # and with nothing on PATH either, the server says which interpreter is gone and what to do
    serve = launcher(["serve"], "", {"PATH": SYSTEM_PATH, "HOME": str(tmp_path)}, tmp_path, root)
    assert serve.returncode == 1 and gone in serve.stderr and "scripts/setup.sh" in serve.stderr


def test_launcher_fails_open_without_autology(tmp_path: Path) -> None:
    if shutil.which("autology", path=SYSTEM_PATH):
        pytest.skip(f"autology is installed in {SYSTEM_PATH}, which the launcher would use")
    for root in (REPO, plugin_root(tmp_path)):  # the checkout, and a plugin folder with no autology-python
        assert not (root / "autology-python").exists()
        env = {"PATH": SYSTEM_PATH, "HOME": str(tmp_path)}
        hook = launcher(["hook", "post-commit"], '{"tool_input": {"command": "git commit -m x"}}', env, tmp_path, root)
        assert hook.returncode == 0 and hook.stdout == ""
        serve = launcher(["serve"], "", env, tmp_path, root)
        assert serve.returncode == 1 and "not installed" in serve.stderr and serve.stdout == ""


def test_launcher_exits_zero_when_the_python_is_broken(tmp_path: Path) -> None:
    env = {"PATH": SYSTEM_PATH, "AUTOLOGY_PYTHON": str(tmp_path / "missing-python"), "HOME": str(tmp_path)}
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
    python, marker = fake_python(tmp_path, "python")
    env = {"PATH": SYSTEM_PATH, "AUTOLOGY_PYTHON": str(python), "HOME": str(tmp_path)}
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
