"""autology-mcp: a project memory for coding agents.

The domain core (models, store, graph, search, repo index, sessions) has no MCP in it;
the MCP server, the CLI and the Claude Code hooks are thin adapters on top.
"""

__version__ = "0.1.0"
