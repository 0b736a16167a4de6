"""Graph expansion after fusion, on the node store's index (no NetworkX graph needed):

1. supersession: a superseded node found by any channel is replaced by its current successor
   (following ``supersedes`` relations to the newest node), which takes over its fused score;
   the chain is shown in ``via``;
2. neighbours: each of the best node hits brings its 1-hop neighbours (both directions), credited
   ``RRF(hit) · w_graph · w_relation · relation confidence``;
3. references: each of the best code/doc hits brings the nodes whose ``references`` cover its
   file (or name its symbol or overlap its lines), credited ``RRF(hit) · w_graph · w_references``:
   "why is this code like this?".

Credits go to nodes no channel found (a found node keeps its own rank) and are their RRF score
(see docs/retrieval.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from autology_mcp.knowledge.models import KnowledgeNode
from autology_mcp.knowledge.references import reference_path
from autology_mcp.knowledge.store import NodeStore
from autology_mcp.retrieval.candidates import Candidate
from autology_mcp.retrieval.channels import Pool, node_candidate
from autology_mcp.retrieval.config import RetrievalConfig

MAX_NEIGHBOURS = 6  # per expanded node
MAX_CHAIN = 20
REFERENCE_WEIGHT = 0.8


@dataclass
class Credit:
    key: str
    amount: float
    via: str
    parent: str  # the key of the hit the credit comes from


def _short(node: KnowledgeNode | None, node_id: str) -> str:
    return f"{node.title!r} ({node_id[:8]})" if node is not None else node_id[:8]


def successor_chain(store: NodeStore, node_id: str) -> list[str]:
    """``[node_id, newer, ..., newest]`` following ``X supersedes node_id`` relations; the first
    superseding node by id is followed when there are several."""
    chain = [node_id]
    seen = {node_id}
    index = store.index
    while len(chain) < MAX_CHAIN:
        newer = sorted(s for s, t in index.incoming(chain[-1]) if t == "supersedes" and s not in seen)
        if not newer:
            break
        chain.append(newer[0])
        seen.add(newer[0])
    return chain


def apply_supersession(store: NodeStore, pool: Pool, scores: dict[str, float]) -> list[dict]:
    """Replace every superseded node candidate by its newest successor. Returns what was replaced."""
    replaced = []
    for key in sorted(k for k, c in pool.items.items() if c.node is not None and c.node.status.value == "superseded"):
        cand = pool.items[key]
        chain = successor_chain(store, cand.ref)
        if len(chain) < 2:
            continue  # superseded without a recorded successor: it stays, ranked low by its status prior
        newest_id = chain[-1]
        newest_key = f"node:{newest_id}"
        succ = pool.items.get(newest_key)
        if succ is None:
            node = store.index.get_node(newest_id)
            if node is None:
                continue
            succ = pool.add(node_candidate(node))
        titles = [cand.node.title] + [
            (store.index.get_node(i) or cand.node).title if i != newest_id else succ.title for i in chain[1:]
        ]
        via = "supersedes chain: " + " → ".join(f"{t!r} ({i[:8]})" for t, i in zip(titles, chain))
        succ.via = via
        succ.meta["supersedes_chain"] = chain
        scores[newest_key] = max(scores.get(newest_key, 0.0), scores.pop(key, 0.0))
        succ.meta.setdefault("channels_inherited", []).extend(cand.meta.get("channels", []))
        del pool.items[key]
        replaced.append({"superseded": cand.ref, "replaced_by": newest_id, "chain": chain})
    return replaced


def neighbour_credits(
    store: NodeStore, pool: Pool, scores: dict[str, float], cfg: RetrievalConfig, graph_weight: float
) -> list[Credit]:
    nodes = sorted(
        (k for k, c in pool.items.items() if c.node is not None and k in scores), key=lambda k: (-scores[k], k)
    )[: cfg.expand_top]
    credits: list[Credit] = []
    index = store.index
    for key in nodes:
        parent = pool.items[key]
        base = scores[key]
        steps: list[tuple[float, str, str, str]] = []  # (weight, neighbour id, relation type, direction)
        for r in parent.node.relations:
            w = cfg.relation_weights.get(r.type.value, 0.5) * r.confidence
            steps.append((w, r.target, r.type.value, "out"))
        with index.snapshot():
            incoming = index.conn.execute(
                "SELECT source, type, confidence FROM relations WHERE target = ?", (parent.ref,)
            ).fetchall()
        for source, rtype, conf in incoming:
            steps.append((cfg.relation_weights.get(rtype, 0.5) * conf, source, rtype, "in"))
        steps.sort(key=lambda s: (-s[0], s[1], s[2]))
        for w, other, rtype, direction in steps[:MAX_NEIGHBOURS]:
            arrow = f"—[{rtype}]→" if direction == "out" else f"←[{rtype}]—"
            credits.append(
                Credit(f"node:{other}", base * graph_weight * w, f"neighbour of {_short(parent.node, parent.ref)} {arrow}",
                       key)
            )
    return credits


def references_by_path(store: NodeStore, paths: list[str]) -> dict[str, list[tuple[str, str | None]]]:
    """Reference path -> [(node id, anchor)] for the nodes referencing ``paths`` or a folder above one,
    from the cache's refs table: a search decodes the few nodes about its code hits, not every node."""
    by_path: dict[str, list[tuple[str, str | None]]] = {}
    for node in store.index.referencing(paths):
        for ref in node.references:
            anchor = ref.split("#", 1)[1] if "#" in ref else None
            by_path.setdefault(reference_path(ref), []).append((node.id, anchor))
    return by_path


def _anchor_matches(anchor: str | None, cand: Candidate) -> bool:
    if not anchor:
        return False
    if anchor.startswith("L") and anchor[1:2].isdigit():
        bounds = anchor[1:].replace("L", "").split("-")
        try:
            lo = int(bounds[0])
            hi = int(bounds[-1])
        except ValueError:
            return False
        return cand.start_line is not None and cand.start_line <= hi and (cand.end_line or lo) >= lo
    symbol = cand.meta.get("symbol") or ""
    return bool(symbol) and (symbol == anchor or symbol.endswith("." + anchor) or anchor.endswith("." + symbol))


def nodes_referencing(refs: dict[str, list[tuple[str, str | None]]], cand: Candidate) -> list[tuple[str, bool]]:
    """(node id, whether the reference names this symbol or these lines) covering the candidate's file,
    from :func:`references_by_path`."""
    if not cand.path:
        return []
    parts = cand.path.split("/")
    found: dict[str, bool] = {}
    for depth in range(len(parts), 0, -1):
        for node_id, anchor in refs.get("/".join(parts[:depth]), []):
            if depth == len(parts) and anchor and not _anchor_matches(anchor, cand):
                found.setdefault(node_id, False)
                continue
            found[node_id] = found.get(node_id, False) or (depth == len(parts) and _anchor_matches(anchor, cand))
    return sorted(found.items())


def reference_credits(
    store: NodeStore, pool: Pool, scores: dict[str, float], cfg: RetrievalConfig, graph_weight: float
) -> list[Credit]:
    code = sorted(
        (k for k, c in pool.items.items() if c.kind in ("code", "doc") and k in scores), key=lambda k: (-scores[k], k)
    )[: cfg.expand_top]
    refs = references_by_path(store, sorted({pool.items[k].path for k in code if pool.items[k].path}))
    credits = []
    for key in code:
        cand = pool.items[key]
        for node_id, exact in nodes_referencing(refs, cand):
            w = REFERENCE_WEIGHT * (1.0 if exact else 0.8)
            what = f"{cand.path}#{cand.meta.get('symbol')}" if exact and cand.meta.get("symbol") else cand.path
            credits.append(Credit(f"node:{node_id}", scores[key] * graph_weight * w, f"references {what}", key))
    return credits


def apply_credits(store: NodeStore, pool: Pool, scores: dict[str, float], credits: list[Credit]) -> list[str]:
    """Add credits to the scores (creating node candidates as needed); returns the graph channel's
    ranking (keys by total credit)."""
    total: dict[str, float] = {}
    why: dict[str, str] = {}
    biggest: dict[str, float] = {}
    parents: dict[str, list[str]] = {}
    # Expansion brings in what no channel found; it does not re-rank what they found (on the judged
    # knowledge queries, boosting found neighbours cost nDCG@10: 0.817 -> 0.808).
    credits = [c for c in credits if c.key not in scores]
    for c in credits:  # the explanation shown is that of the largest credit (the first one on a tie)
        total[c.key] = total.get(c.key, 0.0) + c.amount
        parents.setdefault(c.key, []).append(c.parent)
        if c.amount > biggest.get(c.key, -1.0):
            biggest[c.key], why[c.key] = c.amount, c.via
    for key in sorted(total):
        cand = pool.items.get(key)
        if cand is None:
            node = store.index.get_node(key.split(":", 1)[1])
            if node is None or node.status.value == "superseded":
                continue  # a superseded neighbour: its successor is what counts
            cand = pool.add(node_candidate(node))
            cand.via = why[key]
        elif cand.via is None and key not in scores:
            cand.via = why[key]
        cand.graph_score += total[key]
        cand.meta.setdefault("graph_via", why[key])
        cand.meta.setdefault("graph_parents", []).extend(parents[key])
        scores[key] = scores.get(key, 0.0) + total[key]
    return [k for k in sorted(total, key=lambda k: (-total[k], k)) if k in pool.items]
