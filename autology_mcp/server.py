"""The MCP server: each tool is a thin wrapper over one method of the domain core.

Core errors (``ValidationError``, ``NotFoundError``, ``StorageError``) become ``ToolError`` with
the core's message, so the model reads what was wrong and what is allowed. Nothing here prints
to stdout: on the stdio transport, stdout is the protocol. Logs go to stderr.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from autology_mcp import __version__
from autology_mcp.knowledge import graph_ops
from autology_mcp.common.errors import AutologyError
from autology_mcp.knowledge.models import NODE_STATUSES, NODE_TYPES, RELATION_TYPES
from autology_mcp.knowledge.service import Autology, CaptureResult, QueryHit, StatusResult
from autology_mcp.retrieval.ledger import status_with_counters
from autology_mcp.sessions.capture import HEALTH_CATEGORIES, health_report

log = logging.getLogger("autology.server")
T = TypeVar("T")

INSTRUCTIONS = """autology is this project's memory: a knowledge graph of decisions, components, conventions,
concepts, patterns, issues and sessions, stored as Markdown in .autology/nodes/.
Before designing or changing something, search it with autology_query. When a decision is made,
a convention agreed, a component built or a problem found, record it with autology_capture
(decisions in ADR form: ## Context, ## Decision, ## Alternatives, ## Consequences) and link it
with autology_relate. Mark outdated knowledge with autology_update (status superseded) and link
the replacement with a 'supersedes' relation."""

READ_ONLY = ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False)
CREATES = ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False)
UPSERTS = ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=True, openWorldHint=False)
OVERWRITES = ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=True, openWorldHint=False)

NodeId = Annotated[str, Field(description="Node id (UUID v4)")]
NodeTypeArg = Annotated[str | None, Field(description="Node type", json_schema_extra={"enum": NODE_TYPES})]
TagsArg = Annotated[
    list[str] | None, Field(description="Tags: lowercase letters, digits and hyphens, e.g. ['auth', 'api-design']")
]
ReferencesArg = Annotated[
    list[str] | None,
    Field(description="Project-relative file paths this node is about, optionally with #L10-40 or #symbol"),
]
ConfidenceArg = Annotated[float | None, Field(description="Confidence from 0.0 to 1.0 (0.5 is the minimum accepted)")]


def _run(call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    try:
        return call(*args, **kwargs)
    except AutologyError as exc:
        raise ToolError(str(exc)) from exc


def build_server(autology: Autology) -> MCPServer:
    async def cache_guard(ctx: Any, call_next: Any) -> Any:
        # One stat per call: if .autology/cache/ was deleted (documented as safe) or the database
        # replaced by another process, reopen and rebuild it before serving from it.
        if ctx.method in ("tools/call", "resources/read", "prompts/get"):
            autology.store.ensure_cache()
        return await call_next(ctx)

    app = MCPServer("autology", version=__version__, instructions=INSTRUCTIONS, middleware=[cache_guard])

    @app.tool(name="autology_capture", annotations=CREATES)
    def autology_capture(
        title: Annotated[str, Field(description="Short title, 1-100 characters")],
        content: Annotated[
            str,
            Field(
                description="Markdown body. A decision needs the ADR sections "
                "## Context, ## Decision, ## Alternatives, ## Consequences"
            ),
        ],
        type: NodeTypeArg = None,
        tags: TagsArg = None,
        references: ReferencesArg = None,
    ) -> CaptureResult:
        """Create a knowledge node. Without `type`, the type is classified from the title and content."""
        return _run(autology.capture, title, content, type=type, tags=tags, references=references)

    @app.tool(name="autology_query", annotations=READ_ONLY)
    def autology_query(
        query: Annotated[str | None, Field(description="Full-text search; empty lists the most recent nodes")] = None,
        type: NodeTypeArg = None,
        tags: Annotated[list[str] | None, Field(description="Only nodes having all of these tags")] = None,
        limit: Annotated[
            int | None, Field(description="Maximum results (default 10, at most 100)", json_schema_extra={"minimum": 1, "maximum": 100})
        ] = None,
    ) -> list[QueryHit]:
        """Search knowledge nodes, ranked by relevance (score 0-1; title and tag matches weigh more)."""
        hits = [hit.model_dump(mode="json") for hit in _run(autology.query, query, type=type, tags=tags, limit=limit)]
        # The text is the spec's output, one JSON array (the SDK would send a block per hit, none when empty).
        text = json.dumps(hits, indent=2, ensure_ascii=False)
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content={"result": hits})

    @app.tool(name="autology_status", annotations=READ_ONLY)
    def autology_status() -> StatusResult:
        """Knowledge graph statistics: nodes by type and status, relations by type, unreadable files."""
        return _run(status_with_counters, autology)

    @app.tool(name="autology_update", annotations=OVERWRITES)
    def autology_update(
        id: NodeId,
        title: Annotated[str | None, Field(description="New title")] = None,
        content: Annotated[str | None, Field(description="New Markdown content (replaces the old)")] = None,
        tags: Annotated[list[str] | None, Field(description="New tags (replace the old)")] = None,
        status: Annotated[str | None, Field(description="New status", json_schema_extra={"enum": NODE_STATUSES})] = None,
        confidence: ConfidenceArg = None,
        references: ReferencesArg = None,
    ) -> str:
        """Update some fields of a node; the others are kept, and `modified` is set to now."""
        return _run(
            autology.update, id, title=title, content=content, tags=tags, status=status,
            confidence=confidence, references=references,
        )

    @app.tool(name="autology_delete", annotations=OVERWRITES)
    def autology_delete(id: NodeId) -> str:
        """Delete a node and every relation from or to it. Irreversible."""
        return _run(autology.delete, id)

    @app.tool(name="autology_relate", annotations=UPSERTS)
    def autology_relate(
        source: Annotated[str, Field(description="Source node id")],
        target: Annotated[str, Field(description="Target node id")],
        type: Annotated[str, Field(description="Relation type", json_schema_extra={"enum": RELATION_TYPES})],
        description: Annotated[str | None, Field(description="What the relation means here")] = None,
        confidence: Annotated[float | None, Field(description="0.0-1.0, default 0.8")] = None,
    ) -> str:
        """Create or update (upsert) a typed relation from source to target; both nodes must exist."""
        return _run(autology.relate, source, target, type, description=description, confidence=confidence)

    @app.tool(name="autology_unrelate", annotations=OVERWRITES)
    def autology_unrelate(
        source: Annotated[str, Field(description="Source node id")],
        target: Annotated[str, Field(description="Target node id")],
        type: Annotated[str, Field(description="Relation type to remove", json_schema_extra={"enum": RELATION_TYPES})],
    ) -> str:
        """Remove one relation. Succeeds when the relation does not exist; the nodes stay."""
        return _run(autology.unrelate, source, target, type)

    # ---------------------------------------------------------------- graph, analysis, prompts, resources (issue 4)
    _add_graph_and_analysis(app, autology)

    # ---------------------------------------------------------------- repository index (issue 3)
    _add_repo_index(app, autology)
    from autology_mcp.retrieval.claims_tool import add_tool as add_claim_check  # issue 6: autology_check_claims

    add_claim_check(app, autology)
    from autology_mcp.retrieval.tools import add_tools as add_retrieval_tools  # issue 6: autology_search, autology_context

    add_retrieval_tools(app, autology)
    _forbid_unknown_arguments(app)
    _keep_string_arguments(app)
    _compact_output_schemas(app)

    return app


def _forbid_unknown_arguments(app: MCPServer) -> None:
    """Refuse arguments a tool does not have, instead of silently dropping them.

    The SDK's argument models ignore unknown keys, so a misspelt ``tag`` for ``tags`` would capture
    a node without its tags. Forbidding extras makes that a clear error naming the argument, and
    the published input schemas say ``additionalProperties: false``.
    """
    for tool in app._tool_manager.list_tools():  # the SDK has no public hook for this
        model = tool.fn_metadata.arg_model
        model.model_config["extra"] = "forbid"
        model.model_rebuild(force=True)
        tool.parameters["additionalProperties"] = False


def _keep_string_arguments(app: MCPServer) -> None:
    """Pass a string argument through as given wherever the parameter accepts a string.

    The SDK JSON-decodes string arguments of every parameter not annotated exactly ``str`` (meant for
    lists a client sends as JSON text), so for a ``str | None`` parameter the content ``null`` arrived
    as None (an update silently skipped the field), and a title ``[1, 2]`` or a query ``true`` as a
    list or a bool (a confusing type error). Lists sent as JSON text are still decoded.
    """
    import typing

    for tool in app._tool_manager.list_tools():  # the SDK has no public hook for this
        meta = tool.fn_metadata
        fields = meta.arg_model.model_fields
        accepts_str = {
            key
            for name, info in fields.items()
            if info.annotation is str or str in typing.get_args(info.annotation)
            for key in (name, info.alias)
            if key
        }
        if not accepts_str:
            continue
        decode = meta.pre_parse_json

        def pre_parse_json(data: dict[str, Any], decode=decode, accepts_str=accepts_str) -> dict[str, Any]:
            decoded = decode(data)
            return {k: data[k] if k in accepts_str and isinstance(data[k], str) else v for k, v in decoded.items()}

        object.__setattr__(meta, "pre_parse_json", pre_parse_json)


def _compact_output_schemas(app: MCPServer) -> None:
    """Publish each output schema without $refs and anyOf-nullables: the same constraints, but
    clients validate every result against it, and this form validates ~40% faster (output_schema.py)."""
    from autology_mcp.output_schema import compact

    for tool in app._tool_manager.list_tools():  # the SDK reads fn_metadata.output_schema live
        if tool.fn_metadata.output_schema is not None:
            tool.fn_metadata.output_schema = compact(tool.fn_metadata.output_schema)


def _add_graph_and_analysis(app: MCPServer, autology: Autology) -> None:
    """Issue 4: the graph and health tools, the skills as MCP prompts, and the node/status resources."""
    from mcp.server.mcpserver.exceptions import ResourceError

    from autology_mcp.knowledge.markdown import render_node
    from autology_mcp.knowledge.models import validate_id
    from autology_mcp.skills import SKILLS

    @app.tool(name="autology_graph", annotations=READ_ONLY)
    def autology_graph(
        operation: Annotated[
            str,
            Field(
                description="neighbours: nodes within `depth` relations (both directions); path: shortest chain of "
                "relations from `id` to `target`; impact: everything that depends on or is affected by `id`; "
                "supersession: the supersedes chain through `id`, oldest first",
                json_schema_extra={"enum": list(graph_ops.OPERATIONS)},
            ),
        ],
        id: NodeId,
        target: Annotated[str | None, Field(description="Target node id (operation path)")] = None,
        depth: Annotated[
            int | None,
            Field(description="neighbours: 1-6 (default 1); impact: 1-6 (default 6)", json_schema_extra={"minimum": 1, "maximum": graph_ops.DEPTH_MAX}),
        ] = None,
        relation_types: Annotated[
            list[str] | None,
            Field(description="Only follow these relation types (neighbours, path)", json_schema_extra={"items": {"enum": RELATION_TYPES}}),
        ] = None,
    ) -> dict[str, Any]:
        """Walk the knowledge graph: neighbours to depth k, a path between two nodes, impact, supersession chain."""
        return _run(lambda: graph_ops.run(autology.store.graph(), operation, id, target, depth, relation_types))

    @app.tool(name="autology_analyze", annotations=READ_ONLY)
    def autology_analyze(
        categories: Annotated[
            list[str] | None,
            Field(
                description="Limit the report to these categories (default: all)",
                json_schema_extra={"items": {"enum": list(HEALTH_CATEGORIES)}},
            ),
        ] = None,
    ) -> dict[str, Any]:
        """Health report by category, each scored 0-100: structure (orphans, dangling targets), review (needs_review,
        superseded still referenced), adr (decisions missing sections), references (missing or changed files),
        consistency (duplicate titles, depends_on cycles), insights (decisions, conventions and discoveries mined from
        past sessions that no node records yet)."""
        return _run(health_report, autology.store, categories)

    def add_prompt(skill) -> None:  # one MCP prompt per skill, same workflow text as skills/<name>/SKILL.md
        def prompt(request: str = "") -> str:
            return skill.prompt(request)

        app.prompt(name=skill.name, title=f"autology {skill.name}", description=skill.description)(prompt)

    for skill in SKILLS.values():
        add_prompt(skill)

    @app.resource("autology://status", name="status", description="Knowledge graph statistics", mime_type="application/json")
    def status_resource() -> str:
        return status_with_counters(autology).model_dump_json(indent=2)

    @app.resource("autology://node/{id}", name="node", description="One knowledge node as its Markdown file", mime_type="text/markdown")
    def node_resource(id: str) -> str:
        try:
            return render_node(autology.store.get(validate_id(id)))
        except AutologyError as exc:
            raise ResourceError(str(exc)) from exc


# ==================================================================== repository index (issue 3)
# autology_index and autology_code_search: thin async wrappers over autology_mcp.code.service.
# The blocking work runs in a worker thread; build progress goes out as MCP progress notifications.
# (Module-level imports: the tool signatures' annotations are resolved in this module's globals.)

import time  # noqa: E402
from typing import Literal  # noqa: E402

import anyio.from_thread  # noqa: E402
import anyio.to_thread  # noqa: E402
from mcp.server.mcpserver import Context  # noqa: E402


def _add_repo_index(app: MCPServer, autology: Autology) -> None:
    from autology_mcp.code import service as repo

    root = autology.store.root

    def reporter(ctx: Context) -> Callable[[int, int, str], None]:
        """A build progress callback (called from the worker thread) sending throttled notifications."""
        last = [0.0]

        def report(done: int, total: int, path: str) -> None:
            now = time.monotonic()
            if done not in (0, total) and now - last[0] < 0.25:
                return
            last[0] = now
            message = f"indexed {path}" if path else f"{total} files to index"
            try:
                anyio.from_thread.run(ctx.report_progress, done, total, message)
            except Exception:  # a client that went away must not break the build
                log.debug("progress notification failed", exc_info=True)

        return report

    @app.tool(name="autology_index", annotations=UPSERTS)
    async def autology_index(
        ctx: Context,
        action: Annotated[
            Literal["status", "build", "rebuild", "verify"],
            Field(
                description="status: namespace, size and freshness; build: index what changed (incremental, "
                "reports progress); rebuild: from scratch; verify: integrity and drift report"
            ),
        ] = "status",
        strict: Annotated[bool, Field(description="verify: count drift as a failure (ok=false)")] = False,
    ) -> dict[str, Any]:
        """The repository index of this project's code and docs: status, build (incremental), rebuild or verify."""
        if action == "status":
            call = lambda: repo.index_status(root)  # noqa: E731
        elif action in ("build", "rebuild"):
            progress = reporter(ctx)
            call = lambda: repo.build_index(root, rebuild=action == "rebuild", progress=progress)  # noqa: E731
        else:
            call = lambda: repo.verify_index(root, strict=strict)  # noqa: E731
        return await anyio.to_thread.run_sync(lambda: _run(call))

    @app.tool(name="autology_code_search", annotations=READ_ONLY)
    async def autology_code_search(
        ctx: Context,
        query: Annotated[str, Field(description="What to find, in words: 'where do we reconnect the websocket after a timeout'")],
        top: Annotated[
            int, Field(description="Number of hits (default 10, at most 50)", json_schema_extra={"minimum": 1, "maximum": 50})
        ] = 10,
    ) -> dict[str, Any]:
        """Search the project's code and docs. Each hit: path:start-end, symbol, snippet and score breakdown.
        Files changed since the last search are re-indexed first, so results are never stale."""
        if not isinstance(top, int) or not 1 <= top <= 50:
            raise ToolError(f"Invalid top: must be between 1 and 50, got {top!r}")
        progress = reporter(ctx)
        return await anyio.to_thread.run_sync(
            lambda: _run(repo.code_search, root, query, top=top, refresh=True, progress=progress)
        )


# ==================================================================== end of repository index section


def serve(root: Path, watch: bool = True) -> None:
    """Run the server on stdio until the client disconnects."""
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="autology: %(levelname)s %(message)s")
    autology = Autology.open(root, reconcile=False)
    watcher = None
    if watch:  # watch first, then reconcile: a file changed in between is not missed
        from autology_mcp.knowledge.watch import NodeWatcher

        watcher = NodeWatcher(autology.store)
        watcher.start()
    autology.store.reconcile()
    try:
        build_server(autology).run("stdio")
    finally:
        if watcher is not None:
            watcher.stop()
        autology.close()
