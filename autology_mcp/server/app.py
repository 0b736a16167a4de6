"""The server assembled: every tool group registered over one ``Autology``, and ``serve`` on stdio."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

from mcp.server import MCPServer

from autology_mcp import __version__
from autology_mcp.knowledge.service import Autology
from autology_mcp.server import code, graph, nodes, prompts, resources, retrieval, schemas

INSTRUCTIONS = """autology is this project's memory: a knowledge graph of decisions, components, conventions,
concepts, patterns, issues and sessions, stored as Markdown in .autology/nodes/.
Before designing or changing something, search it with autology_query. When a decision is made,
a convention agreed, a component built or a problem found, record it with autology_capture
(decisions in ADR form: ## Context, ## Decision, ## Alternatives, ## Consequences) and link it
with autology_relate. Mark outdated knowledge with autology_update (status superseded) and link
the replacement with a 'supersedes' relation."""


def build_server(autology: Autology, watcher: Any = None) -> MCPServer:
    """The MCP server for one project: its tools, prompts and resources (``watcher``: the
    ``NodeWatcher`` following its files, if any)."""

    async def cache_guard(ctx: Any, call_next: Any) -> Any:
        # One stat per call: if .autology/cache/ was deleted (documented as safe) or the database
        # replaced by another process, reopen and rebuild it before serving from it; and keep the
        # watcher lease true (dropped if the watcher died, taken again after a deleted cache).
        if ctx.method in ("tools/call", "resources/read", "prompts/get"):
            autology.store.ensure_cache()
            if watcher is not None:
                watcher.check()
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
    return app


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
    service = None
    if watcher is not None and watcher.hold_lease():  # after the reconcile: readers may now trust the watcher
        from autology_mcp.hooks.service import HookService

        service = HookService(autology.store.root)
        socket_path = service.start()
        if socket_path is not None:
            watcher.lease.advertise(str(socket_path))  # how the hooks find it (hooks/client.py)
    try:
        build_server(autology, watcher).run("stdio")
    finally:
        if service is not None:
            service.stop()
        if watcher is not None:
            watcher.stop()
        autology.close()
