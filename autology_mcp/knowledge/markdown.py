"""Node <-> Markdown file text (Obsidian-compatible: YAML frontmatter, ``# Title``, ``## Related`` wikilinks).

``render_node`` writes the spec's layout; ``parse_node`` reads it back, and also reads files people
wrote or edited by hand: missing optional fields get defaults, unknown frontmatter keys are kept in
``node.extra`` and written back, values that break a rule the tools enforce on writes (a long title,
an unknown type, ...) are read with a stand-in and kept as written in ``node.as_written``, written
back in their place (knowledge/rules.py), and only a file that is no node (no front matter, YAML that
does not parse or is hostile, conflict markers) raises :class:`MalformedNodeError` with the reason.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Mapping
from datetime import UTC, date, datetime
from functools import cache, lru_cache
from types import ModuleType
from typing import Any

from autology_mcp.common.errors import ValidationError
from autology_mcp.knowledge.models import (
    BAD_TEXT_CHARS,
    CONFIDENCE_MANUAL,
    NODE_TYPES,
    NodeType,
    conflict_line,
    KnowledgeNode,
    NodeStatus,
    Relation,
    format_timestamp,
    parse_timestamp,
    validate_confidence,
    validate_description,
    validate_id,
    validate_reference,
    validate_relation_type,
    validate_session,
    validate_source,
    validate_status,
    validate_type,
)

KNOWN_KEYS = (
    "id",
    "type",
    "title",
    "tags",
    "confidence",
    "created",
    "modified",
    "session",
    "source",
    "status",
    "relations",
    "references",
)

# Caps on what a node file written by hand (or pulled from a teammate) may hold: docs/limits.md.
MAX_NODE_FILE_BYTES = 4 * 1024 * 1024  # the default; [tool.autology.store] max_node_file_bytes
MAX_FRONTMATTER_DEPTH = 32  # lists and maps nested in the frontmatter
MAX_INDENT = 256  # leading spaces and '- ' markers on one frontmatter line (bounds block nesting)
MAX_EXTRA_BYTES = 64 * 1024  # the unknown frontmatter keys' values, as JSON

_NOT_A_BRACKET = re.compile(r"[^\[\]{}]+")
_LONG_PREFIX = re.compile(r"^[ \t?:-]{%d}" % MAX_INDENT, re.MULTILINE)

_WIKILINK_LINE = re.compile(r"^- \[\[([^\]|#]+)(?:[|#][^\]]*)?\]\]\s*$")
_UUID_LIKE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


class MalformedNodeError(ValueError):
    """A node file that cannot be read as a node; ``reason`` says why."""

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(reason)


class _Timestamp(str):
    """A timestamp string written as a plain YAML scalar (unquoted), as in the spec's example."""


@cache
def _yaml() -> tuple[ModuleType, ModuleType, Any, Any]:
    """(yaml, frontmatter, the dumper, the frontmatter handler), imported on first use: reading the
    store from its cache (hooks, searches) never needs them, and they cost ~20 ms to import."""
    import frontmatter
    import yaml
    from frontmatter.default_handlers import YAMLHandler

    try:  # the C emitter is ~10x faster; fall back to pure Python where libyaml is missing
        base = yaml.CSafeDumper
    except AttributeError:  # pragma: no cover
        base = yaml.SafeDumper

    class Dumper(base):  # type: ignore[misc, valid-type]
        pass

    Dumper.add_representer(_Timestamp, lambda d, v: d.represent_scalar("tag:yaml.org,2002:timestamp", str(v)))

    try:  # the C parser is ~10x faster than the pure-Python one
        base_loader = yaml.CSafeLoader
    except AttributeError:  # pragma: no cover
        base_loader = yaml.SafeLoader

    class Loader(base_loader):  # type: ignore[misc, valid-type]
        """The safe loader, refusing aliases: a few lines of nested aliases (a "billion laughs")
        expand to gigabytes once the node is copied or serialised. A node needs none."""

        def construct_object(self, node: Any, deep: bool = False) -> Any:
            if node in self.constructed_objects:  # the second use of one node: an alias (*name)
                raise yaml.constructor.ConstructorError(
                    None, None, "YAML aliases (*name) are not allowed in a node's frontmatter", node.start_mark
                )
            return super().construct_object(node, deep)

    class Handler(YAMLHandler):
        def load(self, fm: str, **kwargs: object) -> Any:
            problem = _shape_problem(fm)
            if problem:
                raise MalformedNodeError(problem)
            return yaml.load(fm, Loader=Loader)  # noqa: S506 (a safe loader)

    return yaml, frontmatter, Dumper, Handler()


def _shape_problem(fm: str) -> str | None:
    """Why the frontmatter text is refused before YAML sees it, or None.

    libyaml recurses once per nesting level and crashes the process (a segfault, not an exception)
    at some tens of thousands of levels, and parses deep flow nesting in quadratic time: so the
    depth is bounded on the raw text first. Flow nesting is bounded by counting every bracket;
    block nesting needs at least one leading space or '- ' per level, so a bounded line prefix
    bounds it.
    """
    if _LONG_PREFIX.search(fm):
        return f"frontmatter nested or indented more than {MAX_INDENT} characters deep"
    if fm.count("[") + fm.count("{") <= MAX_FRONTMATTER_DEPTH:
        return None
    depth = deepest = 0
    for char in _NOT_A_BRACKET.sub("", fm):  # every bracket counts, quoted or not: a bound, not a parse
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth = max(depth - 1, 0)
    if deepest > MAX_FRONTMATTER_DEPTH:
        return f"frontmatter nested {deepest} levels deep (at most {MAX_FRONTMATTER_DEPTH})"
    return None


def _yaml_dump(data: dict[str, Any]) -> str:
    yaml, _, dumper, _ = _yaml()
    return yaml.dump(data, Dumper=dumper, sort_keys=False, allow_unicode=True, default_flow_style=False, width=10_000)


# --------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------


def frontmatter_dict(node: KnowledgeNode) -> dict[str, Any]:
    """The frontmatter in the spec's key order, then any unknown keys the file had."""
    data: dict[str, Any] = {
        "id": node.id,
        "type": node.type.value,
        "title": node.title,
        "tags": list(node.tags),
        "confidence": node.confidence,
        "created": _Timestamp(format_timestamp(node.created)),
        "modified": _Timestamp(format_timestamp(node.modified)),
    }
    if node.session:
        data["session"] = node.session
    data["source"] = node.source
    data["status"] = node.status.value
    data["relations"] = [
        {
            "type": r.type.value,
            "target": r.target,
            **({"description": r.description} if r.description else {}),
            "confidence": r.confidence,
        }
        for r in node.relations
    ]
    data["references"] = list(node.references)
    data["aliases"] = aliases(node)
    for key, value in node.as_written.items():  # what a person wrote that breaks a write rule (rules.py)
        if key in ("references", "relations"):
            data[key] = [*data[key], *value]
        elif value is not None:
            data[key] = value
    for key, value in node.extra.items():
        if key not in data:
            data[key] = value
    return data


def _own_aliases(value: Any, title: str) -> list[Any]:
    """The aliases a person added (``value`` as the frontmatter holds it), the title left out."""
    return [a for a in (value if isinstance(value, list) else [value]) if a != title]


def aliases(node: KnowledgeNode) -> list[str]:
    """Obsidian's ``aliases``: the title first (its quick switcher and link completion then find the
    node by name, though its file is ``<id>.md``), then any alias a person added by hand."""
    own = _own_aliases(node.extra["aliases"], node.title) if "aliases" in node.extra else []
    return [node.title, *own]


def _link_text(title: str) -> str:
    """A title as the display text of a ``[[id|text]]`` link (brackets and pipes would end the link)."""
    return title.replace("[", "(").replace("]", ")").replace("|", "/")


def related_section(node: KnowledgeNode, titles: Mapping[str, str] | None = None) -> str:
    """``## Related``: a wikilink per related node, ``[[<id>|<title>]]`` when its title is known (the
    link still resolves by the file name; Obsidian shows the title)."""
    targets = list(dict.fromkeys(r.target for r in node.relations))
    if not targets:
        return ""
    titles = titles or {}
    return "## Related\n" + "".join(related_line(t, titles.get(t)) for t in targets)


def related_line(target: str, title: str | None) -> str:
    """One line of ``## Related``: the link to ``target``, with its title when known."""
    return f"- [[{target}|{_link_text(title)}]]\n" if title else f"- [[{target}]]\n"


def _relations_end(text: bytes, at: int | None) -> tuple[int, int] | None:
    """Where, in ``text`` (a :func:`render_node` text, UTF-8) the relations list starts (its key's
    line break) and ends (``at`` when a previous splice said so; else the ``references`` key that
    follows it); None when ``text`` is not shaped so."""
    start = text.find(b"\nrelations:\n")
    if start < 0:
        return None
    if at is None:
        end = text.find(b"\nreferences:", start)
        if end < 0 or not text.endswith(b"\n") or b"\n## Related\n" not in text:
            return None
        at = end + 1
    return start, at


def with_relation(text: bytes, relation: Relation, link: str | None, at: int | None = None) -> tuple[bytes, int, int] | None:
    """The text :func:`render_node` gives a node with ``relation`` added at the end of its relations,
    from ``text``, what it gave before (UTF-8, with at least one relation): the relation's item put
    before the ``references`` key that follows the relations list (at ``at``, a byte offset, when a
    previous call said where), and ``link`` (a :func:`related_line`, or None when the target is
    linked already) at the end of ``## Related``, the file's last section. The other links keep the
    titles they were written with. Returns (the text, where the next item goes, the bytes added);
    None when ``text`` is not shaped so. The text is put together in one copy (a hub's is 1.4 MB
    at 10,000 relations)."""
    block = _relations_end(text, at)
    if block is None:
        return None
    at = block[1]
    item = _relation_yaml(relation.type.value, relation.target, relation.description, relation.confidence).encode()
    tail = link.encode() if link else b""
    view = memoryview(text)
    return b"".join((view[:at], item, view[at:], tail)), at + len(item), len(item) + len(tail)


def with_relation_replaced(
    text: bytes, old: Relation, new: Relation, at: int | None = None
) -> tuple[bytes, int, int] | None:
    """:func:`with_relation`'s counterpart for a relation the node has: ``old``'s item in ``text``
    (the same type and target, so at most one) replaced by ``new``'s, in its place, as a full render
    of the node with ``new`` instead of ``old`` gives it (the link to the target stays). Returns (the
    text, where the next item goes, the bytes added, negative when fewer); None when ``text`` is not
    shaped so or has no such item."""
    block = _relations_end(text, at)
    if block is None:
        return None
    start, at = block
    # An item starts a line ("- type: "); its description is one line (validate_description), and
    # the items of one source have distinct (type, target), its first two lines.
    was = b"\n" + _relation_yaml(old.type.value, old.target, old.description, old.confidence).encode()
    found = text.find(was, start, at)
    if found < 0:
        return None
    item = _relation_yaml(new.type.value, new.target, new.description, new.confidence).encode()
    view = memoryview(text)
    added = len(item) - (len(was) - 1)
    return b"".join((view[: found + 1], item, view[found + len(was) :])), at + added, added


@lru_cache(maxsize=65_536)
def _relation_yaml(type: str, target: str, description: str | None, confidence: float) -> str:
    """One relation as the list item ``yaml.dump`` writes for it (cached: a hub node's file is
    rendered again on every relate, and its other relations have not changed)."""
    item: dict[str, Any] = {"type": type, "target": target}
    if description:
        item["description"] = description
    item["confidence"] = confidence
    return _yaml_dump([item])


def _frontmatter_text(node: KnowledgeNode) -> str:
    """``yaml.dump(frontmatter_dict(node))``, with the relations list put together from cached items:
    rendering a node costs the same whatever its number of relations, less a string join."""
    data = frontmatter_dict(node)
    if not node.relations or "relations" in node.as_written:
        return _yaml_dump(data)
    data["relations"] = []
    text = _yaml_dump(data)
    items = "".join(_relation_yaml(r.type.value, r.target, r.description, r.confidence) for r in node.relations)
    head, found, tail = text.partition("\nrelations: []\n")  # a top-level key: only it starts a line so
    assert found, "the relations key is always written"
    return f"{head}\nrelations:\n{items}{tail}"


def render_node(node: KnowledgeNode, titles: Mapping[str, str] | None = None) -> str:
    """The full text of the node's file; ``titles`` (id -> title of related nodes) labels the links."""
    parts = ["---\n", _frontmatter_text(node), "---\n\n", f"# {node.title}\n\n"]
    if node.content:
        parts.append(node.content + "\n")
    related = related_section(node, titles)
    if related:
        parts.append("\n" + related)
    return "".join(parts)


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------


_LINK_TITLE = re.compile(r"^- \[\[([0-9a-fA-F-]{36})\|([^\]]*)\]\]\s*$", re.MULTILINE)


def link_titles(text: str) -> dict[str, str]:
    """id -> display text of the ``[[id|title]]`` links in a node file's text."""
    return {m.group(1).lower(): m.group(2) for m in _LINK_TITLE.finditer(text)}


def _body_content(body: str, title: str, relation_targets: set[str]) -> str:
    """The node's content: the body without the generated ``# Title`` line and ``## Related`` list."""
    text = body.replace("\r\n", "\n").replace("\r", "\n").strip("\n")
    lines = text.split("\n")
    if lines and lines[0].startswith("# ") and " ".join(lines[0][2:].split()) == title:
        lines = lines[1:]
    return "\n".join(line.rstrip() for line in _without_generated_related(lines, relation_targets)).strip("\n")


def without_title_heading(content: str, title: str) -> str:
    """``content`` without a first line ``# <title>``: the file format writes that heading itself, and reading
    takes one away, so content taken from a node's file (heading and all) is stored once, not twice."""
    first, _, rest = content.lstrip("\n").partition("\n")
    if first.startswith("# ") and " ".join(first[2:].split()) == " ".join(title.split()):
        return rest.strip("\n")
    return content


def without_generated_related(content: str, relation_targets: set[str]) -> str:
    """``content`` without a trailing ``## Related`` list the file format generates (as ``autology
    show`` prints it): content edited from a shown node keeps one list, not two."""
    lines = content.split("\n")
    kept = _without_generated_related(lines, relation_targets)
    return content if len(kept) == len(lines) else "\n".join(kept).rstrip()


def _without_generated_related(lines: list[str], relation_targets: set[str]) -> list[str]:
    """A trailing "## Related" section made only of wikilinks to this node's relation targets is
    generated: drop it. Links to anything else were written by the author: they are content."""
    for index in range(len(lines) - 1, -1, -1):
        if lines[index].strip() == "## Related":
            tail = [line for line in lines[index + 1 :] if line.strip()]
            links = [_WIKILINK_LINE.match(line.strip()) for line in tail]
            if tail and all(
                m and _UUID_LIKE.match(m.group(1).strip()) and m.group(1).strip().lower() in relation_targets
                for m in links
            ):
                return lines[:index]
            break
        if lines[index].strip() and not _WIKILINK_LINE.match(lines[index].strip()):
            break
    return lines


def _tags_from_file(value: Any, written: dict[str, Any]) -> tuple[str, ...]:
    """Tags as written by hand: a list or a comma-separated string; normalised to the tag rule.
    Anything else is kept in ``written`` and read as no tags."""
    if value is None:
        return ()
    if isinstance(value, str):
        value = [v for v in re.split(r"[,\s]+", value) if v]
    if not isinstance(value, list):
        written["tags"] = value
        return ()
    tags: list[str] = []
    for item in value:
        tag = re.sub(r"[^a-z0-9]+", "-", str(item).lower().lstrip("#")).strip("-")[:64]
        if tag and tag not in tags:  # compared once cut: two long tags may share their first 64 characters
            tags.append(tag)
    return tuple(tags)


def _relations_from_file(value: Any, written: dict[str, Any]) -> tuple[Relation, ...]:
    """The valid relations; the items that are not one are kept in ``written``."""
    if value is None:
        return ()
    relations: dict[tuple[str, str], Relation] = {}
    invalid: list[Any] = []
    for position, item in enumerate(value if isinstance(value, list) else [value], 1):
        try:
            if not isinstance(item, dict):
                raise ValidationError(f"relations[{position}]", "must be a mapping with type and target")
            relation = Relation(
                type=validate_relation_type(item.get("type"), f"relations[{position}].type"),
                target=validate_id(str(item.get("target", "")), f"relations[{position}].target"),
                description=validate_description(item.get("description")),
                confidence=validate_confidence(item.get("confidence", 0.8), f"relations[{position}].confidence"),
            )
        except ValidationError:
            invalid.append(item)
            continue
        relations[(relation.target, relation.type.value)] = relation  # a later duplicate wins
    if invalid:
        written["relations"] = invalid
    return tuple(relations.values())


def _references_from_file(value: Any, written: dict[str, Any]) -> tuple[str, ...]:
    """The valid references; the items that are not one are kept in ``written``."""
    if value in (None, ""):
        return ()
    refs: list[str] = []
    invalid: list[Any] = []
    for item in value if isinstance(value, list) else [value]:
        try:
            ref = validate_reference(item, stored=True)  # an anchor written before the capture rule still loads
        except ValidationError:
            invalid.append(item)
            continue
        if ref not in refs:
            refs.append(ref)
    if invalid:
        written["references"] = invalid
    return tuple(refs)


# The nearest node type of a type text no node has (lower case, a final 's' dropped): read so, and
# kept as written (knowledge/rules.py).
_NEAREST_TYPE = {
    "adr": "decision", "bug": "issue", "problem": "issue", "incident": "issue", "rule": "convention",
    "guideline": "convention", "standard": "convention", "module": "component", "service": "component",
    "system": "component", "practice": "pattern", "recipe": "pattern",
}


def _stand_in_type(raw: Any, path: str | None) -> NodeType:
    """What a node with type ``raw`` (not a node type) is read as: the type its text names (in
    another case, plural, or a near word), else the type of the folder it is in, else concept."""
    text = str(raw).strip().lower() if isinstance(raw, str) else ""
    for candidate in (text, text[:-1] if text.endswith("s") else text):
        candidate = _NEAREST_TYPE.get(candidate, candidate)
        if candidate in NODE_TYPES:
            return NodeType(candidate)
    if path:
        parts = path.replace("\\", "/").split("/")
        folder = parts[-2] if len(parts) > 1 else ""
        if folder.endswith("s") and folder[:-1] in NODE_TYPES:
            return NodeType(folder[:-1])
    return NodeType.CONCEPT


def stand_in_id(path: str) -> str:
    """The id a node file without a valid one is read under: a UUID v4 derived from its path."""
    digest = hashlib.sha256(f"autology-node-file:{path}".encode()).digest()[:16]
    return str(uuid.UUID(bytes=digest, version=4))


def _stand_in_title(body: str, path: str | None) -> str:
    """The title of a node file without one: its first ``# `` heading, else its file name."""
    for line in body.replace("\r\n", "\n").split("\n"):
        if line.strip():
            if line.startswith("# "):
                title = " ".join(BAD_TEXT_CHARS.sub("", line[2:]).split())
                if title:
                    return title
            break
    if path:
        stem = path.replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".md")
        title = " ".join(BAD_TEXT_CHARS.sub("", stem.replace("-", " ").replace("_", " ")).split())
        if title:
            return title
    return "Untitled"


def parse_node(text: str, fallback_time: datetime | None = None, path: str | None = None) -> KnowledgeNode:
    """Read a node file's text. Raises :class:`MalformedNodeError` with a reason when it is no node:
    no front matter, YAML that does not parse (or is hostile: too deep, aliases, too big), conflict
    markers. Values that break a write rule are read with a stand-in and kept as written in
    ``node.as_written`` (knowledge/rules.py); a missing or bad id needs ``path`` (the file's
    root-relative path) to derive one from, and ``fallback_time`` stands in for a missing or bad date."""
    if not text.lstrip("\ufeff").startswith("---"):
        raise MalformedNodeError("no YAML frontmatter (the file must start with a '---' line)")
    line = conflict_line(text.replace("\r\n", "\n"))
    if line is not None:
        raise MalformedNodeError(f"unresolved git merge conflict at line {line} (<<<<<<< ... >>>>>>>): resolve the merge")
    yaml, frontmatter, _, handler = _yaml()
    try:
        metadata, body = frontmatter.parse(text.lstrip("\ufeff"), handler=handler)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise MalformedNodeError(f"invalid YAML frontmatter{where}: {problem}") from None
    except MalformedNodeError:
        raise
    except RecursionError:
        raise MalformedNodeError(f"frontmatter nested too deeply (at most {MAX_FRONTMATTER_DEPTH} levels)") from None
    except ValueError as exc:
        raise MalformedNodeError(f"cannot split frontmatter: {exc}") from None
    if not metadata:
        raise MalformedNodeError("empty or unterminated frontmatter")
    written: dict[str, Any] = {}

    def missing(key: str) -> bool:
        value = metadata.get(key)
        return value is None or (isinstance(value, str) and not value.strip())

    raw_id = metadata.get("id")
    try:
        if missing("id"):
            raise ValidationError("id", "missing")
        node_id = validate_id(str(raw_id))
    except ValidationError as exc:
        if path is None:
            raise MalformedNodeError("missing required field 'id'" if missing("id") else str(exc)) from None
        node_id = stand_in_id(path)
        written["id"] = None if missing("id") else raw_id
    try:
        node_type = validate_type(metadata.get("type"))
    except ValidationError:
        node_type = _stand_in_type(metadata.get("type"), path)
        written["type"] = None if missing("type") else metadata["type"]
    if missing("title"):
        title = _stand_in_title(body, path)
        written["title"] = None
    else:
        title = " ".join(str(metadata["title"]).split())
        if BAD_TEXT_CHARS.search(title):
            written["title"] = metadata["title"]
            title = " ".join(BAD_TEXT_CHARS.sub("", title).split()) or _stand_in_title(body, path)
    try:
        confidence = validate_confidence(metadata.get("confidence", CONFIDENCE_MANUAL))
    except ValidationError:
        confidence = CONFIDENCE_MANUAL
        written["confidence"] = metadata.get("confidence")
    modified = _timestamp(metadata, "modified", fallback_time, written)
    created = _timestamp(metadata, "created", modified, written)
    session = metadata.get("session")
    try:
        session = validate_session(str(session)) if session not in (None, "") else None
    except ValidationError:
        written["session"], session = session, None
    source = metadata.get("source") or "manual"
    try:
        source = validate_source(source)
    except ValidationError:
        written["source"], source = source, "manual"
    try:
        status = validate_status(metadata.get("status") or NodeStatus.ACTIVE.value)
    except ValidationError:
        written["status"], status = metadata.get("status"), NodeStatus.ACTIVE
    references = _references_from_file(metadata.get("references"), written)
    relations = _relations_from_file(metadata.get("relations"), written)
    tags = _tags_from_file(metadata.get("tags"), written)
    content = _body_content(body, title, {r.target for r in relations})
    extra = {k: v for k, v in metadata.items() if k not in KNOWN_KEYS}
    if "aliases" in extra:  # the title is written there by render_node; only a person's own aliases are kept
        own = _own_aliases(extra.pop("aliases"), title)
        if own:
            extra["aliases"] = own
    if extra:
        size = len(json.dumps(extra, ensure_ascii=False, default=str))
        if size > MAX_EXTRA_BYTES:
            raise MalformedNodeError(
                f"unknown frontmatter keys ({', '.join(map(str, list(extra)[:5]))}) hold {size:,} bytes"
                f" (at most {MAX_EXTRA_BYTES:,})"
            )
    return KnowledgeNode(
        id=node_id,
        type=node_type,
        title=title,
        content=content,
        tags=tags,
        relations=relations,
        confidence=confidence,
        created=created,
        modified=modified,
        session=session,
        source=source,
        references=references,
        status=status,
        extra=extra,
        as_written=written,
    )


def _timestamp(metadata: Mapping[str, Any], key: str, fallback: datetime | None, written: dict[str, Any]) -> datetime:
    """``metadata[key]`` as a timestamp; ``fallback`` when it is missing, or not one (kept in ``written``)."""
    raw = metadata.get(key)
    if isinstance(raw, date) and not isinstance(raw, datetime):  # a date alone: its midnight, UTC
        return datetime(raw.year, raw.month, raw.day, tzinfo=UTC)
    problem = f"missing '{key}' timestamp"
    if raw not in (None, ""):
        try:
            return parse_timestamp(raw, key)
        except ValidationError as exc:
            written[key], problem = raw, str(exc)
    if fallback is None:
        raise MalformedNodeError(problem)
    return fallback


# CommonMark: a fence is a run of 3 or more backticks or tildes indented up to 3 spaces; a backtick
# fence's info string holds no backtick (```` ```x``` ```` is inline code, not a fence).
_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}(?=[^`]*$)|~{3,})")
_FENCE_CLOSE = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*$")


def mask_fenced_code(text: str) -> str:
    """``text`` with every line of a fenced code block, its fences included, blanked (spaces), its
    length and line breaks kept: a heading, a label or an ``@import`` searched for in the result is
    never code, and the offsets found index ``text`` itself (issue 29).

    CommonMark's rule: an opening fence (see ``_FENCE_OPEN``) is closed by a line of the same
    character, at least as long, indented up to 3 spaces, with nothing but spaces or tabs after it;
    an unclosed fence runs to the end of the text. Fences inside block quotes, and the lazy ends of
    list items, are not followed."""
    if "```" not in text and "~~~" not in text:
        return text
    out: list[str] = []
    fence = ""  # the opening run of the block we are in, or ""
    for line in text.split("\n"):
        if not fence:
            opening = _FENCE_OPEN.match(line)
            if not opening:
                out.append(line)
                continue
            fence = opening.group(1)
        else:
            closing = _FENCE_CLOSE.match(line)
            if closing and closing.group(1)[0] == fence[0] and len(closing.group(1)) >= len(fence):
                fence = ""
        out.append(" " * len(line))
    return "\n".join(out)
