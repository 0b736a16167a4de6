"""The knowledge model: node types, statuses, relation types, and the immutable node itself.

Validation rules of the spec (seed 004), each enforced here:
1. id is a UUID v4          2. title is 1-100 characters     3. type is one of 7
4. status is one of 3       5. confidence is within 0.0-1.0   6. tags are lowercase a-z, 0-9, hyphen
7. relation targets exist   (checked by the store, which knows the other nodes)
8. timestamps are ISO 8601  9. references are valid relative file paths inside the project
                            (an anchor: a line span or a symbol name, :data:`ANCHORS`; a node
                            file may keep an older anchor: it still loads)

Every check raises :class:`autology_mcp.common.errors.ValidationError` naming the field.
"""

from __future__ import annotations

import dataclasses
import math
import re
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from autology_mcp.common.errors import ValidationError


class NodeType(StrEnum):
    DECISION = "decision"
    COMPONENT = "component"
    CONVENTION = "convention"
    CONCEPT = "concept"
    PATTERN = "pattern"
    ISSUE = "issue"
    SESSION = "session"


class NodeStatus(StrEnum):
    ACTIVE = "active"
    NEEDS_REVIEW = "needs_review"
    SUPERSEDED = "superseded"


class RelationType(StrEnum):
    AFFECTS = "affects"
    USES = "uses"
    SUPERSEDES = "supersedes"
    RELATES_TO = "relates_to"
    IMPLEMENTS = "implements"
    DEPENDS_ON = "depends_on"
    DERIVED_FROM = "derived_from"


NODE_TYPES = [t.value for t in NodeType]
NODE_STATUSES = [s.value for s in NodeStatus]
RELATION_TYPES = [r.value for r in RelationType]

TITLE_MAX = 100
# The frontmatter key of the fingerprint of the code a node was written against (strings only: the
# staleness rule, autology_mcp/knowledge/trust/fingerprints.py); an extra key like any other, but JSON-safe.
FINGERPRINT_KEY = "code_seen"
CONTENT_MAX = 200_000  # characters; a node is a note, not a document dump
TAGS_MAX = 32
TAG_MAX_LEN = 64
REFERENCES_MAX = 64
RELATION_DESCRIPTION_MAX = 500
# Not a hard limit: the store size the benchmarks cover (docs/benchmarks.md, docs/limits.md). Above it
# everything still works, but start-up without a cache, a full rebuild and queries slow down with size;
# `autology doctor` says so.
NODE_COUNT_GUIDANCE = 10_000

CONFIDENCE_MANUAL = 0.9
CONFIDENCE_HOOK = 0.85
CONFIDENCE_AUTOMATIC = 0.7
CONFIDENCE_MINIMUM = 0.5
RELATION_CONFIDENCE_DEFAULT = 0.8

_UUID4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
# Matched with fullmatch: ``$`` alone also matches before a final newline ('auth\n' passed as a tag).
_TAG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_SOURCE = re.compile(r"^(manual|hook_[a-z0-9_]+|import_[a-z0-9_]+)$")
_SESSION = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
# Characters that have no place in text: C0 controls except tab and newline, DEL, C1 controls,
# lone surrogates, and the Unicode line/paragraph separators that YAML treats as line breaks.
_BAD_TEXT_CHARS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029\ufeff]")
BAD_TEXT_CHARS = _BAD_TEXT_CHARS
# A reference as a node file may hold it: a relative path, optionally with #L10 / #L10-40 or #symbol.
_REFERENCE = re.compile(r"^(?P<path>[^#]+?)(?:#(?P<anchor>L\d+(?:-L?\d+)?|[A-Za-z_][\w.:]*))?$")
# The anchor a capture or an update accepts (issue 38): a line span, or a symbol name as the staleness
# rule finds it (``name`` or ``Class.method``: ASCII identifiers joined by dots). A file written earlier
# or by hand with another anchor still loads (the hooks quote it like any text from the repository).
_ANCHOR = re.compile(r"L\d+(?:-L?\d+)?|[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
ANCHORS = "a line span (#L10, #L10-40, #L10-L40) or a symbol name (an identifier, dotted for Class.method)"


def new_id() -> str:
    return str(uuid.uuid4())


def utc_now() -> datetime:
    """Now, truncated to milliseconds so it survives the round trip through text."""
    now = datetime.now(UTC)
    return now.replace(microsecond=(now.microsecond // 1000) * 1000)


def format_timestamp(value: datetime) -> str:
    """ISO 8601 in UTC with a ``Z``: seconds, plus milliseconds when there are any."""
    value = value.astimezone(UTC)
    if value.microsecond:
        return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


# --------------------------------------------------------------------------------------------
# Field validators: each takes raw input and returns the normalised value, or raises.
# --------------------------------------------------------------------------------------------


def validate_id(value: Any, field: str = "id") -> str:
    if not isinstance(value, str):
        raise ValidationError(field, f"must be a string UUID v4, got {type(value).__name__}")
    candidate = value.strip().lower()
    if not _UUID4.match(candidate):
        shown = value if len(value) <= 60 else value[:57] + "..."
        raise ValidationError(field, f"must be a UUID v4 like 3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f, got {shown!r}")
    return candidate


def title_has_line_break(value: Any) -> bool:
    """Whether a title as given holds a line break inside it (padding and a final newline aside).

    :func:`validate_title` joins its lines into one (a title is one line: in the frontmatter, the
    ``# Title`` heading, links); a capture or an update that does so says it in a warning that shows
    the title as stored (issue 29)."""
    return isinstance(value, str) and len(value.strip().splitlines()) > 1


def validate_title(value: Any) -> str:
    if not isinstance(value, str):
        raise ValidationError("title", f"must be a string, got {type(value).__name__}")
    title = " ".join(value.split())  # one line, single spaces
    if not title:
        raise ValidationError("title", "must not be empty (1-100 characters)")
    if len(title) > TITLE_MAX:
        raise ValidationError("title", f"is {len(title)} characters long; the limit is {TITLE_MAX}")
    if _BAD_TEXT_CHARS.search(title):
        raise ValidationError("title", "contains control or invisible separator characters")
    return title


_CONFLICT = re.compile(r"^<{7}(?: .*)?\n(?:.*\n)*?={7}\n(?:.*\n)*?>{7}(?: .*)?$", re.MULTILINE)


def conflict_line(text: str) -> int | None:
    """The line number where an unresolved git merge conflict starts (``<<<<<<<``, ``=======``,
    ``>>>>>>>`` at the start of lines, in that order), or None."""
    if "<<<<<<<" not in text:
        return None
    match = _CONFLICT.search(text)
    return text.count("\n", 0, match.start()) + 1 if match else None


def validate_content(value: Any) -> str:
    if not isinstance(value, str):
        raise ValidationError("content", f"must be a string of Markdown, got {type(value).__name__}")
    content = value.replace("\r\n", "\n").replace("\r", "\n")
    content = "\n".join(line.rstrip() for line in content.split("\n")).strip("\n")
    if not content.strip():
        raise ValidationError("content", "must not be empty")
    if len(content) > CONTENT_MAX:
        raise ValidationError(
            "content", f"is {len(content)} characters long; the limit is {CONTENT_MAX} (split it into several nodes)"
        )
    bad = _BAD_TEXT_CHARS.search(content)
    if bad:
        raise ValidationError("content", f"contains a control character {bad.group()!r} at offset {bad.start()}")
    line = conflict_line(content)
    if line is not None:
        raise ValidationError("content", f"holds git merge conflict markers (<<<<<<< ... ======= ... >>>>>>>) from line {line}: resolve the merge first")
    return content


def validate_type(value: Any, field: str = "type") -> NodeType:
    try:
        return NodeType(value)
    except ValueError:
        raise ValidationError(field, f"unknown node type {value!r}", NODE_TYPES) from None


def validate_status(value: Any) -> NodeStatus:
    try:
        return NodeStatus(value)
    except ValueError:
        raise ValidationError("status", f"unknown status {value!r}", NODE_STATUSES) from None


def validate_relation_type(value: Any, field: str = "type") -> RelationType:
    try:
        return RelationType(value)
    except ValueError:
        raise ValidationError(field, f"unknown relation type {value!r}", RELATION_TYPES) from None


def validate_confidence(value: Any, field: str = "confidence", minimum: float = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValidationError(field, f"must be a number between 0.0 and 1.0, got {type(value).__name__}")
    number = float(value)
    if math.isnan(number) or not 0.0 <= number <= 1.0:
        raise ValidationError(field, f"must be between 0.0 and 1.0, got {value!r}")
    if number < minimum:
        raise ValidationError(field, f"{number} is below the minimum accepted confidence {minimum}")
    return round(number, 4)


def validate_tags(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise ValidationError("tags", f"must be a list of strings, got {type(value).__name__}")
    if len(value) > TAGS_MAX:
        raise ValidationError("tags", f"has {len(value)} tags; the limit is {TAGS_MAX}")
    tags: list[str] = []
    for tag in value:
        if not isinstance(tag, str):
            raise ValidationError("tags", f"every tag must be a string, got {type(tag).__name__}")
        if not _TAG.fullmatch(tag) or len(tag) > TAG_MAX_LEN:
            suggestion = re.sub(r"[^a-z0-9]+", "-", tag.lower()).strip("-")[:TAG_MAX_LEN]
            hint = f"; try {suggestion!r}" if suggestion and _TAG.fullmatch(suggestion) else ""
            raise ValidationError(
                "tags", f"{tag!r} is not lowercase letters, digits and single hyphens (max {TAG_MAX_LEN}){hint}"
            )
        if tag not in tags:
            tags.append(tag)
    return tuple(tags)


def validate_reference(value: Any, stored: bool = False) -> str:
    """A project-relative file path, optionally ``#L10-40`` or ``#symbol`` (:data:`ANCHORS`). Never
    escapes the root. ``stored``: read from a node file, where the anchor rule of earlier versions holds
    (``#a:b`` too), so that a file written before the rule is not made unreadable."""
    if not isinstance(value, str):
        raise ValidationError("references", f"every reference must be a string, got {type(value).__name__}")
    ref = value.strip().replace("\\", "/")
    path, hashed, anchor = ref.partition("#")
    if hashed and path.strip() and not stored and not _ANCHOR.fullmatch(anchor):
        raise ValidationError("references", f"{value!r}: an anchor after '#' must be {ANCHORS}")
    match = _REFERENCE.fullmatch(ref)
    if not ref or not match or "\n" in ref or _BAD_TEXT_CHARS.search(ref) or len(ref) > 500:
        raise ValidationError("references", f"{value!r} is not a file path (optionally with #L10-40 or #symbol)")
    path = match.group("path").rstrip("/")  # a directory may be named with a trailing slash
    while path.startswith("./"):
        path = path[2:]
    parts = path.split("/")
    if path.startswith("/") or re.match(r"^[A-Za-z]:", path) or ".." in parts or "" in parts or "." in parts:
        raise ValidationError(
            "references", f"{value!r} must be a relative path inside the project (no '..', no absolute path)"
        )
    anchor = match.group("anchor")
    return f"{path}#{anchor}" if anchor else path


def validate_references(value: Any, stored: bool = False) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise ValidationError("references", f"must be a list of file paths, got {type(value).__name__}")
    if len(value) > REFERENCES_MAX:
        raise ValidationError("references", f"has {len(value)} entries; the limit is {REFERENCES_MAX}")
    refs: list[str] = []
    for item in value:
        ref = validate_reference(item, stored)
        if ref not in refs:
            refs.append(ref)
    return tuple(refs)


def validate_source(value: Any) -> str:
    if not isinstance(value, str) or not _SOURCE.fullmatch(value):
        raise ValidationError(
            "source", f"must be 'manual', 'hook_<event>' (e.g. hook_post_commit) or 'import_<kind>', got {value!r}"
        )
    return value


def validate_session(value: Any) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str) or not _SESSION.fullmatch(value):
        raise ValidationError("session", "must be an identifier of letters, digits, '.', '_', ':' or '-' (max 128)")
    return value


def validate_description(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValidationError("description", f"must be a string, got {type(value).__name__}")
    text = " ".join(value.split())
    if len(text) > RELATION_DESCRIPTION_MAX:
        raise ValidationError("description", f"is {len(text)} characters; the limit is {RELATION_DESCRIPTION_MAX}")
    if _BAD_TEXT_CHARS.search(text):
        raise ValidationError("description", "contains control characters")
    return text or None


def parse_timestamp(value: Any, field: str) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            parsed = None
        if parsed is not None:
            return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    raise ValidationError(field, f"must be an ISO 8601 timestamp like 2026-02-08T12:00:00Z, got {value!r}")


# --------------------------------------------------------------------------------------------
# The models. Frozen dataclasses: every operation returns a new object (``replace``). Plain
# dataclasses, not pydantic models, so that reading the store (hooks, CLI) imports nothing heavy; the
# validation rules are the functions above, applied where input enters (service, markdown).
# --------------------------------------------------------------------------------------------


def _as_datetime(value: Any) -> datetime:
    return value if isinstance(value, datetime) else parse_timestamp(value, "timestamp")


@dataclass(frozen=True, slots=True)
class Relation:
    """A typed edge, stored in the frontmatter of its source node."""

    type: RelationType
    target: str
    description: str | None = None
    confidence: float = RELATION_CONFIDENCE_DEFAULT

    def __post_init__(self) -> None:
        object.__setattr__(self, "type", RelationType(self.type))
        object.__setattr__(self, "confidence", float(self.confidence))

    def replace(self, **changes: Any) -> Relation:
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type.value, "target": self.target, "description": self.description,
                "confidence": self.confidence}


@dataclass(frozen=True, slots=True)
class RelationRecord:
    """A relation with its source: one entry of ``graph/index.json``."""

    source: str
    target: str
    type: RelationType
    description: str | None = None
    confidence: float = RELATION_CONFIDENCE_DEFAULT

    def __post_init__(self) -> None:
        object.__setattr__(self, "type", RelationType(self.type))
        object.__setattr__(self, "confidence", float(self.confidence))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RelationRecord:
        """From a graph index entry; TypeError, KeyError or ValueError when it is not one."""
        record = cls(data["source"], data["target"], data["type"], data.get("description"),
                     data.get("confidence", RELATION_CONFIDENCE_DEFAULT))
        if not isinstance(record.source, str) or not isinstance(record.target, str) or not (
            record.description is None or isinstance(record.description, str)
        ):
            raise TypeError("a relation's source, target and description are strings")
        return record


@dataclass(frozen=True, slots=True)
class KnowledgeNode:
    """One node of the knowledge graph; its file is ``.autology/nodes/{type}s/{id}.md``."""

    id: str
    type: NodeType
    title: str
    content: str
    created: datetime
    modified: datetime
    tags: tuple[str, ...] = ()
    relations: tuple[Relation, ...] = ()
    confidence: float = CONFIDENCE_MANUAL
    session: str | None = None
    source: str = "manual"
    references: tuple[str, ...] = ()
    status: NodeStatus = NodeStatus.ACTIVE
    # Frontmatter keys this version does not know: kept as they are and written back on update.
    extra: dict[str, Any] = field(default_factory=dict)
    # What a hand-written file holds where it breaks a rule the tools enforce on writes (an unknown
    # type, a status, a confidence or a date that is not one, a bad id, references or relations that
    # are not valid): field -> the value as written (None: the field is missing), read with a stand-in
    # in the field above (markdown.parse_node), written back in its place (render_node), and listed by
    # ``autology doctor`` with the rule and its fix (knowledge/rules.py). For references and relations,
    # the list of the items that are not valid (the valid ones are in the field).
    as_written: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Coerce what callers commonly pass as plain values (enum strings, lists, ISO timestamps).
        set_ = object.__setattr__
        set_(self, "type", NodeType(self.type))
        set_(self, "status", NodeStatus(self.status))
        set_(self, "created", _as_datetime(self.created))
        set_(self, "modified", _as_datetime(self.modified))
        set_(self, "tags", tuple(self.tags))
        set_(self, "references", tuple(self.references))
        set_(self, "relations", tuple(r if isinstance(r, Relation) else Relation(**r) for r in self.relations))
        set_(self, "confidence", float(self.confidence))

    def replace(self, **changes: Any) -> KnowledgeNode:
        """A copy with some fields changed (what pydantic's ``model_copy(update=...)`` was)."""
        return dataclasses.replace(self, **changes)

    def public_dict(self) -> dict[str, Any]:
        """The node as the tools show it (JSON-ready, timestamps as ISO 8601)."""
        return {
            "id": self.id,
            "type": self.type.value,
            "title": self.title,
            "content": self.content,
            "tags": list(self.tags),
            "relations": [r.to_dict() for r in self.relations],
            "confidence": self.confidence,
            "created": format_timestamp(self.created),
            "modified": format_timestamp(self.modified),
            "session": self.session,
            "source": self.source,
            "references": list(self.references),
            "status": self.status.value,
        }

    def to_json_dict(self) -> dict[str, Any]:
        """Everything, unknown frontmatter keys included: what the cache stores (:meth:`from_json_dict`)."""
        data = {**self.public_dict(), "extra": self.extra}
        if self.as_written:
            data["as_written"] = self.as_written
        return data

    @classmethod
    def from_json_dict(cls, data: dict[str, Any]) -> KnowledgeNode:
        data = dict(data)
        data["relations"] = tuple(Relation(**r) for r in data.get("relations") or ())
        return cls(**data)


def build_relation(target: Any, type_: Any, description: Any = None, confidence: Any = None) -> Relation:
    return Relation(
        type=validate_relation_type(type_),
        target=validate_id(target, "target"),
        description=validate_description(description),
        confidence=validate_confidence(
            RELATION_CONFIDENCE_DEFAULT if confidence is None else confidence, "confidence"
        ),
    )
