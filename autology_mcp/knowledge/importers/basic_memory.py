"""``autology import basic-memory FOLDER``: basic-memory notes (Markdown with front matter, an
``## Observations`` list of ``- [category] text`` and a ``## Relations`` list of
``- relation_type [[Target]]``) as nodes and relations.

A note becomes a node: its ``title`` (else its ``# `` heading, else its file name) the title, its
``type`` the node type by :func:`autology_mcp.knowledge.importers.memory.node_type`, its tags the tags,
its body without the ``## Relations`` list the content (observations included as written). Each
relation whose target is another imported note (by title or permalink, case aside) becomes a
relation by :func:`autology_mcp.knowledge.importers.memory.relation_type`, the original name kept as the
description; one whose target is not among the notes is reported as skipped. Provenance:
``source: import_basic_memory`` and ``imported_from`` / ``imported_sha256``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autology_mcp.common.errors import ValidationError
from autology_mcp.knowledge.importers.common import (
    action_for,
    add_relation,
    counts,
    front_matter,
    imported_nodes,
    source_key,
    tag_slugs,
)
from autology_mcp.knowledge.importers.memory import node_type, relation_type
from autology_mcp.knowledge.models import (
    KnowledgeNode,
    Relation,
    new_id,
    utc_now,
    validate_content,
    validate_tags,
    validate_title,
)

_H1 = re.compile(r"^#\s+(.+?)\s*$", re.MULTILINE)
_RELATIONS = re.compile(r"^##\s+Relations\s*\n(.*?)(?=^##\s|\Z)", re.MULTILINE | re.DOTALL)
_RELATION_LINE = re.compile(r"^\s*-\s*([\w -]+?)\s+\[\[([^\]|#]+)(?:[|#][^\]]*)?\]\]", re.MULTILINE)


@dataclass
class Note:
    path: Path
    title: str
    kind: str
    tags: tuple[str, ...]
    content: str
    permalink: str
    relations: list[tuple[str, str]]  # (relation name, target title or permalink)
    sha256: str


@dataclass
class NotesReport:
    notes: list[tuple[Note, str, str | None]] = field(default_factory=list)  # (note, action, node id)
    relations: list[tuple[str, str, str, str]] = field(default_factory=list)  # (from, to, type, original)
    skipped: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return counts([action for _, action, _ in self.notes])


def parse_note(path: Path, text: str) -> Note:
    text = text.replace("\r\n", "\n")
    front, body = front_matter(text)
    heading = _H1.search(body)
    title = str(front.get("title") or (heading.group(1) if heading else path.stem.replace("-", " "))).strip()
    if heading and heading.group(1).strip() == title:
        body = body[: heading.start()] + body[heading.end():]
    relations_block = _RELATIONS.search(body)
    relations = _RELATION_LINE.findall(relations_block.group(1)) if relations_block else []
    if relations_block:
        body = body[: relations_block.start()] + body[relations_block.end():]
    return Note(path, title[:100], node_type(str(front.get("type") or "")), tag_slugs(front.get("tags")), body.strip(),
                str(front.get("permalink") or path.stem), [(n.strip(), t.strip()) for n, t in relations],
                hashlib.sha256(text.encode("utf-8")).hexdigest())


def import_notes(store: Any, folder: Path, apply: bool) -> NotesReport:
    """Plan (and with ``apply`` write) the import of a basic-memory folder (recursively)."""
    existing = imported_nodes(store, "import_basic_memory")
    report = NotesReport()
    ids: dict[str, str] = {}
    by_name: dict[str, Note] = {}
    for path in sorted(Path(folder).rglob("*.md")):
        if any(part.startswith(".") for part in path.relative_to(folder).parts):
            continue
        try:
            note = parse_note(path, path.read_text(encoding="utf-8"))
            title = validate_title(note.title)
            validate_tags(list(note.tags))
            validate_content(note.content or "(empty note)")
        except (UnicodeDecodeError, ValidationError) as exc:
            report.skipped.append(f"{path.name}: {exc}")
            continue
        action, node_id = action_for(existing, source_key(store, path), note.sha256)
        extra = {"imported_from": source_key(store, path), "imported_sha256": note.sha256}
        content = note.content or "(empty note)"
        if apply and action == "create":
            now = utc_now()
            new = KnowledgeNode(id=new_id(), type=note.kind, title=title, content=content, created=now, modified=now,
                                tags=note.tags, source="import_basic_memory", confidence=0.8, extra=extra)
            store.create(new)
            node_id = new.id
        elif apply and action == "update":
            store.modify(node_id, lambda n, c=content, t=note.tags, x=extra: n.replace(
                content=c, tags=t, extra={**n.extra, **x}, modified=utc_now()))
        report.notes.append((note, action, node_id))
        for name in (note.title, note.permalink):
            by_name[name.lower()] = note
        if node_id:
            ids[note.title] = node_id
    for note, _action, _ in report.notes:
        for name, target in note.relations:
            other = by_name.get(target.lower())
            if other is None or other is note:
                report.skipped.append(f"{note.title} -{name}-> [[{target}]]: the target is not among the notes")
                continue
            kind = relation_type(name)
            report.relations.append((note.title, other.title, kind, name))
            if apply and note.title in ids and other.title in ids:
                rel = Relation(target=ids[other.title], type=kind, description=name[:500])
                add_relation(store, ids[note.title], rel)
    return report
