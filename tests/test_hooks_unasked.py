"""Memory that reaches the agent unasked: the UserPromptSubmit and PreToolUse (edit) hooks on
real-shaped payloads, against temp git repositories with real stores."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from core_helpers import GIT_ENV, git

from autology_mcp.hooks import run
from autology_mcp.hooks.edit import post_read, pre_tool_use
from autology_mcp.hooks.prompt import is_trivial, prompt_query, user_prompt_submit
from autology_mcp.hooks.state import session_state, state_dir
from autology_mcp.knowledge.service import Autology

ADR = "## Context\nWhy.\n\n## Decision\n{decision}\n\n## Alternatives\nOthers.\n\n## Consequences\nEffects."
RETRY_PY = "import time\n\n\ndef helper():\n    return 1\n\n\ndef retry(times=3):\n    for i in range(times):\n        time.sleep(2**i)\n"


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AUTOLOGY_ROOT", "CLAUDE_PROJECT_DIR"):
        monkeypatch.delenv(name, raising=False)
    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "retry.py").write_text(RETRY_PY)
    (root / "src" / "other.py").write_text("x = 1\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Initial commit")
    Autology.open(root).close()
    return root


def capture(root: Path, title: str, content: str, type: str = "decision", refs: list[str] | None = None, **kw) -> str:
    service = Autology.open(root)
    try:
        if type == "decision" and "## Context" not in content:
            content = ADR.format(decision=content)
        return service.capture(title, content, type=type, references=refs, **kw).id
    finally:
        service.close()


def set_status(root: Path, node_id: str, status: str) -> None:
    service = Autology.open(root)
    try:
        service.update(node_id, status=status)
    finally:
        service.close()


def context_of(output: dict | None) -> str:
    assert output is not None, "the hook injected nothing"
    return output["hookSpecificOutput"]["additionalContext"]


# ------------------------------------------------------------------------------ UserPromptSubmit


@pytest.fixture
def memory(repo: Path) -> dict[str, str]:
    """A store where questions about the websocket reconnect policy have grounded answers."""
    ids = {
        "decision": capture(
            repo, "Reconnect the websocket with exponential backoff",
            "Reconnect the websocket with exponential backoff capped at 30 seconds, with jitter.",
        ),
        "convention": capture(
            repo, "Websocket reconnect attempts are logged at warning level",
            "Every websocket reconnect attempt logs one warning line with the attempt number.", type="convention",
        ),
        "component": capture(
            repo, "Websocket client", "The websocket client owns the connection and its reconnect loop.",
            type="component",
        ),
        "other": capture(repo, "Invoice numbering", "Invoices are numbered per tenant and year.", type="convention"),
    }
    return ids


def prompt_payload(root: Path, prompt: str, session: str = "s1") -> dict:
    return {"session_id": session, "cwd": str(root), "hook_event_name": "UserPromptSubmit", "prompt": prompt}


def test_prompt_with_grounded_evidence_gets_a_compact_block(repo: Path, memory: dict[str, str]) -> None:
    text = context_of(user_prompt_submit(prompt_payload(repo, "How do we reconnect the websocket?")))
    assert text.startswith("autology — project memory relevant to this prompt")
    assert memory["decision"] in text and memory["convention"] in text
    assert memory["other"] not in text
    items = [line for line in text.split("\n") if line.startswith("- ")]
    assert 1 <= len(items) <= 5
    assert all('"' in line and "matched:" in line for line in items), items  # a proof line and why it matched
    # decisions, conventions and open issues come before other kinds of hits
    kinds = [line.split("]")[0] for line in items]
    governing = [i for i, k in enumerate(kinds) if k.startswith(("- [decision", "- [convention", "- [issue"))]
    assert governing == list(range(len(governing)))


def test_why_an_item_matched_names_no_one_letter_term() -> None:
    """"websocket's" gives the terms websocket and s; only the first says why an item is there (the
    lone s would match "sets", "so" and most short words starting with s)."""
    from autology_mcp.common.text import keyword_terms
    from autology_mcp.hooks.prompt import _matched_words

    terms = keyword_terms("How do we reconnect the websocket's client?")
    assert "s" in terms
    assert _matched_words(terms, "The websocket client sets a short timeout so it reconnects.") == [
        "reconnect", "websocket", "client"]


def test_no_item_is_injected_twice_in_a_session(repo: Path, memory: dict[str, str]) -> None:
    first = context_of(user_prompt_submit(prompt_payload(repo, "websocket reconnect backoff")))
    assert memory["decision"] in first
    again = user_prompt_submit(prompt_payload(repo, "websocket reconnect backoff"))
    if again is not None:  # only items not injected before may come back
        assert memory["decision"] not in context_of(again)
    other_session = context_of(user_prompt_submit(prompt_payload(repo, "websocket reconnect backoff", session="s2")))
    assert memory["decision"] in other_session


@pytest.mark.parametrize(
    "prompt",
    [
        "yes",
        "go on",
        "ok, thanks!",
        "Sounds good, please continue",
        "/compact",
        "/autology:capture the websocket decision",
        "   ",
        "kubernetes autoscaling thresholds for the billing cluster",  # no evidence anywhere
    ],
)
def test_nothing_is_injected_for_trivial_slash_or_unfounded_prompts(repo: Path, memory: dict, prompt: str) -> None:
    assert user_prompt_submit(prompt_payload(repo, prompt)) is None
    assert run("user-prompt-submit", json.dumps(prompt_payload(repo, prompt))) is None


def test_weak_evidence_is_not_injected(repo: Path, memory: dict[str, str]) -> None:
    from autology_mcp.retrieval.engine import search

    prompt = "How do we reconnect the kafka consumer after a broker failover?"
    assert search(repo, prompt_query(prompt))["verdict"] == "weak"  # the premise: only "reconnect" is known
    assert user_prompt_submit(prompt_payload(repo, prompt)) is None


def test_trivial_and_filler_words() -> None:
    assert is_trivial("Yes, go ahead.") and is_trivial("ok 2") and is_trivial("please continue")
    assert not is_trivial("http2") and not is_trivial("why redis?")
    assert prompt_query("Could you please explain how we should retry uploads?") == "you how we retry uploads?"


def test_prompt_hook_configuration(repo: Path, memory: dict[str, str]) -> None:
    prompt = "How do we reconnect the websocket?"
    (repo / "pyproject.toml").write_text("[tool.autology.hooks]\nprompt_max_items = 1\n")
    text = context_of(user_prompt_submit(prompt_payload(repo, prompt)))
    assert len([line for line in text.split("\n") if line.startswith("- ")]) == 1
    (repo / "pyproject.toml").write_text("[tool.autology.hooks]\nprompt_max_tokens = 100\n")
    text = context_of(user_prompt_submit(prompt_payload(repo, prompt, session="s3")))
    assert len(text) <= 400
    (repo / "pyproject.toml").write_text("[tool.autology.hooks]\nprompt_context = false\n")
    assert user_prompt_submit(prompt_payload(repo, prompt, session="s4")) is None
    (repo / "pyproject.toml").write_text('[tool.autology.hooks]\nprompt_max_items = "many"\nprompt_max_tokens = 7\n')
    text = context_of(user_prompt_submit(prompt_payload(repo, prompt, session="s5")))  # bad values: the defaults
    assert 1 <= len([line for line in text.split("\n") if line.startswith("- ")]) <= 5


def test_superseded_nodes_are_never_injected(repo: Path, memory: dict[str, str]) -> None:
    set_status(repo, memory["decision"], "superseded")
    out = user_prompt_submit(prompt_payload(repo, "websocket reconnect exponential backoff"))
    assert out is None or memory["decision"] not in context_of(out)


def test_project_without_store_gets_nothing_and_no_store_is_created(tmp_path: Path) -> None:
    assert user_prompt_submit(prompt_payload(tmp_path, "How do we reconnect the websocket?")) is None
    assert not (tmp_path / ".autology").exists()


# ------------------------------------------------------------------------------ PreToolUse on edits


def edit_payload(root: Path, file: str, old: str | None = "time.sleep(2**i)", tool: str = "Edit", session="s1") -> dict:
    tool_input: dict = {"file_path": file}
    if tool == "Edit":
        tool_input |= {"old_string": old, "new_string": "pass"}
    elif tool == "MultiEdit":
        tool_input["edits"] = [{"old_string": old, "new_string": "pass"}]
    elif tool == "Write":
        tool_input["content"] = "x = 2\n"
    elif tool == "NotebookEdit":
        tool_input = {"notebook_path": file, "new_source": "x"}
    elif tool == "Read" and old is not None:
        tool_input |= dict(zip(("offset", "limit"), map(int, old.split(","))))
    return {"session_id": session, "cwd": str(root), "hook_event_name": "PreToolUse", "tool_name": tool,
            "tool_input": tool_input}


@pytest.mark.parametrize("tool", ["Edit", "Write", "MultiEdit", "NotebookEdit"])
def test_edit_names_the_governing_decision(repo: Path, tool: str) -> None:
    node = capture(repo, "Retry with exponential backoff", "Retries back off exponentially.", refs=["src/retry.py"])
    text = context_of(pre_tool_use(edit_payload(repo, str(repo / "src" / "retry.py"), tool=tool)))
    assert text.startswith('autology — knowledge governing "src/retry.py", before you edit it')
    assert node in text and '"Retries back off exponentially."' in text


def test_edit_hook_speaks_once_per_file_per_session(repo: Path) -> None:
    capture(repo, "Retry with exponential backoff", "Retries back off exponentially.", refs=["src/retry.py"])
    assert pre_tool_use(edit_payload(repo, "src/retry.py")) is not None  # relative to cwd
    assert pre_tool_use(edit_payload(repo, str(repo / "src" / "retry.py"))) is None
    assert pre_tool_use(edit_payload(repo, "src/retry.py", session="other")) is not None


def test_edit_hook_only_names_decisions_conventions_and_open_issues(repo: Path) -> None:
    component = capture(repo, "Retry module", "Holds retry.", type="component", refs=["src/retry.py"])
    concept = capture(repo, "Backoff", "Waiting longer each time.", type="concept", refs=["src"])
    convention = capture(repo, "Sleep through time.sleep", "Use time.sleep.", type="convention", refs=["src"])
    issue = capture(repo, "Retry never gives up", "No cap on attempts.", type="issue", refs=["src/retry.py"])
    old = capture(repo, "Retry forever", "Retry without a limit.", refs=["src/retry.py"])
    set_status(repo, old, "superseded")
    review = capture(repo, "Three attempts", "Retry three times.", refs=["src/retry.py"])
    set_status(repo, review, "needs_review")
    text = context_of(pre_tool_use(edit_payload(repo, "src/retry.py")))
    assert convention in text and issue in text and review in text and "needs review" in text
    assert component not in text and concept not in text and old not in text


def test_line_ranges_and_symbols_must_overlap_the_edit(repo: Path) -> None:
    lines_hit = capture(repo, "Loop bounds", "Bounded loop.", refs=["src/retry.py#L8-10"])
    lines_miss = capture(repo, "Helper returns one", "Keep helper at 1.", refs=["src/retry.py#L4-5"])
    symbol_hit = capture(repo, "Retry signature", "Keep times.", refs=["src/retry.py#retry"])
    symbol_miss = capture(repo, "Helper contract", "Helper is pure.", refs=["src/retry.py#helper"])
    text = context_of(pre_tool_use(edit_payload(repo, "src/retry.py", old="time.sleep(2**i)")))
    assert lines_hit in text and symbol_hit in text
    assert lines_miss not in text and symbol_miss not in text
    # a whole-file write touches every range
    text = context_of(pre_tool_use(edit_payload(repo, "src/retry.py", tool="Write", session="w")))
    assert all(n in text for n in (lines_hit, lines_miss, symbol_hit, symbol_miss))
    # an edit whose text is no longer in the file: its lines are unknown, so every reference counts
    text = context_of(pre_tool_use(edit_payload(repo, "src/retry.py", old="not in the file", session="u")))
    assert lines_miss in text


def test_stale_flag_when_the_code_moved_on_uncommitted(repo: Path) -> None:
    node = capture(repo, "Retry with exponential backoff", "`retry` sleeps `2**i` seconds.", refs=["src/retry.py"])
    text = context_of(pre_tool_use(edit_payload(repo, "src/retry.py")))
    assert "STALE" not in text  # committed before the node was written
    later = time.time() + 5
    (repo / "src" / "retry.py").write_text(RETRY_PY + "# a comment changes nothing the node says\n")
    os.utime(repo / "src" / "retry.py", (later, later))
    assert "STALE" not in context_of(pre_tool_use(edit_payload(repo, "src/retry.py", session="s2")))
    (repo / "src" / "retry.py").write_text(RETRY_PY.replace("def retry(", "def attempt("))
    text = context_of(pre_tool_use(edit_payload(repo, "src/retry.py", session="s3")))
    assert node in text and 'STALE: "`retry` is gone from src/retry.py (uncommitted)"' in text


def test_stale_flag_when_a_later_commit_changed_what_the_node_says(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    node = capture(repo, "Retry with exponential backoff", "`retry` sleeps `2**i` seconds.", refs=["src/retry.py"])
    git(repo, "add", ".autology/nodes")
    git(repo, "commit", "-qm", "Record the retry decision")  # the node's own commit does not make it stale
    assert "STALE" not in context_of(pre_tool_use(edit_payload(repo, "src/retry.py")))
    (repo / "src" / "retry.py").write_text(RETRY_PY + "# changed\n")
    monkeypatch.setenv("GIT_COMMITTER_DATE", f"@{int(time.time()) + 30} +0000")
    git(repo, "commit", "-qam", "Comment the retry loop")
    text = context_of(pre_tool_use(edit_payload(repo, "src/retry.py", session="s2")))
    assert "STALE" not in text and 'still holds; "1 later commit, the last: Comment the retry loop (' in text
    (repo / "src" / "retry.py").write_text(RETRY_PY.replace("def retry(", "def attempt("))
    git(repo, "commit", "-qam", "Rename retry")
    text = context_of(pre_tool_use(edit_payload(repo, "src/retry.py", session="s3")))
    assert node in text and 'STALE: "`retry` is gone from src/retry.py (' in text


@pytest.mark.parametrize("file", ["/etc/passwd", "../outside.py", ".autology/nodes/decisions/x.md", "src/other.py"])
def test_edits_outside_the_project_or_ungoverned_are_silent(repo: Path, file: str) -> None:
    capture(repo, "Retry with exponential backoff", "Retries back off exponentially.", refs=["src/retry.py"])
    assert pre_tool_use(edit_payload(repo, file)) is None


def test_edit_hook_can_be_turned_off_and_ignores_other_tools(repo: Path) -> None:
    capture(repo, "Retry with exponential backoff", "Retries back off exponentially.", refs=["src/retry.py"])
    payload = edit_payload(repo, "src/retry.py")
    assert pre_tool_use({**payload, "tool_name": "Read"}) is None
    assert pre_tool_use({**payload, "tool_input": "src/retry.py"}) is None
    (repo / "pyproject.toml").write_text("[tool.autology.hooks]\nedit_context = false\n")
    assert pre_tool_use(payload) is None


def read_payload(root: Path, file: str, lines: str | None = None, session: str = "s1") -> dict:
    payload = edit_payload(root, file, old=lines, tool="Read", session=session)
    return {**payload, "hook_event_name": "PostToolUse", "tool_response": {"type": "text"}}


def test_reading_a_governed_file_names_its_knowledge_once(repo: Path) -> None:
    node = capture(repo, "Retry with exponential backoff", "Retries back off exponentially.", refs=["src/retry.py"])
    out = post_read(read_payload(repo, str(repo / "src" / "retry.py")))
    assert out["hookSpecificOutput"]["hookEventName"] == "PostToolUse" and node in context_of(out)
    assert post_read(read_payload(repo, "src/retry.py")) is None  # once per file per session
    assert pre_tool_use(edit_payload(repo, "src/retry.py")) is None  # told on Read: not again on the edit
    assert pre_tool_use(edit_payload(repo, "src/retry.py", session="s2")) is not None


def test_read_ranges_must_overlap_line_references(repo: Path) -> None:
    loop = capture(repo, "Loop bounds", "Bounded loop.", refs=["src/retry.py#L8-10"])
    helper = capture(repo, "Helper returns one", "Keep helper at 1.", refs=["src/retry.py#helper"])
    text = context_of(post_read(read_payload(repo, "src/retry.py", lines="7,4")))  # lines 7-10
    assert loop in text and helper not in text
    text = context_of(post_read(read_payload(repo, "src/retry.py", session="whole")))  # the whole file
    assert loop in text and helper in text


def test_read_hook_can_be_turned_off_on_its_own(repo: Path) -> None:
    capture(repo, "Retry with exponential backoff", "Retries back off exponentially.", refs=["src/retry.py"])
    (repo / "pyproject.toml").write_text("[tool.autology.hooks]\nread_context = false\n")
    assert post_read(read_payload(repo, "src/retry.py")) is None
    assert pre_tool_use(edit_payload(repo, "src/retry.py")) is not None
    assert post_read({**read_payload(repo, "src/retry.py", session="x"), "tool_name": "Edit"}) is None


# ------------------------------------------------------------------------------ the command and the state


@pytest.mark.parametrize("event", ["user-prompt-submit", "pre-tool-use", "post-read"])
@pytest.mark.parametrize("stdin", ["", "not json", "[1, 2]", '{"prompt": 5}', '{"tool_name": "Edit"}'])
def test_malformed_input_is_silent(event: str, stdin: str) -> None:
    assert run(event, stdin) is None


@pytest.mark.parametrize("event", ["user-prompt-submit", "pre-tool-use"])
def test_both_commands_run_and_exit_zero(repo: Path, memory: dict[str, str], event: str) -> None:
    payload = prompt_payload(repo, "websocket reconnect backoff") if event == "user-prompt-submit" else edit_payload(
        repo, "src/retry.py"
    )
    if event == "pre-tool-use":
        capture(repo, "Retry with exponential backoff", "Retries back off exponentially.", refs=["src/retry.py"])
    out = subprocess.run(
        [sys.executable, "-m", "autology_mcp.hooks", event], input=json.dumps(payload), capture_output=True, text=True
    )
    assert out.returncode == 0 and out.stderr == ""
    hook = json.loads(out.stdout)["hookSpecificOutput"]
    assert hook["hookEventName"] == ("UserPromptSubmit" if event == "user-prompt-submit" else "PreToolUse")
    assert "permissionDecision" not in hook  # the edit hook informs; it never allows or denies
    assert hook["additionalContext"].startswith("autology — ")


def test_session_state_is_safe_and_pruned(repo: Path) -> None:
    with session_state(repo, "../../etc/evil") as state:
        state["prompt"] = ["a"]
    files = list(state_dir(repo).iterdir())
    assert [f.name for f in files] == ["session-.._.._etc_evil.json"] and files[0].parent == state_dir(repo)
    with session_state(repo, "../../etc/evil") as state:
        assert state == {"prompt": ["a"]}
    old = state_dir(repo) / "session-old.json"
    old.write_text('{"prompt": ["x"]}')
    os.utime(old, (time.time() - 8 * 86400,) * 2)
    with session_state(repo, "new") as state:
        state["edit"] = ["src/a.py"]
    assert not old.exists()
    with session_state(repo, None) as state:  # no session id: nothing is kept
        state["prompt"] = ["b"]
    assert sorted(f.name for f in state_dir(repo).iterdir()) == ["session-.._.._etc_evil.json", "session-new.json"]
    (state_dir(repo) / "session-new.json").write_text("{broken")
    with session_state(repo, "new") as state:  # a damaged file starts over
        assert state == {}


def test_code_evidence_changed_since_indexing_is_not_injected(repo: Path, memory: dict[str, str]) -> None:
    """Code no knowledge node covers is injected while its file is as indexed, and not once it changed."""
    from autology_mcp.code import service as code_index
    from autology_mcp.retrieval.engine import search

    (repo / "src" / "tokens.py").write_text(
        "def rotate_session_token(session):\n    # rotate the session token every hour\n    return session.renew()\n"
    )
    git(repo, "add", "src/tokens.py")  # the index covers tracked files
    code_index.build_index(repo)
    prompt = "How do we rotate the session token?"
    answer = search(repo, prompt_query(prompt), refresh_code=False, detail="brief")
    code_hits = [h for h in answer["hits"] if h["path"] == "src/tokens.py"]
    assert code_hits and not any(h.get("stale") for h in code_hits)
    assert "src/tokens.py" in context_of(user_prompt_submit(prompt_payload(repo, prompt)))
    (repo / "src" / "tokens.py").write_text("def rotate_session_token(session):\n    return session  # no more rotation\n")
    answer = search(repo, prompt_query(prompt), refresh_code=False, detail="brief")
    assert all(h.get("stale") for h in answer["hits"] if h["path"] == "src/tokens.py")  # the index was not refreshed
    out = user_prompt_submit(prompt_payload(repo, prompt, session="later"))
    assert out is None or "src/tokens.py" not in context_of(out)
