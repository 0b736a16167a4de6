"""What the server publishes and accepts, adjusted where the SDK's defaults would mislead a client.

- :func:`forbid_unknown_arguments`: a misspelt argument is an error, not silently dropped;
- :func:`keep_string_arguments`: a string argument arrives as given, not JSON-decoded;
- :func:`compact_output_schemas`: output schemas in the form that is cheapest for clients to validate;
- :func:`slim_input_schemas`: input schemas without what only repeats (the model reads them every turn).

On output schemas: MCP clients validate every structured tool result against the tool's output schema; the Python
SDK's client does it with ``jsonschema``, where each ``$ref`` is a registry lookup and each nullable
field an ``anyOf`` that builds an error object for the branch that fails. Pydantic writes both. For
``autology_query`` with 10 hits that validation cost 2.4 ms per call, more than the search itself
on a 1k-node store. :func:`compact` rewrites a schema into an equivalent one without either:

- every ``$ref`` to ``#/$defs/…`` is replaced by the definition it names (and ``$defs`` dropped);
- ``anyOf: [{"type": X}, {"type": "null"}]`` (branches holding only a ``type``) becomes
  ``type: [X, "null"]``.

Both are the same constraints (JSON Schema defines them so); titles, descriptions, defaults and
enums are kept. Recursive definitions cannot be inlined: such a schema is returned unchanged.
"""

from __future__ import annotations

import typing
from typing import Any

from mcp.server import MCPServer

_DEFS_PREFIX = "#/$defs/"
_ANNOTATIONS = frozenset({"title", "description", "default", "examples"})


class _Recursive(Exception):
    """The schema cannot be inlined as is."""


def compact(schema: dict[str, Any]) -> dict[str, Any]:
    """An equivalent schema without local ``$ref``s and with nullable scalars as type lists."""
    defs = schema.get("$defs", {})
    try:
        out = _rewrite(schema, defs, ())
    except (_Recursive, KeyError):  # a recursive or dangling reference: publish the original
        return schema
    out.pop("$defs", None)
    return out


def _rewrite(node: Any, defs: dict[str, Any], expanding: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_rewrite(item, defs, expanding) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith(_DEFS_PREFIX):
        name = ref[len(_DEFS_PREFIX) :]
        if name in expanding:
            raise _Recursive(name)
        target = _rewrite(defs[name], defs, (*expanding, name))
        siblings = {k: _rewrite(v, defs, expanding) for k, v in node.items() if k != "$ref"}
        if any(k in target and k not in _ANNOTATIONS for k in siblings):
            raise _Recursive(name)  # constraints on both sides of the $ref: keep the original form
        return {**target, **siblings}  # annotations next to a $ref (e.g. a description) win
    out = {k: (v if k == "$defs" else _rewrite(v, defs, expanding)) for k, v in node.items()}
    branches = out.get("anyOf")
    if (
        isinstance(branches, list)
        and len(branches) >= 2
        and "type" not in out
        and all(isinstance(b, dict) and set(b) == {"type"} and isinstance(b["type"], str) for b in branches)
    ):
        del out["anyOf"]
        out["type"] = [b["type"] for b in branches]
    return out


def forbid_unknown_arguments(app: MCPServer) -> None:
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


def keep_string_arguments(app: MCPServer) -> None:
    """Pass a string argument through as given wherever the parameter accepts a string.

    The SDK JSON-decodes string arguments of every parameter not annotated exactly ``str`` (meant for
    lists a client sends as JSON text), so for a ``str | None`` parameter the content ``null`` arrived
    as None (an update silently skipped the field), and a title ``[1, 2]`` or a query ``true`` as a
    list or a bool (a confusing type error). Lists sent as JSON text are still decoded.
    """
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


def compact_output_schemas(app: MCPServer) -> None:
    """Publish each output schema without $refs and anyOf-nullables: the same constraints, but
    clients validate every result against it, and this form validates ~40% faster (:func:`compact`)."""
    for tool in app._tool_manager.list_tools():  # the SDK reads fn_metadata.output_schema live
        if tool.fn_metadata.output_schema is not None:
            tool.fn_metadata.output_schema = compact(tool.fn_metadata.output_schema)


def slim_input_schemas(app: MCPServer) -> None:
    """Publish each input schema without what only repeats, since the model reads every tool's
    schema on every turn: pydantic's generated ``title`` on the schema and on each property, and
    ``anyOf: [X, {"type": "null"}]`` with ``"default": null`` on an optional argument (omitting it is
    the null). The server still validates arguments with its own models, so what it accepts does not
    change (an explicit null is still taken as "not given")."""
    for tool in app._tool_manager.list_tools():  # the SDK has no public hook for this
        tool.parameters = slim_input_schema(tool.parameters)


def slim_input_schema(schema: dict[str, Any]) -> dict[str, Any]:
    slim = _without_titles(compact(schema))
    required = set(slim.get("required", []))
    properties = slim.get("properties", {})
    for name, prop in list(properties.items()):
        if name not in required:
            properties[name] = _not_nullable(prop)
    return slim


def _without_titles(node: Any, naming: bool = False) -> Any:
    """``node`` without ``title`` annotations (``naming``: a ``properties`` mapping, whose keys are names)."""
    if isinstance(node, list):
        return [_without_titles(item) for item in node]
    if not isinstance(node, dict):
        return node
    return {
        key: _without_titles(value, naming=key == "properties" and not naming)
        for key, value in node.items()
        if naming or not (key == "title" and isinstance(value, str))
    }


def _not_nullable(prop: dict[str, Any]) -> dict[str, Any]:
    """An optional argument's schema without its null alternative and its null default."""
    out = dict(prop)
    if out.get("default", ...) is None:
        del out["default"]
    types = out.get("type")
    if isinstance(types, list) and "null" in types:
        rest = [t for t in types if t != "null"]
        out["type"] = rest[0] if len(rest) == 1 else rest
    branches = out.get("anyOf")
    if isinstance(branches, list) and len(branches) == 2 and {"type": "null"} in branches:
        other = next(b for b in branches if b != {"type": "null"})
        del out["anyOf"]
        out = {**other, **out}
    return out

