"""Unified retrieval tools: ``autology_search``, ``autology_context`` and ``autology_check_claims``,
thin wrappers over :func:`autology_mcp.retrieval.engine.search`, :func:`autology_mcp.retrieval.bundle.context`
and :func:`autology_mcp.retrieval.claims.check_claims`.

The search and context answers' text is their compact JSON (what the token budget measures), and
the same object is the structured content. Each answer's verdict, and each check's outcomes, are
counted in the ledger (telemetry: a failure to record never fails the call).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import anyio.to_thread
from mcp.server import MCPServer
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, ConfigDict, Field

from autology_mcp.knowledge.service import Autology
from autology_mcp.retrieval import claims as claim_check
from autology_mcp.retrieval import ledger
from autology_mcp.retrieval.budget import compact_json
from autology_mcp.server.common import READ_ONLY, run


class ClaimIn(BaseModel):
    """One claim and the evidence that should prove it."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(description="The claim, in words: 'fetch_with_retry backs off exponentially on timeouts'")
    refs: list[str] = Field(
        default_factory=list,
        description="Evidence: file spans 'src/net.py:10-24' (or path:LINE, path#L10-24), node ids (UUID), "
        "session documents 'SESSION_ID:N' / 'SESSION_ID:handoff' (refs as autology_search returns them)",
        json_schema_extra={"maxItems": claim_check.MAX_REFS},
    )


def _result(data: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=compact_json(data))], structured_content=data)


def _build_code_index_in_background() -> None:
    """Called on each search (the retrieval modules are imported on the first, not at start-up). A
    server outlives each answer, so a search that finds the code index due for a full rebuild (after an
    upgrade) starts it in the background and answers at once instead of stalling for a minute on a
    large tree."""
    from autology_mcp.retrieval import channels

    channels.rebuild_in_background()


def add_tools(app: MCPServer, autology: Autology) -> None:
    """Register ``autology_check_claims``, ``autology_search`` and ``autology_context`` on ``app``."""
    root = autology.store.root

    @app.tool(name="autology_check_claims", annotations=READ_ONLY)
    async def autology_check_claims(
        claims: Annotated[
            list[ClaimIn],
            Field(
                description=f"1-{claim_check.MAX_CLAIMS} claims, each {{text, refs}}",
                json_schema_extra={"minItems": 1, "maxItems": claim_check.MAX_CLAIMS},
            ),
        ],
    ) -> dict[str, Any]:
        """Before stating facts about the project: check each claim against the refs you cite (path:lines, node
        ids, session refs as autology_search returns them). Per claim: supported (a ref resolves and shares its
        key terms), unsupported or unresolved, with matched and missing terms."""
        data = [claim.model_dump() for claim in claims]
        return await anyio.to_thread.run_sync(lambda: run(claim_check.check_claims, root, data, store=autology.store))

    @app.tool(name="autology_search", annotations=READ_ONLY)
    def autology_search(
        query: Annotated[str, Field(description="What to find, in words: 'why do we retry the upload', 'where is the token refreshed'")],
        scope: Annotated[
            list[Literal["nodes", "code", "docs", "sessions", "history"]] | None,
            Field(description="Sources to search (default all): knowledge nodes, code, docs (Markdown/RST/text files), past "
                              "sessions, history (the repository's commits: why the code is as it is)"),
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
        """Start here to find out anything about this project: one search over its decisions, conventions and other
        knowledge, its code and docs, past sessions and its commit history. Each hit: node id or path:lines, the lines that prove it, a
        score. The verdict: grounded (a hit is about the question's subject), ambiguous (with a question to ask), weak
        or no_evidence (the memory does not know the subject; for a question about the project, how to record it)."""
        from autology_mcp.retrieval import engine  # imported on the first search, not at start-up

        _build_code_index_in_background()

        answer = run(
            engine.search, root, query, scope=scope, limit=limit, max_tokens=max_tokens, detail=detail, store=autology.store
        )
        ledger.record_answer(root, answer["verdict"])
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
        """Before starting a task: the decisions, conventions and components that govern it, the code and doc spans
        involved and related past sessions, as one autology_bundle_v1 within a token budget."""
        from autology_mcp.retrieval import bundle as bundle_mod

        _build_code_index_in_background()

        bundle = run(bundle_mod.context, root, task, module_hint=module_hint, max_tokens=max_tokens, store=autology.store)
        ledger.record_answer(root, bundle["verdict"])
        return _result(bundle)
