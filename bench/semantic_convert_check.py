"""Does a converted checkpoint give the model's own vectors? (issue 40)

    python bench/semantic_convert_check.py WEIGHTS_DIR [--onnx ONNX_DIR] [--cache DIR]

WEIGHTS_DIR is a sentence-transformers folder with safetensors weights (docs/benchmarks.md says which);
it is converted as ``autology semantic enable --path`` converts it (into ``--cache``, a temporary folder
by default), timed, and loaded by the encoder. Printed: the cosines of the three sentences of
sentence-transformers' own quick-start example, to hold against the ones its documentation publishes
for the model; and, with ``--onnx`` (an ONNX export of the same model made elsewhere, with the
tokenizer's files beside it), each text's cosine between the two models' vectors, and both models'
query times here. With ``uptime``.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from autology_mcp.semantic.convert import convert
from autology_mcp.semantic.encoder import Encoder

QUICK_START = ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
TEXTS = QUICK_START + ["John signed up Nike for a basketball shoe and gear deal",
                       "Which endorsement deals has John been offered?",
                       "a much longer text about the session search and the memory of the code index, padded "
                       "against the rest of the batch so that the attention mask matters"]


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("weights", type=Path)
    ap.add_argument("--onnx", type=Path)
    ap.add_argument("--cache", type=Path)
    args = ap.parse_args()
    cache = args.cache or Path(tempfile.mkdtemp(prefix="autology-convert-"))
    print(f"# bench/semantic_convert_check.py {args.weights.name}; {uptime()}")
    start = time.perf_counter()
    folder = convert(args.weights, cache)
    print(f"converted in {time.perf_counter() - start:.1f} s to {folder} "
          f"({(folder / 'model.onnx').stat().st_size / 2**20:.0f} MB)")
    model = Encoder(folder)
    rows = model.encode(QUICK_START)
    cosines = rows @ rows.T
    print("quick-start cosines: " + ", ".join(f"{QUICK_START[i][:12]}~{QUICK_START[j][:12]} {cosines[i, j]:.4f}"
                                                for i, j in ((0, 1), (0, 2), (1, 2))))
    print(f"query median here: {model.query_ms:.1f} ms")
    if args.onnx:
        other = Encoder(args.onnx)
        per_text = (model.encode(TEXTS) * other.encode(TEXTS)).sum(axis=1)
        print(f"cosine with {args.onnx.name}'s vectors, text by text: {', '.join(f'{c:.4f}' for c in per_text)}; "
              f"its query median {other.query_ms:.1f} ms")
    print(f"# end; {uptime()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
