"""``autology review``: a person reads the nodes whose text addresses the agent with instructions, and
lets the hooks inject them again (:mod:`autology_mcp.knowledge.trust.untrusted`).

    autology review                 # the flagged nodes, reviewed or not
    autology review ID              # one node's flags and its whole text, to read
    autology review ID --accept     # this exact text may reach the model unasked (this machine only)
    autology review ID --revoke     # take a review back

There is no MCP tool for this on purpose: the agent the text talks to must not vouch for it. For
the same reason ``--accept`` needs a person at a terminal: without one on stdin and stdout (an
agent's tool call runs commands with pipes) it refuses with one line on stderr, exit code 2, and
writes nothing. A program can still fake a terminal (``script``, ``unbuffer``, an agent whose shell
tool runs in a pseudo-terminal): docs/limits.md says what the check does and does not stop.
``--revoke`` needs none: taking a review back only holds text back.
"""

from __future__ import annotations

import argparse
import sys

from autology_mcp.cli.common import add_command, emit, node_id, require_store, root_of
from autology_mcp.common.errors import AutologyError


NO_TERMINAL = ("error: `--accept` needs a person at a terminal (stdin and stdout are not one here); "
               "nothing was recorded")


def at_a_terminal() -> bool:
    """Whether a person can be at this command: stdin and stdout are both terminals. A tool call of an
    agent captures the output through a pipe, so it fails here unless it fakes a terminal."""
    try:
        return sys.stdin.isatty() and sys.stdout.isatty()
    except (AttributeError, ValueError):  # closed or replaced streams
        return False


def cmd_review(args: argparse.Namespace) -> int:
    from autology_mcp.knowledge.store import NodeStore
    from autology_mcp.knowledge.trust.untrusted import Reviews, flagged_nodes

    if args.accept and not at_a_terminal():  # before anything is opened: nothing written
        print(NO_TERMINAL, file=sys.stderr)
        return 2
    require_store(args, "review")
    store = NodeStore(root_of(args))
    store.reconcile()
    base = store.paths.base
    try:
        if not args.id:
            rows = [{"id": n.id, "type": n.type.value, "title": n.title, "reviewed": reviewed,
                     "flags": [f.text() for f in flags]} for n, flags, reviewed in flagged_nodes(base, store.index.all_nodes())]
            emit(args, rows, lambda: _render_list(rows))
            return 0
        node = store.index.get_node(node_id(store, args.id))
        if node is None:
            raise AutologyError(f"no node {args.id!r}")
        flagged = flagged_nodes(base, [node])
        flags, reviewed = (flagged[0][1], flagged[0][2]) if flagged else ([], False)
        reviews = Reviews(base)
        if args.accept:
            reviews.accept(node.id, node.title, node.content)
            reviewed, said = True, f"✓ reviewed {node.id}: the hooks may inject this text (on this machine; an edit needs a new review)"
        elif args.revoke:
            said = f"✓ review of {node.id} taken back" if reviews.revoke(node.id) else f"{node.id} had no review"
            reviewed = False
        else:
            said = ""
        data = {"id": node.id, "type": node.type.value, "title": node.title, "reviewed": reviewed,
                "flags": [f.text() for f in flags], "path": store.rel(store.paths.node_file(node.type.value, node.id))}
        emit(args, data, lambda: said or _render_one(data, node.content))
        return 0
    finally:
        store.close()


def _render_list(rows: list[dict]) -> str:
    if not rows:
        return "✓ no node's text addresses the agent with instructions"
    lines = [f"{len(rows)} node(s) whose text addresses the agent with instructions "
             "(the hooks hold back those not reviewed):"]
    for r in rows:
        lines.append(f"  {r['id']} [{r['type']}] {r['title']!r} — {'reviewed' if r['reviewed'] else 'NOT reviewed'}")
        lines.extend(f"      {f}" for f in r["flags"])
    lines.append("Read one: autology review ID. The hooks hold a node back until a person has read it and accepts "
                 "it at a terminal.")
    return "\n".join(lines)


def _render_one(data: dict, content: str) -> str:
    state = "reviewed" if data["reviewed"] else ("NOT reviewed: held back from the hooks" if data["flags"] else "nothing flagged")
    lines = [f"{data['id']} [{data['type']}] {data['title']!r} ({data['path']}) — {state}"]
    lines += [f"  flag {f}" for f in data["flags"]]
    lines += ["", content, ""]
    if data["flags"] and not data["reviewed"]:
        lines.append("Held back from the hooks until a person has read this text and accepts it at a terminal.")
    return "\n".join(lines)


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "review", cmd_review,
                    "list the nodes whose text addresses the agent with instructions, read one, or accept it for the hooks")
    p.add_argument("id", nargs="?", help="a node id, a unique id prefix (6+ characters) or an exact title")
    action = p.add_mutually_exclusive_group()
    action.add_argument("--accept", action="store_true",
                        help="this exact text may reach the model unasked (recorded on this machine only; "
                             "needs a person at a terminal)")
    action.add_argument("--revoke", action="store_true", help="take a review back")
