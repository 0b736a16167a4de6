"""``autology import memory FILE``: the official MCP memory server's knowledge graph (``memory.jsonl``,
``memory.json``) as nodes and relations.

Each line is an entity ``{"type": "entity", "name", "entityType", "observations": [...]}`` or a
relation ``{"type": "relation", "from", "to", "relationType"}``. An entity becomes one node: its name
the title, its observations the content (one bullet each), its entity type a tag and the node type
by the rule in :func:`node_type` (an entity whose type names a decision becomes a decision whose four
ADR sections say what the entity did not record). A relation becomes one of the seven relation types
by the rule in :func:`relation_type`, the original name kept as its description. Provenance:
``source: import_memory`` and ``imported_from`` / ``imported_sha256`` in the frontmatter, so a
second run changes only the entities that changed.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autology_mcp.common.errors import ValidationError
from autology_mcp.knowledge.importers.common import action_for, add_relation, counts, imported_nodes
from autology_mcp.knowledge.models import KnowledgeNode, Relation, new_id, utc_now, validate_content, validate_title

_TYPE_RULES = (  # first match wins, on the entity type's words
    ("decision", r"decision|choice|adr"),
    ("convention", r"guideline|convention|rule|preference|standard|style|policy"),
    ("issue", r"issue|bug|problem|gotcha|error|incident|mistake"),
    ("pattern", r"pattern|practice|workflow|recipe|approach"),
    ("component", r"component|service|module|class|function|library|tool|system|api|package|app|file|repo"),
)
_RELATION_RULES = (
    ("supersedes", r"supersede|replace"),
    ("implements", r"implement|realize|fulfil"),
    ("depends_on", r"depend|require|need"),
    ("derived_from", r"derive|based on|extend|inherit|fork"),
    ("affects", r"affect|impact|modif|change|break"),
    ("uses", r"\buse|call|read|write|import|consume|invoke"),
)
UNRECORDED = "(not recorded in the memory server's graph)"


def node_type(entity_type: str) -> str:
    """The node type for an entity type (concept when no rule matches)."""
    words = entity_type.lower().replace("_", " ")
    return next((t for t, pattern in _TYPE_RULES if re.search(pattern, words)), "concept")


def relation_type(name: str) -> str:
    """One of the seven relation types for a relation name (relates_to when no rule matches)."""
    words = name.lower().replace("_", " ").strip()
    if re.search(r"\bby$", words):  # used_by, replaced_by: the other direction, which no type here says
        return "relates_to"
    return next((t for t, pattern in _RELATION_RULES if re.search(pattern, words)), "relates_to")


@dataclass
class Entity:
    name: str
    entity_type: str
    observations: list[str]
    sha256: str


@dataclass
class MemoryImport:
    entities: list[tuple[Entity, str, str | None]] = field(default_factory=list)  # (entity, action, node id)
    relations: list[tuple[str, str, str, str]] = field(default_factory=list)  # (from, to, type, original name)
    skipped: list[str] = field(default_factory=list)  # line numbers and why

    def counts(self) -> dict[str, int]:
        return counts([action for _, action, _ in self.entities])


def read_graph(path: Path) -> tuple[list[Entity], list[tuple[str, str, str]], list[str]]:
    entities: dict[str, Entity] = {}
    relations: list[tuple[str, str, str]] = []
    skipped: list[str] = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError:
            skipped.append(f"line {number}: not JSON")
            continue
        if not isinstance(item, dict):
            skipped.append(f"line {number}: not an object")
        elif item.get("type") == "entity" and isinstance(item.get("name"), str) and item["name"].strip():
            observations = [str(o) for o in item.get("observations") or [] if str(o).strip()]
            entities[item["name"]] = Entity(item["name"].strip(), str(item.get("entityType") or ""), observations,
                                            hashlib.sha256(line.encode("utf-8")).hexdigest())
        elif item.get("type") == "relation" and all(isinstance(item.get(k), str) for k in ("from", "to", "relationType")):
            relations.append((item["from"], item["to"], item["relationType"]))
        elif item.get("type") not in ("_aim",):  # a marker line some forks write first
            skipped.append(f"line {number}: neither an entity nor a relation")
    return list(entities.values()), relations, skipped


def _content(entity: Entity, kind: str) -> str:
    bullets = "\n".join(f"- {o}" for o in entity.observations) or UNRECORDED
    if kind != "decision":
        return bullets
    return (f"## Context\n\n{UNRECORDED}\n\n## Decision\n\n{bullets}\n\n## Alternatives\n\n{UNRECORDED}\n\n"
            f"## Consequences\n\n{UNRECORDED}")


def _tag(entity_type: str) -> tuple[str, ...]:
    slug = re.sub(r"[^a-z0-9]+", "-", entity_type.lower()).strip("-")[:64]
    return (slug,) if slug else ()


def _key(path: Path, name: str) -> str:
    return f"{Path(path).name}#{name}"


def import_memory(store: Any, path: Path, apply: bool) -> MemoryImport:
    """Plan (and with ``apply`` write) the import of one memory-server file."""
    entities, relations, skipped = read_graph(path)
    existing = imported_nodes(store, "import_memory")
    report = MemoryImport(skipped=skipped)
    ids: dict[str, str] = {}
    for entity in entities:
        try:
            title = validate_title(entity.name[:100])
            validate_content(_content(entity, node_type(entity.entity_type)))
        except ValidationError as exc:
            report.skipped.append(f"entity {entity.name!r}: {exc}")
            continue
        action, node_id = action_for(existing, _key(path, entity.name), entity.sha256)
        kind = node_type(entity.entity_type)
        extra = {"imported_from": _key(path, entity.name), "imported_sha256": entity.sha256}
        if apply and action == "create":
            now = utc_now()
            new = KnowledgeNode(id=new_id(), type=kind, title=title, content=_content(entity, kind), created=now,
                                modified=now, tags=_tag(entity.entity_type), source="import_memory", confidence=0.8,
                                extra=extra)
            store.create(new)
            node_id = new.id
        elif apply and action == "update":
            store.modify(node_id, lambda n, e=entity, k=kind, x=extra: n.replace(
                content=_content(e, k), tags=tuple(dict.fromkeys((*n.tags, *_tag(e.entity_type)))),
                extra={**n.extra, **x}, modified=utc_now()))
        if node_id:
            ids[entity.name] = node_id
        report.entities.append((entity, action, node_id))
    names = {e.name for e in entities}
    for source, target, name in relations:
        if source not in names or target not in names or source == target:
            report.skipped.append(f"relation {source!r} -{name}-> {target!r}: an end is not an entity")
            continue
        kind = relation_type(name)
        report.relations.append((source, target, kind, name))
        if apply and source in ids and target in ids:
            rel = Relation(target=ids[target], type=kind, description=name[:500] if kind == "relates_to" or name != kind else None)
            add_relation(store, ids[source], rel)
    return report
