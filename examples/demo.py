"""A scripted MCP session with autology, over real stdio, on a copy of the tonearm example.

    python examples/demo.py          # runs in a temporary copy, deleted at the end
    python examples/demo.py --keep   # keeps the temporary copy to look at afterwards

The demo is an MCP *client*: it starts the server as a subprocess
(``python -m autology_mcp --root <copy> serve``), talks to it over stdin/stdout exactly as
Claude Code would, and prints what each of the seven tools returns, then one unified search. The example in
examples/tonearm/ is never modified. Read it top to bottom to learn the tools.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

EXAMPLE = Path(__file__).resolve().parent / "tonearm"


WIDTH = 80  # the demo's output fits an 80-column terminal


def say(text: str = "", hang: int | None = None, end: str = "\n") -> None:
    """Print ``text`` wrapped at WIDTH columns, never cutting a word: each line keeps its indent and
    its continuation lines are indented to ``hang`` (default: two more than the line's own)."""
    out = []
    for line in text.split("\n"):
        indent = len(line) - len(line.lstrip(" "))
        if len(line) <= WIDTH:
            out.append(line)
            continue
        out.append(textwrap.fill(line.strip(), WIDTH, initial_indent=" " * indent,
                                 subsequent_indent=" " * (indent + 2 if hang is None else hang),
                                 break_long_words=False, break_on_hyphens=False))
    print("\n".join(out), end=end)


def first_sentence(text: str) -> str:
    """The first sentence of a tool description's first paragraph, whole."""
    paragraph = " ".join(text.strip().split("\n\n")[0].split())
    match = re.match(r"(.+?[.!?])(\s|$)", paragraph)
    return match.group(1) if match else paragraph


class ToolFailed(Exception):
    """A tool answered with an error (is_error); the message says what was wrong."""


async def call(client: Client, tool: str, **arguments):
    """Call a tool and return its structured result (a dict, a list or a message string)."""
    result = await client.call_tool(tool, arguments)
    if result.is_error:
        raise ToolFailed(result.content[0].text)
    data = result.structured_content
    # Tools returning a list or a string get it wrapped as {"result": ...}.
    return data["result"] if isinstance(data, dict) and set(data) == {"result"} else data


# ------------------------------------------------------------------------------ printing


def heading(text: str) -> None:
    say(f"\n{text}\n{'-' * len(text)}")


def show_hits(hits: list[dict]) -> None:
    if not hits:
        say("  (no results)")
    for hit in hits:
        node = hit["node"]
        status = "" if node["status"] == "active" else f"  [{node['status']}]"
        # no search text: a listing, most recent first, without a score (null): its date instead
        first = f"{hit['score']:.2f}" if hit["score"] is not None else node["modified"][:10]
        say(f"  {first}  {node['type']:<10}  {node['title']}{status}")


# Node titles by id, so that messages naming ids can be printed with titles instead.
TITLES: dict[str, str] = {}


def show_message(message: str) -> None:
    for node_id, title in TITLES.items():
        message = message.replace(node_id, f"«{title}»")
    for line in message.splitlines():
        say(f"  {line}")


def show_error(error: ToolFailed) -> None:
    first_line, *more = str(error).splitlines()
    # The SDK prefixes "Error executing tool <name>: "; the rest is autology's own message.
    say(f"  ✗ {first_line.split(': ', 1)[-1]}")
    if more:
        say(f"    ... ({len(more)} more lines)")


async def search(client: Client, query: str = "", **filters) -> list[dict]:
    shown = ", ".join([repr(query)] + [f"{k}={v!r}" for k, v in filters.items()])
    say(f"\n  autology_query({shown})")
    hits = await call(client, "autology_query", query=query, **filters)
    show_hits(hits)
    for hit in hits:
        TITLES[hit["node"]["id"]] = hit["node"]["title"]
    return hits


async def counts(client: Client) -> str:
    status = await call(client, "autology_status")
    return f"{status['totalNodes']} nodes, {status['totalRelations']} relations"


# ------------------------------------------------------------------------------ the session

NEW_DECISION = """## Context
Live transcodes are sent without a Content-Length, so browsers cannot seek in them and restart
the track (see the issue "Seeking in a live transcode restarts the track").

## Decision
Send an estimated Content-Length of duration x bitrate + 2% for live Opus and MP3 transcodes,
and pad the stream with silence if ffmpeg produces fewer bytes.

## Alternatives
- Wait for the transcode cache: seeking only works on the second play.
- Only support OpenSubsonic transcodeOffset: leaves older clients behind.

## Consequences
- The seek bar works on the first play in every browser.
- A few hundred milliseconds of padding at the end of some VBR tracks."""

NEW_COMPONENT = """Estimates the byte length of a live transcode from the track duration and the
profile bitrate, and pads the output to that length. Used by the stream handler."""


async def session(client: Client, project: Path) -> None:
    heading("1. The tools the server offers")
    listed = await client.list_tools()
    width = max(len(tool.name) for tool in listed.tools) + 1
    for tool in listed.tools:
        say(f"  {tool.name:<{width}} {first_sentence(tool.description or '')}", hang=width + 3)

    heading("2. autology_status: what the knowledge base holds")
    status = await call(client, "autology_status")
    say(f"  {status['totalNodes']} nodes, {status['totalRelations']} relations")
    for label, by_name in [
        ("nodes", status["nodesByType"]),
        ("status", status["nodesByStatus"]),
        ("relations", status["relationsByType"]),
    ]:
        say(f"  {label + ':':<11}" + ", ".join(f"{name} {n}" for name, n in by_name.items()))

    heading("3. autology_query: ranked search (score 0-1; superseded knowledge ranks lower)")
    await search(client, "transcode cache eviction", limit=5)
    await search(client, "why fsnotify instead of polling", limit=4)
    await search(client, "default codec for mobile", limit=4)
    say("\n  With no text, a query lists nodes (most recently modified first); filters combine:")
    await search(client, "", type="decision", tags=["transcoding"])
    issues = await search(client, "seeking live transcode", type="issue", limit=1)
    seek_issue = issues[0]["node"]
    transcoders = await search(client, "transcoder ffmpeg", type="component", limit=1)
    transcoder = transcoders[0]["node"]

    heading("4. autology_capture: record a decision (ADR form) and a component")
    decision = await call(
        client,
        "autology_capture",
        title="Estimate Content-Length for live transcodes",
        content=NEW_DECISION,
        type="decision",
        tags=["streaming", "seeking"],
        references=["internal/stream/estimate.go"],
    )
    TITLES[decision["id"]] = "Estimate Content-Length for live transcodes"
    say(f"  ✓ decision  {decision['id']}  (confidence {decision['confidence']})")
    component = await call(
        client,
        "autology_capture",
        title="Content-Length estimator (internal/stream/estimate.go)",
        content=NEW_COMPONENT,
        type="component",
        tags=["streaming"],
        references=["internal/stream/estimate.go"],
    )
    TITLES[component["id"]] = "Content-Length estimator"
    say(f"  ✓ component {component['id']}  (confidence {component['confidence']})")
    decision_file = project / ".autology" / "nodes" / "decisions" / f"{decision['id']}.md"
    say(f"  the decision is a Markdown file: {decision_file.relative_to(project)}")

    heading("5. autology_relate: link them to each other and to what exists")
    links = [
        (decision["id"], "affects", component["id"], "the estimator is what the decision builds"),
        (decision["id"], "relates_to", seek_issue["id"], "proposed fix"),
        (component["id"], "uses", transcoder["id"], None),
    ]
    for source, relation_type, target, description in links:
        message = await call(
            client, "autology_relate", source=source, target=target, type=relation_type, description=description
        )
        show_message(message)
    say("\n  Relations live in the frontmatter of their source node:")
    frontmatter = decision_file.read_text(encoding="utf-8").split("---")[1]
    relations = frontmatter[frontmatter.index("relations:") : frontmatter.index("references:")]
    for line in relations.splitlines():
        say(f"    {line}")

    heading("6. autology_update: change some fields, keep the rest")
    message = await call(client, "autology_update", id=seek_issue["id"], status="needs_review")
    show_message(message)
    message = await call(client, "autology_update", id=component["id"], tags=["streaming", "http"])
    show_message(message)
    await search(client, "Content-Length live transcodes", limit=3)

    heading("7. Bad input gets a clear error and changes nothing")
    before = await counts(client)
    say(f"  before: {before}")
    try:
        await call(
            client,
            "autology_capture",
            title="Switch to PostgreSQL",
            content="## Context\nSQLite locks.\n\n## Decision\nUse PostgreSQL.",
            type="decision",
        )
    except ToolFailed as error:
        say("\n  a decision without ## Alternatives and ## Consequences:")
        show_error(error)
    try:
        await call(
            client,
            "autology_capture",
            title="Scanner skips hidden folders",
            content="Dot-directories are never scanned.",
            type="convention",
            tags=["Scanner Rules"],
        )
    except ToolFailed as error:
        say("\n  a tag with capitals and a space:")
        show_error(error)
    try:
        await call(client, "autology_relate", source=decision["id"], target=component["id"], type="blocks")
    except ToolFailed as error:
        say("\n  an unknown relation type:")
        show_error(error)
    after = await counts(client)
    verdict = "unchanged" if after == before else "CHANGED"
    say(f"\n  after:  {after}  ({verdict})")

    heading("8. autology_unrelate and autology_delete")
    message = await call(
        client, "autology_unrelate", source=component["id"], target=transcoder["id"], type="uses"
    )
    show_message(message)
    message = await call(client, "autology_delete", id=component["id"])
    show_message(message)
    say(f"\n  now {await counts(client)}")

    heading("9. autology_search: one search over everything, with a verdict")
    # The example has no repository index (no code), so the answer comes from the nodes; the
    # trace and the guidance say what was not searched.
    for query in ("why are passwords stored encrypted", "kubernetes autoscaling"):
        answer = await call(client, "autology_search", query=query, limit=3)
        say(f"\n  autology_search({query!r}) -> {answer['verdict']} (intent {answer['intent']})")
        for hit in answer["hits"]:
            say(f"  {hit['score']:.2f}  {hit['kind']:<5} {hit['title']}  [{hit['ref'][:8]}… lines {hit['start_line']}-{hit['end_line']}]")
        if answer["verdict"] == "no_evidence":
            say(f"  guidance: {answer['guidance'].split(';')[0]}")
        ran = [c for c in answer["trace"]["channels"] if c["status"] in ("ok", "empty")]
        missing = [c for c in answer["trace"]["channels"] if c["status"] not in ("ok", "empty")]
        say("  channels run (candidates): " + ", ".join(f"{c['name']} {c['candidates']}" for c in ran))
        if missing:
            say("  not searched: " + ", ".join(f"{c['name']} ({c['status']})" for c in missing))


async def main() -> int:
    keep = "--keep" in sys.argv[1:]
    started = time.perf_counter()
    workdir = Path(tempfile.mkdtemp(prefix="autology-demo-"))
    project = workdir / "tonearm"
    # Copy only the committed files: the derived indexes (cache/, graph/) are rebuilt by the server.
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("cache", "graph"))
    server_log = workdir / "server.log"

    say("autology demo: a scripted MCP session over stdio")
    say(f"temp dir:   {workdir}")
    say(f"server log: {server_log}")

    server = StdioServerParameters(
        command=sys.executable, args=["-m", "autology_mcp", "--root", str(project), "serve"]
    )
    try:
        # The server's own log (stderr) goes to a file so it does not mix with this output.
        with server_log.open("w") as log:
            async with Client(stdio_client(server, errlog=log)) as client:
                await session(client, project)
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)

    say(f"\ndone in {time.perf_counter() - started:.1f} s", end="")
    say(f"; kept {workdir}" if keep else "; temp dir removed (use --keep to keep it)")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
