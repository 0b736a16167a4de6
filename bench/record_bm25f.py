"""BM25F for records, measured (issue 37): the fields' term frequencies combined before saturation
(title and tags weighted and length-normalised apart from the body), alone and added to
``autology_query``'s score over its 40 best, on the TUNING part of bench/gate_sets.py's three domains.

    python bench/record_bm25f.py --mirrors /work/.mirror --workdir /tmp/bm25f

The words are the node search's (folded, Porter-stemmed, stop words out; the query without credits and
pull-request numbers). Printed: `autology_query`'s MRR@10, BM25F's alone over a small grid, and
``score + beta x BM25F / the best BM25F among the 40``. Not adopted (docs/retrieval.md): the held-out
part is never read here.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import re
import sys
from collections import Counter
from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from record_ranking_sweep import open_domains  # noqa: E402

from autology_mcp.common.query_text import without_boilerplate  # noqa: E402
from autology_mcp.common.text import fts_text, node_query_terms, porter_stem  # noqa: E402

WORD = re.compile(r"[^\W_]+")
stem = lru_cache(maxsize=None)(porter_stem)
GRID = {"title_weight": [5, 10, 20], "title_b": [0.3, 0.75], "body_b": [0.75, 0.9], "k1": [1.2, 2.0]}
BETAS = [0.1, 0.2, 0.3, 0.5]


def words(text: str) -> Counter:
    return Counter(stem(w) for w in WORD.findall(fts_text(text)))


def query_words(prompt: str) -> list[str]:
    return list(dict.fromkeys(stem(t) for t in node_query_terms(without_boilerplate(prompt))))


class BM25F:
    """Fields title, tags (half the title's weight) and body; one IDF over the records."""

    def __init__(self, nodes: dict, title_weight: float, title_b: float, body_b: float, k1: float) -> None:
        self.fields = {key: (words(n.title), words(" ".join(n.tags)), words(n.content)) for key, n in nodes.items()}
        self.lengths = {key: tuple(sum(f.values()) or 1 for f in fs) for key, fs in self.fields.items()}
        self.average = [sum(length[i] for length in self.lengths.values()) / len(nodes) for i in range(3)]
        self.df = Counter(t for fs in self.fields.values() for t in set().union(*fs))
        self.n = len(nodes)
        self.weights = (title_weight, title_weight / 2, 1.0)
        self.bs = (title_b, title_b, body_b)
        self.k1 = k1

    def score(self, key: str, terms: list[str]) -> float:
        total = 0.0
        for term in terms:
            tf = sum(w * f.get(term, 0) / (1 - b + b * length / avg) for w, f, b, length, avg
                     in zip(self.weights, self.fields[key], self.bs, self.lengths[key], self.average))
            if tf:
                total += math.log(1 + (self.n - self.df[term] + 0.5) / (self.df[term] + 0.5)) * tf / (self.k1 + tf)
        return total


def mrr(rankings: list[list[str]], answers: list[str]) -> float:
    return sum(1 / (r[:10].index(a) + 1) if a in r[:10] else 0.0 for r, a in zip(rankings, answers)) / len(answers)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mirrors", type=Path, required=True)
    parser.add_argument("--workdir", type=Path, required=True)
    args = parser.parse_args()
    print(f"# load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    domains = {}
    for name, domain, autology, by_id, queries in open_domains(args.mirrors, args.workdir):
        top = [[(by_id.get(h.node.id), h.score) for h in autology.query(q["prompt"], limit=40)] for q in queries]
        autology.close()
        domains[name] = (domain.nodes, queries, top)
        print(f"autology_query {name}: {mrr([[k for k, _ in t] for t in top], [q['answer'] for q in queries]):.3f}"
              f" ({len(queries)} prompts)", flush=True)
    for point in itertools.product(*GRID.values()):
        alone, added = {}, {beta: {} for beta in BETAS}
        for name, (nodes, queries, top) in domains.items():
            model = BM25F(nodes, *point)
            answers = [q["answer"] for q in queries]
            terms = [query_words(q["prompt"]) for q in queries]
            everything = [sorted(nodes, key=lambda k, t=t: -model.score(k, t)) for t in terms]
            alone[name] = mrr(everything, answers)
            for beta in BETAS:
                rankings = []
                for hits, t in zip(top, terms):
                    extra = {k: model.score(k, t) for k, _ in hits if k}
                    best = max(extra.values(), default=0.0) or 1.0
                    rankings.append([k for k, s in sorted(hits, key=lambda h: -(h[1] + beta * extra.get(h[0], 0.0) / best))])
                added[beta][name] = mrr(rankings, answers)
        label = dict(zip(GRID, point))
        print(f"BM25F alone {label}: " + "  ".join(f"{n} {v:.3f}" for n, v in alone.items())
              + f"  mean {sum(alone.values()) / 3:.3f}")
        for beta, scores in added.items():
            print(f"  + {beta} x BM25F: " + "  ".join(f"{n} {v:.3f}" for n, v in scores.items())
                  + f"  mean {sum(scores.values()) / 3:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
