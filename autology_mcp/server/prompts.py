"""The four skills (tutorial, capture, explore, analyze) as MCP prompts, for clients without Claude Code's skills."""

from __future__ import annotations

from mcp.server import MCPServer

from autology_mcp.server.skills import SKILLS


def add_prompts(app: MCPServer) -> None:
    """Register one prompt per skill, with the same workflow text as ``skills/<name>/SKILL.md``."""

    def add_prompt(skill) -> None:
        def prompt(request: str = "") -> str:
            return skill.prompt(request)

        app.prompt(name=skill.name, title=f"autology {skill.name}", description=skill.description)(prompt)

    for skill in SKILLS.values():
        add_prompt(skill)
