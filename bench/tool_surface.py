"""What the MCP server's tool list costs the model on every turn (issue 12).

An MCP client such as Claude Code sends each tool's name, description and input schema with every
model request. This prints, per tool, the characters of what ``tools/list`` publishes (name,
description, inputSchema, annotations as compact JSON), the total, and the length of the server's
instructions. The server runs in memory on an empty store; nothing is written outside a temp dir.

    python bench/tool_surface.py [--json out.json]

Claude Code wraps each tool a little differently (its own key names, the plugin's name prefix), so the
characters in a real request differ by a few percent; tests/test_hooks_claude_e2e.py drives the real
client when that figure is needed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from pathlib import Path

from mcp import Client

from autology_mcp.knowledge.service import Autology
from autology_mcp.server.app import INSTRUCTIONS, build_server


async def published_sizes(root: Path) -> list[dict]:
    autology = Autology.open(root)
    try:
        async with Client(build_server(autology)) as client:
            tools = (await client.list_tools()).tools
    finally:
        autology.close()
    rows = []
    for tool in tools:
        data = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
        published = {k: data[k] for k in ("name", "description", "inputSchema", "annotations") if k in data}
        rows.append({
            "tool": tool.name,
            "chars": len(json.dumps(published, ensure_ascii=False, separators=(",", ":"))),
            "description": len(tool.description or ""),
            "input_schema": len(json.dumps(data.get("inputSchema"), ensure_ascii=False, separators=(",", ":"))),
        })
    return sorted(rows, key=lambda r: -r["chars"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="write the rows here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = asyncio.run(published_sizes(Path(tmp)))
    print(f"{'tool':<24} {'chars':>6} {'description':>12} {'input schema':>13}")
    for row in rows:
        print(f"{row['tool']:<24} {row['chars']:>6} {row['description']:>12} {row['input_schema']:>13}")
    total = sum(r["chars"] for r in rows)
    print(f"total {total} characters over {len(rows)} tools; server instructions {len(INSTRUCTIONS)} characters")
    if args.json:
        args.json.write_text(json.dumps({"tools": rows, "total": total, "instructions": len(INSTRUCTIONS)}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
