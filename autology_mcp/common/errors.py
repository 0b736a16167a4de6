"""Typed errors of the domain core.

The MCP server turns each into a tool error carrying ``str(error)``; the CLI prints it and exits 1.
Every message says what was wrong and, where it helps, what is allowed.
"""

from __future__ import annotations

from collections.abc import Iterable


class AutologyError(Exception):
    """Base class of every error the core raises on purpose."""


class ValidationError(AutologyError):
    """Bad input: names the field, the reason and, when there is a fixed set, the allowed values."""

    def __init__(self, field: str, reason: str, allowed: Iterable[str] | None = None):
        self.field = field
        self.reason = reason
        self.allowed = list(allowed) if allowed is not None else None
        message = f"Invalid {field}: {reason}"
        if self.allowed:
            message += f" (allowed: {', '.join(self.allowed)})"
        super().__init__(message)


class NotFoundError(AutologyError):
    """No node with this id."""

    def __init__(self, node_id: str, what: str = "node"):
        self.node_id = node_id
        super().__init__(f"{what.capitalize()} not found: {node_id}")


class StorageError(AutologyError):
    """The file system refused: names the path and the reason."""

    def __init__(self, path: str, reason: str):
        self.path = str(path)
        self.reason = reason
        super().__init__(f"Storage error at {path}: {reason}")
