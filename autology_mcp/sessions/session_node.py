"""The ``session`` node SessionEnd writes: what was done, files touched, decisions mentioned.

One node per session worth one (it changed files, mentioned a decision, or had at least 3 prompts),
found again by its ``session`` field, so a resumed session updates it:
source ``hook_session_end``, confidence 0.85, references to the files the session changed (those
that still exist in the project), and ``relates_to`` relations to the nodes the session touched:
nodes referencing a changed file, and nodes whose id appears in the session (autology tool calls).
The content's last line names the agent the session was held with (``agent: codex``).
Everything comes from the redacted session file, so the node (which is committed with the
project) holds no secret the redaction recognises: from its last checkpoint (the parse state and the
running summary), not from its turns, so writing the node at the end of a long session is as quick
as at the end of a short one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autology_mcp.common.errors import NotFoundError, ValidationError
from autology_mcp.knowledge.models import REFERENCES_MAX, TITLE_MAX, validate_reference
from autology_mcp.sessions.handoff import summary_sections
from autology_mcp.sessions.store import SessionRecord, load_overview
from autology_mcp.sessions.transcript import CLAUDE

if TYPE_CHECKING:
    from autology_mcp.knowledge.service import Autology

SOURCE = "hook_session_end"
CONFIDENCE = 0.85
RELATIONS_MAX = 12
MIN_PROMPTS = 3


@dataclass
class SessionNodeResult:
    node_id: str
    action: str  # "created" | "updated" | "unchanged"
    related: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


_TOKEN = re.compile(r"\S+")
_EDGE = "\"'`()[]{}<>,;:!?*"


_SYMBOLS = set("!%^*@#$&+=~?")


def _secret_shaped(token: str) -> bool:
    """A word that could be a credential the patterns did not know: 16+ characters mixing letters
    and digits, or 24+ letters mixing cases, outside a file path; or, shorter, a password's shape:
    8+ characters mixing letters, digits and one of ``!%^*@#$&+=~?``."""
    word = token.strip(_EDGE)
    if "[REDACTED" in word:
        return False
    if len(word) >= 8 and "/" not in word and any(c in _SYMBOLS for c in word) \
            and any(c.isdigit() for c in word) and any(c.isalpha() for c in word):
        return True
    if len(word) < 16:
        return False
    if "/" in word or re.search(r"\.(?:py|js|ts|md|json|toml|ya?ml|txt|rs|go|java|c|h|cpp|rb|sh)$", word):
        return False  # a path (a URL's password was redacted already)
    has_digit = any(c.isdigit() for c in word)
    has_alpha = any(c.isalpha() for c in word)
    mixed_case = any(c.isupper() for c in word) and any(c.islower() for c in word)
    return (has_digit and has_alpha) or (len(word) >= 24 and mixed_case)


def summarised(text: str) -> str:
    """Text fit for a committed file: already redacted, and every secret-shaped word the redaction
    patterns might not know replaced by ``[…]`` (the session node is committed; the session file is not)."""
    text = _LITERAL.sub(lambda m: f"{m.group(1)}[…]{m.group(1)}" if _literal_secret(m.group(2)) else m.group(), text)
    return _TOKEN.sub(lambda m: "[…]" if _secret_shaped(m.group()) else m.group(), text)


_LITERAL = re.compile(r"([\"'])([^\s\"'/]{8,})\1")  # a quoted string of code, one word


def _literal_secret(word: str) -> bool:
    """A quoted one-word string mixing letters and digits (``auth=("deploy", "Tq8mZ41bR")``): in code,
    that is a key, a password or an id, and a session's summary needs none of them."""
    return any(c.isdigit() for c in word) and any(c.isalpha() for c in word) and "[REDACTED" not in word


def node_title(record: SessionRecord) -> str:
    title = f"Session: {summarised(record.title)}"
    return title if len(title) <= TITLE_MAX else title[: TITLE_MAX - 1].rstrip() + "…"


def node_content(record: SessionRecord) -> str:
    parts = summary_sections(record.state, record.running_summary())
    lines = ["## What was done"]
    lines += [f"- Asked: {summarised(p)}" for p in parts["asked"]] or ["- (no prompt recorded)"]
    lines += [f"- {summarised(d)}" for d in parts["done"]]
    lines += ["", "## Files touched"]
    lines += [f"- `{f}`" for f in parts["files"]] or ["- none"]
    lines += ["", "## Decisions mentioned"]
    lines += [f"- {summarised(d)}" for d in parts["decisions"]] or ["- none recorded in the conversation"]
    state = record.state
    span = f"{state.first_timestamp} – {state.last_timestamp}" if state.first_timestamp else "time unknown"
    agent = state.agent or CLAUDE  # (a state too old to name its agent is Claude Code's)
    lines += [
        "",
        f"_Session `{record.session_id}` (agent: {agent}), {span}, {record.state.turns} turns"
        + (f", {state.compactions} compaction(s)" if state.compactions else "")
        + ". The redacted conversation is searchable on this machine: `autology sessions search`._",
    ]
    return "\n".join(lines)


def _references(root: Path, record: SessionRecord) -> list[str]:
    refs: list[str] = []
    for path in record.state.files_modified:
        try:
            ref = validate_reference(path)
        except ValidationError:
            continue  # outside the project (absolute) or not a plain path
        if (root / ref).exists() and ref not in refs:
            refs.append(ref)
    return refs[:REFERENCES_MAX]


def find_session_node(autology: Autology, session_id: str) -> str | None:
    index = autology.store.index
    for node in index.recent("session", (), 100_000):
        if node.session == session_id:
            return node.id
    return None


def touched_nodes(autology: Autology, record: SessionRecord, exclude: str | None = None) -> list[str]:
    """Ids of existing nodes the session touched: referencing a changed file, or named in the session."""
    from autology_mcp.knowledge.references import nodes_referencing

    found: dict[str, None] = {}
    changed = [f for f in record.state.files_modified if not f.startswith(("/", ".autology/"))]
    if changed:
        for node, _ in nodes_referencing(autology.store.index.referencing(changed), changed):
            found[node.id] = None
    for node_id in record.running_summary().node_ids:  # in the order the session mentions them
        if node_id not in found and autology.store.exists(node_id):
            found[node_id] = None
    found.pop(exclude or "", None)
    return list(found)[:RELATIONS_MAX]


def worth_a_node(record: SessionRecord) -> bool:
    """A session gets a node when it changed files, mentioned a decision, or had a few exchanges
    (a one-question session would only add noise to the committed graph)."""
    summary = record.running_summary()
    return bool(record.state.files_modified) or summary.user_prompts >= MIN_PROMPTS or bool(
        summary_sections(record.state, summary)["decisions"]
    )


def write_session_node(autology: Autology, session_id: str) -> SessionNodeResult | None:
    """Create or update the session's node from its session file; None when there is nothing worth one."""
    root = autology.store.root
    record = load_overview(root, session_id)
    if record is None or not record.state.turns:
        return None
    existing = find_session_node(autology, session_id)
    if existing is None and not worth_a_node(record):
        return None
    title, content, refs = node_title(record), node_content(record), _references(root, record)
    node_id = existing
    action = "created"
    if node_id is None:
        node_id = autology.capture(
            title, content, type="session", references=refs, session=session_id, source=SOURCE, confidence=CONFIDENCE
        ).id
    else:
        node = autology.store.get(node_id)
        if node.title == title and node.content == content and list(node.references) == refs:
            action = "unchanged"
        else:
            autology.update(node_id, title=title, content=content, references=refs)
            action = "updated"
    related = []
    existing = {(r.target, r.type.value) for r in autology.store.get(node_id).relations}
    for target in touched_nodes(autology, record, exclude=node_id):
        if (target, "relates_to") in existing:
            related.append(target)
            continue
        try:
            autology.relate(node_id, target, "relates_to", description="touched in this session")
            related.append(target)
        except NotFoundError:
            continue
    return SessionNodeResult(node_id, action, related)
