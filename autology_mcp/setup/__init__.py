"""``autology setup <agent>``: a project's configuration for one coding agent (Claude Code, Codex CLI,
Gemini CLI, Copilot CLI): the MCP server, the hooks and an instructions section
(:mod:`~autology_mcp.setup.agents`), written and undone without losing anything of the user's
(:mod:`~autology_mcp.setup.edits`, :mod:`~autology_mcp.setup.apply`)."""
