"""The code index tools: ``autology_index`` and ``autology_code_search``, thin async wrappers over
:mod:`autology_mcp.code.service`. The blocking work runs in a worker thread; build progress goes out
as MCP progress notifications. (Imports are at module level: the SDK resolves the tool signatures'
annotations in this module's globals.)
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Annotated, Any, Literal

import anyio.from_thread
import anyio.to_thread
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from autology_mcp.code import service as repo
from autology_mcp.code.watch import IndexWatch
from autology_mcp.knowledge.service import Autology
from autology_mcp.server.common import READ_ONLY, UPSERTS, run

log = logging.getLogger("autology.server")


def add_tools(app: MCPServer, autology: Autology) -> None:
    """Register ``autology_index`` and ``autology_code_search`` on ``app``."""
    root = autology.store.root
    watch = IndexWatch(root)  # lets a search skip re-checking every file when none changed (code/watch.py)

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
        return await anyio.to_thread.run_sync(lambda: run(call))

    @app.tool(name="autology_code_search", annotations=READ_ONLY)
    async def autology_code_search(
        ctx: Context,
        query: Annotated[str, Field(description="What to find, in words: 'where do we reconnect the websocket after a timeout'")],
        top: Annotated[
            int, Field(description="Number of hits (default 10, at most 50)", json_schema_extra={"minimum": 1, "maximum": 50})
        ] = 10,
    ) -> dict[str, Any]:
        """Code and docs only, re-indexed before each call when a file changed (so it sees edits made a moment ago): path:start-end,
        symbol, snippet and the index's score breakdown per hit. For questions, autology_search also covers decisions."""
        if not isinstance(top, int) or not 1 <= top <= 50:
            raise ToolError(f"Invalid top: must be between 1 and 50, got {top!r}")
        progress = reporter(ctx)
        return await anyio.to_thread.run_sync(
            lambda: run(repo.code_search, root, query, top=top, refresh=True, progress=progress, watch=watch)
        )
