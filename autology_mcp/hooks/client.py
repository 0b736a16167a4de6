"""Hand a hook to the project's running ``autology serve`` (:mod:`autology_mcp.hooks.service`).

Standard library only, so that asking costs little more than the interpreter's start-up. The
project is found from the environment the hook runs in (``AUTOLOGY_ROOT``, ``CLAUDE_PROJECT_DIR``)
or from the payload's ``cwd`` and its parents; the server checks it is its own project and says so
when it is not. Any failure returns "not answered", and the hook then runs in-process.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

TIMEOUT_S = 5.0  # a hook's own timeout is 10 s: past this, running in-process is still possible
CONNECT_TIMEOUT_S = 0.5


def _store_folders(stdin_text: str, root_hint: str | None) -> list[Path]:
    """Where the project's ``.autology/`` may be: the named root, else ``cwd`` and its parents."""
    if root_hint:
        return [Path(root_hint) / ".autology"]
    try:
        cwd = json.loads(stdin_text).get("cwd")
    except (ValueError, AttributeError):
        return []
    if not isinstance(cwd, str) or not cwd:
        return []
    start = Path(cwd)
    return [folder / ".autology" for folder in (start, *start.parents)]


def ask_server(event: str, stdin_text: str, root: str | None = None) -> tuple[bool, str | None]:
    """(answered, the hook's output) from the project's server, or (False, None). ``root``: the
    project's root when the caller knows it (the command line), else the hook's environment names it."""
    from autology_mcp.knowledge.lease import live_leases

    root_hint = root or os.environ.get("AUTOLOGY_ROOT") or os.environ.get("CLAUDE_PROJECT_DIR") or None
    for base in _store_folders(stdin_text, root_hint):
        if not base.is_dir():
            continue
        for advertised in live_leases(base / "cache"):
            if advertised and _own_socket(advertised):
                answered, output = _ask(advertised, event, stdin_text, root_hint)
                if answered:
                    return True, output
        return False, None  # the nearest store decides: no live server for it
    return False, None


def _own_socket(path: str) -> bool:
    """A socket of this user's (the service's folder is private; this checks the file too)."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return info.st_uid == os.getuid()


def _ask(path: str, event: str, stdin_text: str, root_hint: str | None) -> tuple[bool, str | None]:
    request = json.dumps({"event": event, "stdin": stdin_text, "root": root_hint}, ensure_ascii=False)
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(CONNECT_TIMEOUT_S)
        conn.connect(path)
        conn.settimeout(TIMEOUT_S)
        conn.sendall(request.encode("utf-8") + b"\n")
        with conn.makefile("rb") as reply_file:
            reply = json.loads(reply_file.readline() or b"{}")
    except (OSError, ValueError):
        return False, None
    finally:
        conn.close()
    if not isinstance(reply, dict) or reply.get("served") is not True:
        return False, None
    output = reply.get("output")
    return True, output if isinstance(output, str) else None
