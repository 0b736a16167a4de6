"""The hook service: ``autology serve`` answers the per-prompt and per-file hooks itself, warm.

A hook is a new Python process per event. Run in-process, it pays for importing the store, the
search engine and the code index, and for a cold first search: about five times the bare
interpreter at 10,000 nodes. In a Claude Code session the plugin's MCP server is already running
with all of that warm, so it also listens on a Unix socket, and the hook process
(:mod:`autology_mcp.hooks.client`, standard library only) hands it the payload and prints the answer.

- **Where:** a socket in a private folder, ``$XDG_RUNTIME_DIR/autology`` or ``<tmp>/autology-<uid>``,
  created with mode 0700; a folder that is not ours, is a symlink, or lets others in disables the
  service. Its path is advertised in the server's watcher lease (:mod:`autology_mcp.knowledge.lease`),
  so a hook finds it, and knows it is live, from ``.autology/cache/watchers/``.
- **What:** the events in :data:`SERVED` only (read-only, latency-critical), and the command line's
  searches (:data:`CLI_SEARCHES`: ``autology search``, ``autology sessions search``). One JSON line in
  (``{"event", "stdin", "root"}``: the hook's own stdin text and the root its environment names),
  one JSON line out (``{"served": true, "output": ...}``, or ``{"served": false}`` for a payload of
  another project). The answer is exactly what the hook would have printed in-process: the same
  handler (:func:`autology_mcp.hooks.run`) runs, in a thread of the server.
- **Never in the way:** any failure on either side (no server, a dead one, a timeout, a refusal)
  and the hook runs in-process as before.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import socketserver
import stat
import tempfile
import threading
from pathlib import Path

from autology_mcp.common.paths import resolve_root
from autology_mcp.hooks import SERVED

log = logging.getLogger("autology.hooks.service")

MAX_REQUEST_BYTES = 8 * 1024 * 1024  # a prompt with a pasted log is large; a payload beyond this is refused


def _unified_search(root: Path, request: dict) -> dict:
    from autology_mcp.retrieval.engine import search

    return search(root, str(request["query"]), scope=request.get("scope"), limit=int(request["limit"]),
                  max_tokens=request.get("max_tokens"), detail=request.get("detail"))


def _sessions_search(root: Path, request: dict) -> list[dict]:
    from autology_mcp.sessions.search import search_sessions

    return [hit.to_dict() for hit in search_sessions(root, str(request["query"]), int(request["limit"]))]


# The command-line searches a running server answers (issue 40): warm, with the semantic model already
# loaded, instead of a new process that imports everything and loads the model again.
CLI_SEARCHES = {"cli-search": _unified_search, "cli-sessions-search": _sessions_search}


def socket_dir() -> Path | None:
    """The private folder for sockets, made if needed; None when it is not safely ours."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    folder = Path(runtime) / "autology" if runtime else Path(tempfile.gettempdir()) / f"autology-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        info = os.lstat(folder)
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        log.warning("not starting the hook service: %s is not a private folder of this user", folder)
        return None
    return folder


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        service: HookService = self.server.service  # type: ignore[attr-defined]
        line = self.rfile.readline(MAX_REQUEST_BYTES + 1)
        reply: dict = {"served": False}
        try:
            request = json.loads(line)
            if len(line) <= MAX_REQUEST_BYTES and isinstance(request, dict):
                reply = service.answer(request.get("event"), request.get("stdin"), request.get("root"))
        except ValueError:
            pass
        try:
            self.wfile.write(json.dumps(reply, ensure_ascii=False).encode("utf-8") + b"\n")
        except OSError:
            pass  # the hook gave up waiting


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


class HookService:
    """The socket server of one ``autology serve`` process, for its own project."""

    def __init__(self, root: Path):
        self.root = Path(root).resolve()
        self.path: Path | None = None
        self._server: _Server | None = None

    def start(self) -> Path | None:
        """Listen (in a thread); returns the socket's path, or None when the service cannot run here."""
        folder = socket_dir()
        if folder is None:
            return None
        _remove_dead_sockets(folder)
        digest = hashlib.sha256(str(self.root).encode("utf-8")).hexdigest()[:12]
        path = folder / f"{digest}-{os.getpid()}.sock"
        path.unlink(missing_ok=True)
        try:
            server = _Server(str(path), _Handler)
        except OSError as exc:
            log.warning("not starting the hook service on %s: %s", path, exc)
            return None
        os.chmod(path, 0o600)
        server.service = self  # type: ignore[attr-defined]
        threading.Thread(target=server.serve_forever, name="autology-hook-service", daemon=True).start()
        self._server, self.path = server, path
        return path

    def answer(self, event: object, stdin: object, root_hint: object) -> dict:
        """What the hook would print, for a payload of this project; ``{"served": False}`` otherwise.
        A command-line search (:data:`CLI_SEARCHES`) gets its answer as JSON text."""
        from autology_mcp.hooks import run

        if event in CLI_SEARCHES and isinstance(stdin, str):
            return self._search(event, stdin)
        if event not in SERVED or not isinstance(stdin, str):
            return {"served": False}
        hint = root_hint if isinstance(root_hint, str) and root_hint else None
        try:
            payload = json.loads(stdin)
            cwd = payload.get("cwd") if isinstance(payload, dict) else None
            root = resolve_root(hint, cwd=Path(cwd) if isinstance(cwd, str) and cwd else None)
        except Exception:  # noqa: BLE001 - the hook decides in-process what to make of it
            return {"served": False}
        if root.resolve() != self.root:
            return {"served": False}  # another project's hook: not ours to answer
        from autology_mcp.semantic.runtime import answering_a_hook

        with answering_a_hook():  # semantic recall only with a model fast enough for a hook's budget
            return {"served": True, "output": run(event, stdin, str(self.root))}

    def _search(self, event: str, stdin: str) -> dict:
        """``autology search`` / ``autology sessions search`` of this project, run warm: the same function
        the command runs in-process, its answer as JSON text (the command renders it)."""
        try:
            request = json.loads(stdin)
            root = Path(request["cwd"]).resolve()
        except (ValueError, KeyError, TypeError, OSError):
            return {"served": False}
        if root != self.root:
            return {"served": False}
        try:
            answer = CLI_SEARCHES[event](self.root, request)
        except Exception:  # noqa: BLE001 - the command runs in-process and reports the error itself
            return {"served": False}
        return {"served": True, "output": json.dumps(answer, ensure_ascii=False)}

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self.path is not None:
            self.path.unlink(missing_ok=True)
            self.path = None


def _remove_dead_sockets(folder: Path) -> None:
    """Sockets left by servers that were killed: nobody listens on them any more."""
    import socket

    for path in folder.glob("*.sock"):
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.settimeout(0.2)
            probe.connect(str(path))
        except ConnectionRefusedError:
            path.unlink(missing_ok=True)
        except OSError:
            continue
        finally:
            probe.close()
