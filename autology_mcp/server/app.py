"""The server assembled: every tool group registered over one ``Autology``, and ``serve`` on stdio."""

from __future__ import annotations

import logging
import sys
from typing import Any

from mcp.server import MCPServer

from autology_mcp import __version__
from autology_mcp.knowledge.service import Autology
from autology_mcp.server import code, graph, nodes, prompts, resources, retrieval, schemas
from autology_mcp.server.startup import Startup, finish

INSTRUCTIONS = """autology is this project's memory: its decisions, conventions, components, concepts, patterns,
issues and past sessions (Markdown in .autology/nodes/), and an index of its code and docs.
Which tool:
- To find out anything about the project (why, where, how, what was decided): autology_search first.
  One search over memory, code, docs and past sessions; its verdict says whether the evidence is grounded.
- Before starting a task: autology_context, the decisions, conventions and code that govern it, in a budget.
- autology_query: knowledge nodes only, with exact type and tag filters; to list nodes or find an id.
- autology_code_search: code and docs only, re-indexed before each call (right after edits).
When something is decided, agreed, built or found, record it with autology_capture (decisions as ADRs:
## Context, ## Decision, ## Alternatives, ## Consequences) and link it with autology_relate. Mark outdated
knowledge superseded with autology_update and link its replacement with a 'supersedes' relation."""


def build_server(autology: Autology, startup: Startup | None = None) -> MCPServer:
    """The MCP server for one project: its tools, prompts and resources (``startup``: the watcher and
    hook service ``serve`` started, if any)."""

    async def cache_guard(ctx: Any, call_next: Any) -> Any:
        # One stat per call: if .autology/cache/ was deleted (documented as safe) or the database
        # replaced by another process, reopen and rebuild it before serving from it; and keep the
        # watcher lease true (dropped if the watcher died, taken again after a deleted cache).
        if ctx.method in ("tools/call", "resources/read", "prompts/get"):
            autology.store.ensure_cache()
            if startup is not None and startup.watcher is not None:
                startup.watcher.check()
        return await call_next(ctx)

    app = MCPServer("autology", version=__version__, instructions=INSTRUCTIONS, middleware=[cache_guard])
    nodes.add_tools(app, autology)
    graph.add_tools(app, autology)
    prompts.add_prompts(app)
    resources.add_resources(app, autology)
    code.add_tools(app, autology)
    retrieval.add_tools(app, autology)
    schemas.forbid_unknown_arguments(app)
    schemas.keep_string_arguments(app)
    schemas.compact_output_schemas(app)
    schemas.slim_input_schemas(app)
    return app


def serve(startup: Startup) -> None:
    """Run the server on stdio until the client disconnects. ``startup`` (``server.startup.begin``) was started
    before this module was imported, so its work overlaps the MCP SDK's import."""
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="autology: %(levelname)s %(message)s")
    try:
        build_server(Autology(startup.store), startup).run("stdio")
    finally:
        finish(startup)
