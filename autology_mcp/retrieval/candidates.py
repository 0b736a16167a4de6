"""The candidate: one piece of evidence (a node, a code or doc chunk, a session chunk) as the
channels find it, before fusion, scoring and rendering."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from autology_mcp.knowledge.models import KnowledgeNode

DOC_EXTENSIONS = (".md", ".markdown", ".rst", ".txt", ".adoc")
DOC_FILENAMES = ("README", "CHANGES", "AUTHORS", "LICENSE", "CHANGELOG", "HISTORY", "CONTRIBUTING", "NOTICE")


@lru_cache(maxsize=65536)
def is_doc_path(path: str) -> bool:
    """Docs are the index's Markdown, reStructuredText and plain-text files."""
    name = path.rsplit("/", 1)[-1]
    if name.lower().endswith(DOC_EXTENSIONS):
        return True
    return "." not in name and name.upper() in DOC_FILENAMES


@dataclass
class Candidate:
    key: str  # unique across sources: node:<id>, chunk:<path>:<start>-<end>, session:<doc id>, commit:<sha>
    kind: str  # node | code | doc | session_chunk | handoff | commit
    ref: str  # node id | path:start-end | session doc id | the commit's short sha
    title: str
    text: str = ""  # what keyword coverage and proof spans are computed on ("" until loaded)
    path: str | None = None
    start_line: int | None = None  # the section (chunk) this candidate is
    end_line: int | None = None
    node: KnowledgeNode | None = None
    cosine: float | None = None  # hashed-vector cosine with the query, when known
    area_prior: float = 1.0
    meta: dict[str, Any] = field(default_factory=dict)
    via: str | None = None
    graph_score: float = 0.0  # RRF-scale credit from graph expansion

    @property
    def area_label(self) -> str:
        """The area used for ambiguity clusters and the clarifying question."""
        if self.node is not None:
            return f"tag {self.node.tags[0]}" if self.node.tags else f"{self.node.type.value}s"
        if self.kind in ("session_chunk", "handoff"):
            return "past sessions"
        if self.kind == "commit":
            return "the commit history"
        parts = (self.path or "").split("/")
        return "/".join(parts[:2]) if len(parts) > 2 else (parts[0] if len(parts) == 2 else "(project root)")

    @property
    def tree(self) -> str:
        """A path-like location for diversity: files by path, nodes by type/tag, sessions by session, a
        commit on its own (no folder: two commits are no more alike than two files in different folders)."""
        if self.node is not None:
            tag = self.node.tags[0] if self.node.tags else "-"
            return f"@nodes/{self.node.type.value}/{tag}/{self.node.id}"
        if self.kind in ("session_chunk", "handoff"):
            return f"@sessions/{self.meta.get('session_id', '-')}/{self.ref}"
        if self.kind == "commit":
            return f"@commit:{self.ref}"
        return self.path or self.ref
