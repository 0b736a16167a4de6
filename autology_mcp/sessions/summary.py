"""What a session's handoff and node need from its turns, kept as running state (issue 29).

The handoff (``Asked: … Done: … Files touched: … Decisions: …``) and the ``session`` node sum up the
whole session. Computing them from every turn at the end made the completing ingest step grow with
the session; :class:`SessionSummary` is updated with each step's new turns instead and stored in the
session file's checkpoint, so the end of a 2 GB session costs what the end of a small one does.

It holds only what those summaries read:

- the first :data:`PROMPTS_SHOWN` prompts (slash commands aside), and how many prompts there were;
- the last assistant answer with prose, and the last compaction summary (each cut to one line);
- the best :data:`DECISION_POOL` decision candidates (mined at the handoff's 0.4 threshold), best first in
  the order :func:`~autology_mcp.sessions.insights.merge_duplicates` sorts them: the merge walks that
  order, so the first decisions it keeps from this pool are the first it keeps from all of them
  (unless more than ``DECISION_POOL`` candidates collapse into fewer than 5 statements);
- the node ids (UUIDs) the turns mention, the first :data:`NODE_IDS_MAX` of them.

``SessionSummary.of(turns)`` is the same as updating an empty summary with those turns in any
number of steps.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from autology_mcp.sessions.insights import Insight, mine_turns
from autology_mcp.sessions.transcript import Turn, one_line

PROMPTS_SHOWN = 4
PROMPT_MAX = 160
ANSWER_MAX = 420
DECISION_THRESHOLD = 0.4
DECISION_POOL = 64
NODE_IDS_MAX = 500
NODE_ID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\b")


def prose(text: str) -> str:
    """A turn's text without its tool-call and tool-result lines."""
    return "\n".join(line for line in text.splitlines() if not line.startswith(("[tool ", "[result ")))


def _order(insight: Insight) -> tuple[float, str, str, int]:
    return (-insight.score, insight.timestamp, insight.session_id, insight.turn)  # merge_duplicates' order


@dataclass
class SessionSummary:
    prompts: list[str] = field(default_factory=list)  # the first PROMPTS_SHOWN prompts, one line each
    user_prompts: int = 0  # user turns that are not only tool results
    last_answer: str = ""  # one line of the last assistant turn with prose
    last_compact: str = ""  # one line of the last compaction summary
    decisions: list[Insight] = field(default_factory=list)  # the best DECISION_POOL candidates, merge order
    node_ids: list[str] = field(default_factory=list)  # UUIDs mentioned, first NODE_IDS_MAX

    @classmethod
    def of(cls, turns: Iterable[Turn], session_id: str = "") -> SessionSummary:
        summary = cls()
        summary.update(list(turns), session_id)
        return summary

    def update(self, turns: list[Turn], session_id: str = "") -> None:
        """Take in the next turns of the session (in order)."""
        seen = set(self.node_ids)
        for turn in turns:
            if turn.role == "user":
                if not turn.text.startswith("[result "):
                    self.user_prompts += 1
                if len(self.prompts) < PROMPTS_SHOWN:
                    text = prose(turn.text).strip()
                    if text and not text.startswith("/"):
                        self.prompts.append(one_line(text, PROMPT_MAX))
            if len(self.node_ids) < NODE_IDS_MAX and "-4" in turn.text:  # (a UUID v4 holds "-4")
                for node_id in NODE_ID.findall(turn.text):
                    if node_id not in seen and len(self.node_ids) < NODE_IDS_MAX:
                        seen.add(node_id)
                        self.node_ids.append(node_id)
        # only the step's last answer and compaction count: cut to one line once (one_line redacts an 8 KB window)
        for turn in reversed(turns):
            text = prose(turn.text).strip() if turn.role == "assistant" else ""
            if text:
                self.last_answer = one_line(text, ANSWER_MAX)
                break
        compact = next((t.text for t in reversed(turns) if t.role == "compact_summary" and t.text), "")
        if compact:
            self.last_compact = one_line(compact, ANSWER_MAX)
        mined = [i for i in mine_turns(turns, session_id, DECISION_THRESHOLD) if i.kind == "decision"]
        if mined:
            self.decisions = sorted(self.decisions + mined, key=_order)[:DECISION_POOL]  # stable: turn order on ties

    def to_dict(self) -> dict[str, Any]:
        return {
            "prompts": self.prompts,
            "user_prompts": self.user_prompts,
            "last_answer": self.last_answer,
            "last_compact": self.last_compact,
            "decisions": [[i.text, i.score, i.turn, i.timestamp] for i in self.decisions],
            "node_ids": self.node_ids,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], session_id: str = "") -> SessionSummary:
        decisions = []
        for row in data.get("decisions") or []:
            try:
                text, score, turn, stamp = row
                decisions.append(Insight("decision", str(text), float(score), session_id, int(turn), str(stamp)))
            except (TypeError, ValueError):
                continue
        return cls(
            prompts=[str(p) for p in data.get("prompts") or []][:PROMPTS_SHOWN],
            user_prompts=int(data.get("user_prompts") or 0),
            last_answer=str(data.get("last_answer") or ""),
            last_compact=str(data.get("last_compact") or ""),
            decisions=decisions,
            node_ids=[str(n) for n in data.get("node_ids") or []][:NODE_IDS_MAX],
        )
