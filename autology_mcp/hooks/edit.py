"""The knowledge that governs a file, told to the agent when it reads the file and before it edits it.

Two events, one rule, once per file per session:

- **PostToolUse on Read** (``autology hook post-read``): the model reads a file before it may edit it
  (Claude Code refuses an Edit of a file not read first), so this is the moment the governing
  knowledge arrives *before* the model composes an edit. It comes with the Read's result.
- **PreToolUse on Edit, Write, MultiEdit and NotebookEdit** (``autology hook pre-tool-use``): for a
  file the session did not read (a Write of a new file). Claude Code 2.1 hands this context to the
  model together with the tool's result, that is after the edit ran (tests/test_hooks_claude_e2e.py).

A node governs a file when one of its references covers it: the file itself, a folder above it, a
``#L10-40`` range that overlaps the lines read or edited (when they can be told), or a
``#symbol`` whose definition overlaps them (Python files; elsewhere a symbol reference counts as
covering the file); or a reference to a file that was moved here (:func:`moved_here`). Only
decisions, conventions and issues that are not superseded are named. A node whose words the code may
no longer bear out is flagged ``STALE`` with what changed (a name it mentions gone or deprecated, its
lines or symbol changed beyond formatting, the file mostly rewritten or moved:
:mod:`autology_mcp.knowledge.trust.staleness`, the same rule as ``autology_analyze``'s references
category); later commits that changed none of that are said as information ("still holds; 3 later
commits, the last: …").

Once per session: a file is looked at once, and a node is told once, whichever file (or the prompt
hook) brought it first, so a decision about a folder speaks at the first file under it and not again
(:mod:`autology_mcp.hooks.state`). Every string from the repository in the note (node text, paths,
references, what changed, commit subjects) is quoted project data, and a node whose text addresses
the agent with instructions is held back until a person reviews it
(:mod:`autology_mcp.knowledge.trust.untrusted`).
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autology_mcp.common.clip import clip_lines
from autology_mcp.hooks.config import load_hooks_config
from autology_mcp.hooks.output import additional_context
from autology_mcp.hooks.project import open_store, project_root
from autology_mcp.hooks.state import session_state, told_nodes
from autology_mcp.knowledge.trust.untrusted import FRAME, held_back, quoted

if TYPE_CHECKING:
    from autology_mcp.knowledge.models import KnowledgeNode

EDIT_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")
GOVERNING = ("decision", "convention", "issue")
MAX_CHARS = 1600
MAX_NODES = 8
READ_LIMIT = 2_000_000  # bytes: a larger file's edit lines are not looked up (every range then counts)
_LINES = re.compile(r"^L(\d+)(?:-L?(\d+))?$")


def target_file(payload: dict[str, Any], tools: tuple[str, ...]) -> str | None:
    """The file a Read or an edit tool works on (``file_path``, or ``notebook_path`` for NotebookEdit)."""
    tool_input = payload.get("tool_input")
    if payload.get("tool_name") not in tools or not isinstance(tool_input, dict):
        return None
    path = tool_input.get("file_path") or tool_input.get("notebook_path")
    return path if isinstance(path, str) and path.strip() else None


def relative_path(file: str, cwd: Path, root: Path) -> str | None:
    """The file relative to the project root; None outside it or inside ``.autology/``."""
    path = Path(file) if os.path.isabs(file) else cwd / file
    try:
        rel = Path(os.path.normpath(path)).relative_to(os.path.normpath(root)).as_posix()
    except ValueError:
        return None
    return None if rel in (".", "") or rel.startswith(".autology/") or rel.startswith("../") else rel


def touched_lines(payload: dict[str, Any], file: Path) -> list[tuple[int, int]] | None:
    """The 1-based line ranges a Read shows (``offset``, ``limit``) or an Edit or MultiEdit replaces in
    the current file; None when unknown or the whole file (a Read of all of it, Write, NotebookEdit,
    or an edit text not found in the file because it moved on)."""
    tool_input = payload["tool_input"]
    if payload["tool_name"] == "Read":
        offset, limit = tool_input.get("offset"), tool_input.get("limit")
        if not isinstance(offset, int) and not isinstance(limit, int):
            return None
        start = offset if isinstance(offset, int) and offset > 0 else 1
        return [(start, start + limit - 1 if isinstance(limit, int) and limit > 0 else 10**9)]
    if payload["tool_name"] == "Edit":
        olds = [tool_input.get("old_string")]
    elif payload["tool_name"] == "MultiEdit" and isinstance(tool_input.get("edits"), list):
        olds = [e.get("old_string") for e in tool_input["edits"] if isinstance(e, dict)]
    else:
        return None
    try:
        if file.stat().st_size > READ_LIMIT:
            return None
        text = file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    ranges = []
    for old in olds:
        if not isinstance(old, str) or not old or old not in text:
            return None
        start = text.count("\n", 0, text.index(old)) + 1
        ranges.append((start, start + old.count("\n")))
    return ranges or None


def symbol_lines(file: Path, symbol: str) -> tuple[int, int] | None:
    """Lines of a Python function or class (``name`` or ``Class.method``); None when not found."""
    from autology_mcp.knowledge.trust.symbol_rules import symbol_span

    if file.suffix != ".py":
        return None
    try:
        return symbol_span(file.read_text(encoding="utf-8", errors="replace"), symbol, file.name)
    except OSError:
        return None


def reference_applies(reference: str, rel: str, file: Path, touched: list[tuple[int, int]] | None) -> bool:
    """Does this reference cover the edit? (See the module docstring.)"""
    from autology_mcp.knowledge.references import covers

    if not covers(reference, rel):
        return False
    anchor = reference.split("#", 1)[1] if "#" in reference else ""
    if not anchor or touched is None or reference.split("#", 1)[0].rstrip("/") != rel:
        return True
    match = _LINES.match(anchor)
    span = (int(match.group(1)), int(match.group(2) or match.group(1))) if match else symbol_lines(file, anchor)
    if span is None:
        return True
    return any(a <= span[1] and span[0] <= b for a, b in touched)


def _proof(node: KnowledgeNode) -> str:
    """The line that says what the node asks for: a decision's first Decision line, else its first line."""
    lines = [line.strip() for line in node.content.split("\n")]
    if "## Decision" in lines:
        lines = lines[lines.index("## Decision") + 1 :]
    text = next((line for line in lines if line and not line.startswith("#")), "")
    return text if len(text) <= 200 else text[:199] + "…"


def _judged(root: Path, store: Any, governing: list[tuple[KnowledgeNode, list[str]]]) -> dict[str, list]:
    """The references that govern the file, each judged by the staleness rule
    (:mod:`autology_mcp.knowledge.trust.staleness`, the same as ``autology_analyze``'s)."""
    from autology_mcp.knowledge.trust.staleness import judge

    return judge(root, store, [n for n, _ in governing], {n.id: refs for n, refs in governing}, explain=True)


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except (OSError, ValueError):  # a name too long for the file system
        return False


MOVED_MAX = 20  # references to files no longer there looked up at one read


def moved_here(root: Path, store: Any, rel: str) -> list[tuple[KnowledgeNode, list[str]]]:
    """The nodes with a reference to a file that is gone from the work tree and was renamed (moved) to
    ``rel`` since the node's base, each with those references: a Read of the new path brings them,
    flagged "moved to" by the staleness rule. Looked for among the referenced paths with ``rel``'s
    file name or in its folder (a move keeps the name, a rename the folder; a file moved and renamed
    at once is not followed): one query, a stat for each such path, and git (kept per HEAD) for at
    most :data:`MOVED_MAX` of them that are gone."""
    from autology_mcp.knowledge.references import reference_path
    from autology_mcp.knowledge.trust.git_history import history

    gone = [p for p in store.index.referenced_paths_near(rel) if not _exists(root / p)]
    if not gone:
        return []
    gone = gone[:MOVED_MAX]
    nodes = [(n, [r for r in n.references if reference_path(r) in gone]) for n in store.index.referencing(gone)]
    nodes = [(n, refs) for n, refs in nodes if refs]
    if not nodes:
        return []
    h = history(root)
    if h.head is None:
        return []
    bases = h.node_bases({n.id: store.rel(store.paths.node_file(n.type.value, n.id)) for n, _ in nodes},
                         {n.id: n.modified.timestamp() for n, _ in nodes})
    out = []
    for node, refs in nodes:
        base = bases.get(node.id)
        here = [r for r in refs if base and (h.renamed(base, reference_path(r)) or ("",))[0] == rel]
        if here:
            out.append((node, here))
    return out


def governing_context(payload: dict[str, Any], root: Path | str | None, event: str, tools: tuple[str, ...]) -> dict[str, Any] | None:
    """The note on the nodes governing the payload's file, for ``event``; None when there is none to give."""
    file = target_file(payload, tools)
    if file is None:
        return None
    root = project_root(payload, root)
    cwd = Path(payload["cwd"]) if isinstance(payload.get("cwd"), str) and payload.get("cwd") else root
    rel = relative_path(file, cwd, root)
    config = load_hooks_config(root)
    if rel is None or not (config.read_context if event == "PostToolUse" else config.edit_context):
        return None
    session_id = payload.get("session_id") if isinstance(payload.get("session_id"), str) else None
    with session_state(root, session_id) as state:
        if rel in state.get("edit", []):
            return None
        store = open_store(root)
        if store is None:
            return None
        told = told_nodes(state)
        try:
            candidates = [
                n for n in store.index.referencing([rel])
                if n.type.value in GOVERNING and n.status.value != "superseded" and n.id not in told
            ]
            lines = touched_lines(payload, root / rel) if candidates else None
            governing = [
                (n, [r for r in n.references if reference_applies(r, rel, root / rel, lines)]) for n in candidates
            ]
            governing += [(n, refs) for n, refs in moved_here(root, store, rel)
                          if n.type.value in GOVERNING and n.status.value != "superseded" and n.id not in told
                          and n.id not in {c.id for c in candidates}]
            governing = [(n, refs) for n, refs in governing if refs][:MAX_NODES]
            held = [n for n, _ in governing if held_back(store.paths.base, n.id, n.title, n.content)]
            governing = [(n, refs) for n, refs in governing if n not in held]
            judged = _judged(root, store, governing) if governing else {}
        finally:
            store.close()
        state["edit"] = state.get("edit", []) + [rel]
        commit = None
        if event == "PostToolUse" and len(state.get("commits", [])) < MAX_COMMITS:  # the last change to the lines read
            from autology_mcp.history.explain import explaining_commit

            commit = explaining_commit(root, rel, touched_lines(payload, root / rel))
            if commit is not None and commit.short in told:
                commit = None
        if not governing and not held and commit is None:
            return None
        items = []
        for node, refs in governing:
            flags = [s for s in ("needs review" if node.status.value == "needs_review" else "",) if s]
            findings = judged.get(node.id, [])
            # what changed, or the later commits, name paths, anchors and commit subjects: quoted whole
            flags += [f"STALE: {quoted(f.why)}" for f in findings if f.stale]
            if not any(f.stale for f in findings):
                flags += [f"still holds; {quoted(f.later)}" for f in findings if f.later][:1]
            flag = f" — {'; '.join(flags)}" if flags else ""
            items.append(f"- [{node.type.value}] {node.id}: {quoted(node.title)} — references "
                         f"{', '.join(map(quoted, refs[:3]))}{flag}")
            proof = _proof(node)
            if proof:
                items.append(f"  {quoted(proof)}")
        if held:
            items.append(f"- held back: {', '.join(n.id for n in held)} (its text addresses the agent with instructions; "
                         "held back until a person reviews it)")
        if commit is not None:
            items.append(commit_item(commit))
        header = [f"autology — knowledge governing {quoted(rel)}, before you edit it ({FRAME}):" if governing or held
                  else f"autology — why the lines of {quoted(rel)} you read are as they are ({FRAME}):"]
        footer = [
            "Keep edits consistent with these, or say why not; if an edit changes what a node says, "
            "update it (autology_update) or supersede it (/autology:capture)."
        ] if governing else []
        state["nodes"] = state.get("nodes", []) + [n.id for n, _ in governing] + ([commit.short] if commit else [])
        if commit is not None:
            state["commits"] = state.get("commits", []) + [commit.short]
    return additional_context(event, clip_lines(header, items, footer, MAX_CHARS))


COMMIT_BODY_CHARS = 300
MAX_COMMITS = 5  # commits told by reads in one session: an agent reading thirty files is not told thirty


def commit_item(commit: Any) -> str:
    """A commit as an item of the note: its sha, date and subject, and the opening of its message, quoted."""
    body = " ".join(commit.body.split())
    if len(body) > COMMIT_BODY_CHARS:
        body = body[: COMMIT_BODY_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return (f"- commit {commit.short} ({commit.date[:10]}), the last change to these lines: {quoted(commit.subject)}"
            f" — {quoted(body)}")


def pre_tool_use(payload: dict[str, Any], root: Path | str | None = None) -> dict[str, Any] | None:
    """PreToolUse on Edit, Write, MultiEdit, NotebookEdit."""
    return governing_context(payload, root, "PreToolUse", EDIT_TOOLS)


def post_read(payload: dict[str, Any], root: Path | str | None = None) -> dict[str, Any] | None:
    """PostToolUse on Read."""
    return governing_context(payload, root, "PostToolUse", ("Read",))
