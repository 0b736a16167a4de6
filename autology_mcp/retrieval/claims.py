"""The claim check (seed 001's claim ledger): does each claim's evidence exist and say what the claim says?

Input: claims, each a ``text`` and its evidence ``refs``. A ref is

- a file span: ``path:START-END``, ``path:LINE``, ``path#L10-20`` or ``path#L10-L20`` (lines from
  1, inclusive; ``path`` relative to the project root, or absolute but inside it), or
- a node id (a UUID, as in ``.autology/nodes/``), or
- a past session's document, as unified search returns it: ``SESSION_ID:N`` (chunk N, from 0) or
  ``SESSION_ID:handoff``. ``SESSION_ID:N`` reads as a session chunk when that session is stored in
  ``.autology/sessions/``, otherwise as line N of a file.

Each ref is first **resolved**: the file exists inside the project root (``..`` or a symlink leading
out of it, or an absolute path elsewhere, does not resolve), it is text, and the line range is
within the file; a node id names a node of this project's store; a session document exists in the
stored session (its chunk text, or its handoff summary, is the span). A resolved ref then **supports**
the claim when its span shares enough of the claim's key terms:

- **Key terms** of a text: its words (identifiers split at camelCase, snake_case and punctuation),
  lowercased, minus English stop words and filler (``code``, ``file``, ``function``, ...), minus
  one-character words, each reduced by a light suffix stemmer (``retries``/``retried`` -> ``retry``,
  ``parsing``/``parsed``/``parser``/``parse`` -> ``pars``, ``validation`` -> ``validat``), and the
  abbreviations code uses mapped to the word they stand for (``ctx`` -> ``context``, ``params`` ->
  ``parameters``, ``cfg`` -> ``configuration``; see ``ALIASES``).
- A key term **matches** a span when the span has the same stem, or one of the two is a prefix of
  the other and the shorter has at least 5 letters (``config`` ~ ``configuration``).
- **Support rule**: at least half of the claim's distinct key terms match, and at least two of
  them do (one when the claim has a single key term). A span wider than ``max_span_lines``
  (default 200) never supports: the ref must land on the lines that prove the claim. A superseded
  node never supports: cite its successor.

Claim outcomes:

- ``supported``: at least one ref resolves and supports the claim;
- ``unsupported``: some ref resolves, none supports it (the evidence exists but does not say this);
- ``unresolved``: no ref resolves (or the claim gave none): there is no evidence to read.

A malformed request (no claims, too many, an empty text, a ref that is neither a span nor a node
id, a line range like ``20-10``) raises ``ValidationError`` naming the claim and the ref. Each check
counts its outcomes in the ledger (``autology_mcp.retrieval.ledger``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from autology_mcp.common.errors import AutologyError, ValidationError
from autology_mcp.common.paths import ProjectPaths
from autology_mcp.common.text import CLAIM_STOP_WORDS, claim_normals, claim_words

MAX_CLAIMS = 50
MAX_REFS = 20
MAX_TEXT = 2000
MAX_REF_LENGTH = 1000
MAX_SPAN_LINES = 200
MAX_FILE_BYTES = 4 * 1024 * 1024
MIN_COVERAGE = 0.5
MIN_MATCHED = 2
PREFIX_MIN = 5

OUTCOMES = ("supported", "unsupported", "unresolved")

SUPPORT_RULE = (
    f"a ref supports a claim when it resolves and its span (at most {MAX_SPAN_LINES} lines; a node: title, "
    f"tags and content, not superseded) contains at least {int(MIN_COVERAGE * 100)}% of the claim's key terms "
    f"and at least {MIN_MATCHED} of them (1 for a one-term claim)"
)

_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_UUID4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
_SESSION = re.compile(r"^(?P<sid>[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}):(?P<doc>handoff|\d+)$")
_SPAN = re.compile(r"^(?P<path>.+?)(?::(?P<a>\d+)(?:-(?P<b>\d+))?|#L(?P<c>\d+)(?:-L?(?P<d>\d+))?)$")

REF_FORMS = (
    "a node id (UUID), a file span path:START-END, path:LINE or path#L10-20 (e.g. src/app.py:10-20), "
    "or a session document SESSION_ID:N or SESSION_ID:handoff"
)


# ------------------------------------------------------------------------------ key terms


def key_terms(text: str) -> list[str]:
    """The claim's distinct key terms (stems), in order of first appearance."""
    words = [w for w in claim_words(text) if len(w) >= 2 and w not in CLAIM_STOP_WORDS]
    return list(dict.fromkeys(s for s in claim_normals(words) if s not in CLAIM_STOP_WORDS))


def span_terms(text: str) -> frozenset[str]:
    return frozenset(claim_normals([w for w in claim_words(text) if len(w) >= 2]))


def _matches(term: str, terms: frozenset[str]) -> bool:
    if term in terms:
        return True
    if len(term) < PREFIX_MIN:
        return False
    return any(len(t) >= PREFIX_MIN and (t.startswith(term) or term.startswith(t)) for t in terms)


def support(claim_terms: Sequence[str], text: str) -> tuple[bool, list[str], list[str], float]:
    """(supports, matched terms, missing terms, coverage) of a span's text for a claim's key terms."""
    terms = span_terms(text)
    matched = [t for t in claim_terms if _matches(t, terms)]
    missing = [t for t in claim_terms if t not in matched]
    coverage = len(matched) / len(claim_terms) if claim_terms else 0.0
    needed = min(MIN_MATCHED, len(claim_terms))
    ok = bool(claim_terms) and coverage >= MIN_COVERAGE and len(matched) >= needed
    return ok, matched, missing, round(coverage, 3)


# ------------------------------------------------------------------------------ refs


@dataclass(frozen=True)
class ParsedRef:
    ref: str
    kind: str  # "file", "node" or "session"
    path: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    node_id: str | None = None
    session_id: str | None = None  # a session ref, or a file ref that may name a session chunk
    chunk: int | None = None  # the session chunk; None with kind "session" is the handoff


def parse_ref(ref: Any, where: str = "ref") -> ParsedRef:
    """A ref's kind and parts; raises ValidationError when it is neither form."""
    if not isinstance(ref, str):
        raise ValidationError(where, f"must be a string ({REF_FORMS}), got {type(ref).__name__}")
    text = ref.strip()
    if not text:
        raise ValidationError(where, f"is empty; give {REF_FORMS}")
    if len(text) > MAX_REF_LENGTH:
        raise ValidationError(where, f"is longer than {MAX_REF_LENGTH} characters")
    if _UUID.match(text):
        return ParsedRef(ref=text, kind="node", node_id=text.lower())
    session = _SESSION.match(text)
    if session and (session.group("doc") == "handoff" or int(session.group("doc")) == 0):
        chunk = None if session.group("doc") == "handoff" else 0
        return ParsedRef(ref=text, kind="session", session_id=session.group("sid"), chunk=chunk)
    m = _SPAN.match(text)
    if not m:
        raise ValidationError(where, f"{text!r} is neither form: give {REF_FORMS}")
    start = int(m.group("a") or m.group("c"))
    end_text = m.group("b") or m.group("d")
    end = int(end_text) if end_text else start
    if start < 1:
        raise ValidationError(where, f"{text!r}: lines are numbered from 1")
    if end < start:
        raise ValidationError(where, f"{text!r}: the range ends ({end}) before it starts ({start})")
    path = m.group("path").strip()
    if "\0" in path:
        raise ValidationError(where, "the path contains a NUL character")
    if path.startswith("./"):
        path = path[2:]
    if not path:
        raise ValidationError(where, f"{text!r} has no path")
    if session:
        return ParsedRef(ref=text, kind="file", path=path, start_line=start, end_line=end,
                         session_id=session.group("sid"), chunk=start)
    return ParsedRef(ref=text, kind="file", path=path, start_line=start, end_line=end)


@dataclass
class RefResult:
    ref: str
    kind: str
    resolved: bool
    supports: bool
    reason: str
    path: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    node_id: str | None = None
    title: str | None = None
    matched_terms: list[str] = field(default_factory=list)
    missing_terms: list[str] = field(default_factory=list)
    coverage: float = 0.0


@dataclass
class ClaimResult:
    index: int
    text: str
    outcome: str
    reason: str
    key_terms: list[str]
    refs: list[RefResult]


class _Resolver:
    """Reads spans and nodes for one check (each file read once)."""

    def __init__(self, root: Path, store: Any):
        self.root = Path(root).resolve()
        self.store = store
        self._files: dict[Path, list[str] | str] = {}
        self._sessions: dict[str, Any] = {}  # session id -> its record, None (not stored) or an error

    def lines(self, path: Path) -> list[str] | str:
        """The file's lines, or a reason why it cannot be read as text."""
        if path not in self._files:
            self._files[path] = self._read(path)
        return self._files[path]

    @staticmethod
    def _read(path: Path) -> list[str] | str:
        try:
            size = path.stat().st_size
            if size > MAX_FILE_BYTES:
                return f"the file is larger than {MAX_FILE_BYTES // (1024 * 1024)} MB"
            data = path.read_bytes()
        except OSError as exc:
            return f"cannot read the file: {exc.strerror or exc}"
        if b"\0" in data[:8192]:
            return "not a text file"
        return data.decode("utf-8", errors="replace").splitlines()

    def _session_file(self, session_id: str) -> Path:
        return ProjectPaths(self.root).base / "sessions" / f"{session_id}.jsonl"

    def session_ref(self, parsed: ParsedRef, terms: list[str]) -> RefResult:
        sid = parsed.session_id or ""
        out = RefResult(parsed.ref, "session", False, False, "")
        path = self._session_file(sid)
        out.path = path.relative_to(self.root).as_posix()
        if sid not in self._sessions:
            from autology_mcp.sessions.store import load_session

            try:
                self._sessions[sid] = load_session(self.root, sid)
            except AutologyError as exc:
                self._sessions[sid] = str(exc)
        record = self._sessions[sid]
        if record is None:
            out.reason = f"no stored session {sid} in .autology/sessions/"
            return out
        if isinstance(record, str):
            out.reason = f"cannot read the session: {record}"
            return out
        out.title = record.title
        if parsed.chunk is None:
            if not record.handoff:
                out.reason = "the session has no handoff summary"
                return out
            text = f"{record.title}\n{record.handoff}"
        else:
            from autology_mcp.sessions.chunking import chunk_turns

            chunks = chunk_turns(record.turns, agent=record.state.agent)
            if parsed.chunk >= len(chunks):
                out.reason = f"the session has {len(chunks)} chunks (0-{len(chunks) - 1}), not {parsed.chunk}"
                return out
            text = chunks[parsed.chunk].text(record.title)
        out.resolved = True
        return _judge(out, terms, text)

    def file_ref(self, parsed: ParsedRef, terms: list[str], max_span: int) -> RefResult:
        if parsed.session_id is not None and self._session_file(parsed.session_id).is_file():
            return self.session_ref(parsed, terms)
        out = RefResult(parsed.ref, "file", False, False, "", parsed.path, parsed.start_line, parsed.end_line)
        given = Path(parsed.path)
        candidate = given if given.is_absolute() else self.root / given
        try:
            real = candidate.resolve()
            rel = real.relative_to(self.root)
        except (OSError, RuntimeError):
            out.reason = "the path cannot be resolved"
            return out
        except ValueError:
            out.reason = "the path is outside the project root"
            return out
        out.path = rel.as_posix()
        if rel.parts and rel.parts[0] == ".git":  # git's own files (config, credentials) are never evidence
            out.reason = "files under .git/ are not evidence"
            return out
        try:
            if not real.exists():
                out.reason = "no such file in the project"
                return out
            if not real.is_file():
                out.reason = "not a file"
                return out
        except OSError as exc:  # a name too long, a permission refused on the way
            out.reason = f"cannot read the path: {exc.strerror or exc}"
            return out
        lines = self.lines(real)
        if isinstance(lines, str):
            out.reason = lines
            return out
        assert parsed.start_line is not None and parsed.end_line is not None
        if parsed.end_line > len(lines):
            out.reason = (
                f"lines {parsed.start_line}-{parsed.end_line} go past the end of the file ({len(lines)} lines)"
            )
            return out
        out.resolved = True
        width = parsed.end_line - parsed.start_line + 1
        if width > max_span:
            out.reason = f"the span is {width} lines, wider than {max_span}: cite the lines that prove the claim"
            return out
        text = "\n".join(lines[parsed.start_line - 1 : parsed.end_line])
        return _judge(out, terms, text)

    def node_ref(self, parsed: ParsedRef, terms: list[str]) -> RefResult:
        out = RefResult(parsed.ref, "node", False, False, "", node_id=parsed.node_id)
        if not _UUID4.match(parsed.node_id or ""):
            out.reason = "not a UUID v4: no node has this id"
            return out
        if self.store is None:
            out.reason = "this project has no autology store (.autology/nodes/)"
            return out
        try:
            node = self.store.get(parsed.node_id)
        except AutologyError as exc:
            out.reason = str(exc)
            return out
        out.resolved = True
        out.title = node.title
        out.path = self.store.rel(self.store.paths.node_file(node.type.value, node.id))
        if node.status.value == "superseded":
            out.reason = "the node is superseded: cite the node that supersedes it"
            return out
        text = "\n".join([node.title, " ".join(node.tags), node.content])
        return _judge(out, terms, text)


def _judge(out: RefResult, terms: list[str], text: str) -> RefResult:
    ok, matched, missing, coverage = support(terms, text)
    out.supports, out.matched_terms, out.missing_terms, out.coverage = ok, matched, missing, coverage
    if not terms:
        out.reason = "the claim has no key terms to look for"
    elif ok:
        out.reason = f"the span has {len(matched)} of the claim's {len(terms)} key terms"
    else:
        needed = max(min(MIN_MATCHED, len(terms)), -(-len(terms) // 2))
        out.reason = (
            f"the span has {len(matched)} of the claim's {len(terms)} key terms; {needed} are needed"
            + (f" (missing: {', '.join(missing[:8])})" if missing else "")
        )
    return out


# ------------------------------------------------------------------------------ the check


def _validate(claims: Any) -> list[tuple[str, list[ParsedRef | RefResult]]]:
    if not isinstance(claims, Sequence) or isinstance(claims, (str, bytes)):
        raise ValidationError("claims", f"must be a list of {{text, refs}} objects, got {type(claims).__name__}")
    if not claims:
        raise ValidationError("claims", "is empty: give at least one claim {text, refs}")
    if len(claims) > MAX_CLAIMS:
        raise ValidationError("claims", f"{len(claims)} claims; at most {MAX_CLAIMS} per check")
    out = []
    for i, claim in enumerate(claims):
        where = f"claims[{i}]"
        if not isinstance(claim, Mapping):
            raise ValidationError(where, f"must be an object {{text, refs}}, got {type(claim).__name__}")
        unknown = sorted(set(claim) - {"text", "refs"})
        if unknown:
            raise ValidationError(where, f"unknown field(s) {', '.join(map(str, unknown))}", ["text", "refs"])
        text = claim.get("text")
        if not isinstance(text, str) or not text.strip():
            raise ValidationError(f"{where}.text", "must be a non-empty string")
        if len(text) > MAX_TEXT:
            raise ValidationError(f"{where}.text", f"is {len(text)} characters; at most {MAX_TEXT}")
        refs = claim.get("refs", [])
        if refs is None:
            refs = []
        if not isinstance(refs, Sequence) or isinstance(refs, (str, bytes)):
            raise ValidationError(f"{where}.refs", f"must be a list of refs ({REF_FORMS})")
        if len(refs) > MAX_REFS:
            raise ValidationError(f"{where}.refs", f"{len(refs)} refs; at most {MAX_REFS} per claim")
        parsed = []
        for j, ref in enumerate(refs):
            try:
                parsed.append(parse_ref(ref, f"{where}.refs[{j}]"))
            except ValidationError as exc:  # one bad ref is its claim's unresolved ref, not the whole batch's error
                text_ref = ref if isinstance(ref, str) else repr(ref)
                parsed.append(RefResult(text_ref[:MAX_REF_LENGTH], "invalid", False, False, f"not a ref: {exc.reason}"))
        out.append((text.strip(), parsed))
    return out


def _outcome(results: list[RefResult]) -> tuple[str, str]:
    if not results:
        return "unresolved", "no evidence refs were given"
    supporting = [r.ref for r in results if r.supports]
    if supporting:
        return "supported", f"supported by {', '.join(supporting)}"
    if any(r.resolved for r in results):
        return "unsupported", "the evidence exists but none of it shares enough of the claim's key terms"
    return "unresolved", "none of the refs resolves"


def check_claims(
    root: Path,
    claims: Any,
    *,
    store: Any = None,
    max_span_lines: int = MAX_SPAN_LINES,
    record: bool = True,
) -> dict[str, Any]:
    """Check each claim's refs; returns ``{claims: [...], summary: {...}, rule: str}``.

    ``store`` is the project's open NodeStore (opened here when None and node refs are given).
    Raises ValidationError on a malformed request, before anything is read. With ``record``, the
    outcomes are counted in the ledger.
    """
    parsed_claims = _validate(claims)
    own_store = None
    if store is None and any(p.kind == "node" for _, refs in parsed_claims for p in refs):
        if ProjectPaths(Path(root).resolve()).nodes.is_dir():
            from autology_mcp.knowledge.store import NodeStore

            store = own_store = NodeStore(root)
            store.reconcile()
    try:
        resolver = _Resolver(root, store)
        results: list[ClaimResult] = []
        for i, (text, refs) in enumerate(parsed_claims):
            terms = key_terms(text)
            ref_results = [
                p if isinstance(p, RefResult)  # a bad ref, already judged unresolved
                else resolver.node_ref(p, terms) if p.kind == "node"
                else resolver.session_ref(p, terms) if p.kind == "session"
                else resolver.file_ref(p, terms, max_span_lines)
                for p in refs
            ]
            outcome, reason = _outcome(ref_results)
            if not terms and outcome != "unresolved":
                reason = "the claim has no key terms (only stop words), so no span can support it"
            results.append(ClaimResult(i, text, outcome, reason, terms, ref_results))
    finally:
        if own_store is not None:
            own_store.close()
    summary = {o: sum(1 for r in results if r.outcome == o) for o in OUTCOMES}
    if record:
        from autology_mcp.retrieval.ledger import record_claims

        record_claims(root, summary)
    return {
        "claims": [asdict(r) for r in results],
        "summary": {"total": len(results), **summary},
        "rule": SUPPORT_RULE,
    }
