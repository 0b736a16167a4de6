"""``autology import adr FOLDER``: a team's existing architecture decision records as decision nodes.

Reads the three common formats: Nygard's (``# 1. Title``, ``Date:``, ``## Status``, ``## Context``,
``## Decision``, ``## Consequences``), adr-tools' (the same, with ``Supersedes`` / ``Superseded by``
links in the status) and MADR's (``## Context and Problem Statement``, ``## Considered Options``,
``## Decision Outcome``, ``### Consequences``; status in YAML front matter or a ``* Status:`` line).

Each record becomes one ``decision`` node whose content has the four ADR sections autology requires
(a section the record does not have says so, never invented) and keeps the record's other sections
after them. Its status maps to the node's (accepted → active, proposed → needs_review, superseded,
deprecated and rejected → superseded), "Superseded by N" to a ``supersedes`` relation from N, a
citation of another record of the folder (a Markdown link to its file, or "ADR 12" / "ADR-0012")
to a ``relates_to`` relation from the citing record, and its front-matter tags to tags.
Provenance: ``source: import_adr``, the record's path as a reference when it is inside the
project, and ``imported_from`` / ``imported_sha256`` in the frontmatter, so a second run changes
only what changed in the records (idempotent) and a node a person edited since is left alone
unless its record changed too.
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
from autology_mcp.knowledge.markdown import mask_fenced_code
from autology_mcp.knowledge.models import (
    KnowledgeNode,
    Relation,
    new_id,
    utc_now,
    validate_content,
    validate_tags,
    validate_title,
)

_RECORD_NAME = re.compile(r"^(\d{1,5})[-_].+\.md$", re.IGNORECASE)
_HEADING = re.compile(r"^(##)\s+(.+?)\s*$", re.MULTILINE)
_SUBHEADING = re.compile(r"^###\s+(.+?)\s*$", re.MULTILINE)
_TITLE = re.compile(r"^#\s+(?:\d+\.\s*)?(.+?)\s*$", re.MULTILINE)
_SUPERSEDED_BY = re.compile(r"superseded by\s*\[?\s*(?:ADR[- ]?)?0*(\d+)", re.IGNORECASE)
_STATUS_LINE = re.compile(r"^\s*[*-]\s*status:\s*(.+)$", re.IGNORECASE | re.MULTILINE)
# another record cited: a Markdown link to its file (any folder before it), or "ADR 12" / "ADR-0012" / "ADR #12"
_LINKED_RECORD = re.compile(r"\]\((?:[^)\s]*/)?(\d{1,5})[-_][^)\s/]*\.md(?:#[^)\s]*)?\)", re.IGNORECASE)
_ADR_MENTION = re.compile(r"\bADR[- ]?#?0*(\d{1,5})\b", re.IGNORECASE)

SECTION_NAMES = {
    "Context": ("context", "context and problem statement", "problem statement", "background", "context and problem"),
    "Decision": ("decision", "decision outcome"),
    "Alternatives": ("considered options", "options", "alternatives", "alternatives considered", "options considered",
                     "pros and cons of the options"),
    "Consequences": ("consequences", "positive consequences", "negative consequences"),
}
STATUS_MAP = {"accepted": "active", "proposed": "needs_review", "draft": "needs_review", "superseded": "superseded",
              "deprecated": "superseded", "rejected": "superseded"}


@dataclass
class Record:
    path: Path
    number: int | None
    title: str
    status: str  # the node status
    content: str
    tags: tuple[str, ...]
    superseded_by: int | None
    sha256: str
    cites: tuple[int, ...] = ()  # the numbers of the other records it cites


@dataclass
class Planned:
    record: Record
    action: str  # create | update | unchanged | skip
    node_id: str | None = None
    reason: str = ""


@dataclass
class ImportReport:
    planned: list[Planned] = field(default_factory=list)
    relations: list[tuple[str, str]] = field(default_factory=list)  # (newer title, older title) supersedes
    citations: list[tuple[str, str]] = field(default_factory=list)  # (citing title, cited title) relates_to

    def counts(self) -> dict[str, int]:
        return counts([p.action for p in self.planned])


def find_records(folder: Path) -> list[Path]:
    """The ADR files of a folder: Markdown files named ``<number>-<slug>.md`` (templates and indexes aside)."""
    return sorted(p for p in Path(folder).iterdir() if p.is_file() and _RECORD_NAME.match(p.name)
                  and "template" not in p.name.lower())


def _sections(body: str) -> list[tuple[str, str]]:
    """(heading, text) of each ## section, in order (### subsections stay inside); text before the first is
    dropped. A ``## `` line in fenced code is code, not a heading."""
    found = list(_HEADING.finditer(mask_fenced_code(body)))
    out = []
    for i, match in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(body)
        out.append((match.group(2).strip(), body[match.end():end].strip("\n")))
    return out


def _take_consequences(text: str) -> tuple[str, list[str]]:
    """The text without its ### consequence subsections, and those subsections (labelled)."""
    found = list(_SUBHEADING.finditer(mask_fenced_code(text)))
    kept, taken, last = [], [], 0
    for i, match in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(text)
        if match.group(1).strip().lower().rstrip(":") in SECTION_NAMES["Consequences"]:
            kept.append(text[last:match.start()])
            taken.append(f"**{match.group(1).strip()}**\n\n{text[match.end():end].strip()}")
            last = end
    kept.append(text[last:])
    return "".join(kept).strip("\n"), taken


def parse_record(path: Path, text: str) -> Record:
    front, body = front_matter(text.replace("\r\n", "\n"))
    outside_code = mask_fenced_code(body)  # a `# comment` in a shell block is no title, `* Status:` in code no status
    title_match = _TITLE.search(outside_code)
    title = str(front.get("title") or (title_match.group(1) if title_match else path.stem)).strip()
    number_match = _RECORD_NAME.match(path.name)
    mapped: dict[str, list[str]] = {name: [] for name in SECTION_NAMES}
    others: list[str] = []
    status_text = str(front.get("status") or "")
    for heading, text_ in _sections(body):
        key = heading.lower().rstrip(":")
        if key == "status":
            status_text = status_text or text_
            continue
        target = next((name for name, names in SECTION_NAMES.items() if key in names), None)
        if target == "Decision":  # MADR nests "### Consequences" (positive, negative) inside "## Decision Outcome"
            text_, consequences = _take_consequences(text_)
            mapped["Consequences"].extend(consequences)
        if target:
            mapped[target].append(text_ if key in SECTION_NAMES[target][:1] else f"**{heading}**\n\n{text_}")
        elif text_.strip():
            others.append(f"## {heading}\n\n{text_}")
    if not status_text:
        line = _STATUS_LINE.search(outside_code)
        status_text = line.group(1) if line else ""
    word = (status_text.strip().split() or ["accepted"])[0].strip("*_`.,:").lower()
    status = STATUS_MAP.get(word, "active")
    superseded = _SUPERSEDED_BY.search(status_text)
    parts = []
    for name in SECTION_NAMES:
        text_ = "\n\n".join(t for t in mapped[name] if t.strip()).strip()
        parts.append(f"## {name}\n\n{text_ or '(not recorded in the original ADR)'}")
    date = front.get("created") or front.get("date")
    source_line = f"_Imported from `{path.name}`" + (f", dated {date}" if date else "") + f"; status: {status_text.strip().splitlines()[0] if status_text.strip() else 'not stated'}._"
    content = "\n\n".join([*parts, *others, source_line])
    number = int(number_match.group(1)) if number_match else None
    cited = {int(m.group(1)) for pattern in (_LINKED_RECORD, _ADR_MENTION) for m in pattern.finditer(text)}
    return Record(path, number, title[:100], status, content,
                  tag_slugs(front.get("tags")), int(superseded.group(1)) if superseded else None,
                  hashlib.sha256(text.encode("utf-8")).hexdigest(), tuple(sorted(cited - {number})))


def plan(store: Any, folder: Path) -> ImportReport:
    """What an import of ``folder`` would do, without writing anything."""
    existing = imported_nodes(store, "import_adr")
    report = ImportReport()
    for path in find_records(folder):
        try:
            record = parse_record(path, path.read_text(encoding="utf-8"))
            validate_title(record.title)
            validate_tags(list(record.tags))
            validate_content(record.content)
        except (UnicodeDecodeError, ValidationError) as exc:
            report.planned.append(Planned(Record(path, None, path.name, "active", "", (), None, ""), "skip", reason=str(exc)))
            continue
        report.planned.append(Planned(record, *action_for(existing, source_key(store, path), record.sha256)))
    by_number = {p.record.number: p for p in report.planned if p.action != "skip"}
    for p in report.planned:
        newer = by_number.get(p.record.superseded_by) if p.record.superseded_by is not None else None
        if newer is not None and newer is not p:
            report.relations.append((newer.record.title, p.record.title))
    for p, cited in citations(report.planned):
        report.citations.append((p.record.title, cited.record.title))
    return report


def citations(planned: list[Planned]) -> list[tuple[Planned, Planned]]:
    """(citing, cited) for each record of the import another one cites, but for a pair a ``supersedes``
    relation already joins (its status links to the other)."""
    by_number = {p.record.number: p for p in planned if p.action != "skip" and p.record.number is not None}
    superseding = {frozenset((p.record.number, p.record.superseded_by)) for p in planned
                   if p.action != "skip" and p.record.superseded_by is not None}
    return [(p, by_number[n]) for p in planned if p.action != "skip" for n in p.record.cites
            if n in by_number and frozenset((p.record.number, n)) not in superseding]


def apply(store: Any, report: ImportReport) -> ImportReport:
    """Write the plan: create and update decision nodes, then the ``supersedes`` and ``relates_to`` relations."""
    ids: dict[int | None, str] = {}
    for p in report.planned:
        if p.action == "skip":
            continue
        r = p.record
        refs = ()
        try:
            rel = Path(r.path).resolve().relative_to(store.root).as_posix()
            refs = (rel,)
        except ValueError:
            pass
        extra = {"imported_from": source_key(store, r.path), "imported_sha256": r.sha256}
        if p.action == "create":
            now = utc_now()
            node = KnowledgeNode(id=new_id(), type="decision", title=r.title, content=r.content, created=now,
                                 modified=now, tags=r.tags, source="import_adr", references=refs, status=r.status,
                                 confidence=0.9, extra=extra)
            store.create(node)
            p.node_id = node.id
        elif p.action == "update":
            store.modify(p.node_id, lambda n, r=r, extra=extra: n.replace(
                title=r.title, content=r.content, tags=r.tags, status=r.status, extra={**n.extra, **extra},
                modified=utc_now()))
        ids[r.number] = p.node_id
    for p in report.planned:
        newer = ids.get(p.record.superseded_by) if p.record.superseded_by is not None else None
        if newer and p.node_id and newer != p.node_id:
            add_relation(store, newer, Relation(target=p.node_id, type="supersedes"))
    for p, cited in citations(report.planned):
        if p.node_id and cited.node_id:
            add_relation(store, p.node_id, Relation(target=cited.node_id, type="relates_to",
                                                    description=f"cites ADR {cited.record.number}"))
    return report
