"""The write rules a hand-written node file may break, and what a write does to such a node.

A node file that parses (YAML front matter that is a mapping) is a node, even when a person wrote
something the tools would refuse (seed 004's validation rules hold for every write through the tools,
unchanged): :func:`markdown.parse_node` reads it with a stand-in where a value cannot be used (an
unknown type is read as the type of its folder, else the nearest type its text names, else
``concept``; a status as ``active``; a confidence as 0.9; a date as the file's time; a bad id as one
derived from the file's path) and keeps the value as written in ``node.as_written``. A title over
100 characters, more than 32 tags or a longer content are kept whole. The node is indexed and
searched like any other; :func:`rule_breaks` says what rule each breaks and how to fix it
(``autology doctor`` lists them).

A write through the tools keeps what the person wrote: the values as written go back to the file in
place of their stand-ins (``render_node``), unless the write changed that field (an update that sets
the status replaces the status as written); references and relations that are not valid stay in
the file after the valid ones. A node whose id is not one (missing, or not a UUID v4) is not written
at all: its file would move to the path of the stand-in id (:func:`check_writable`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from autology_mcp.common.errors import StorageError, ValidationError
from autology_mcp.knowledge.models import (
    ANCHORS,
    BAD_TEXT_CHARS,
    CONFIDENCE_MANUAL,
    CONTENT_MAX,
    NODE_STATUSES,
    NODE_TYPES,
    REFERENCES_MAX,
    TAGS_MAX,
    TITLE_MAX,
    KnowledgeNode,
    format_timestamp,
    validate_reference,
)

# Fields whose ``as_written`` entry is the list of the items that are not valid (kept after the
# valid ones on a write); every other entry is the field's whole value as written.
LIST_FIELDS = ("references", "relations")


@dataclass(frozen=True)
class RuleBreak:
    field: str
    rule: str  # what is wrong and what the node is read as
    fix: str  # how to fix it

    def text(self) -> str:
        return f"{self.rule}: {self.fix}"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def rule_breaks(node: KnowledgeNode) -> list[RuleBreak]:
    """Every write rule the node, as read from its file, breaks; [] for a node the tools could write."""
    breaks: list[RuleBreak] = []
    written = node.as_written
    update = f"`autology update {node.id}"
    if "id" in written:
        what = "has no id" if written["id"] is None else f"id {_shown(written['id'])} is not a UUID v4"
        breaks.append(RuleBreak(
            "id", f"{what}; it is read as {node.id} (derived from its path), and the tools do not change it",
            f"put `id: {node.id}` in its front matter (then `autology doctor` says where the file belongs)"))
    if "type" in written:
        what = "has no type" if written["type"] is None else f"type {_shown(written['type'])} is not a node type"
        breaks.append(RuleBreak(
            "type", f"{what}; it is read as {node.type.value}",
            f"set `type:` in the file to one of {', '.join(NODE_TYPES)} (kept as written until then)"))
    if "title" in written:
        what = "has no title" if written["title"] is None else "title holds control or invisible characters"
        breaks.append(RuleBreak("title", f"{what}; it is read as {_shown(node.title)}", f"{update} --title ...`"))
    if len(node.title) > TITLE_MAX:
        breaks.append(RuleBreak(
            "title", f"title is {len(node.title)} characters; the tools write at most {TITLE_MAX}",
            f"shorten it, or {update} --title ...`"))
    if "status" in written:
        breaks.append(RuleBreak(
            "status", f"status {_shown(written['status'])} is not one of {', '.join(NODE_STATUSES)}; it is read as"
            f" {node.status.value}", f"{update} --status ...`"))
    if "confidence" in written:
        breaks.append(RuleBreak(
            "confidence", f"confidence {_shown(written['confidence'])} is not a number from 0.0 to 1.0; it is read as"
            f" {CONFIDENCE_MANUAL}", f"{update} --confidence ...`"))
    for name in ("created", "modified"):
        if name in written:
            breaks.append(RuleBreak(
                name, f"{name} {_shown(written[name])} is not an ISO 8601 timestamp; it is read as"
                f" {format_timestamp(getattr(node, name))}", f"write it like 2026-02-08T12:00:00Z in the file"))
    if "session" in written:
        breaks.append(RuleBreak("session", f"session {_shown(written['session'])} is not an identifier (letters,"
                                " digits, '.', '_', ':', '-'); it is not read", "correct or remove it in the file"))
    if "source" in written:
        breaks.append(RuleBreak("source", f"source {_shown(written['source'])} is not manual, hook_<event> or"
                                " import_<kind>; it is read as manual", "correct or remove it in the file"))
    if "tags" in written:
        breaks.append(RuleBreak("tags", f"tags {_shown(written['tags'])} is not a list of tags; it is not read",
                                f"{update} --tags ...` or correct it in the file"))
    if len(node.tags) > TAGS_MAX:
        breaks.append(RuleBreak("tags", f"has {len(node.tags)} tags; the tools write at most {TAGS_MAX}",
                                f"{update} --tags ...` with fewer"))
    for item in written.get("references") or ():
        breaks.append(RuleBreak(
            "references", f"reference {_shown(item)} is not a relative file path inside the project (optionally"
            " #L10-40 or #symbol); it is kept in the file, unused",
            f"correct or remove it in the file, or {update} --reference ...`"))
    for ref in node.references:
        try:
            validate_reference(ref)
        except ValidationError:  # read by the rule of earlier versions (#a:b): used, quoted, never refused on read
            breaks.append(RuleBreak(
                "references", f"reference {_shown(ref)} has an anchor that is not {ANCHORS}; it is used as written",
                f"correct it in the file, or {update} --reference ...`"))
    if len(node.references) > REFERENCES_MAX:
        breaks.append(RuleBreak("references", f"has {len(node.references)} references; the tools write at most"
                                f" {REFERENCES_MAX}", f"{update} --reference ...` with fewer"))
    for item in written.get("relations") or ():
        breaks.append(RuleBreak(
            "relations", f"relation {_shown(item)} is not a mapping of a relation type and a target node id; it is"
            " kept in the file, not in the graph", "correct or remove it in the file, or `autology relate ...`"))
    if len(node.content) > CONTENT_MAX:
        breaks.append(RuleBreak("content", f"content is {len(node.content):,} characters; the tools write at most"
                                f" {CONTENT_MAX:,}", "split it into several nodes"))
    bad = BAD_TEXT_CHARS.search(node.content)
    if bad:
        breaks.append(RuleBreak("content", f"content holds a control character {bad.group()!r} at offset"
                                f" {bad.start()}", "remove it in the file"))
    if "id" in written:  # the tools refuse to write a node without a valid id: no fix may send a person to them
        breaks = [b if b.field == "id" or "`autology " not in b.fix else
                  RuleBreak(b.field, b.rule, "correct it in the file (the tools change this node once it has its id)")
                  for b in breaks]
    return breaks


def settle(path: str, before: KnowledgeNode, after: KnowledgeNode) -> KnowledgeNode:
    """``after`` (a write's result from ``before``, read from ``path``), with the values as written
    that the write did not replace: a field the write changed is the tool's from then on. A node read
    under a stand-in id is not written (StorageError)."""
    if not before.as_written:
        return after
    if "id" in before.as_written:
        fix = rule_breaks(before)[0].fix
        raise StorageError(path, f"the node file has no valid id, so the tools do not change it: {fix}")
    kept = {
        key: value for key, value in after.as_written.items()
        if key in LIST_FIELDS or getattr(after, key) == getattr(before, key)
    }
    return after if kept == after.as_written else after.replace(as_written=kept)
