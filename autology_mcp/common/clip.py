"""Fitting a block of lines into a character limit (the hooks' context blocks, session recall)."""

from __future__ import annotations


def clip_lines(header: list[str], items: list[str], footer: list[str], limit: int) -> str:
    """Header, as many items as fit, footer: never longer than ``limit`` characters."""
    fixed = "\n".join(header + footer)
    budget = limit - len(fixed) - 1
    kept: list[str] = []
    for item in items:
        if len(item) + 1 > budget:
            break
        kept.append(item)
        budget -= len(item) + 1
    text = "\n".join(header + kept + footer)
    return text[:limit]
