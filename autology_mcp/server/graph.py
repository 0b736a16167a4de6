"""Graph walks and the health report: ``autology_graph`` and ``autology_analyze``."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server import MCPServer
from pydantic import Field

from autology_mcp.knowledge import graph_ops
from autology_mcp.knowledge.models import RELATION_TYPES
from autology_mcp.knowledge.service import Autology
from autology_mcp.server.common import READ_ONLY, NodeId, run
from autology_mcp.sessions.capture import HEALTH_CATEGORIES, health_report


def add_tools(app: MCPServer, autology: Autology) -> None:
    """Register ``autology_graph`` and ``autology_analyze`` on ``app``."""
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
        return run(lambda: graph_ops.run(autology.store.graph(), operation, id, target, depth, relation_types))

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
        """Health report of the knowledge graph, each category scored 0-100: structure (orphans, dangling targets),
        review (needs_review, superseded still used), adr (missing sections), references (missing or changed files),
        consistency (duplicate titles, depends_on cycles), insights (decisions in past sessions not yet recorded)."""
        return run(health_report, autology.store, categories)
