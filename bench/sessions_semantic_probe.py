"""Would a static embedding model lift session recall? A probe on LoCoMo (issue 15), not a product path.

Issue 15 asks session search for recall@5 ≥ BM25 on the same documents + 0.06 (held out), and says a
model channel must show that gain on held-out data, work offline and keep determinism. The one
model measured to reach it (all-MiniLM-L6-v2, decision df492468) needs torch. This probe measures
the one offline model on PyPI whose wheel carries its weights and needs no torch: wordllama
(256-d static token embeddings, 19 MB wheel; numpy, tokenizers, safetensors). It is not a
dependency of the project: run the probe in a scratch environment,

    python3 -m venv /tmp/wl && /tmp/wl/bin/pip install -e . 'wordllama==0.4.0.post1'
    /tmp/wl/bin/python bench/sessions_semantic_probe.py /tmp/locomo/data/multimodal_dialog/locomo10_v2 --part tuning

(data as in ``bench/sessions_locomo_eval.py``). The model is loaded from the files in the installed
package (its own loader looks for the tokenizer under another folder name and then downloads it).

Each conversation is ingested with the product's own ingest, as in sessions_locomo_eval.py; the
documents ranked are the session chunks (the product's units). Per question and chunk:

- ``bm25``: FTS5 BM25 of the chunk (the session index's own ``docs_fts``, the query's terms OR-ed);
- ``turn_bm25``: the best BM25 of one of the chunk's turns (an in-memory FTS5 table over turns);
- ``turn_cos``: the best cosine between the question and one of the chunk's turns;
- ``chunk_cos``: the cosine between the question and the whole chunk.

Each is divided by its best value over the conversation's chunks, and a fused score
``bm25 + a·turn_cos + b·chunk_cos + c·turn_bm25`` ranks the chunks. The grid is scored on the part
asked for; choose the weights on ``tuning`` and pass them with ``--weights a,b,c`` on ``held-out``.
Recall@5 is sessions_locomo_eval.py's: the share of a question's evidence turns found inside the
top 5 chunks' texts; the product's own ranking (``search_sessions``) is printed beside it.
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import sessions_locomo_eval as locomo  # noqa: E402

from autology_mcp.common.text import SESSION_FTS_TOKENIZER, node_query_terms  # noqa: E402
from autology_mcp.sessions.search import search_sessions  # noqa: E402

GRID_TURN_COS = (0.0, 0.2, 0.4, 0.6, 0.8)
GRID_CHUNK_COS = (0.0, 0.2, 0.3, 0.5, 0.8)
GRID_TURN_BM25 = (0.0, 0.2, 0.4)


def load_model():
    """wordllama's 256-d model from the installed package's own files (no download)."""
    import wordllama
    from safetensors import safe_open
    from tokenizers import Tokenizer
    from wordllama.inference import WordLlamaInference

    pkg = Path(wordllama.__file__).parent
    tokenizer = Tokenizer.from_file(str(pkg / "tokenizers" / "l2_supercat_tokenizer_config.json"))
    with safe_open(str(pkg / "weights" / "l2_supercat_256.safetensors"), framework="np", device="cpu") as f:
        embedding = f.get_tensor("embedding.weight")
    return WordLlamaInference(embedding, tokenizer)


def fts_or(terms: list[str]) -> str:
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


def squash(text: str) -> str:
    return " ".join(text.split())


def conversation_rows(model, conv_path: Path) -> list[dict]:
    """One row per judged question: its evidence, category, the product's texts and each chunk's signals."""
    data = json.loads(conv_path.read_text(encoding="utf-8"))
    conv_id = conv_path.stem
    root = Path(tempfile.mkdtemp(prefix=f"autology-probe-{conv_id}-")) / "project"
    root.mkdir()
    try:
        turns, index = locomo.ingest_conversation(conv_id, data, root)
        conn = index.connection()
        chunks = conn.execute("SELECT rowid, text FROM docs WHERE doc_type = 'session_chunk' ORDER BY rowid").fetchall()
        position = {rowid: i for i, (rowid, _) in enumerate(chunks)}
        turn_texts = list(turns.values())
        squashed = [squash(t) for t in turn_texts]
        members = [[i for i, t in enumerate(squashed) if t in squash(text)] for _, text in chunks]
        turn_vecs = model.embed(turn_texts, norm=True)
        chunk_vecs = model.embed([text for _, text in chunks], norm=True)
        turn_fts = sqlite3.connect(":memory:")
        turn_fts.execute(f"CREATE VIRTUAL TABLE t USING fts5(text, tokenize = '{SESSION_FTS_TOKENIZER}')")
        turn_fts.executemany("INSERT INTO t(rowid, text) VALUES (?, ?)", [(i + 1, t) for i, t in enumerate(turn_texts)])
        rows = []
        for qa in data["qa"]:
            evidence = [turns[d] for d in qa.get("evidence", []) if d in turns]
            if qa.get("category") == 5 or not evidence:
                continue
            question = qa["question"]
            terms = node_query_terms(question)
            bm25 = np.zeros(len(chunks))
            turn_bm25 = np.zeros(len(turn_texts))
            if terms:
                for rowid, s in conn.execute(
                        "SELECT d.rowid, bm25(docs_fts) FROM docs_fts JOIN docs d ON d.rowid = docs_fts.rowid"
                        " WHERE docs_fts MATCH ? AND d.doc_type = 'session_chunk'", (fts_or(terms),)):
                    bm25[position[rowid]] = -s
                for rowid, s in turn_fts.execute("SELECT rowid, bm25(t) FROM t WHERE t MATCH ?", (fts_or(terms),)):
                    turn_bm25[rowid - 1] = -s
            q = model.embed([question], norm=True)[0]
            turn_cos = turn_vecs @ q
            rows.append({
                "category": qa["category"], "evidence": evidence,
                "product": [h.text for h in search_sessions(root, question, locomo.TOP)],
                "texts": [text for _, text in chunks],
                "bm25": bm25,
                "turn_bm25": np.array([turn_bm25[m].max() if m else 0.0 for m in members]),
                "turn_cos": np.array([turn_cos[m].max() if m else 0.0 for m in members]),
                "chunk_cos": chunk_vecs @ q,
            })
        return rows
    finally:
        shutil.rmtree(root.parent, ignore_errors=True)


def relative(values: np.ndarray) -> np.ndarray:
    values = np.maximum(values, 0.0)
    top = values.max()
    return values / top if top > 0 else values


def ranked_recall(rows: list[dict], score) -> list[tuple[int, float]]:
    """(category, recall@5) of each question, its chunks ranked by ``score(row)`` (ties by position)."""
    out = []
    for r in rows:
        s = score(r)
        order = np.lexsort((np.arange(len(s)), -s))[: locomo.TOP]
        out.append((r["category"], locomo.judge([r["texts"][i] for i in order], r["evidence"])["recall@5"]))
    return out


def recall(rows: list[dict], a: float, b: float, c: float) -> tuple[float, float]:
    """(recall@5 over all questions, over multi-hop ones) of the fused ranking."""
    scores = ranked_recall(rows, lambda r: relative(r["bm25"]) + a * relative(r["turn_cos"])
                           + b * relative(r["chunk_cos"]) + c * relative(r["turn_bm25"]))
    return float(np.mean([s for _, s in scores])), float(np.mean([s for cat, s in scores if cat == 1]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data", type=Path, help="the folder of LoCoMo's per-conversation JSON files")
    ap.add_argument("--part", choices=("tuning", "held-out"), default="tuning")
    ap.add_argument("--weights", help="a,b,c: score only these (turn_cos, chunk_cos, turn_bm25)")
    args = ap.parse_args()
    model = load_model()
    convs = locomo.TUNING if args.part == "tuning" else locomo.HELD_OUT
    rows = [row for cid in convs for row in conversation_rows(model, args.data / f"{cid}.json")]
    product = float(np.mean([locomo.judge(r["product"], r["evidence"])["recall@5"] for r in rows]))
    print(f"{args.part}: {len(rows)} questions; recall@5 (all, multi-hop)")
    print(f"  product (search_sessions)         {product:.3f}")
    print(f"  chunk BM25 alone                  {recall(rows, 0, 0, 0)[0]:.3f}")
    print(f"  turn cosine alone (no BM25)       {recall_alone(rows, 'turn_cos'):.3f}")
    print(f"  chunk cosine alone (no BM25)      {recall_alone(rows, 'chunk_cos'):.3f}")
    if args.weights:
        grid = [tuple(float(x) for x in args.weights.split(","))]
    else:
        grid = [g for g in itertools.product(GRID_TURN_COS, GRID_CHUNK_COS, GRID_TURN_BM25) if any(g)]
    scored = sorted(((recall(rows, *g), g) for g in grid), key=lambda t: -t[0][0])
    for (all_, multi), (a, b, c) in scored[:10]:
        print(f"  fused turn_cos {a:.1f} chunk_cos {b:.1f} turn_bm25 {c:.1f}   {all_:.3f}  multi-hop {multi:.3f}")
    return 0


def recall_alone(rows: list[dict], signal: str) -> float:
    return float(np.mean([s for _, s in ranked_recall(rows, lambda r: r[signal])]))


if __name__ == "__main__":
    sys.exit(main())
