"""``[tool.autology.hooks]``: what each hook does, read so that a hook never fails on configuration.

| key | default | meaning |
|---|---|---|
| ``mark_needs_review`` | true | post-commit marks nodes referencing the committed files ``needs_review`` |
| ``prompt_context`` | true | UserPromptSubmit adds grounded project memory to the prompt |
| ``prompt_max_items`` | 2 | at most this many items per prompt (1-20); one when one clearly wins |
| ``prompt_max_tokens`` | 400 | the prompt block's size, in tokens estimated as characters / 4 (100-4000) |
| ``read_context`` | true | PostToolUse on Read names the nodes governing the file read (before any edit) |
| ``edit_context`` | true | PreToolUse on Edit, Write, MultiEdit, NotebookEdit does the same for a file not read |

A missing or unreadable configuration, or a value of the wrong kind or out of range, gives the
default (with ``AUTOLOGY_HOOK_DEBUG`` set, the reason goes to stderr).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class HooksConfig:
    mark_needs_review: bool = True
    prompt_context: bool = True
    prompt_max_items: int = 2
    prompt_max_tokens: int = 400
    read_context: bool = True
    edit_context: bool = True


_RANGES = {"prompt_max_items": (1, 20), "prompt_max_tokens": (100, 4000)}


def _debug(message: str) -> None:
    if os.environ.get("AUTOLOGY_HOOK_DEBUG"):
        print(f"autology hooks config: {message}", file=sys.stderr)


def load_hooks_config(root: Path) -> HooksConfig:
    from autology_mcp.common.config import section
    from autology_mcp.common.errors import AutologyError

    try:
        raw = section(root, "hooks")
    except AutologyError as exc:
        _debug(str(exc))
        return HooksConfig()
    default = HooksConfig()
    values: dict[str, Any] = {}
    for key, fallback in default.__dict__.items():
        value = raw.get(key, fallback)
        if isinstance(fallback, bool):
            ok = isinstance(value, bool)
        else:
            low, high = _RANGES[key]
            ok = isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
        if not ok:
            _debug(f"{key} = {value!r} is not valid; using {fallback!r}")
            value = fallback
        values[key] = value
    return HooksConfig(**values)
