"""Mined insights as capture candidates: listed (CLI, ``autology_analyze``) and optionally captured.

:func:`collect` reads the candidates kept in the session index, keeps those at or above the
threshold, merges near-identical ones and marks those an existing node already holds
(``duplicate_of``). :func:`capture` turns the new ones into ``needs_review`` nodes with
confidence 0.7 (source ``hook_session_end``), each ``derived_from`` its session's node when there is one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autology_mcp.common.errors import ValidationError
from autology_mcp.knowledge.analyze import CATEGORIES, analyze, make_category
from autology_mcp.knowledge.models import CONFIDENCE_AUTOMATIC, TITLE_MAX

if TYPE_CHECKING:
    from autology_mcp.sessions.insights import Insight
    from autology_mcp.knowledge.node_index import NodeIndex
    from autology_mcp.knowledge.service import Autology

SOURCE = "hook_session_end"


def collect(
    root: Path, node_index: NodeIndex | None, session_id: str | None = None, threshold: float | None = None
) -> list[Insight]:
    """The insights mined from the ingested sessions (or one session), best first; [] when disabled."""
    from autology_mcp.sessions.config import load_sessions_config
    from autology_mcp.sessions.index import SessionIndex
    from autology_mcp.sessions.paths import sessions_dir

    config = load_sessions_config(root)
    if not config.enabled or not sessions_dir(root).is_dir():
        return []
    minimum = config.insight_threshold if threshold is None else threshold
    sql = "SELECT kind, text, score, session_id, turn, timestamp FROM insights WHERE score >= ?"
    args: list[Any] = [minimum]
    if session_id:
        sql += " AND session_id = ?"
        args.append(session_id)
    with SessionIndex.for_root(root).reading() as conn:
        rows = conn.execute(sql, args).fetchall()
    from autology_mcp.sessions.insights import Insight, mark_known, merge_duplicates

    insights = merge_duplicates(Insight(k, t, s, sid, n, ts) for k, t, s, sid, n, ts in rows)
    return mark_known(insights, node_index) if node_index is not None else insights


def _title(insight: Insight) -> str:
    text = insight.text.rstrip(".! ")
    return text if len(text) <= TITLE_MAX else text[: TITLE_MAX - 1].rstrip() + "…"


def _content(insight: Insight, session_title: str) -> str:
    origin = f"Mined from the session “{session_title}” (`{insight.session_id}`, turn {insight.turn}); review it."
    if insight.node_type == "decision":
        return (
            f"## Context\n{origin}\n\n## Decision\n{insight.text}\n\n"
            "## Alternatives\nNot recorded in the session: add them when reviewing.\n\n"
            "## Consequences\nNot recorded in the session: add them when reviewing."
        )
    return f"{insight.text}\n\n{origin}"


@dataclass
class CaptureReport:
    captured: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)


def capture(autology: Autology, insights: list[Insight], session_node: str | None = None) -> CaptureReport:
    """Capture the insights no node holds yet as needs_review nodes (confidence 0.7)."""
    from autology_mcp.sessions.store import load_header

    report = CaptureReport()
    titles: dict[str, str] = {}
    for insight in insights:
        if insight.duplicate_of:
            report.skipped.append({**insight.to_dict(), "reason": f"already known as {insight.duplicate_of}"})
            continue
        if insight.session_id not in titles:
            record = load_header(autology.store.root, insight.session_id)  # the title only: no turn read
            titles[insight.session_id] = record.title if record else insight.session_id
        try:
            result = autology.capture(
                _title(insight),
                _content(insight, titles[insight.session_id]),
                type=insight.node_type,
                tags=["mined-insight"],
                session=insight.session_id,
                source=SOURCE,
                confidence=CONFIDENCE_AUTOMATIC,
                status="needs_review",
            )
        except ValidationError as exc:  # one odd sentence must not stop the others
            report.skipped.append({**insight.to_dict(), "reason": str(exc)})
            continue
        if session_node:
            autology.relate(result.id, session_node, "derived_from", description="mined from this session")
        report.captured.append({**insight.to_dict(), "id": result.id})
    return report


def analyze_category(store: Any) -> dict[str, Any]:
    """The ``insights`` category of ``autology_analyze``: mined insights no node holds yet.

    Score ``100 × (1 − new insights / insights mined)``: 100 when every insight is in the graph
    (or there is none, or session memory is off).
    """
    try:
        insights = collect(store.root, store.index)
    except ValidationError as exc:
        return make_category([{"kind": "sessions_config_error", "id": None, "detail": str(exc)}], 0, set())
    findings, affected = [], set()
    for insight in insights:
        if insight.duplicate_of:
            continue
        key = f"{insight.session_id}:{insight.turn}:{insight.text}"
        affected.add(key)
        findings.append(
            {
                "kind": f"uncaptured_{insight.kind}",
                "id": None,
                "detail": insight.text,
                "suggestedType": insight.node_type,
                "quality": insight.score,
                "session": insight.session_id,
                "turn": insight.turn,
            }
        )
    return make_category(findings, len(insights), affected)


HEALTH_CATEGORIES = (*CATEGORIES, "insights")


def health_report(store: Any, categories: Any = None) -> dict[str, Any]:
    """``autology_analyze``'s report: the knowledge graph's categories, then ``insights``."""
    return analyze(store, categories, extra={"insights": analyze_category})
