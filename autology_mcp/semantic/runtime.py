"""Semantic recall as the other parts use it: is it on here, the vector cache, and a query's vector.

Off by default; on after ``autology semantic enable`` on this machine (:mod:`~autology_mcp.semantic.state`).
Loading the model takes a few tenths of a second, so a process that must answer fast and has no model
loaded yet (a hook run in-process, without a server: ``AUTOLOGY_SEMANTIC_LOAD=never``, which the hook
command sets for itself) does not load one, and ranks lexically as before. ``autology serve`` loads the
model once and keeps it, so the hooks it answers use the vectors, when the model embeds a question within
:data:`HOOK_QUERY_MS` (measured when it loads): a larger model serves the tools and ``sessions search``,
and the hooks rank lexically rather than miss their latency budget.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING

from autology_mcp.semantic.state import SemanticState, load_state

if TYPE_CHECKING:
    import numpy as np

    from autology_mcp.semantic.encoder import Encoder
    from autology_mcp.semantic.vectors import VectorCache

log = logging.getLogger("autology.semantic")
NO_LOADING = ("AUTOLOGY_SEMANTIC_LOAD", "never")  # a process that must answer fast: never load a model
# A hook answered by the server stays within about 3x the bare interpreter with lexical ranking plus this
# (all-MiniLM-L6-v2 embeds a question in ~5 ms here, nomic-embed-text-v1.5 in ~70: docs/benchmarks.md).
HOOK_QUERY_MS = 30.0
_answering_a_hook: ContextVar[bool] = ContextVar("autology_semantic_answering_a_hook", default=False)


@contextmanager
def answering_a_hook() -> Iterator[None]:
    """While a hook's answer is made: a model slower than :data:`HOOK_QUERY_MS` is not asked."""
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
        return enc.load(state.path, state.model)
    except Exception as exc:  # noqa: BLE001 - a broken model must not break search: it ranks lexically
        log.warning("semantic recall off for now: cannot load the model in %s: %s", state.path, exc)
        return None


def query_vector(root: Path, text: str) -> tuple[VectorCache, np.ndarray] | None:
    """The vector cache and ``text``'s vector, when semantic recall is on and its model can be used here."""
    state = active(root)
    if state is None:
        return None
    model = encoder(state)
    if model is None or (_answering_a_hook.get() and model.query_ms > HOOK_QUERY_MS):
        return None
    return cache(root, state), model.encode_query(text)


def enable(root: Path, folder: Path, name: str | None = None) -> tuple[SemanticState, Encoder]:
    """Turn semantic recall on here with the model in ``folder`` (``name``: fastembed's name for it, when it
    was fetched by name), after loading it: a folder that does not load is never enabled."""
    from autology_mcp.semantic import encoder as enc
    from autology_mcp.semantic.state import save_state

    folder = Path(folder).expanduser().resolve()
    name = name or folder.name
    model = enc.load(str(folder), name)
    state = SemanticState(name, str(folder), model.dimension, "fastembed")
    save_state(root, state)
    return state, model
