"""What the tool groups share: turning core errors into ``ToolError``, tool annotations, argument types."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

from autology_mcp.common.errors import AutologyError

T = TypeVar("T")
log = logging.getLogger("autology.server")

READ_ONLY = ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False)
CREATES = ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False)
UPSERTS = ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=True, openWorldHint=False)
OVERWRITES = ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=True, openWorldHint=False)

NodeId = Annotated[str, Field(description="Node id (UUID v4)")]


def run(call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``call(*args, **kwargs)``, with a core error raised as ``ToolError`` carrying its message for the model.

    Any other exception is a bug or an environment problem (a damaged disk, a full one): its traceback
    goes to the server's log on stderr and the model reads what failed, never a bare "Error executing tool".
    """
    try:
        return call(*args, **kwargs)
    except AutologyError as exc:
        raise ToolError(str(exc)) from exc
    except Exception as exc:
        log.exception("internal error in %s", getattr(call, "__qualname__", call))
        raise ToolError(
            f"Internal error ({type(exc).__name__}: {exc}). Node files are written whole or not at all, and the"
            " cache is rebuilt from them. Retry the call; if it fails again, run `autology doctor` (the server log on stderr"
            " has the traceback)."
        ) from exc
