"""End to end through the real Codex CLI, Gemini CLI and GitHub Copilot CLI (issue 30): a project with
a decision about src/retry.py, `autology setup <agent> --yes` run as the user would, then the real CLI
run non-interactively against a scripted stand-in for its model API (tests/agent_standins.py), and
assertions on what reached the model's requests.

Per agent, three runs (three sessions) of the CLI in the project:
1. an on-topic prompt (words of the decision's title): the prompt hook's memory block, naming the
   decision, is in the model's first request, with session-start's recall and the instructions
   section setup wrote, and autology's MCP tools are offered;
2. an off-topic prompt ("What is the capital of France?"), the model reading src/retry.py, editing
   it and committing: no memory block in any request; the read's result brings the knowledge
   governing the file (the decision's id); the edit does not tell it again (once per session); the
   commit's result names it (post-commit; the decision still holds, so it is not marked
   needs_review). Then session memory: the
   session-end hook ingested the agent's transcript, `autology sessions search` finds the session
   and its session node records the agent;
3. the same off-topic prompt and an edit only: the edit's result brings the decision (the three
   agents give context after an edit, none before it).
And the project .mcp.json Claude Code and Copilot CLI share serves both after both setups.
Skipped for an agent whose CLI is not installed (scripts/install-test-extras.sh installs them).
Nothing leaves the machine: each CLI's model API points at 127.0.0.1.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import agent_standins as standins
from agent_standins import edit, read, shell
from autology_mcp.knowledge.service import Autology
from autology_mcp.sessions import pending
from autology_mcp.sessions.ingest import session_id_for
from autology_mcp.sessions.store import load_session
from autology_mcp.sessions.transcript import parse_lines

pytestmark = pytest.mark.slow

AUTOLOGY = str(Path(sys.executable).with_name("autology"))
PROMPT_BLOCK = "autology — project memory relevant to this prompt"
# the file's path is quoted (the repository's words); a request that carries the hook text inside JSON escapes the quotes
GOVERNING = re.compile(r'autology — knowledge governing \\?"src/retry\.py\\?"')
POST_COMMIT = "autology (post-commit)"
ON_TOPIC = "How do we retry billing calls with exponential backoff?"
OFF_TOPIC = "What is the capital of France?"
COMMIT = "git add -A && git commit -qm 'Tune the retry'"
ADR = (
    "## Context\nCalls to the billing API fail transiently.\n\n## Decision\nRetry failed billing calls "
    "with exponential backoff, five attempts at most.\n\n## Alternatives\nNo retry.\n\n"
    "## Consequences\nSlower failures."
)
AGENTS = [
    pytest.param(agent, marks=pytest.mark.skipif(standins.version_problem(agent) is not None,
                                                 reason=standins.version_problem(agent) or ""))
    for agent in ("codex", "gemini", "copilot")
]


def run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def git(project: Path, env: dict[str, str], *args: str) -> str:
    out = run(["git", *args], project, env)
    assert out.returncode == 0, out.stderr
    return out.stdout


class Agent:
    """One agent's CLI in one project: a fresh stand-in per run, its user-level config under ``home``."""

    def __init__(self, name: str, home: Path, project: Path) -> None:
        self.name, self.home, self.project = name, home, project
        self.times: list[float] = []

    def env(self, port: int = 9) -> dict[str, str]:
        return standins.agent_env(self.name, self.home, port, self.project)

    def path(self, relative: str) -> str:
        # Codex's shell and apply_patch take paths relative to the project; Copilot's view/edit want them absolute
        return relative if self.name == "codex" else str(self.project / relative)

    def run(self, prompt: str, script: list) -> standins.StandIn:
        model = standins.AGENTS[self.name][0](script)
        try:
            started = time.monotonic()
            out = run(standins.agent_command(self.name, prompt), self.project, self.env(model.port))
            self.times.append(time.monotonic() - started)
        finally:
            model.close()
        assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
        settled(self.project)
        turns = model.turns()
        assert turns, f"{self.name} sent no model request: {model.requests}"
        assert prompt in json.dumps(turns[0], ensure_ascii=False), "the prompt did not reach the model"
        assert len(turns) == len(script) + 1, f"the model did not get an answer for every step ({len(turns)} turns)"
        return model


def settled(project: Path, bound: float = 60.0) -> None:
    """Waits (at most ``bound`` seconds) until no transcript is noted as still being written: the end hook
    notes one that the agent writes after it (Copilot), and the follower process ingests it once it is
    written through (autology_mcp/sessions/pending.py)."""
    deadline = time.monotonic() + bound
    while any(not e.error for e in pending.entries(project)):
        assert time.monotonic() < deadline, f"still noted after {bound} s: {pending.entries(project)}"
        time.sleep(0.05)
    assert not pending.entries(project), pending.entries(project)  # none failed


def attached(agent: str, body: dict) -> list[str]:
    """What the hooks attached to each tool call's result in one request, in the order of the calls."""
    found: list[str] = []
    if agent == "codex":
        # a hook's additionalContext is a developer message after the call item, before its output
        calls = 0
        for item in body.get("input") or []:
            if item.get("type") in ("function_call", "custom_tool_call"):
                calls += 1
                found.append("")
            elif calls and item.get("type") == "message" and item.get("role") == "developer":
                found[-1] += "\n".join(p.get("text", "") for p in item.get("content") or [])
    elif agent == "gemini":
        # AfterTool's additionalContext is appended to the tool's output: <hook_context>…</hook_context>
        for content in body.get("contents") or []:
            for part in content.get("parts") or []:
                if "functionResponse" in part:
                    output = json.dumps(part["functionResponse"].get("response"), ensure_ascii=False)
                    found.append("\n".join(re.findall(r"<hook_context>(.*?)</hook_context>", output)))
    else:
        # postToolUse's additionalContext is appended to the tool message after this line
        for message in body.get("messages") or []:
            if message.get("role") == "tool":
                content = message.get("content")
                text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
                _, _, hook = text.partition("Additional guidance from postToolUse hooks:")
                found.append(hook)
    return found


def offers_autology(agent: str, body: dict) -> bool:
    """Whether the request offers the model autology's MCP tools (the server setup registered)."""
    if agent == "codex":
        # with a catalog model (gpt-5.5) Codex defers MCP tools: the model finds them with tool_search
        return "mcp__autology" in json.dumps(body)
    if agent == "gemini":
        names = [f.get("name") for t in body.get("tools") or [] for f in t.get("functionDeclarations") or []]
        return "mcp_autology_autology_query" in names
    return "autology-autology_query" in [t.get("function", {}).get("name") for t in body.get("tools") or []]


def prompt_block(sent: str) -> str:
    """The prompt hook's memory block in a request ("" when there is none)."""
    if PROMPT_BLOCK not in sent:
        return ""
    return sent[sent.index(PROMPT_BLOCK):].split("More: autology_search")[0]


def session_nodes(project: Path) -> list[str]:
    nodes = project / ".autology" / "nodes"
    texts = [p.read_text() for p in nodes.rglob("*.md")] if nodes.is_dir() else []
    return [t for t in texts if re.search(r"^type: session$", t, re.MULTILINE)]


@pytest.mark.parametrize("name", AGENTS)
def test_hooks_reach_the_model(name: str, tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    (project / "src").mkdir(parents=True)
    (project / "src" / "retry.py").write_text("def retry(times=5):\n    pass\n")
    service = Autology.open(project)
    node = service.capture(
        "Retry billing calls with exponential backoff", ADR, type="decision", references=["src/retry.py"]
    ).id
    service.close()
    agent = Agent(name, home, project)
    env = agent.env()
    git(project, env, "init", "-q", "-b", "main")
    git(project, env, "add", "-A")
    git(project, env, "commit", "-qm", "Initial commit")

    out = run([AUTOLOGY, "--root", str(project), "setup", name, "--yes"], project, env)
    assert out.returncode == 0, out.stdout + out.stderr

    # 1. an on-topic prompt: the memory block naming the decision is in the first request
    model = agent.run(ON_TOPIC, [])
    first = model.sent()[0]
    block = prompt_block(first)
    assert block, f"no memory block in {name}'s first request"
    assert node in block
    assert "autology — project memory: 1 knowledge node(s)" in first  # session-start's recall
    assert "Project memory (autology)" in first  # the instructions section setup wrote (AGENTS.md, GEMINI.md, …)
    if name != "codex":  # Gemini and Copilot wait for the MCP server before the first request
        assert offers_autology(name, model.turns()[0]), "the MCP server setup registered is not offered to the model"

    # 2. an off-topic prompt, then read, edit, commit
    retry = agent.path("src/retry.py")
    model = agent.run(OFF_TOPIC, [read(retry), edit(retry, "    pass", "    return times"), shell(COMMIT)])
    assert "return times" in (project / "src" / "retry.py").read_text()  # the edit really ran
    assert "Tune the retry" in git(project, env, "log", "-1", "--format=%s")  # and the commit
    for sent in model.sent():
        assert PROMPT_BLOCK not in sent, "an off-topic prompt got a memory block"
    # Codex lists MCP tools once they are loaded, which can be after its first request has gone
    assert any(offers_autology(name, body) for body in model.turns()), "the MCP server is not offered to the model"
    after_read = attached(name, model.turns()[1])
    assert len(after_read) == 1
    assert GOVERNING.search(after_read[0]) and node in after_read[0], after_read
    after_edit = attached(name, model.turns()[2])
    assert node not in after_edit[1], "the edit told the decision again (it is told once per session)"
    after_commit = attached(name, model.turns()[3])
    assert POST_COMMIT in after_commit[2] and node in after_commit[2], after_commit[2]

    # the session-end hook ingested the transcript: the session is found, its node names the agent
    assert standins.transcripts(name, home), f"{name} wrote no transcript under {home}"
    for transcript in standins.transcripts(name, home):  # each session whole, its last answer included
        record = load_session(project, session_id_for(transcript))
        written, _ = parse_lines(transcript.read_text().splitlines())
        assert record is not None and [t.role for t in record.turns] == [t.role for t in written], transcript
    out = run([AUTOLOGY, "--root", str(project), "sessions", "search", "--json", "capital", "France"], project, env)
    assert out.returncode == 0, out.stdout + out.stderr
    hits = json.loads(out.stdout)
    assert any("capital of France" in h["title"] + h["text"] for h in hits), hits
    nodes = session_nodes(project)
    assert nodes, "no session node was written"
    assert any(re.search(rf"\bagent: {name}\b", t) for t in nodes), nodes

    # 3. an edit alone, in a new session: its result brings the decision
    model = agent.run(OFF_TOPIC, [edit(retry, "    return times", "    return times * 2")])
    assert "times * 2" in (project / "src" / "retry.py").read_text()
    after_edit = attached(name, model.turns()[1])
    assert GOVERNING.search(after_edit[0]) and node in after_edit[0], after_edit
    print(f"{name}: CLI runs took " + ", ".join(f"{t:.1f}" for t in agent.times) + " s")


@pytest.mark.skipif(
    standins.version_problem("copilot") is not None or shutil.which("claude") is None,
    reason="needs `copilot` at the pinned version and `claude`"
)
def test_mcp_json_serves_claude_code_and_copilot(tmp_path: Path) -> None:
    """Claude Code and Copilot CLI read the same project .mcp.json: after `setup claude-code` and then
    `setup copilot` both still load autology's server from it (Claude Code 2.1 skips an entry whose
    "type" it does not know, such as Copilot's "local"; Copilot 1.0.102 loads Claude Code's form, with
    no type or "stdio", and offers the tools as autology-autology_*)."""
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    agent = Agent("copilot", home, project)
    env = agent.env()
    git(project, env, "init", "-q", "-b", "main")
    for name in ("claude-code", "copilot"):
        out = run([AUTOLOGY, "--root", str(project), "setup", name, "--yes"], project, env)
        assert out.returncode == 0, out.stdout + out.stderr
    claude_env = {**env, "ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "ANTHROPIC_API_KEY": "not-a-key",
                  "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"}
    out = run(["claude", "mcp", "list"], project, claude_env)
    assert "Skipped" not in out.stdout + out.stderr, out.stdout + out.stderr
    out = run(["claude", "mcp", "get", "autology"], project, claude_env)
    assert out.returncode == 0 and "Project config" in out.stdout, out.stdout + out.stderr
    model = agent.run("hello", [])
    assert offers_autology("copilot", model.turns()[0])


GOVERNING_TEXT = "autology — knowledge governing "


def hook_texts(body: dict, marker: str) -> list[str]:
    """Every string of a request that holds ``marker``, from the marker to the end of the hook's text (Gemini
    closes it with </hook_context>): what the model got, undecoded by any JSON of ours."""
    found: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, str) and marker in value:
            found.append(value[value.index(marker):].split("</hook_context>")[0])
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(body)
    return found


@pytest.mark.parametrize("name", AGENTS)
def test_a_commit_subject_and_an_anchor_reach_the_model_only_quoted(name: str, tmp_path: Path) -> None:
    """Issue 38: a read of a file whose last commit's subject and message carry an instruction, governed by a
    node and by a hand-written node whose anchor carries one: the hook text the agent hands its model after
    the read has them only inside quoted strings."""
    from core_helpers import assert_read_context_quotes_the_instructions, commit_an_instruction, retry_project_with_bad_anchor

    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    node, written = retry_project_with_bad_anchor(project)
    agent = Agent(name, home, project)
    env = agent.env()
    commit_an_instruction(project, git, env)
    out = run([AUTOLOGY, "--root", str(project), "setup", name, "--yes"], project, env)
    assert out.returncode == 0, out.stdout + out.stderr

    model = agent.run(OFF_TOPIC, [read(agent.path("src/retry.py"))])
    texts = hook_texts(model.turns()[1], GOVERNING_TEXT)
    assert texts, f"the read's hook context did not reach {name}'s model"
    for text in texts:
        assert_read_context_quotes_the_instructions(text, node, written)
