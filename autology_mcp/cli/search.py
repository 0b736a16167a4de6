"""The command-line twins of ``autology_search`` and ``autology_context``:

    autology search QUERY... [--scope nodes|code|docs|sessions ...] [--limit N] [--max-tokens N] [--detail D] [--json]
    autology context TASK... [--module HINT] [--max-tokens N] [--json]

Pretty text for people by default; ``--json`` prints the exact answer the MCP tool returns.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from autology_mcp.cli.common import require_store, served
from autology_mcp.retrieval.options import DETAILS, LIMIT_MAX, SCOPES

VERDICT_MARK = {"grounded": "✓ grounded", "weak": "~ weak", "ambiguous": "? ambiguous", "no_evidence": "✗ no evidence"}


def _indent(text: str, prefix: str = "      ") -> str:
    return "\n".join(prefix + line for line in text.split("\n")) if text else ""


def _card(i: int, hit: dict[str, Any]) -> str:
    if hit["kind"] == "node":
        status = "" if hit.get("status") in (None, "active") else f" [{hit['status']}]"
        head = f"{i:>2}. {hit['node_type']}: {hit['title']}{status}  ({hit['node_id']})"
        where = f"{hit['path']}:{hit['start_line']}-{hit['end_line']}" if hit.get("path") else ""
    elif hit["kind"] in ("code", "doc"):
        symbol = f"  {hit['symbol']}" if hit.get("symbol") else ""
        head = f"{i:>2}. {hit['kind']}: {hit['ref']}{symbol}"
        where = ""
    else:
        head = f"{i:>2}. {hit['kind'].replace('_', ' ')}: {hit['title']}  ({hit['ref']})"
        where = ""
    c = hit["components"]
    score = (f"      score {hit['score']:.2f} (priority {c['priority']:.2f}, similarity {c['similarity']:.2f}, "
             f"keyword {c['keyword']:.2f}"
             + (f"; history prior {c['history_prior']:.2f}" if c.get("history_prior") else "")
             + f") via {', '.join(hit['channels']) or '-'}")
    lines = [head]
    if where:
        lines.append(f"      {where}")
    lines.append(score)
    if hit.get("via"):
        lines.append(f"      ↳ {hit['via']}")
    if hit.get("snippet"):
        lines.append(_indent(hit["snippet"], "      │ "))
    return "\n".join(lines)


def _trace_line(trace: dict[str, Any]) -> str:
    channels = trace.get("channels", [])
    if isinstance(channels, dict):
        parts = [f"{n} {v}" for n, v in channels.items()]
    else:
        parts = [f"{c['name']} {c['candidates']}" + ("" if c["status"] in ("ok", "empty") else f" ({c['status']})")
                 for c in channels]
    total = trace.get("timings_ms", {}).get("total")
    code = trace.get("freshness", {}).get("code_index")
    fresh = ""
    if isinstance(code, dict):
        fresh = "; code index " + ("missing" if not code.get("exists") else code.get("checked", ""))
    return f"trace: {', '.join(parts)}; {total} ms{fresh}"


def render_search(answer: dict[str, Any]) -> str:
    lines = [f"{VERDICT_MARK.get(answer['verdict'], answer['verdict'])} — {len(answer['hits'])} hit(s) for "
             f"{answer['query']!r} (intent {answer['intent']})"]
    if answer.get("clarifying_question"):
        lines.append(f"question: {answer['clarifying_question']}")
    if answer.get("guidance"):
        lines.append(answer["guidance"])
    for i, hit in enumerate(answer["hits"], 1):
        lines += ["", _card(i, hit)]
    cut = answer.get("cut", {})
    dropped = [f"{cut[k]} {k.replace('_', ' ')}" for k in ("hits", "snippet_lines", "beyond_limit") if cut.get(k)]
    lines += ["", _trace_line(answer["trace"])]
    if dropped:
        lines.append(f"cut to fit {cut.get('budget_tokens')} tokens: {', '.join(dropped)}")
    return "\n".join(lines)


def render_bundle(bundle: dict[str, Any]) -> str:
    hint = f" (module {bundle['module_hint']})" if bundle.get("module_hint") else ""
    lines = [f"{bundle['schema_version']} for {bundle['task']!r}{hint}: "
             f"{VERDICT_MARK.get(bundle['verdict'], bundle['verdict'])}"]
    if bundle.get("clarifying_question"):
        lines.append(f"question: {bundle['clarifying_question']}")
    if bundle.get("guidance"):
        lines.append(bundle["guidance"])
    for group, items in bundle["structured_memory"].items():
        if items:
            lines += ["", f"{group}:"]
            for item in items:
                via = f"  ↳ {item['via']}" if item.get("via") else ""
                lines.append(f"  - {item['title']} ({item['id'][:8]}, {item['path']}:{item['start_line']}){via}")
    if bundle["task_retrieval"]:
        lines += ["", "code and docs:"]
        for span in bundle["task_retrieval"]:
            first = (span["snippet"] or "").split("\n", 1)[0]
            lines.append(f"  - {span['ref']}  {first[:100]}")
    if bundle["sessions"]:
        lines += ["", "past sessions:"]
        for s in bundle["sessions"]:
            lines.append(f"  - {s['title']} ({s['ref']})")
    lines += ["", _trace_line(bundle["trace"])]
    return "\n".join(lines)


def cmd_search(args: argparse.Namespace) -> int:
    from autology_mcp.common.paths import resolve_root
    from autology_mcp.retrieval.engine import search
    from autology_mcp.retrieval.ledger import record_answer

    root = resolve_root(getattr(args, "root", None))
    require_store(args, "search", nodes=False)
    query = " ".join(args.query)
    answer = served(root, "cli-search", {"query": query, "scope": args.scope, "limit": args.limit,
                                         "max_tokens": args.max_tokens, "detail": args.detail})
    if not isinstance(answer, dict):  # no running server of this project: searched here
        answer = search(root, query, scope=args.scope, limit=args.limit, max_tokens=args.max_tokens, detail=args.detail)
    record_answer(root, answer["verdict"])
    print(json.dumps(answer, indent=2, ensure_ascii=False) if args.json else render_search(answer))
    return 0


def cmd_context(args: argparse.Namespace) -> int:
    from autology_mcp.common.paths import resolve_root
    from autology_mcp.retrieval.bundle import context
    from autology_mcp.retrieval.ledger import record_answer

    root = resolve_root(getattr(args, "root", None))
    require_store(args, "context", nodes=False)
    bundle = context(root, " ".join(args.task), module_hint=args.module, max_tokens=args.max_tokens)
    record_answer(root, bundle["verdict"])
    print(json.dumps(bundle, indent=2, ensure_ascii=False) if args.json else render_bundle(bundle))
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("search", help="one search over knowledge nodes, code, docs and sessions",
                       description="One search over knowledge nodes, code, docs and past sessions, with a verdict.")
    p.add_argument("query", nargs="+", help="what to find")
    p.add_argument("--scope", action="append", choices=SCOPES, help="a source to search (repeat; default all)")
    p.add_argument("--limit", "-n", type=int, default=10, help=f"maximum hits (1-{LIMIT_MAX}, default 10)")
    p.add_argument("--max-tokens", type=int, help="token budget of the answer (default 2000, at least 256)")
    p.add_argument("--detail", choices=DETAILS, default="normal", help="snippet and trace detail (default normal)")
    p.add_argument("--json", action="store_true", help="the tool's JSON answer")
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("context", help="the autology_bundle_v1 context bundle for a task",
                       description="What to know before a task: decisions, conventions, components, code, sessions.")
    p.add_argument("task", nargs="+", help="the task, in words")
    p.add_argument("--module", help="module, folder or tag the task is about")
    p.add_argument("--max-tokens", type=int, help="token budget of the bundle (default 2000, at least 256)")
    p.add_argument("--json", action="store_true", help="the tool's JSON bundle")
    p.set_defaults(func=cmd_context)
