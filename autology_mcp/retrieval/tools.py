"""The MCP tools ``autology_search`` and ``autology_context``: thin wrappers over
:func:`autology_mcp.retrieval.engine.search` and :func:`autology_mcp.retrieval.bundle.context`.

Each answer's text is its compact JSON (what the token budget measures), and the same object is
the structured content. After each answer the verdict is counted in the ledger (telemetry: a
failure to record never fails the call).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from autology_mcp.retrieval import bundle as bundle_mod
from autology_mcp.retrieval import engine
from autology_mcp.retrieval.budget import compact_json

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from autology_mcp.knowledge.service import Autology

log = logging.getLogger("autology.retrieval")
READ_ONLY = ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False)


def record_verdict(root: Path, verdict: str) -> None:
    """Count the verdict in the ledger when that module is present; never raises."""
    try:
        from autology_mcp.retrieval import ledger
    except ImportError:
        return
    try:
        ledger.record_verdict(root, verdict)
    except Exception:  # telemetry must not fail a search
        log.debug("recording the verdict failed", exc_info=True)


def _result(data: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=compact_json(data))], structured_content=data)


def add_tools(app: MCPServer, autology: Autology) -> None:
    from autology_mcp.server import _run

    root = autology.store.root

    @app.tool(name="autology_search", annotations=READ_ONLY)
    def autology_search(
        query: Annotated[str, Field(description="What to find, in words: 'why do we retry the upload', 'where is the token refreshed'")],
        scope: Annotated[
            list[Literal["nodes", "code", "docs", "sessions"]] | None,
            Field(description="Sources to search (default all): knowledge nodes, code, docs (Markdown/RST/text files), past sessions"),
        ] = None,
        limit: Annotated[int, Field(description="Maximum hits (default 10, at most 50)", json_schema_extra={"minimum": 1, "maximum": 50})] = 10,
        max_tokens: Annotated[
            int | None,
            Field(description="Token budget of the whole answer (default 2000, at least 256); hits and snippets are cut to fit", json_schema_extra={"minimum": 256}),
        ] = None,
        detail: Annotated[
            Literal["brief", "normal", "full"],
            Field(description="brief: 1-line snippets, compact trace; normal: 3-line snippets; full: 8 lines, sections, tags"),
        ] = "normal",
    ) -> dict[str, Any]:
        """One search over the project's knowledge graph, code, docs and past sessions. Every hit is a card:
        path:lines (or node id) with the lines that prove it, a score 0-1 and its components. The verdict says
        whether the answer is grounded, weak, ambiguous (with a clarifying question) or has no evidence (with how
        to record the missing decision). The trace shows the channels, fusion inputs, timings and index freshness."""
        answer = _run(
            engine.search, root, query, scope=scope, limit=limit, max_tokens=max_tokens, detail=detail, store=autology.store
        )
        record_verdict(root, answer["verdict"])
        return _result(answer)

    @app.tool(name="autology_context", annotations=READ_ONLY)
    def autology_context(
        task: Annotated[str, Field(description="The task about to be done, in words: 'add rate limiting to the upload endpoint'")],
        module_hint: Annotated[
            str | None, Field(description="Optional module, folder or tag the task is about (e.g. 'src/upload' or 'auth')")
        ] = None,
        max_tokens: Annotated[
            int | None,
            Field(description="Token budget of the whole bundle (default 2000, at least 256)", json_schema_extra={"minimum": 256}),
        ] = None,
    ) -> dict[str, Any]:
        """The context bundle autology_bundle_v1 for a task: the relevant decisions, conventions and components
        (graph-expanded), code and doc spans, past sessions, the verdict and the trace, within a token budget."""
        bundle = _run(bundle_mod.context, root, task, module_hint=module_hint, max_tokens=max_tokens, store=autology.store)
        record_verdict(root, bundle["verdict"])
        return _result(bundle)
