"""The seven knowledge operations of the spec, as plain Python over the node store.

The MCP tools and the CLI are thin wrappers over :class:`Autology`. Every method validates its
input first (raising ``ValidationError`` before anything is written), then does its work under
the store's write lock, and returns a pydantic result whose shape is the spec's tool output.
"""

from __future__ import annotations

from pathlib import Path
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from autology_mcp.common.errors import NotFoundError, ValidationError
from autology_mcp.knowledge.adr import ADR_TEMPLATE, missing_adr_sections
from autology_mcp.knowledge.models import (
    CONFIDENCE_AUTOMATIC,
    CONFIDENCE_HOOK,
    CONFIDENCE_MANUAL,
    CONFIDENCE_MINIMUM,
    NODE_STATUSES,
    NODE_TYPES,
    RELATION_TYPES,
    KnowledgeNode,
    NodeStatus,
    NodeType,
    Relation,
    build_relation,
    new_id,
    title_has_line_break,
    utc_now,
    validate_confidence,
    validate_content,
    validate_id,
    validate_references,
    validate_relation_type,
    validate_session,
    validate_source,
    validate_status,
    validate_tags,
    validate_title,
    validate_type,
)
from autology_mcp.knowledge.markdown import without_generated_related, without_title_heading
from autology_mcp.knowledge.references import reference_path
from autology_mcp.knowledge.search import Similarity, search_nodes
from autology_mcp.knowledge.store import NodeStore
from autology_mcp.knowledge.rules import rule_breaks

QUERY_LIMIT_DEFAULT = 10
QUERY_LIMIT_MAX = 100


# ------------------------------------------------------------------------------------------
# Result shapes (the spec's tool outputs)
# ------------------------------------------------------------------------------------------


class RelationOut(BaseModel):
    type: str
    target: str
    description: str | None = None
    confidence: float


class NodeOut(BaseModel):
    """A KnowledgeNode as the tools return it."""

    id: str
    type: str
    title: str
    content: str
    tags: list[str]
    relations: list[RelationOut]
    confidence: float
    created: str
    modified: str
    session: str | None = None
    source: str
    references: list[str]
    status: str

    @classmethod
    def of(cls, node: KnowledgeNode) -> NodeOut:
        return cls.model_validate(node.public_dict())


def _exists(path: Path) -> bool:
    """Whether ``path`` exists; a name the file system cannot even look up (too long) does not."""
    try:
        return path.exists()
    except OSError:
        return False


class CaptureResult(BaseModel):
    id: str = Field(description="The new node's UUID v4")
    type: str = Field(description="The node type, as given or as classified")
    confidence: float = Field(description="0.9 manual, 0.85 hook-confirmed, 0.7 automatic classification")
    warnings: list[str] = Field(
        default_factory=list,
        description="What the capture accepted but you may want to fix: an unsure classification (stored as "
        "needs_review), a reference to a file that does not exist, a title another node already has, a title "
        "given with line breaks (stored joined into one line, shown)",
    )


QUERY_MAX_CHARS = 24_000  # of node content per autology_query answer: ~6k tokens
QUERY_MIN_CHARS = 1_000
CUT_MARKER = "\n\n…[cut: {rest:,} more characters of {total:,}; read the whole node with the MCP resource " \
    "autology://node/{id} or `autology show {id}`]"


def fit_contents(contents: list[tuple[str, str]], max_chars: int) -> list[str]:
    """The contents of (node id, content) pairs, fitted into ``max_chars`` characters in all.

    Short contents stay whole; the long ones share what is left equally (each content is cut to the
    same length, the largest that fits), at a line end where one is near, and end with a marker that
    says how much was cut and how to read the whole node. Within the budget, nothing changes."""
    lengths = [len(c) for _, c in contents]
    if sum(lengths) <= max_chars:
        return [c for _, c in contents]
    remaining, cap = max_chars, 0
    for i, length in enumerate(sorted(lengths)):
        share = remaining // (len(lengths) - i)
        if length > share:
            cap = share
            break
        remaining -= length
    out = []
    for node_id, content in contents:
        if len(content) <= cap:
            out.append(content)
            continue
        marker_room = len(CUT_MARKER.format(rest=len(content), total=len(content), id=node_id))
        keep = max(cap - marker_room, 0)
        line_end = content.rfind("\n", 0, keep)
        if line_end > keep * 0.8:
            keep = line_end
        kept = content[:keep].rstrip()
        out.append(kept + CUT_MARKER.format(rest=len(content) - len(kept), total=len(content), id=node_id))
    return out


class QueryHit(BaseModel):
    node: NodeOut
    score: float | None = Field(
        description="Relevance from 0 to 1; null without search text: the nodes are then the most recently "
        "modified first (node.modified), a listing that ranks nothing"
    )


class StatusResult(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    totalNodes: int
    nodesByType: dict[str, int]
    nodesByStatus: dict[str, int]
    totalRelations: int
    relationsByType: dict[str, int]
    malformedFiles: list[dict[str, str]] = Field(
        default_factory=list, description="Node files that could not be read (path and reason); they are skipped"
    )
    retrieval: dict[str, Any] | None = Field(
        default=None,
        description="Counters of search verdicts (grounded, weak, ambiguous, no_evidence) and claim-check "
        "outcomes (supported, unsupported, unresolved), with rates; see autology_mcp/retrieval/ledger.py "
        "(filled in by retrieval.ledger.status_with_counters: the knowledge graph does not count searches); "
        "and `semantic`: whether semantic recall (an optional extra) is on here, its model, how many session "
        "turns and knowledge nodes have vectors, whether its files are missing, and whether the hooks use the vectors now (and why not)",
    )


# ------------------------------------------------------------------------------------------
# The operations
# ------------------------------------------------------------------------------------------


def _instruction_warnings(node: KnowledgeNode) -> list[str]:
    """Text that addresses the agent with instructions (:mod:`autology_mcp.knowledge.trust.untrusted`): stored,
    but the hooks hold it back until a person reviews it."""
    from autology_mcp.knowledge.trust.untrusted import instruction_flags, node_text

    flags = instruction_flags(node_text(node.title, node.content))
    if not flags:
        return []
    return [f"its text addresses the agent with instructions ({flags[0].text()}): it is stored, but the hooks do not "
            "inject it unasked until a person reviews it; write what the project "
            "decided or does, not orders to an assistant"]


def _joined_title_warning(title: str) -> str:
    """Said when the title given held line breaks (:func:`title_has_line_break`); shows the title as stored."""
    return (
        f"the title held line breaks; a title is one line, so it is stored as {title!r}: change it with "
        "autology_update (`autology update` on the command line) if you meant another, and put longer text in "
        "the content"
    )


def _adr_error(missing: list[str]) -> ValidationError:
    return ValidationError(
        "content",
        f"a decision must be written as an ADR; missing section(s): {', '.join(missing)}. "
        f"Use this template:\n\n{ADR_TEMPLATE}",
    )


def _with_fingerprint(root: Path, node: KnowledgeNode) -> KnowledgeNode:
    """The node with the fingerprint of the code it is written against (staleness), or without one
    outside git: a stale fingerprint would be void anyway (it holds the hash of what the node said)."""
    from autology_mcp.knowledge.trust.fingerprints import FINGERPRINT, fingerprint

    extra = {k: v for k, v in node.extra.items() if k != FINGERPRINT}
    seen = fingerprint(root, node.title, node.content, node.references) if node.references else None
    if seen is not None:
        extra[FINGERPRINT] = seen
    return node.replace(extra=extra)


class Autology:
    """The knowledge graph of one project."""

    def __init__(self, store: NodeStore):
        self.store = store

    @classmethod
    def open(cls, root: Path | str, reconcile: bool = True, verify: bool = True) -> Autology:
        store = NodeStore(root, verify=verify)
        store.init()
        if reconcile:
            store.refresh()  # every file checked, unless a live watcher follows them (store.refresh)
        return cls(store)

    def close(self) -> None:
        self.store.close()

    # ---------------------------------------------------------------- capture

    def capture(
        self,
        title: Any,
        content: Any,
        type: Any = None,
        tags: Any = None,
        references: Any = None,
        session: Any = None,
        source: Any = "manual",
        confidence: Any = None,
        status: Any = None,
    ) -> CaptureResult:
        """Create a node; classify its type when none is given."""
        given_title, title = title, validate_title(title)
        content = without_title_heading(validate_content(content), title)  # the file writes the heading itself
        tag_list = validate_tags(tags)
        refs = validate_references(references)
        session_id = validate_session(session)
        source = validate_source(source or "manual")
        node_status = validate_status(status or "active")
        warnings: list[str] = [_joined_title_warning(title)] if title_has_line_break(given_title) else []
        if type is not None and type != "":
            node_type = validate_type(type)
            default_confidence = CONFIDENCE_HOOK if source.startswith("hook_") else CONFIDENCE_MANUAL
        else:
            from autology_mcp.knowledge.classify import classify, fallback_type  # only a capture without a type needs it

            guess = classify(title, content)
            node_type = guess.type
            if not guess.clear:
                node_type = fallback_type(guess)
                if status is None:
                    node_status = NodeStatus.NEEDS_REVIEW
                top = ", ".join(f"{t} {s:g}" for t, s in sorted(guess.scores.items(), key=lambda kv: -kv[1])[:3])
                warnings.append(
                    f"the type was unclear from the title and content (signals: {top}), so this node is stored as "
                    f"{node_type.value} with status {node_status.value}: give `type` to choose, or change it "
                    "with autology_update (`autology update` on the command line)"
                )
            default_confidence = CONFIDENCE_AUTOMATIC
        node_confidence = validate_confidence(
            default_confidence if confidence is None else confidence, "confidence", minimum=CONFIDENCE_MINIMUM
        )
        if node_type is NodeType.DECISION:
            missing = missing_adr_sections(content)
            if missing:
                raise _adr_error(missing)
        now = utc_now()
        node = KnowledgeNode(
            id=new_id(),
            type=node_type,
            title=title,
            content=content,
            tags=tag_list,
            confidence=node_confidence,
            created=now,
            modified=now,
            session=session_id,
            source=source,
            references=refs,
            status=node_status,
        )
        node = _with_fingerprint(self.store.root, node)
        warnings += self._input_warnings(node.id, title, refs) + _instruction_warnings(node)
        self.store.create(node)
        return CaptureResult(id=node.id, type=node.type.value, confidence=node.confidence, warnings=warnings)

    def _input_warnings(self, node_id: str, title: str | None, references: list[str] | None) -> list[str]:
        """Mistakes a capture or update accepts but says: references to files that do not exist
        under the project root, a title another node already has (case aside)."""
        out = []
        if title is not None:
            others = [(i, t) for i, t in self.store.index.ids_with_title(title, 4) if i != node_id]
            if others:
                named = ", ".join(f"{i} ({t!r})" for i, t in others[:3])
                out.append(f"another node already has this title: {named}; update that node instead, or choose a "
                           "distinct title so the two can be told apart")
        for ref in references or []:
            path = reference_path(ref)
            if path and not _exists(self.store.root / path):
                out.append(f"reference {ref!r}: no such file or folder under the project root {str(self.store.root)!r}")
        return out

    # ---------------------------------------------------------------- query and status

    def query(
        self, query: Any = None, type: Any = None, tags: Any = None, limit: Any = None, max_chars: Any = None,
        dense: Callable[[str], Similarity | None] | None = None,
    ) -> list[QueryHit]:
        """Ranked nodes, their contents fitted into ``max_chars`` characters in all (:func:`fit_contents`);
        ``dense``: the records' vectors when semantic recall is on (``search_nodes``; the tool and the CLI
        pass :func:`autology_mcp.semantic.nodes.dense_for`)."""
        if query is not None and not isinstance(query, str):
            raise ValidationError("query", f"must be a string, got {query.__class__.__name__}")
        node_type = validate_type(type).value if type not in (None, "") else None
        tag_filter = validate_tags(tags)
        if limit is None:
            limit = QUERY_LIMIT_DEFAULT
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= QUERY_LIMIT_MAX:
            raise ValidationError("limit", f"must be a whole number from 1 to {QUERY_LIMIT_MAX}, got {limit!r}")
        if max_chars is None:
            max_chars = QUERY_MAX_CHARS
        if isinstance(max_chars, bool) or not isinstance(max_chars, int) or not QUERY_MIN_CHARS <= max_chars <= 10_000_000:
            raise ValidationError(
                "max_chars", f"must be a whole number of characters from {QUERY_MIN_CHARS} up, got {max_chars!r}"
            )
        hits = search_nodes(self.store.index, query or "", node_type, tag_filter, limit, dense)
        contents = fit_contents([(h.node.id, h.node.content) for h in hits], max_chars)
        return [
            QueryHit(node=NodeOut.of(h.node).model_copy(update={"content": content}), score=h.score)
            for h, content in zip(hits, contents)
        ]

    def status(self) -> StatusResult:
        index = self.store.index
        by_type = {t: 0 for t in NODE_TYPES} | index.counts_by("type")
        by_status = {s: 0 for s in NODE_STATUSES} | index.counts_by("status")
        by_relation = {r: 0 for r in RELATION_TYPES} | index.relation_counts()
        return StatusResult(
            totalNodes=sum(by_type.values()),
            nodesByType=by_type,
            nodesByStatus=by_status,
            totalRelations=sum(by_relation.values()),
            relationsByType=by_relation,
            malformedFiles=[{"path": p, "reason": r} for p, r in index.errors()[:50]],
        )

    def get(self, node_id: Any) -> NodeOut:
        return NodeOut.of(self.store.get(validate_id(node_id)))

    # ---------------------------------------------------------------- update and delete

    def update(
        self,
        id: Any,
        title: Any = None,
        content: Any = None,
        tags: Any = None,
        status: Any = None,
        confidence: Any = None,
        references: Any = None,
    ) -> str:
        node_id = validate_id(id)
        changes: dict[str, Any] = {}
        if title is not None:
            changes["title"] = validate_title(title)
        if content is not None:
            changes["content"] = validate_content(content)
        if tags is not None:
            changes["tags"] = validate_tags(tags)
        if status is not None:
            changes["status"] = validate_status(status)
        if confidence is not None:
            changes["confidence"] = validate_confidence(confidence, minimum=CONFIDENCE_MINIMUM)
        if references is not None:
            changes["references"] = validate_references(references)
        if not changes:
            raise ValidationError(
                "update", "no fields to update: give at least one of title, content, tags, status, confidence, references"
            )
        changed: list[str] = []

        def apply(node: KnowledgeNode) -> KnowledgeNode:
            wanted = dict(changes)
            if "content" in wanted:  # edited from `autology show` or the file: the heading and Related list are not content
                wanted["content"] = without_title_heading(without_generated_related(
                    wanted["content"], {r.target for r in node.relations}), wanted.get("title", node.title))
            changed.clear()
            # a field given replaces what a person wrote there against a write rule (knowledge/rules.py)
            changed.extend(key for key, value in wanted.items() if getattr(node, key) != value or key in node.as_written)
            if not changed:
                return node
            if node.type is NodeType.DECISION and "content" in changed:
                missing = missing_adr_sections(wanted["content"])
                if missing:
                    raise _adr_error(missing)
            as_written = {k: v for k, v in node.as_written.items() if k not in changed}
            updated = node.replace(**{k: wanted[k] for k in changed}, modified=utc_now(), as_written=as_written)
            if {"title", "content", "references"} & set(changed):  # what it says changed: the code it saw now
                updated = _with_fingerprint(self.store.root, updated)
            return updated

        _, after = self.store.modify(node_id, apply)
        fields = ", ".join(changed) if changed else "none (the values were already current)"
        warnings = [_joined_title_warning(changes["title"])] if title_has_line_break(title) else []
        warnings += self._input_warnings(
            node_id, changes["title"] if "title" in changed else None, changes["references"] if "references" in changed else None)
        if "title" in changed or "content" in changed:
            warnings += _instruction_warnings(after)
        warnings += [f"the file breaks a rule the tools write by, kept as the person wrote it: {b.text()}"
                     for b in rule_breaks(after)]
        return f"✓ Updated: {after.title} ({after.type.value})\nFields changed: {fields}" + "".join(
            f"\nWarning: {w}" for w in warnings)

    def record_fingerprints(self) -> str:
        """Nodes written before fingerprints existed (issue 38), or whose text was edited by hand since
        theirs was taken, get the fingerprint of the code at their base (the commit that last changed
        the node's file: what they were written against; :func:`autology_mcp.knowledge.trust.fingerprints.missing_fingerprints`),
        so that a rebase or a squash-merge of a later commit keeps their flags. Nothing else about a
        node changes, ``modified`` included; a flag it has now stays (it is judged from the same code)."""
        from autology_mcp.knowledge.trust.fingerprints import FINGERPRINT, fingerprint, missing_fingerprints

        nodes = [n for n in self.store.index.all_nodes() if n.status is not NodeStatus.SUPERSEDED]
        bases = missing_fingerprints(self.store.root, self.store, nodes)
        recorded = 0
        for node_id, base in bases.items():
            def apply(node: KnowledgeNode, base: str = base) -> KnowledgeNode:
                seen = fingerprint(self.store.root, node.title, node.content, node.references, rev=base)
                return node if seen is None else node.replace(extra={**node.extra, FINGERPRINT: seen})

            before, after = self.store.modify(node_id, apply)
            recorded += after != before
        if not recorded:
            return "✓ Every node with references has a fingerprint of the code it was written against"
        return (f"✓ Recorded the code {recorded} node(s) were written against (each at the commit that last changed "
                f"its file); commit their files to share it")

    def mark_reviewed(self, id: Any) -> str:
        """A person read the node against the code as it is now and it holds: its fingerprint is taken
        again (:func:`autology_mcp.knowledge.trust.fingerprints.fingerprint`), so what was stale is judged from
        here on. Nothing else about the node changes but ``modified``."""
        node_id = validate_id(id)

        def apply(node: KnowledgeNode) -> KnowledgeNode:
            return _with_fingerprint(self.store.root, node.replace(modified=utc_now()))

        _, after = self.store.modify(node_id, apply)
        from autology_mcp.knowledge.trust.fingerprints import FINGERPRINT

        files = len((after.extra.get(FINGERPRINT) or {}).get("files", {}))
        return (f"✓ Reviewed: {after.title} ({after.type.value}): its references are judged from the code as it is now "
                f"({files} file(s) recorded); commit the node's file to share it")

    def delete(self, id: Any) -> str:
        node, removed = self.store.delete(validate_id(id))
        return f"✓ Deleted: {node.title} ({node.type.value})\nRelations removed: {removed}"

    # ---------------------------------------------------------------- relations

    def relate(
        self, source: Any, target: Any, type: Any, description: Any = None, confidence: Any = None
    ) -> str:
        source_id = validate_id(source, "source")
        proposed = build_relation(target, type, description, confidence)
        if proposed.target == source_id:
            raise ValidationError("target", "a node cannot be related to itself")

        def restate(r: Relation) -> Relation:
            """The relation the source has already, with what this call gives."""
            return r.replace(
                description=proposed.description if description is not None else r.description,
                confidence=proposed.confidence if confidence is not None else r.confidence,
            )

        with self.store.lock.hold():
            if not self.store.exists(proposed.target):
                raise NotFoundError(proposed.target, "target node")
            if self.store.add_relation(source_id, proposed, restate):  # a hub: no cost per relation it has
                return f"✓ Related: {source_id} —[{proposed.type.value}]→ {proposed.target}"

            def upsert(node: KnowledgeNode) -> KnowledgeNode:
                relations: list[Relation] = []
                replaced = False
                for r in node.relations:
                    if r.target == proposed.target and r.type == proposed.type:
                        relations.append(restate(r))
                        replaced = True
                    else:
                        relations.append(r)
                if not replaced:
                    relations.append(proposed)
                return node.replace(relations=tuple(relations))

            try:
                self.store.modify(source_id, upsert)
            except NotFoundError:
                raise NotFoundError(source_id, "source node") from None
        return f"✓ Related: {source_id} —[{proposed.type.value}]→ {proposed.target}"

    def unrelate(self, source: Any, target: Any, type: Any) -> str:
        source_id = validate_id(source, "source")
        target_id = validate_id(target, "target")
        relation_type = validate_relation_type(type)
        message = f"✓ Removed relation: {source_id} —[{relation_type.value}]→ {target_id}"

        def drop(node: KnowledgeNode) -> KnowledgeNode:
            kept = tuple(r for r in node.relations if not (r.target == target_id and r.type == relation_type))
            return node.replace(relations=kept)

        try:
            before, after = self.store.modify(source_id, drop)
        except NotFoundError:
            return message + " (there was no such relation: the source node does not exist)"
        if before.relations == after.relations:
            return message + " (there was no such relation)"
        return message
