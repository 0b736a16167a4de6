"""Edits of an agent's configuration files that keep everything of the user's: a JSON file's own keys and
hook entries, a TOML or Markdown file's own text.

Each edit is a pure function from the file's bytes (None: no file) to its new bytes (None: no file):

- JSON (``hooks``, ``mcpServers``): autology's hook entries are the ones whose command runs
  ``autology_mcp.hooks`` or ``autology hook``; adding replaces those and appends ours after the user's,
  removing drops them (and an event, a ``hooks`` object or a file left empty by it). The file is written
  as people and Prettier format config files, in its own indentation (:func:`dump_json`), so a
  Prettier-formatted file changes only where autology's entries go; other formatting is not kept by a
  JSON edit, which is why ``autology setup`` also keeps the exact bytes it replaced
  (:mod:`autology_mcp.setup.apply`).
- TOML and Markdown: one marked block at the end of the file, between a start and an end line that
  name autology; the rest of the file is not touched, so taking the block out gives back the bytes.

A file that cannot be parsed is never rewritten: :class:`~autology_mcp.common.errors.ValidationError`
says which and why.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from autology_mcp.common.errors import ValidationError

Hooks = dict[str, list[dict[str, Any]]]
_OURS = re.compile(r"autology_mcp\.hooks|\bautology\b[\"']?\s+hook\b")


def is_ours(entry: Any) -> bool:
    """A hook entry (Claude/Codex/Gemini group with ``hooks``, or a Copilot command) that runs autology."""
    if not isinstance(entry, dict):
        return False
    commands = [entry.get("command"), entry.get("bash")]
    commands += [h.get("command") for h in entry.get("hooks", []) if isinstance(h, dict)] if isinstance(
        entry.get("hooks"), list) else []
    return any(isinstance(c, str) and _OURS.search(c) for c in commands)


def load_json(path: str, data: bytes | None) -> dict[str, Any]:
    if data is None or not data.strip():
        return {}
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValidationError(path, f"not valid JSON ({exc}); fix or move it, then run autology setup again") from exc
    if not isinstance(value, dict):
        raise ValidationError(path, f"a JSON {type(value).__name__}, not an object; autology setup leaves it alone")
    return value


WIDTH = 100  # a list of plain values that fits in this many columns stays on one line


def dump_json(value: dict[str, Any], indent: str = "  ") -> bytes:
    """JSON the way people (and Prettier) format config files: objects one key a line, a short list of
    plain values on one line, the file's own indentation."""
    return (_dump(value, indent, 0) + "\n").encode("utf-8")


def _dump(value: Any, indent: str, depth: int) -> str:
    pad, inner = indent * depth, indent * (depth + 1)
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{inner}{json.dumps(k, ensure_ascii=False)}: {_dump(v, indent, depth + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(value, list):
        if not value:
            return "[]"
        if all(not isinstance(v, (dict, list)) for v in value):
            flat = "[" + ", ".join(json.dumps(v, ensure_ascii=False) for v in value) + "]"
            if len(inner) + len(flat) <= WIDTH:
                return flat
        return "[\n" + ",\n".join(inner + _dump(v, indent, depth + 1) for v in value) + f"\n{pad}]"
    return json.dumps(value, ensure_ascii=False)


def indent_of(data: bytes | None) -> str:
    """The indentation a JSON file uses (its first indented line's), two spaces when it has none."""
    for line in (data or b"").decode("utf-8", "replace").splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            return line[: len(line) - len(stripped)]
    return "  "


def json_edit(path: str, change: Callable[[dict[str, Any]], None]) -> Callable[[bytes | None], bytes | None]:
    """An edit of a JSON object file: ``change`` alters the parsed object in place. The file is
    unchanged when the object is; it is removed when the object ends empty."""

    def edit(data: bytes | None) -> bytes | None:
        value = load_json(path, data)
        before = json.dumps(value, sort_keys=True)
        change(value)
        if json.dumps(value, sort_keys=True) == before:
            return data
        return dump_json(value, indent_of(data)) if value else None  # a config file left with nothing in it goes

    return edit


def set_hooks(value: dict[str, Any], ours: Hooks, key: str = "hooks") -> None:
    """Our entries under ``value[key]``, after the user's (ours from before are replaced)."""
    hooks = value.get(key)
    if hooks is not None and not isinstance(hooks, dict):
        raise ValidationError(key, f"a JSON {type(hooks).__name__}, not an object; autology setup leaves it alone")
    hooks = hooks if isinstance(hooks, dict) else {}
    for event, entries in ours.items():
        kept = [e for e in hooks.get(event, []) if not is_ours(e)] if isinstance(hooks.get(event), list) else []
        hooks[event] = kept + entries
    value[key] = hooks


def drop_hooks(value: dict[str, Any], key: str = "hooks") -> None:
    """Every entry of ours under ``value[key]``; an event (and ``key``) left empty goes too."""
    hooks = value.get(key)
    if not isinstance(hooks, dict):
        return
    for event in list(hooks):
        entries = hooks[event]
        if isinstance(entries, list) and any(is_ours(e) for e in entries):
            kept = [e for e in entries if not is_ours(e)]
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]
    if not hooks:
        del value[key]


def set_server(value: dict[str, Any], name: str, server: dict[str, Any]) -> None:
    servers = value.get("mcpServers")
    if servers is not None and not isinstance(servers, dict):
        raise ValidationError("mcpServers", f"a JSON {type(servers).__name__}, not an object; autology setup leaves it alone")
    value["mcpServers"] = {**(servers or {}), name: server}


def drop_server(value: dict[str, Any], name: str) -> None:
    servers = value.get("mcpServers")
    if isinstance(servers, dict) and name in servers:
        del servers[name]
        if not servers:
            del value["mcpServers"]


# ------------------------------------------------------------------------------ marked blocks (TOML, Markdown)


def block_edit(start: str, end: str, body: str | None) -> Callable[[bytes | None], bytes | None]:
    """An edit that puts ``body`` between the ``start`` and ``end`` lines at the end of a text file
    (replacing a block already there, in place), or with ``body`` None takes the block out again,
    with the one line break put before it: taking out what was added gives back the same bytes."""

    def edit(data: bytes | None) -> bytes | None:
        text = data.decode("utf-8") if data is not None else ""
        block = f"{start}\n{body.rstrip()}\n{end}\n" if body is not None else ""
        found = _find_block(text, start, end)
        if found is not None:
            a, b = found
            if body is None and a >= 1 and text[a - 1] == "\n":
                a -= 1  # the line break the block was given
            new = text[:a] + block + text[b:]
        elif body is None:
            return data
        else:
            new = text + ("\n" if text else "") + block  # a blank line before it (after a last line break)
        if data is None and not new:
            return None
        if body is None and not new and data is not None:
            return None  # the file held only our block: it was ours
        return new.encode("utf-8")

    return edit


def _find_block(text: str, start: str, end: str) -> tuple[int, int] | None:
    a = text.find(start + "\n")
    while a > 0 and text[a - 1] != "\n":
        a = text.find(start + "\n", a + 1)
    if a < 0:
        return None
    b = text.find(end, a)
    if b < 0:
        raise ValidationError("autology's block", f"it starts ({start!r}) but never ends ({end!r}); put the end "
                              "line back or delete the block, then run autology setup again")
    b += len(end)
    if text[b : b + 1] == "\n":
        b += 1
    return a, b
