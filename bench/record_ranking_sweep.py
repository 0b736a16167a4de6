"""The ranking of records, tuned (issue 37): ``autology_query``'s MRR@10 on the tuning part of the three
record domains of bench/gate_sets.py, for each setting of node search's label weights.

    python bench/record_ranking_sweep.py --mirrors /work/.mirror --workdir /tmp/sweep [--part tuning]

It builds each domain's store once (its records as nodes; the code beside them is not needed here)
and then, in one process, sets :data:`autology_mcp.knowledge.search.LABEL_WEIGHTS` and
``IDENTIFIER_WEIGHT`` to each point of a grid and ranks every prompt of the part, printing one line per
point, best mean first. The defaults were chosen this way on the tuning part; the held-out part is
reported by bench/gate_eval.py, never swept. Plain BM25 over the same records is printed first, for scale.

To tune the ranking for records of your own, give it a domain of yours (a ``gate_sets.Domain``) and a
grid; to see what the choice does to the prompt hook, run bench/gate_eval.py after.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import gate_sets  # noqa: E402
from knowledge_eval import PlainBM25, write_store  # noqa: E402

import autology_mcp.knowledge.search as node_search  # noqa: E402
from autology_mcp.knowledge.service import Autology  # noqa: E402

GRID = {
    "identifiers": [0.0, 0.25, 0.5, 0.75],
    "compounds": [0.0, 0.5, 1.0],
    "identifier_weight": [1.0, 1.5, 2.0],
}


def mrr(rank, queries: list[dict]) -> float:
    total = 0.0
    for q in queries:
        ranked = rank(q["prompt"])[:10]
        total += 1 / (ranked.index(q["answer"]) + 1) if q["answer"] in ranked else 0.0
    return total / len(queries) if queries else 0.0


def open_domains(mirrors: Path, workdir: Path, part: str = "tuning"):
    """Each domain of bench/gate_sets.py with its store (built once in ``workdir``) open: (name, domain,
    Autology, node id -> record key, the part's prompts). The caller closes the stores."""
    for name, build in gate_sets.DOMAINS.items():
        domain = build(mirrors)
        root = workdir / name
        if not (root / ".autology" / "nodes").exists():
            write_store(root, list(domain.nodes.values()))
        by_id = {node.id: key for key, node in domain.nodes.items()}
        yield name, domain, Autology.open(root), by_id, [q for q in domain.queries if q["split"] == part]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mirrors", type=Path, required=True)
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--part", default="tuning", choices=["tuning"], help="only the tuning part is swept")
    args = parser.parse_args()
    print(f"# load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    domains = {}
    for name, domain, autology, by_id, queries in open_domains(args.mirrors, args.workdir, args.part):
        domains[name] = (autology, by_id, queries)
        bm25 = PlainBM25(list(autology.store.index.all_nodes()))
        print(f"plain BM25 {name}: {mrr(lambda p: [by_id.get(i) for i in bm25(p)], queries):.3f} ({len(queries)} prompts)")
    results = []
    for identifiers, compounds, weight in itertools.product(*GRID.values()):
        node_search.LABEL_WEIGHTS = {"title": 1.0, "tags": 0.5, "compounds": compounds, "identifiers": identifiers}
        node_search.IDENTIFIER_WEIGHT = weight
        scores = {name: mrr(lambda p: [by_id.get(h.node.id) for h in autology.query(p, limit=10)], queries)
                  for name, (autology, by_id, queries) in domains.items()}
        results.append((sum(scores.values()) / len(scores), scores, node_search.LABEL_WEIGHTS, weight))
    for mean, scores, weights, weight in sorted(results, key=lambda r: -r[0]):
        print(f"mean {mean:.3f}  " + "  ".join(f"{n} {v:.3f}" for n, v in scores.items())
              + f"  LABEL_WEIGHTS={json.dumps(weights)} IDENTIFIER_WEIGHT={weight}")
    for autology, _, _ in domains.values():
        autology.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
