"""``autology import claude-md PATH``: a ``CLAUDE.md`` (and the files it ``@``-imports) or a folder of
Markdown memory files (Claude Code's project auto-memory folder) as conventions and concepts.

One node per ``## `` section (its ``###`` subsections stay inside); a file with no ``## `` section is
one node titled by its ``# `` heading or its name. A section that reads as instructions (its heading
names rules, a workflow, a style or a gotcha, or most of its lines are imperatives: must, always,
never, do not, use, prefer, run, avoid) becomes a ``convention``; any other a ``concept``. ``@path``
imports are followed (relative to the importing file, ``~`` expanded, five levels at most, each file
once). Provenance: ``source: import_claude_md`` and ``imported_from`` (file and heading) /
``imported_sha256`` in the frontmatter, so a second run changes only the sections that changed.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autology_mcp.common.errors import ValidationError
from autology_mcp.knowledge.importers.common import action_for, counts, imported_nodes, source_key
from autology_mcp.knowledge.markdown import mask_fenced_code
from autology_mcp.knowledge.models import KnowledgeNode, new_id, utc_now, validate_content, validate_title

_H1 = re.compile(r"^#\s+(.+?)\s*$", re.MULTILINE)
_H2 = re.compile(r"^##\s+(.+?)\s*$", re.MULTILINE)
_IMPORT = re.compile(r"(?:^|\s)@((?:~|\.{1,2})?/?[\w./-]+\.(?:md|txt))\b")
_RULE_HEADING = re.compile(r"rule|convention|guideline|workflow|style|standard|gotcha|must|do not|don't|policy|"
                           r"process|checklist|instruction|mandatory|required|how to", re.IGNORECASE)
_IMPERATIVE = re.compile(r"^\s*(?:[-*\d.)]+\s*)?(?:\*\*)?(?:always|never|must|do not|don't|use|prefer|run|avoid|keep|"
                         r"make sure|ensure|only|write|add|follow|check|call|put)\b", re.IGNORECASE)
MAX_DEPTH = 5


@dataclass
class Section:
    file: Path
    heading: str
    text: str
    kind: str
    sha256: str


@dataclass
class NotesImport:
    sections: list[tuple[Section, str, str | None]] = field(default_factory=list)  # (section, action, node id)
    skipped: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return counts([action for _, action, _ in self.sections])


def files_of(path: Path) -> list[Path]:
    """The Markdown files to read: a folder's ``*.md``, or a file and everything it @-imports."""
    path = Path(path).expanduser()
    if path.is_dir():
        return sorted(p for p in path.glob("*.md") if p.is_file())
    seen: list[Path] = []
    pending = [(path, 0)]
    while pending:
        current, depth = pending.pop(0)
        resolved = current.resolve()
        if resolved in seen or not current.is_file():
            continue
        seen.append(resolved)
        if depth < MAX_DEPTH:
            text = current.read_text(encoding="utf-8", errors="replace")
            for target in _IMPORT.findall(mask_fenced_code(text)):  # Claude Code skips @ in code blocks too
                pending.append(((current.parent / Path(target).expanduser()), depth + 1))
    return seen


def _clean_heading(heading: str) -> str:
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = text.replace("**", "").replace("__", "").replace("`", "")  # emphasis and code marks, not a glob's *
    text = "".join(ch for ch in text if ch.isprintable() and not (0x2190 <= ord(ch) <= 0x2BFF or ord(ch) >= 0x1F000))
    return " ".join(text.split()).strip(" -—:")[:100]


def _kind(heading: str, text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith(("#", "```", "|"))]
    imperative = sum(bool(_IMPERATIVE.match(line)) for line in lines)
    return "convention" if _RULE_HEADING.search(heading) or (lines and imperative * 2 >= len(lines)) else "concept"


def sections_of(path: Path) -> list[Section]:
    text = path.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n")
    outside_code = mask_fenced_code(text)  # a heading in fenced code (a `# comment` in a shell block) is code
    found = list(_H2.finditer(outside_code))
    out = []
    if not found:
        title = _H1.search(outside_code)
        heading = _clean_heading(title.group(1)) if title else path.stem.replace("-", " ").replace("_", " ")
        body = (text[:title.start()] + text[title.end():] if title else text).strip()
        if body:
            out.append(Section(path, heading, body, _kind(heading, body), hashlib.sha256(body.encode()).hexdigest()))
        return out
    for i, match in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(text)
        body = text[match.end():end].strip("\n")
        heading = _clean_heading(match.group(1))
        if body.strip() and heading:
            out.append(Section(path, heading, body, _kind(heading, body), hashlib.sha256(body.encode()).hexdigest()))
    return out


def _key(store: Any, section: Section) -> str:
    return f"{source_key(store, section.file)}#{section.heading}"


def import_notes(store: Any, path: Path, apply: bool) -> NotesImport:
    """Plan (and with ``apply`` write) the import of a CLAUDE.md or a memory folder."""
    existing = imported_nodes(store, "import_claude_md")
    report = NotesImport()
    for file in files_of(path):
        for section in sections_of(file):
            try:
                title = validate_title(section.heading)
                validate_content(section.text)
            except ValidationError as exc:
                report.skipped.append(f"{file.name} '{section.heading}': {exc}")
                continue
            key = _key(store, section)
            action, node_id = action_for(existing, key, section.sha256)
            extra = {"imported_from": key, "imported_sha256": section.sha256}
            content = section.text + f"\n\n_Imported from `{section.file.name}`._"
            if apply and action == "create":
                now = utc_now()
                new = KnowledgeNode(id=new_id(), type=section.kind, title=title, content=content, created=now,
                                    modified=now, source="import_claude_md", confidence=0.8, extra=extra)
                store.create(new)
                node_id = new.id
            elif apply and action == "update":
                store.modify(node_id, lambda n, c=content, x=extra: n.replace(content=c, extra={**n.extra, **x},
                                                                               modified=utc_now()))
            report.sections.append((section, action, node_id))
    return report
