"""The CLI command ``autology check-claims``, a thin adapter over :func:`autology_mcp.retrieval.claims.check_claims`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any



def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register ``autology check-claims`` on the top-level subparsers."""
    help_ = "check claims against their evidence refs (path:lines, node ids or session documents)"
    p = sub.add_parser(
        "check-claims",
        help=help_,
        description=help_ + ". Input: a JSON list of {\"text\": ..., \"refs\": [...]} (or {\"claims\": [...]}), "
        "from a file or stdin, or one claim with --claim TEXT --ref REF (repeatable). "
        "Exit status: 0 when every claim is supported, 1 otherwise.",
    )
    p.add_argument("file", nargs="?", default="-", help="JSON file (default: - for stdin)")
    p.add_argument("--claim", "-c", help="check this one claim instead of reading JSON")
    p.add_argument("--ref", "-r", action="append", default=[], help="an evidence ref of --claim (repeat for several)")
    p.add_argument("--json", action="store_true", help="machine-readable JSON output")
    p.set_defaults(func=_cmd_check_claims)


def _load(source: str) -> Any:
    from autology_mcp.common.errors import ValidationError

    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except OSError as exc:
        raise ValidationError("file", f"cannot read {source}: {exc.strerror or exc}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        where = "stdin" if source == "-" else source
        raise ValidationError("file", f"{where} is not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from exc
    if isinstance(data, dict) and set(data) == {"claims"}:
        data = data["claims"]
    return data


def _cmd_check_claims(args: argparse.Namespace) -> int:
    from autology_mcp.common.paths import resolve_root

    root = resolve_root(getattr(args, "root", None))
    if args.claim is not None:
        claims = [{"text": args.claim, "refs": args.ref}]
    elif args.ref:
        from autology_mcp.common.errors import ValidationError

        raise ValidationError("ref", "--ref needs --claim (or give the claims as JSON)")
    else:
        claims = _load(args.file)
    store = None
    if (root / ".autology" / "nodes").is_dir():
        from autology_mcp.knowledge.service import Autology

        store = Autology.open(root).store
    try:
        from autology_mcp.retrieval.claims import check_claims

        result = check_claims(root, claims, store=store)
    finally:
        if store is not None:
            store.close()
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        print(render(result))
    return 0 if result["summary"]["supported"] == result["summary"]["total"] else 1


_MARK = {"supported": "✓", "unsupported": "✗", "unresolved": "?"}


def render(result: dict[str, Any]) -> str:
    """A check's result for people: one block per claim, one line per ref."""
    lines = []
    for claim in result["claims"]:
        lines.append(f"{_MARK[claim['outcome']]} {claim['outcome']:<11} {claim['text']}")
        if not claim["refs"]:
            lines.append(f"      {claim['reason']}")
        for ref in claim["refs"]:
            mark = "✓" if ref["supports"] else ("·" if ref["resolved"] else "✗")
            where = f" ({ref['title']})" if ref.get("title") else ""
            lines.append(f"    {mark} {ref['ref']}{where}: {ref['reason']}")
            if ref["matched_terms"]:
                lines.append(f"        matched: {', '.join(ref['matched_terms'])}")
    s = result["summary"]
    lines.append(
        f"{s['total']} claim{'' if s['total'] == 1 else 's'}: {s['supported']} supported, {s['unsupported']} unsupported, {s['unresolved']} unresolved"
    )
    return "\n".join(lines)
