"""The floor for bench/store.py: a trivial MCP server over stdio with the same SDK.

One tool, ``echo``, that returns its argument: no storage, no index. Its round-trip time and its
spawn-to-first-answer time are what any Python MCP server on this SDK pays before doing work.
"""

from __future__ import annotations

from mcp.server import MCPServer

app = MCPServer("floor")


@app.tool(name="echo")
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


if __name__ == "__main__":
    app.run("stdio")
