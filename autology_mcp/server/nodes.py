"""The seven seed-004 tools: capture, query, status, update, delete, relate, unrelate.

Each is a thin wrapper over one method of :class:`autology_mcp.knowledge.service.Autology`.
"""

from __future__ import annotations

import json
from typing import Annotated

from mcp.server import MCPServer
from mcp_types import CallToolResult, TextContent
from pydantic import Field

from autology_mcp.knowledge.models import NODE_STATUSES, NODE_TYPES, RELATION_TYPES
from autology_mcp.knowledge.service import Autology, CaptureResult, QueryHit, StatusResult
from autology_mcp.retrieval.ledger import status_with_counters
from autology_mcp.semantic.nodes import dense_for
from autology_mcp.server.common import CREATES, OVERWRITES, READ_ONLY, UPSERTS, NodeId, run

NodeTypeArg = Annotated[str | None, Field(description="Node type", json_schema_extra={"enum": NODE_TYPES})]
TagsArg = Annotated[
    list[str] | None, Field(description="Tags: lowercase letters, digits and hyphens, e.g. ['auth', 'api-design']")
]
ReferencesArg = Annotated[
    list[str] | None,
    Field(description="Project-relative file paths this node is about, optionally with a line span (#L10, #L10-40) "
                      "or a symbol name (#retry, #Class.method)"),
]
ConfidenceArg = Annotated[float | None, Field(description="Confidence from 0.0 to 1.0 (0.5 is the minimum accepted)")]


def add_tools(app: MCPServer, autology: Autology) -> None:
    """Register the seven tools on ``app``."""
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
        """Create a knowledge node. Without `type`, the type is classified from the title and content; when that
        is unsure the node is stored as needs_review and `warnings` says so (as it does for a missing reference
        file, a title another node has, or a title given with line breaks, which is stored joined into one line)."""
        return run(autology.capture, title, content, type=type, tags=tags, references=references)

    @app.tool(name="autology_query", annotations=READ_ONLY)
    def autology_query(
        query: Annotated[str | None, Field(description="Full-text search; empty lists the most recent nodes")] = None,
        type: NodeTypeArg = None,
        tags: Annotated[list[str] | None, Field(description="Only nodes having all of these tags")] = None,
        limit: Annotated[
            int | None, Field(description="Maximum results (default 10, at most 100)", json_schema_extra={"minimum": 1, "maximum": 100})
        ] = None,
        max_chars: Annotated[
            int | None,
            Field(
                description="Characters of node content in the whole answer (default 24000); longer contents are "
                "cut with a marker saying how to read the rest",
                json_schema_extra={"minimum": 1000},
            ),
        ] = None,
    ) -> list[QueryHit]:
        """Knowledge nodes only, ranked (score 0-1), with exact type and tag filters; empty query: the most recently
        modified first, with score null (nothing is ranked). To list nodes or find a node's id. For questions about
        the project, autology_search covers code and sessions too."""
        hits = [
            hit.model_dump(mode="json")
            for hit in run(autology.query, query, type=type, tags=tags, limit=limit, max_chars=max_chars,
                           dense=dense_for(autology.store.root))
        ]
        # The text is the spec's output, one JSON array (the SDK would send a block per hit, none when empty).
        text = json.dumps(hits, indent=2, ensure_ascii=False)
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content={"result": hits})

    @app.tool(name="autology_status", annotations=READ_ONLY)
    def autology_status() -> StatusResult:
        """Knowledge graph statistics: nodes by type and status, relations by type, unreadable files."""
        return run(status_with_counters, autology)

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
        return run(
            autology.update, id, title=title, content=content, tags=tags, status=status,
            confidence=confidence, references=references,
        )

    @app.tool(name="autology_delete", annotations=OVERWRITES)
    def autology_delete(id: NodeId) -> str:
        """Delete a node and every relation from or to it. Irreversible."""
        return run(autology.delete, id)

    @app.tool(name="autology_relate", annotations=UPSERTS)
    def autology_relate(
        source: Annotated[str, Field(description="Source node id")],
        target: Annotated[str, Field(description="Target node id")],
        type: Annotated[str, Field(description="Relation type", json_schema_extra={"enum": RELATION_TYPES})],
        description: Annotated[str | None, Field(description="What the relation means here")] = None,
        confidence: Annotated[float | None, Field(description="0.0-1.0, default 0.8")] = None,
    ) -> str:
        """Create or update (upsert) a typed relation from source to target; both nodes must exist."""
        return run(autology.relate, source, target, type, description=description, confidence=confidence)

    @app.tool(name="autology_unrelate", annotations=OVERWRITES)
    def autology_unrelate(
        source: Annotated[str, Field(description="Source node id")],
        target: Annotated[str, Field(description="Target node id")],
        type: Annotated[str, Field(description="Relation type to remove", json_schema_extra={"enum": RELATION_TYPES})],
    ) -> str:
        """Remove one relation. Succeeds when the relation does not exist; the nodes stay."""
        return run(autology.unrelate, source, target, type)
