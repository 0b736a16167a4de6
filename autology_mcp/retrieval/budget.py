"""Output throttling: an answer never exceeds its ``max_tokens`` budget.

Tokens are counted on the answer's compact JSON (what the MCP tools return as text): with a real
tokenizer when one is installed and usable offline (``tiktoken``'s ``cl100k_base``), otherwise
as ``ceil(characters / 4)``. To keep cuts deterministic, the size is measured with every timing and
freshness number of the trace at its widest form, so the same inputs make the same cuts whatever
the clock said.

Cuts, in order, until the answer fits: the trace goes compact (fusion inputs shortened), snippets
of all but the first three hits shrink to one line, hits are dropped from the end, the remaining
snippets shrink to one line, the trace goes minimal, then long strings are truncated. ``cut``
counts what went.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

MIN_TOKENS = 256
_WIDE_FLOAT = 99999.99
_WIDE_INT = 9999999

_counter: Callable[[str], int] | None = None
_counter_name = "chars/4"


def _chars(text: str) -> int:
    return math.ceil(len(text) / 4)


def token_counter(preference: str = "auto") -> tuple[Callable[[str], int], str]:
    """The token counter: tiktoken when installed and loadable (never downloads), else chars/4."""
    global _counter, _counter_name
    if preference == "chars":
        return _chars, "chars/4"
    if _counter is None:
        _counter, _counter_name = _chars, "chars/4"
        try:  # optional: only if the package and its encoding file are already on this machine
            import os

            import tiktoken  # type: ignore[import-not-found]

            if os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR"):
                enc = tiktoken.get_encoding("cl100k_base")
                _counter, _counter_name = (lambda text: len(enc.encode(text, disallowed_special=()))), "tiktoken cl100k_base"
        except Exception:
            pass
    return _counter, _counter_name


def compact_json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _widen(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, float):
        return _WIDE_FLOAT
    if isinstance(value, int):
        return _WIDE_INT
    if isinstance(value, dict):
        return {k: _widen(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_widen(v) for v in value]
    if isinstance(value, str) and value in ("recent", "refreshed", "skipped", "failed", "background", "in_progress"):
        return "in_progress"  # the longest of them
    return value


def measured(answer: dict[str, Any]) -> str:
    """The answer as sized: clock-dependent trace values at their widest."""
    trace = answer.get("trace")
    if not isinstance(trace, dict):
        return compact_json(answer)
    wide = dict(trace)
    for key in ("timings_ms", "freshness"):
        if key in wide:
            wide[key] = _widen(wide[key])
    if "channels" in wide:
        wide["channels"] = _widen_channel_ms(wide["channels"])
    return compact_json({**answer, "trace": wide})


def _widen_channel_ms(channels: Any) -> Any:
    if isinstance(channels, list):
        return [{**c, "ms": _WIDE_FLOAT} if isinstance(c, dict) and "ms" in c else c for c in channels]
    return channels


def _one_line(hit: dict[str, Any]) -> bool:
    snippet = hit.get("snippet") or ""
    if "\n" not in snippet and len(snippet) <= 160:
        return False
    hit["snippet"] = snippet.split("\n", 1)[0][:160]
    if hit.get("start_line") is not None and hit.get("kind") in ("code", "doc", "node"):
        hit["end_line"] = hit["start_line"]
        if hit.get("kind") in ("code", "doc") and hit.get("path"):
            hit["ref"] = f"{hit['path']}:{hit['start_line']}-{hit['end_line']}"
    return True


def fit(
    answer: dict[str, Any],
    max_tokens: int,
    compact_trace: Callable[[dict[str, Any], str], dict[str, Any]],
    count: Callable[[str], int],
    render: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Cut ``answer`` (a dict with ``hits``, ``cut`` and ``trace``) to ``max_tokens``; returns it.
    With ``render``, the size is that of ``render(answer)`` (what is finally sent)."""
    render = render or (lambda a: a)
    # copies of what the cuts change (the hits, the cut record); the rest is shared
    answer = {**answer, "hits": [dict(h) for h in answer["hits"]], "cut": dict(answer.get("cut") or {})}
    cut = answer["cut"]
    cut.setdefault("hits", 0)
    cut.setdefault("snippet_lines", 0)
    cut.setdefault("trace", "full")
    cut["truncated_fields"] = list(cut.get("truncated_fields", []))
    cut["budget_tokens"] = max_tokens
    cut["used_tokens"] = _WIDE_INT  # sized at its widest; the real count is set at the end

    def size() -> int:
        return count(measured(render(answer)))

    def lines(hit: dict[str, Any]) -> int:
        return (hit.get("snippet") or "").count("\n")

    if size() <= max_tokens:
        return _finish(answer, size)
    answer["trace"] = compact_trace(answer["trace"], "compact")
    cut["trace"] = "compact"
    hits = answer["hits"]
    for hit in hits[3:]:
        n = lines(hit)
        if _one_line(hit):
            cut["snippet_lines"] += n
    while hits and size() > max_tokens and len(hits) > 1:
        hits.pop()
        cut["hits"] += 1
    for hit in hits:
        if size() <= max_tokens:
            break
        n = lines(hit)
        if _one_line(hit):
            cut["snippet_lines"] += n
    if size() > max_tokens:
        answer["trace"] = compact_trace(answer["trace"], "minimal")
        cut["trace"] = "minimal"
    while hits and size() > max_tokens:
        hits.pop()
        cut["hits"] += 1
    for field in ("guidance", "clarifying_question", "query"):
        if size() <= max_tokens:
            break
        value = answer.get(field)
        if isinstance(value, str) and len(value) > 100:
            answer[field] = value[:97] + "..."
            cut["truncated_fields"].append(field)
    return _finish(answer, size)


def _finish(answer: dict[str, Any], size: Callable[[], int]) -> dict[str, Any]:
    # Sized so far with the widest count in place; the real count has no more digits, so the
    # answer only shrinks. Settle it (the count is part of what it counts).
    for _ in range(3):
        used = size()
        if answer["cut"]["used_tokens"] == used:
            break
        answer["cut"]["used_tokens"] = used
    return answer
