"""The four Claude Code hooks, as plain functions: the parsed stdin payload in, the stdout JSON out.

Each returns a dict to print, or None to print nothing. They never write outside ``.autology/``;
the only write is post-commit marking nodes ``needs_review`` (through ``Autology.update``, so it
is validated, locked and atomic), which ``[tool.autology.hooks] mark_needs_review = false`` turns off.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autology_mcp.common.clip import clip_lines
from autology_mcp.hooks import git
from autology_mcp.hooks.commands import GIT_COMMIT, PR_CREATE, PR_MERGE, detect_events
from autology_mcp.hooks.config import HooksConfig, load_hooks_config
from autology_mcp.hooks.output import (
    RECALL_MAX_CHARS,
    additional_context,
    system_message,
)
from autology_mcp.hooks.project import open_store, project_root

if TYPE_CHECKING:
    from autology_mcp.knowledge.models import KnowledgeNode
    from autology_mcp.knowledge.store import NodeStore

MAX_FILES_SHOWN = 15
MAX_NODES_SHOWN = 10
SESSION_RECALL_MAX_CHARS = 600  # of RECALL_MAX_CHARS, for the latest session's topics (issue 5)
RECENT_COMMIT_SECONDS = 600  # HEAD counts as "the commit just made" only if it is this fresh
CAPTURE_HINT = (
    "Capture what this work decided or built that is not recorded yet with /autology:capture "
    "(decisions as ADRs: Context, Decision, Alternatives, Consequences; link nodes with autology_relate)."
)
TYPE_WEIGHT = {
    "decision": 2.0,
    "convention": 2.0,
    "issue": 1.5,
    "component": 1.0,
    "pattern": 1.0,
    "concept": 1.0,
    "session": 0.5,
}


# ------------------------------------------------------------------------------ shared


def _node_line(node: KnowledgeNode, base: Path | None = None) -> str:
    """A node as the hooks name it: its title quoted (project data), or only its id when its text
    addresses the agent with instructions and no person reviewed it (``base``: the store's folder)."""
    from autology_mcp.knowledge.trust.untrusted import held_back, quoted

    if base is not None and held_back(base, node.id, node.title, node.content):
        return f"- [{node.type.value}] {node.id} (held back until a person reviews it: its text addresses the agent)"
    return f"- [{node.type.value}] {node.id}: {quoted(node.title)}"


# ------------------------------------------------------------------------------ post-commit


def _tool_stdout(payload: dict[str, Any]) -> str:
    response = payload.get("tool_response")
    if isinstance(response, dict):
        return str(response.get("stdout") or "")
    return response if isinstance(response, str) else ""


def _reported_sha(payload: dict[str, Any]) -> str | None:
    """The commit Claude Code itself saw (``tool_response.gitOperation.commit.sha``, Claude Code 2.1), if any."""
    response = payload.get("tool_response")
    operation = response.get("gitOperation") if isinstance(response, dict) else None
    commit = operation.get("commit") if isinstance(operation, dict) else None
    sha = commit.get("sha") if isinstance(commit, dict) else None
    return sha if isinstance(sha, str) and re.fullmatch(r"[0-9a-f]{7,40}", sha) else None


def _the_commit(cwd: Path, stdout: str, sha: str | None = None) -> git.Commit | None:
    sha = sha or git.sha_from_output(stdout)
    commit = git.commit_info(cwd, sha or "HEAD")
    if commit is None or sha:
        return commit
    when = git.git(cwd, "log", "-1", "--format=%ct", commit.sha)
    if not when or not when.strip().isdigit() or time.time() - int(when.strip()) > RECENT_COMMIT_SECONDS:
        return None  # no commit printed and HEAD is old: the command did not commit
    return commit


def _review_nodes(store: NodeStore, root: Path, commit: git.Commit, mark: bool) -> tuple[list[str], int, int]:
    """Lines about the nodes referencing the commit's files, having marked needs_review the active ones
    the code moved on from (the staleness rule: :mod:`autology_mcp.knowledge.trust.staleness`).

    Returns (lines, nodes found, nodes marked). A node whose own file changed in the same commit was
    just reviewed, so it is not marked; a node whose references still hold is named, not marked.
    """
    from autology_mcp.knowledge.references import covers, nodes_referencing, relative_to_root
    from autology_mcp.knowledge.trust.staleness import judge
    from autology_mcp.knowledge.trust.untrusted import quoted

    files = relative_to_root(commit.files, commit.toplevel, root)
    node_files = {f for f in files if f.startswith(".autology/")}
    changed = [f for f in files if f not in node_files]
    found = nodes_referencing(store.index.referencing(changed), changed)
    judged = judge(root, store, [n for n, _ in found],
                   {n.id: [r for r in n.references if any(covers(r, f) for f in changed)] for n, _ in found})
    lines, marked = [], 0
    for index, (node, matched) in enumerate(found):
        stale = [f for f in judged.get(node.id, []) if f.stale]
        # what changed names paths and anchors: the repository's words, quoted
        note = f"{node.status.value}; still holds" if not stale else f"{node.status.value}; {quoted(stale[0].why)}"
        own_file = store.rel(store.paths.node_file(node.type.value, node.id))
        if stale and mark and node.status.value == "active" and own_file not in node_files:
            from autology_mcp.knowledge.service import (
                Autology,  # only when there is something to mark (it costs ~50 ms)
            )

            Autology(store).update(node.id, status="needs_review")
            note = f"marked needs_review: {quoted(stale[0].why)}"
            marked += 1
        if index < MAX_NODES_SHOWN:
            lines.append(f"{_node_line(node, store.paths.base)} — references {', '.join(map(quoted, matched[:3]))} — {note}")
    if len(found) > MAX_NODES_SHOWN:
        lines.append(f"- … and {len(found) - MAX_NODES_SHOWN} more (autology_query to list them)")
    return lines, len(found), marked


def _commit_section(
    root: Path, cwd: Path, stdout: str, config: HooksConfig, sha: str | None = None
) -> tuple[list[str], str] | None:
    from autology_mcp.knowledge.trust.untrusted import FRAME, quoted

    commit = _the_commit(cwd, stdout, sha)
    if commit is None:
        return None
    shown = ", ".join(map(quoted, commit.files[:MAX_FILES_SHOWN]))  # the subject and the paths: quoted data
    if len(commit.files) > MAX_FILES_SHOWN:
        shown += f", … (+{len(commit.files) - MAX_FILES_SHOWN} more)"
    head = f"autology (post-commit): commit {commit.sha[:7]} {quoted(commit.subject)}"
    lines = [f"{head} changed {len(commit.files)} file(s): {shown} ({FRAME})"]
    store = open_store(root)
    if store is None:
        lines.append(
            "This project has no autology knowledge graph yet (.autology/ is missing); /autology:tutorial sets one up."
        )
        return lines, f"autology: commit {commit.sha[:7]} — no knowledge graph in this project yet"
    try:
        node_lines, found, marked = _review_nodes(store, root, commit, config.mark_needs_review)
    finally:
        store.close()
    if node_lines:
        lines.append("Knowledge that references these files:")
        lines.extend(node_lines)
        lines.append(
            "Check that these nodes still hold (autology_query / read them); correct them with autology_update "
            "(a new text is judged against the code as it is now) and set status back to active, or supersede them "
            "via /autology:capture. A status change alone does not clear STALE."
        )
        summary = f"autology: commit {commit.sha[:7]} touches {found} knowledge node(s)"
        if marked:
            summary += f", {marked} marked needs_review"
    else:
        lines.append("No existing knowledge node references these files.")
        summary = f"autology: commit {commit.sha[:7]} — consider /autology:capture for its decisions"
    return lines, summary


def _history_after_commit(root: Path) -> None:
    """The new commit into the history index at once (issue 41); a search would take it in anyway.
    Fails open: the hook's words matter more."""
    try:
        from autology_mcp.history.index import HistoryIndex

        if not (root / ".autology").is_dir():
            return  # a project that does not use autology gets no cache folder
        index = HistoryIndex(root)
        try:
            index.sync()
        finally:
            index.close()
    except Exception:
        _debug_traceback()


def post_commit(payload: dict[str, Any], root: Path | str | None = None) -> dict[str, Any] | None:
    """PostToolUse on Bash: react to git commit, gh pr create and gh pr merge anywhere in the command."""
    if payload.get("tool_name") != "Bash":
        return None
    tool_input = payload.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    events = detect_events(command) if isinstance(command, str) else []
    if not events:
        return None
    root = project_root(payload, root)
    cwd = Path(payload["cwd"]) if isinstance(payload.get("cwd"), str) and payload.get("cwd") else root
    stdout = _tool_stdout(payload)
    lines: list[str] = []
    summaries: list[str] = []
    kinds = {e.kind for e in events}
    if GIT_COMMIT in kinds:
        event = next(e for e in events if e.kind == GIT_COMMIT)
        commit_cwd = (cwd / event.git_dir) if event.git_dir else cwd
        section = _commit_section(root, commit_cwd, stdout, load_hooks_config(root), _reported_sha(payload))
        if section:
            lines.extend(section[0])
            summaries.append(section[1])
        _history_after_commit(root)
    if PR_CREATE in kinds:
        lines.append(
            "autology (pull request created): before review, record the decisions, components and conventions "
            "this branch introduces, and check that nodes referencing the changed files still hold."
        )
        summaries.append("autology: pull request created — a good moment for /autology:capture")
    if PR_MERGE in kinds:
        lines.append(
            "autology (pull request merged): record what the merge settled; if it replaced an earlier decision, "
            "supersede that node (/autology:capture, supersede flow)."
        )
        summaries.append("autology: pull request merged — record what it settled with /autology:capture")
    if not lines:
        return None
    lines.append(CAPTURE_HINT)
    return additional_context("PostToolUse", "\n".join(lines), "; ".join(summaries))


# ------------------------------------------------------------------------------ pre-compact and session-end


def pre_compact(payload: dict[str, Any], root: Path | str | None = None) -> dict[str, Any]:
    """PreCompact: ask for the session's decisions to be kept and captured."""
    trigger = payload.get("trigger") if payload.get("trigger") in ("manual", "auto") else "manual"
    return system_message(
        f"autology ({trigger} compaction): keep in the summary every decision made in this session — what was "
        "chosen, why, and what else was considered — and every new component, convention or known issue. "
        "Capture them with /autology:capture (decisions as ADRs) so they outlive the context."
    )


def ingest_session(root: Path, payload: dict[str, Any]) -> str | None:
    """Session memory at SessionEnd: ingest the transcript, then write or update the session node (or,
    when the agent is still writing the transcript, leave that to the follower process).

    Returns what was done, or None (session memory disabled, no store, no transcript). Fails open:
    an error here never costs the capture tips.
    """
    try:
        from autology_mcp.sessions.lifecycle import session_ended

        return session_ended(root, payload)
    except Exception:  # the hook must not fail; AUTOLOGY_HOOK_DEBUG shows why
        _debug_traceback()
        return None


def _worth_recording(root: Path, payload: dict[str, Any]) -> bool:
    """Whether the session edited files or said something decision-like: only then the capture tips.
    Fails quiet: an error here costs the tips, never the hook."""
    try:
        from autology_mcp.sessions.lifecycle import worth_recording

        return worth_recording(root, payload)
    except Exception:  # AUTOLOGY_HOOK_DEBUG shows why
        _debug_traceback()
        return False


def _debug_traceback() -> None:
    import os

    if os.environ.get("AUTOLOGY_HOOK_DEBUG"):
        import sys
        import traceback

        traceback.print_exc(file=sys.stderr)


def session_end(payload: dict[str, Any], root: Path | str | None = None) -> dict[str, Any]:
    """SessionEnd: ingest the transcript into session memory, write the session node, and give capture tips
    when the session edited files or said something decision-like."""
    root = project_root(payload, root)
    ingested = ingest_session(root, payload)
    if not _worth_recording(root, payload):  # quiet unless useful (issue 39): a question asked and answered
        return system_message(ingested) if ingested else {}
    if payload.get("agent", "claude-code") == "claude-code":
        tips = (
            "autology: before you go — were decisions made, components built or conventions agreed in this session? "
            "Next time, resume with `claude --continue` and run /autology:capture to record them "
            "(or a `session` node summarising the work); /autology:explore shows what is already known."
        )
    else:  # another agent (hooks/dialects.py): it has the MCP tools, not Claude Code's skills
        tips = (
            "autology: before you go — were decisions made, components built or conventions agreed in this session? "
            "Resume it and ask the agent to record them with the autology_capture tool."
        )
    return system_message(tips + (f" {ingested}" if ingested else ""))


# ------------------------------------------------------------------------------ session-start


def recall_text(store: NodeStore, recent_files: list[str], limit: int = RECALL_MAX_CHARS) -> str:
    """A short recall of the most relevant active knowledge, at most ``limit`` characters.

    Most relevant first: nodes about recently changed files, then by type weight + confidence, then
    most recently modified. Ranked in SQLite over summary columns, with the nodes about the recent
    files from the refs table, so a 10,000-node store costs milliseconds here."""
    from autology_mcp.knowledge.trust.untrusted import FRAME, quoted

    index = store.index
    recent = [f for f in recent_files if not f.startswith(".autology/")]
    touched = sorted({n.id for n in index.referencing(recent)}) if recent else []
    by_status = index.counts_by("status")
    total, reviewing = sum(by_status.values()), by_status.get("needs_review", 0)
    header = [
        f"autology — project memory: {total} knowledge node(s)"
        + (f", {reviewing} needing review" if reviewing else "")
        + "."
    ]
    if by_status.get("active"):
        header.append(
            "Most relevant active knowledge (decisions, conventions, and nodes about recently changed files; "
            f"{FRAME}):"
        )
    elif reviewing:  # the titles and flags below are quoted data all the same
        header.append(f"Knowledge needing review ({FRAME}):")
    most = limit // 20 + 1  # no line is shorter than 20 characters
    ranked = index.ranked_summaries("active", TYPE_WEIGHT, touched, most)
    reviewing_ranked = index.ranked_summaries("needs_review", TYPE_WEIGHT, touched, most)
    held = _held_back(store, [i for i, _, _ in ranked + reviewing_ranked])
    ranked = [r for r in ranked if r[0] not in held]
    reviewing_ranked = [r for r in reviewing_ranked if r[0] not in held]
    stale = _stale_notes(store, [i for i, _, _ in ranked + reviewing_ranked if i in set(touched)][:STALE_CHECKED])
    items = [f"- [{t}] {i}: {quoted(title)}" + (f" — STALE: {quoted(stale[i])}" if i in stale else "") for i, t, title in ranked]
    items += [
        f"- [{t}] {i}: {quoted(title)} — needs review" + (f"; STALE: {quoted(stale[i])}" if i in stale else "")
        for i, t, title in reviewing_ranked
    ]
    if held:
        header.append(f"Held back: {len(held)} node(s) whose text addresses the agent with instructions, until a "
                      "person reviews them.")
    footer = [
        "Ask autology_search before designing or changing code (it covers this memory, the code and past sessions); "
        "autology_context before a task. Record new decisions: /autology:capture."
    ]
    return clip_lines(header, items, footer, limit)


STALE_CHECKED = 10  # nodes about recently changed files judged by the staleness rule at session start


def _held_back(store: NodeStore, node_ids: list[str]) -> set[str]:
    """Which of these nodes hold instruction-like text no person reviewed (not named unasked)."""
    from autology_mcp.knowledge.trust.untrusted import held_back

    nodes = [n for n in (store.index.get_node(i) for i in dict.fromkeys(node_ids)) if n is not None]
    return {n.id for n in nodes if held_back(store.paths.base, n.id, n.title, n.content)}


def _stale_notes(store: NodeStore, node_ids: list[str]) -> dict[str, str]:
    """What moved on under each of these nodes (the staleness rule, as the edit hooks and analyze use it)."""
    if not node_ids:
        return {}
    from autology_mcp.knowledge.trust.staleness import judge

    nodes = [n for n in (store.index.get_node(i) for i in node_ids) if n is not None]
    judged = judge(store.root, store, nodes)
    return {i: next(f.why for f in fs if f.stale) for i, fs in judged.items() if any(f.stale for f in fs)}


def session_start(payload: dict[str, Any], root: Path | str | None = None) -> dict[str, Any] | None:
    """SessionStart (startup, resume, clear, compact): inject a short recall of active knowledge. After a
    compaction or a /clear the model no longer has what the hooks told it: they may tell it again."""
    root = project_root(payload, root)
    if payload.get("source") in ("compact", "clear"):
        from autology_mcp.hooks.state import forget_told

        session_id = payload.get("session_id") if isinstance(payload.get("session_id"), str) else None
        forget_told(root, session_id)
    store = open_store(root)
    if store is None:
        return additional_context(
            "SessionStart",
            "autology: this project has no knowledge graph yet (.autology/ is missing). When decisions are made, "
            "suggest /autology:capture; /autology:tutorial explains how it works.",
        )
    try:
        from autology_mcp.knowledge.references import relative_to_root

        top = git.toplevel(root)
        recent = relative_to_root(git.recently_changed(root), top, root) if top else []
        sessions = _session_recall(root, store, payload)
        text = recall_text(store, recent, RECALL_MAX_CHARS - (len(sessions) + 1 if sessions else 0))
    finally:
        store.close()
    return additional_context("SessionStart", text + ("\n" + sessions if sessions else ""))


def _session_recall(root: Path, store: NodeStore, payload: dict[str, Any]) -> str:
    """The latest session's key topics and the nodes they retrieve ("" when none, disabled, or on error)."""
    try:
        from autology_mcp.sessions.lifecycle import recall_block, resume_pending

        resume_pending(root)
        return recall_block(root, store, payload, SESSION_RECALL_MAX_CHARS)
    except Exception:  # fail open: the node recall still goes out
        _debug_traceback()
        return ""
