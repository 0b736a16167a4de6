"""The resources ``autology://status`` (statistics as JSON) and ``autology://node/{id}`` (a node's Markdown)."""

from __future__ import annotations

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError

from autology_mcp.common.errors import AutologyError
from autology_mcp.knowledge.markdown import render_node
from autology_mcp.knowledge.models import validate_id
from autology_mcp.knowledge.service import Autology
from autology_mcp.retrieval.ledger import status_with_counters


def add_resources(app: MCPServer, autology: Autology) -> None:
    """Register the status and node resources on ``app``."""

    @app.resource("autology://status", name="status", description="Knowledge graph statistics", mime_type="application/json")
    def status_resource() -> str:
        return status_with_counters(autology).model_dump_json(indent=2)

    @app.resource("autology://node/{id}", name="node", description="One knowledge node as its Markdown file", mime_type="text/markdown")
    def node_resource(id: str) -> str:
        try:
            return render_node(autology.store.get(validate_id(id)))
        except AutologyError as exc:
            raise ResourceError(str(exc)) from exc
