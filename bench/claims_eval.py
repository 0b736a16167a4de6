"""How well the claim check's support rule tells right evidence from wrong (issue 6, claim ledger).

Claims and evidence from a real code base, built mechanically (no hand labels):

- a **claim** is the first sentence of a function's or method's docstring (at least 5 words);
- its **right ref** is the function's body *without the docstring* (``path:START-END``, at most 200
  lines), so the words must come from the code and comments, not from the claim's own text;
- its **wrong ref** is the body of another function, from a different file, chosen at random (seeded).

For each support threshold (share of key terms that must match; at least 2 of them), it reports
the share of claims the right ref supports (sensitivity) and the share the wrong ref supports
(false support). The default rule is 50%.

    git -C /work/.mirror/pallets+click/repo archive HEAD src/click | tar -x -C /tmp/click-src
    python bench/claims_eval.py /tmp/click-src [--seed 7] [--json out.json]
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import re
from pathlib import Path

from autology_mcp.retrieval import claims as cc

THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7)
MIN_WORDS = 5


def first_sentence(doc: str) -> str:
    text = " ".join(doc.strip().split())
    m = re.match(r"(.+?[.!?])(\s|$)", text)
    return (m.group(1) if m else text).strip()


def samples(root: Path) -> list[dict]:
    out = []
    for path in sorted(root.rglob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        rel = path.relative_to(root).as_posix()
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            doc = ast.get_docstring(node)
            if not doc or not node.body:
                continue
            claim = first_sentence(doc)
            if len(claim.split()) < MIN_WORDS or len(node.body) < 2:
                continue
            start = node.body[1].lineno  # the statement after the docstring
            end = node.end_lineno or start
            if end - start + 1 > cc.MAX_SPAN_LINES:
                continue
            out.append({"path": rel, "function": node.name, "claim": claim, "ref": f"{rel}:{start}-{end}"})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source", type=Path, help="a folder of Python code (the project root of the refs)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    root = args.source.resolve()
    pairs = samples(root)
    rng = random.Random(args.seed)
    for p in pairs:
        others = [q for q in pairs if q["path"] != p["path"]]
        p["wrong_ref"] = rng.choice(others)["ref"] if others else None
    pairs = [p for p in pairs if p["wrong_ref"]]
    claims = [{"text": p["claim"], "refs": [p["ref"]]} for p in pairs]
    wrong = [{"text": p["claim"], "refs": [p["wrong_ref"]]} for p in pairs]

    def rate(batch: list[dict]) -> float:
        supported = 0
        for i in range(0, len(batch), cc.MAX_CLAIMS):
            result = cc.check_claims(root, batch[i : i + cc.MAX_CLAIMS], record=False)
            supported += result["summary"]["supported"]
        return round(supported / len(batch), 4)

    default = cc.MIN_COVERAGE
    rows = []
    try:
        for threshold in THRESHOLDS:
            cc.MIN_COVERAGE = threshold
            rows.append({"min_coverage": threshold, "right_ref_supported": rate(claims),
                         "wrong_ref_supported": rate(wrong)})
    finally:
        cc.MIN_COVERAGE = default
    results = {"source": str(args.source), "claims": len(pairs), "seed": args.seed, "default_min_coverage": default,
               "rows": rows}
    print(json.dumps(results, indent=2))
    if args.json:
        args.json.write_text(json.dumps({**results, "pairs": pairs}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
