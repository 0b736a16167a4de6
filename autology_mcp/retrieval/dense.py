"""The knowledge nodes' dense channel (``node_dense``), when semantic recall is on (issue 31).

Each node's vector is computed from its title and the start of its content (:data:`TEXT_MAX`
characters; a model reads a few hundred words at most), kept in the derived vector cache (kind ``node``,
key the node id) and synced incrementally by ``autology semantic enable``/``sync`` and a running
server. The channel ranks the nodes by cosine with the query; Reciprocal Rank Fusion weighs it with
the others (``channel_weights.node_dense``). Off, or without the model loaded in this process, the
channel does not run and nothing changes. The evidence gate does not look at it: grounding stays lexical.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autology_mcp.knowledge.store import NodeStore
    from autology_mcp.retrieval.channels import ChannelRun, Pool

KIND = "node"
TEXT_MAX = 800
NAME = "node_dense"


def node_texts(store: NodeStore) -> dict[str, str]:
    """Every node's text to embed, by id (superseded nodes too: the engine replaces them by their successor)."""
    return {n.id: f"{n.title}\n{n.content[:TEXT_MAX]}" for n in store.index.all_nodes()}


def sync_node_vectors(root: Path, store: NodeStore, should_stop: Callable[[], bool] | None = None,
                      may_load: bool = True) -> int | None:
    """Embed the nodes that are new or changed (and drop deleted ones); None when semantic recall is off
    here or its model cannot be loaded."""
    from autology_mcp.semantic import runtime

    state = runtime.active(root)
    model = runtime.encoder(state, may_load) if state else None
    if state is None or model is None:
        return None
    return runtime.cache(root, state).sync(KIND, node_texts(store), model.encode, should_stop)


def node_channel(root: Path, store: NodeStore, query: str, pool: Pool, size: int) -> ChannelRun:
    """The nodes nearest the query, best first (status ``disabled`` when semantic recall is off here)."""
    from autology_mcp.retrieval.channels import ChannelRun, node_candidate
    from autology_mcp.semantic.state import STATE

    run = ChannelRun(NAME)
    if not (Path(root) / STATE).is_file():
        run.status = "disabled"
        return run
    from autology_mcp.semantic import runtime

    t0 = time.perf_counter()
    found = runtime.query_vector(root, query)
    if found is None:
        run.status = "disabled"
        return run
    cache, vector = found
    keys, matrix = cache.matrix(KIND)
    if not keys:
        run.status = "empty"
        return run
    import numpy as np

    scores = matrix @ vector
    order = np.argsort(-scores, kind="stable")[:size].tolist()
    nodes = [store.index.get_node(keys[i]) for i in order]
    run.ranking = [pool.add(node_candidate(n)).key for n in nodes if n is not None]
    run.status = "ok" if run.ranking else "empty"
    run.ms = (time.perf_counter() - t0) * 1000
    return run
