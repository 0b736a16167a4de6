"""Semantic recall as the other parts use it: is it on here, the vector cache, and a query's vector.

Off by default; on after ``autology semantic enable`` on this machine (:mod:`~autology_mcp.semantic.state`).
Loading the model takes a few tenths of a second, so a process that must answer fast and has no model
loaded yet (a hook run in-process, without a server: ``AUTOLOGY_SEMANTIC_LOAD=never``, which the hook
command sets for itself) does not load one, and ranks lexically as before. ``autology serve`` loads the
model once, at its start, and keeps it (a hook never waits for it to load: one that comes first ranks
lexically and has it loaded in the background), so the hooks it answers use the vectors while the model
embeds questions within :data:`~autology_mcp.semantic.speed.HOOK_QUERY_MS` (the median of the last few,
measured all along: :mod:`~autology_mcp.semantic.speed`); over it, the tools and ``sessions search``
keep the vectors and the hooks rank lexically rather than miss their latency budget, until the model is
fast enough again.

Whether the hooks use the vectors now is said by :func:`hooks_status`: in the server from its own
measure, in another process (``autology semantic status``, ``doctor``) from what the running server
publishes in ``.autology/cache/semantic-hooks-<pid>.json`` (read only while that server's watcher lease,
which advertises its hook socket, is live).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING

from autology_mcp.common.errors import ValidationError
from autology_mcp.common.fsutil import read_json_object
from autology_mcp.semantic import speed
from autology_mcp.semantic.state import SemanticState, load_state

if TYPE_CHECKING:
    import numpy as np

    from autology_mcp.semantic.encoder import Encoder
    from autology_mcp.semantic.vectors import VectorCache

log = logging.getLogger("autology.semantic")
NO_LOADING = ("AUTOLOGY_SEMANTIC_LOAD", "never")  # a process that must answer fast: never load a model
HOOK_QUERY_MS = speed.HOOK_QUERY_MS
HOOKS_FILE = "semantic-hooks-{pid}.json"  # in .autology/cache: what the server's hooks do now
PUBLISH_EVERY_S = 2.0  # the server's published measure is refreshed at most this often (and at every switch)
_answering_a_hook: ContextVar[bool] = ContextVar("autology_semantic_answering_a_hook", default=False)


@contextmanager
def answering_a_hook() -> Iterator[None]:
    """While a hook's answer is made: a model whose recent questions took over :data:`HOOK_QUERY_MS` is not
    asked (:mod:`~autology_mcp.semantic.speed`)."""
    token = _answering_a_hook.set(True)
    try:
        yield
    finally:
        _answering_a_hook.reset(token)


def active(root: Path) -> SemanticState | None:
    """The enabled model when semantic recall is on here and the extra is installed; else None."""
    state = load_state(root)
    if state is None:
        return None
    from autology_mcp.semantic.encoder import available

    return state if available() else None


def cache(root: Path, state: SemanticState) -> VectorCache:
    from autology_mcp.semantic.vectors import VectorCache

    return VectorCache(root, state.model, state.dimension)


def encoder(state: SemanticState, may_load: bool | None = None):
    """The loaded model, loading it if this process may; None when it may not or it fails."""
    from autology_mcp.semantic import encoder as enc

    if may_load is None:
        may_load = os.environ.get(NO_LOADING[0]) != NO_LOADING[1]
    if not may_load:
        return enc.loaded(state.path, state.model)  # this very model, if it is loaded already; never another one
    try:
        model = enc.load(state.path, state.model)
    except Exception as exc:  # noqa: BLE001 - a broken model must not break search: it ranks lexically
        log.warning("semantic recall off for now: cannot load the model in %s: %s", state.path, exc)
        load_errors[state.path] = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        if _serving is not None:
            publish(force=True)
        return None
    load_errors.pop(state.path, None)
    if _serving is not None and model.speed.listener is None:  # the hooks' choice, published at every switch
        model.speed.listener = lambda: publish(force=True)
        publish(force=True)
    return model


def query_vector(root: Path, text: str) -> tuple[VectorCache, np.ndarray] | None:
    """The vector cache and ``text``'s vector, when semantic recall is on and its model can be used here."""
    state = active(root)
    if state is None:
        return None
    hook = _answering_a_hook.get()
    model = encoder(state, may_load=False) if hook else encoder(state)  # a hook never waits for a model to load
    if model is None:
        if hook:
            _load_in_background(state)
        return None
    if hook and not model.speed.fast_enough():
        # measured off the hook's critical path, and said to other processes
        model.speed.probe(lambda: (model.encode_query(text), publish()))
        return None
    vector = model.encode_query(text)
    publish()  # the server's measure, for status in other processes (at most every PUBLISH_EVERY_S)
    return cache(root, state), vector


def query_matrix(root: Path, text: str, kind: str) -> tuple[list[str], np.ndarray, np.ndarray] | None:
    """The keys and vectors of ``kind`` and ``text``'s vector, when semantic recall can be used here and
    ``kind`` has vectors; else None."""
    found = query_vector(root, text)
    if found is None:
        return None
    vectors, vector = found
    keys, matrix = vectors.matrix(kind)
    return (keys, matrix, vector) if keys else None


def sync(root: Path, kind: str, texts: Callable[[], dict[str, str]], should_stop: Callable[[], bool] | None = None,
         may_load: bool = True, progress: Callable[[int, int], None] | None = None) -> int | None:
    """Embed the texts of ``kind`` that have no vector yet (and drop those no longer given); how many were
    embedded, or None when semantic recall is off here or its model cannot be loaded (``texts`` is then
    not even asked)."""
    state = active(root)
    model = encoder(state, may_load) if state else None
    if state is None or model is None:
        return None
    return cache(root, state).sync(kind, texts(), model.encode, should_stop, progress)


_loading: dict[str, tuple[float, threading.Thread]] = {}
load_errors: dict[str, str] = {}  # why the model of a folder did not load in this process, the last time it was tried
RELOAD_AFTER_S = 60.0  # a model that failed to load is tried again by a hook no sooner than this


def _load_in_background(state: SemanticState) -> None:
    """Load the model in a thread for the hooks after this one (a server whose vectors thread has not
    loaded it yet, or where it was enabled after the start); never in a process that may not load one."""
    import time

    if os.environ.get(NO_LOADING[0]) == NO_LOADING[1]:
        return
    started = _loading.get(state.path)
    if started and (started[1].is_alive() or time.monotonic() - started[0] < RELOAD_AFTER_S):
        return
    thread = threading.Thread(target=encoder, args=(state, True), name="autology-semantic-load", daemon=True)
    _loading[state.path] = (time.monotonic(), thread)
    thread.start()


def enable(root: Path, folder: Path, name: str | None = None) -> tuple[SemanticState, Encoder]:
    """Turn semantic recall on here with the model in ``folder`` (``name``: fastembed's name for it, when it
    was fetched by name), after loading it: a folder that does not load is never enabled."""
    from autology_mcp.semantic import encoder as enc
    from autology_mcp.semantic.state import save_state

    folder = Path(folder).expanduser().resolve()
    name = name or folder.name
    try:
        model = enc.load(str(folder), name)
    except ValidationError:
        raise
    except Exception as exc:  # noqa: BLE001 - the library's own errors (ValueError, ONNX Runtime's): one sentence
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        raise ValidationError(str(folder), f"the model in this folder does not load: {first}") from exc
    state = SemanticState(name, str(folder), model.dimension, "fastembed")
    save_state(root, state)
    return state, model


# The root and hook socket this process answers hooks for (``autology serve``: :func:`serve_hooks`).
_serving: tuple[Path, str] | None = None
_published: dict[str, object] = {}


def serve_hooks(root: Path, socket_path: str) -> None:
    """This process answers the hooks of ``root`` on ``socket_path``: say what they do in
    ``.autology/cache`` from now on (:func:`publish`), and drop what dead servers said."""
    global _serving
    _serving = (Path(root).resolve(), str(socket_path))
    live = _live_sockets(root)
    for path in _hooks_files(root):
        if read_json_object(path).get("socket") not in live and path != _hooks_file(root):
            path.unlink(missing_ok=True)
    publish(force=True)


def stop_serving_hooks(root: Path) -> None:
    global _serving
    _serving = None
    _hooks_file(root).unlink(missing_ok=True)


def publish(force: bool = False) -> None:
    """Write the :func:`hooks_status` of the hooks this process answers, for other processes to read (at a
    switch, or when the last write is older than :data:`PUBLISH_EVERY_S`); nothing when it answers none."""
    import json
    import time

    if _serving is None:
        return
    root = _serving[0]
    now = time.monotonic()
    if not force and now - float(_published.get("at", float("-inf"))) < PUBLISH_EVERY_S:  # type: ignore[arg-type]
        return
    _published["at"] = now
    if active(root) is None:  # off here: nothing to say (a file would only be clutter)
        _hooks_file(root).unlink(missing_ok=True)
        return
    report = {**hooks_status(root), "pid": os.getpid(), "socket": _serving[1], "written": time.time()}
    try:
        from autology_mcp.common.fsutil import atomic_write

        atomic_write(_hooks_file(root), json.dumps(report, sort_keys=True) + "\n", durable=False)
    except Exception as exc:  # noqa: BLE001 - a status file must never break a hook
        log.debug("cannot write the hooks' semantic status: %s", exc)


def hooks_status(root: Path) -> dict:
    """Whether the hooks of ``root`` embed their questions now (``use_vectors``), and why not (``why``),
    with the model's recent query time (``query_ms``, the median of ``samples``) when it is known."""
    state = active(root)
    if state is None:
        return {"use_vectors": False, "why": "semantic recall is off here, or the extra is not installed"}
    if _serving is not None and _serving[0] == Path(root).resolve():  # this process answers them
        from autology_mcp.semantic import encoder as enc

        model = enc.loaded(state.path, state.model)
        if model is None and state.path in load_errors:
            return {"use_vectors": False, "why": f"the model does not load: {load_errors[state.path]}"}
        if model is None:
            return {"use_vectors": False, "why": "the server has not loaded the model yet (it loads it at start)"}
        return model.speed.report()
    live = _live_sockets(root)
    if not live:
        return {"use_vectors": False, "why": "no server is running: a hook run in its own process never loads the "
                                             "model (autology serve, the MCP server, keeps it loaded for them)"}
    for path in _hooks_files(root):
        report = read_json_object(path)
        if report.get("socket") in live:
            return {k: v for k, v in report.items() if k not in ("socket", "written")}
    return {"use_vectors": False, "why": "the running server has not loaded the model yet"}


def _hooks_file(root: Path) -> Path:
    return Path(root) / ".autology" / "cache" / HOOKS_FILE.format(pid=os.getpid())


def _hooks_files(root: Path) -> list[Path]:
    return sorted((Path(root) / ".autology" / "cache").glob(HOOKS_FILE.format(pid="*")))


def _live_sockets(root: Path) -> set[str]:
    """The hook sockets the project's live servers advertise in their watcher leases."""
    from autology_mcp.knowledge.lease import live_leases

    return {text for text in live_leases(Path(root) / ".autology" / "cache") if text}


