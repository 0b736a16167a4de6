"""The context bundle ``autology_bundle_v1``: what an agent should know before working on a task.

One unified search (every scope) for the task, plus the module hint, regrouped by source:

- ``structured_memory``: knowledge nodes — ``decisions``, ``conventions``, ``components`` and
  ``other`` (concepts, patterns, issues, sessions) — graph-expanded (``via`` says how a node came in);
- ``task_retrieval``: code and doc spans (``path:lines`` with the proof snippet);
- ``sessions``: past session chunks and handoffs;
- ``history``: commits of the repository's history (issue 41): sha, date, subject, the message lines
  that prove it, the files it touched;
- ``verdict``, ``clarifying_question``, ``guidance``, ``cut`` and ``trace`` as in a search answer.

Each item passes the evidence gate (its ``support`` reaches ``gate_item_threshold``, docs/retrieval.md;
a node the graph brought in passes through the hit it came from): the tail of spans that share a word or two with the task is cut, and
``cut.below_gate`` counts it. When no hit passes (a ``weak`` answer) the best :data:`WEAK_KEPT` are
kept, so the bundle still shows what little there is, under a verdict that says so.

``ok`` is true when every channel of the search ran (none failed); the verdict says how good the
evidence is. The whole bundle fits ``max_tokens``. Its JSON Schema is docs/autology_bundle_v1.schema.json.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from autology_mcp.common.errors import ValidationError
from autology_mcp.knowledge.store import NodeStore
from autology_mcp.retrieval import budget as budget_mod
from autology_mcp.retrieval.engine import compact_trace, run

SCHEMA_VERSION = "autology_bundle_v1"
BUNDLE_HITS = 24
WEAK_KEPT = 3
TASK_MAX = 2000
MEMORY_GROUPS = {"decision": "decisions", "convention": "conventions", "component": "components"}


def _memory_item(hit: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": hit["node_id"],
        "type": hit["node_type"],
        "title": hit["title"],
        "status": hit.get("status"),
        "path": hit["path"],
        "start_line": hit["start_line"],
        "end_line": hit["end_line"],
        "snippet": hit["snippet"],
        "score": hit["score"],
        "support": hit["components"]["support"],
        "via": hit["via"],
    }


def _span_item(hit: dict[str, Any]) -> dict[str, Any]:
    item = {
        "kind": hit["kind"],
        "ref": hit["ref"],
        "path": hit["path"],
        "start_line": hit["start_line"],
        "end_line": hit["end_line"],
        "snippet": hit["snippet"],
        "score": hit["score"],
        "support": hit["components"]["support"],
    }
    if hit.get("symbol"):
        item["symbol"] = hit["symbol"]
    return item


def _session_item(hit: dict[str, Any]) -> dict[str, Any]:
    item = {
        "kind": hit["kind"],
        "ref": hit["ref"],
        "session_id": hit.get("session_id"),
        "title": hit["title"],
        "snippet": hit["snippet"],
        "score": hit["score"],
        "support": hit["components"]["support"],
    }
    if hit.get("turns"):
        item["turns"] = hit["turns"]
    if hit.get("timestamp"):
        item["timestamp"] = hit["timestamp"]
    return item


def _commit_item(hit: dict[str, Any]) -> dict[str, Any]:
    commit = hit.get("commit") or {}
    return {
        "sha": commit.get("sha") or hit["ref"],
        "ref": hit["ref"],
        "date": commit.get("date") or "",
        "subject": hit["title"],
        "snippet": hit["snippet"],
        "files": list(commit.get("files") or []),
        "score": hit["score"],
        "support": hit["components"]["support"],
    }


def gated(hits: list[dict[str, Any]], item_threshold: float) -> list[dict[str, Any]]:
    """The hits whose support, or for a node the graph brought in the support of the hits it came from,
    reaches ``item_threshold``; the best :data:`WEAK_KEPT` when none does."""
    passing = [h for h in hits if max(h["components"].get("support", 0.0), h["components"].get("via_support", 0.0))
               >= item_threshold]
    return passing or hits[:WEAK_KEPT]


def render(state: dict[str, Any]) -> dict[str, Any]:
    """The bundle from a search answer (``state``) and the bundle's own fields."""
    memory: dict[str, list[dict[str, Any]]] = {"decisions": [], "conventions": [], "components": [], "other": []}
    spans, sessions, history = [], [], []
    for hit in state["hits"]:
        if hit["kind"] == "node":
            memory[MEMORY_GROUPS.get(hit["node_type"], "other")].append(_memory_item(hit))
        elif hit["kind"] in ("code", "doc"):
            spans.append(_span_item(hit))
        elif hit["kind"] == "commit":
            history.append(_commit_item(hit))
        else:
            sessions.append(_session_item(hit))
    return {
        "schema_version": SCHEMA_VERSION,
        "generated_at": state["generated_at"],
        "ok": state["ok"],
        "task": state["query"],
        "module_hint": state["module_hint"],
        "verdict": state["verdict"],
        "clarifying_question": state["clarifying_question"],
        "guidance": state["guidance"],
        "structured_memory": memory,
        "task_retrieval": spans,
        "sessions": sessions,
        "history": history,
        "cut": state["cut"],
        "trace": state["trace"],
    }


def context(
    root: Path, task: str, module_hint: str | None = None, max_tokens: int | None = None, store: NodeStore | None = None
) -> dict[str, Any]:
    """The ``autology_bundle_v1`` bundle for ``task`` (see the module docstring)."""
    if not isinstance(task, str) or not task.strip():
        raise ValidationError("task", "must be a non-empty string describing the task")
    if len(task) > TASK_MAX:
        raise ValidationError("task", f"is {len(task)} characters long; the limit is {TASK_MAX}")
    if module_hint is not None and not isinstance(module_hint, str):
        raise ValidationError("module_hint", f"must be a string, got {type(module_hint).__name__}")
    hint = module_hint.strip() if module_hint else None
    answer, budget, counter = run(
        root, task, limit=BUNDLE_HITS, max_tokens=max_tokens, store=store, module_hint=hint or None
    )
    failed = [c["name"] for c in answer["trace"]["channels"] if c.get("status") == "error"]
    state = dict(answer)
    state["hits"] = gated(answer["hits"], answer["trace"]["gate"]["item_threshold"])
    state["cut"] = {**answer["cut"], "below_gate": len(answer["hits"]) - len(state["hits"])}
    state.update(
        generated_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        ok=not failed,
        module_hint=hint or None,
    )
    fitted = budget_mod.fit(state, budget, compact_trace, counter, render=render)
    return render(fitted)
