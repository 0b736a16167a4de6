"""Knowledge nodes' vectors (issue 37), used only when semantic recall is on
(:mod:`autology_mcp.semantic.runtime`): the node search re-ranks its best lexical matches by how near the
query each node's text is (the edges hand it :func:`dense_for`; knowledge/ itself knows no vectors).

A node is embedded in pieces: its title before each run of paragraphs up to :data:`PIECE_CHARS`
characters, at most :data:`MOST_PIECES` of them, or its title alone when it has no content (a long
record is about several things, and one mean vector over all of them is about none). A node's
similarity to a query is its best piece's cosine. Vectors are a derived cache (``.autology/cache/semantic.sqlite``, kind ``node_piece``,
key ``<node id>:<piece>``), made by :func:`sync_node_vectors` (``autology semantic enable``, ``autology
semantic sync``, and a running server after the nodes changed).

How the similarity counts is :func:`~autology_mcp.knowledge.search.search_nodes`' to say (``dense``): it
re-ranks only its lexical candidates, so the vectors change which record comes first, never whether a
record matches at all (the evidence gate reads the words, not the vectors).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from autology_mcp.knowledge.node_index import NodeIndex
    from autology_mcp.knowledge.search import Similarity

KIND = "node_piece"
PIECE_CHARS = 900
MOST_PIECES = 12
_PARAGRAPHS = re.compile(r"\n\s*\n")


def pieces(title: str, content: str) -> list[str]:
    """The texts a node is embedded as: the title with each run of paragraphs (the title alone for none)."""
    out: list[str] = []
    current = ""
    for paragraph in (p.strip() for p in _PARAGRAPHS.split(content or "")):
        if not paragraph:
            continue
        if current and len(current) + len(paragraph) > PIECE_CHARS:
            out.append(f"{title}\n{current}")
            current = ""
        current = f"{current}\n{paragraph}" if current else paragraph
        if len(out) >= MOST_PIECES:
            break
    if current and len(out) < MOST_PIECES:
        out.append(f"{title}\n{current}")
    return out or [title]


def node_texts(index: NodeIndex) -> dict[str, str]:
    """Every node's pieces, by ``<node id>:<piece>``."""
    texts: dict[str, str] = {}
    for node in index.all_nodes():
        for i, text in enumerate(pieces(node.title, node.content)):
            texts[f"{node.id}:{i}"] = text
    return texts


def sync_node_vectors(root: Path, index: NodeIndex, should_stop: Callable[[], bool] | None = None,
                      may_load: bool = True, progress: Callable[[int, int], None] | None = None) -> int | None:
    """Embed the node pieces that have no vector yet (and drop those of nodes gone or changed); how many were
    embedded, or None when semantic recall is off here or its model cannot be loaded."""
    from autology_mcp.semantic import runtime

    return runtime.sync(root, KIND, lambda: node_texts(index), should_stop, may_load, progress)


class NodeVectors:
    """One query's cosine with every node piece, and each node's best."""

    def __init__(self, keys: list[str], matrix: np.ndarray, query: np.ndarray):
        import numpy as np

        self.row, owner = _owners(keys)
        self.best = np.full(len(self.row), -2.0, dtype=np.float32)
        np.maximum.at(self.best, owner, matrix @ query)

    def __call__(self, node_ids: list[str]) -> dict[str, float]:
        return {i: float(self.best[self.row[i]]) for i in node_ids if i in self.row}


_owned: tuple = (None, {}, None)  # the keys list last read (the cache's matrix keeps it while its file is unchanged)


def _owners(keys: list[str]) -> tuple[dict[str, int], np.ndarray]:
    """Each node's number, and for each key (``<node id>:<piece>``) its node's number."""
    import numpy as np

    global _owned
    seen = _owned  # one read: another thread may replace it meanwhile, never change it
    if seen[0] is not keys:
        row: dict[str, int] = {}
        owner = np.array([row.setdefault(key.rsplit(":", 1)[0], len(row)) for key in keys], dtype=np.intp)
        seen = _owned = (keys, row, owner)
    return seen[1], seen[2]


def node_similarity(root: Path, query: str) -> Similarity | None:
    """The query's similarity to the nodes, when semantic recall is on here and the nodes have vectors."""
    from autology_mcp.semantic import runtime

    found = runtime.query_matrix(root, query, KIND)
    return NodeVectors(*found) if found else None


def count_with_vectors(root: Path) -> int:
    """How many nodes have vectors (for ``status`` and ``doctor``); 0 when semantic recall is off."""
    from autology_mcp.semantic import runtime

    state = runtime.active(root)
    if state is None:
        return 0
    keys, _ = runtime.cache(root, state).matrix(KIND)
    return len({k.rsplit(":", 1)[0] for k in keys})


def dense_for(root: Path) -> Callable[[str], Similarity | None] | None:
    """What :func:`~autology_mcp.knowledge.search.search_nodes` takes as ``dense`` for the project at
    ``root``: None when semantic recall is off here (one stat: a search pays nothing more)."""
    from autology_mcp.semantic.state import enabled_here

    if not enabled_here(root):
        return None
    return lambda query: node_similarity(root, query)
