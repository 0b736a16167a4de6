"""What the tool groups share: turning core errors into ``ToolError``, tool annotations, argument types."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

from autology_mcp.common.errors import AutologyError

T = TypeVar("T")

READ_ONLY = ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False)
CREATES = ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False)
UPSERTS = ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=True, openWorldHint=False)
OVERWRITES = ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=True, openWorldHint=False)

NodeId = Annotated[str, Field(description="Node id (UUID v4)")]


def run(call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``call(*args, **kwargs)``, with a core error raised as ``ToolError`` carrying its message for the model."""
    try:
        return call(*args, **kwargs)
    except AutologyError as exc:
        raise ToolError(str(exc)) from exc
