"""Three-way merge of one node file, for ``autology merge-driver`` (git's custom merge driver).

Two branches that each relate a node, tag it or edit different lines of it would otherwise conflict
inside the frontmatter (the ``relations:`` list, the ``modified:`` line) and the ``## Related`` list.
Merged field by field instead:

- relations (keyed by target and type), tags and references: a three-way set merge, so what either
  side added is kept and what either side removed stays removed; a relation both sides changed
  keeps the description and confidence of the side modified later;
- ``modified``: the later of the two; ``created``: the earlier;
- title, type, status, confidence, session, source and each unknown key: taken from the side that
  changed it; both changed it differently: a conflict, except the fingerprint of the code the node
  saw (``code_seen``, :mod:`autology_mcp.knowledge.staleness`), taken from the side modified later:
  it is void unless taken for the merged text, and then either side's is as good;
- content: git's three-way line merge (``git merge-file``), conflict markers only where both sides
  changed the same lines;
- ``## Related`` is rendered again from the merged relations.

A conflict leaves the file for a person: a content conflict as git would mark it inside the
content, any other as git's line merge of the whole file. Either way the file then holds conflict
markers, which the store reports as malformed ("unresolved git merge conflict") until resolved.
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autology_mcp.common.paths import find_git_toplevel
from autology_mcp.knowledge.markdown import MalformedNodeError, link_titles, parse_node, render_node
from autology_mcp.knowledge.models import FINGERPRINT_KEY as FINGERPRINT
from autology_mcp.knowledge.models import KnowledgeNode, Relation

SCALARS = ("title", "type", "status", "confidence", "session", "source")


@dataclass
class MergeResult:
    text: str  # what the file should hold
    conflicts: list[str] = field(default_factory=list)  # what a person must resolve; empty: clean


def _three_way(base: Any, ours: Any, theirs: Any) -> tuple[Any, bool]:
    """(the merged value, whether both sides changed it differently)."""
    if ours == theirs or theirs == base:
        return ours, False
    if ours == base:
        return theirs, False
    return ours, True


def _set_merge(base: list, ours: list, theirs: list) -> list:
    """Kept by both, or added by either; removed by either stays removed. Ours' order, then theirs' additions."""
    base_set, theirs_set, ours_set = set(base), set(theirs), set(ours)
    kept = [x for x in ours if x in theirs_set or x not in base_set]
    return kept + [x for x in theirs if x not in ours_set and x not in base_set]


def _relations(base: KnowledgeNode | None, ours: KnowledgeNode, theirs: KnowledgeNode) -> tuple[Relation, ...]:
    def keyed(node: KnowledgeNode | None) -> dict[tuple[str, str], Relation]:
        return {(r.target, r.type.value): r for r in node.relations} if node else {}

    b, o, t = keyed(base), keyed(ours), keyed(theirs)
    later = t if theirs.modified > ours.modified else o
    merged = []
    for key in _set_merge(list(b), list(o), list(t)):
        if key in o and key in t and o[key] != t[key]:
            if o[key] == b.get(key):
                merged.append(t[key])
            elif t[key] == b.get(key):
                merged.append(o[key])
            else:
                merged.append(later[key])  # both changed it: the later edit wins
        else:
            merged.append(o.get(key) or t[key])
    return tuple(merged)


def _merge_lines(base: str, ours: str, theirs: str, labels: tuple[str, str, str]) -> tuple[str, bool]:
    """git merge-file's three-way merge of three texts: (the result, whether it has conflicts)."""
    with tempfile.TemporaryDirectory(prefix="autology-merge-") as tmp:
        paths = []
        for name, text in zip(("ours", "base", "theirs"), (ours, base, theirs)):
            path = Path(tmp) / name
            path.write_text(text if text.endswith("\n") or not text else text + "\n", encoding="utf-8")
            paths.append(str(path))
        result = subprocess.run(
            ["git", "merge-file", "-p", "-L", labels[0], "-L", labels[1], "-L", labels[2], *paths],
            capture_output=True,
            text=True,
            encoding="utf-8",
        )
    if result.returncode < 0 or result.returncode > 127:
        raise OSError(f"git merge-file failed: {result.stderr.strip()}")
    return result.stdout, result.returncode != 0


def merge_texts(base: str, ours: str, theirs: str, path: str = "node") -> MergeResult:
    """Merge three versions of one node file's text (``base`` may be "" when both sides added it)."""
    labels = (f"ours:{path}", f"base:{path}", f"theirs:{path}")
    try:
        o, t = parse_node(ours), parse_node(theirs)
        b = parse_node(base) if base.strip() else None
    except MalformedNodeError as exc:  # not three nodes: leave it to git's line merge
        text, conflicted = _merge_lines(base, ours, theirs, labels)
        return MergeResult(text, [f"not a node file on every side ({exc.reason}): merged line by line"] if conflicted else [])
    if o.id != t.id or (b is not None and b.id != o.id):
        text, conflicted = _merge_lines(base, ours, theirs, labels)
        return MergeResult(text, ["the two sides hold different node ids"] if conflicted else [])
    conflicts: list[str] = []
    values: dict[str, Any] = {}
    for name in SCALARS:
        value, clash = _three_way(getattr(b, name) if b else None, getattr(o, name), getattr(t, name))
        values[name] = value
        if clash:
            conflicts.append(f"both sides changed {name} ({getattr(o, name)!r} / {getattr(t, name)!r})")
    extra = {}
    for key in list(dict.fromkeys([*o.extra, *t.extra])):
        value, clash = _three_way((b.extra if b else {}).get(key), o.extra.get(key), t.extra.get(key))
        if clash and key == FINGERPRINT:
            value, clash = (t if t.modified > o.modified else o).extra.get(key), False
        if value is not None:
            extra[key] = value
        if clash:
            conflicts.append(f"both sides changed the frontmatter key {key!r}")
    if conflicts:  # a person decides: git's line merge of the whole file shows both sides
        text, _ = _merge_lines(base, ours, theirs, labels)
        return MergeResult(text, conflicts)
    content, content_clash = _merge_lines(b.content if b else "", o.content, t.content, labels)
    merged = o.replace(
        **values,
        tags=tuple(_set_merge(list(b.tags) if b else [], list(o.tags), list(t.tags))),
        references=tuple(_set_merge(list(b.references) if b else [], list(o.references), list(t.references))),
        relations=_relations(b, o, t),
        content=content.rstrip("\n"),
        modified=max(o.modified, t.modified),
        created=min(o.created, t.created),
        extra=extra,
    )
    titles = {**link_titles(base), **link_titles(ours), **link_titles(theirs)}  # the links keep their titles
    return MergeResult(render_node(merged, titles), ["both sides changed the same lines of the content"] if content_clash else [])


def merge_files(base: Path, ours: Path, theirs: Path, path: str = "node") -> MergeResult:
    """``merge_texts`` over git's three temporary files; the result is written to ``ours`` (git's %A)."""
    texts = [p.read_text(encoding="utf-8") if p.exists() else "" for p in (base, ours, theirs)]
    result = merge_texts(*texts, path=path)
    ours.write_text(result.text, encoding="utf-8")
    return result


ATTRIBUTE_PATTERN = "nodes/**/*.md"
DRIVER_NAME = "autology: merge node files field by field (relations, tags, content lines)"


def register_merge_driver(root: Path, command: str) -> list[str]:
    """Make git merge this project's node files with ``autology merge-driver``: a line in the
    repository's ``.gitattributes`` (committed, so every clone has it) and the driver in the
    repository's own git config (per clone: each teammate runs ``autology init`` once). Returns what
    was changed; [] when ``root`` is not in a git work tree or everything was already there."""
    def git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)

    top = find_git_toplevel(Path(root))
    if top is None:
        return []
    top_dir = top.resolve()
    store = (Path(root).resolve() / ".autology").relative_to(top_dir).as_posix()
    line = f"{store}/{ATTRIBUTE_PATTERN} merge=autology"
    changed = []
    attributes = top_dir / ".gitattributes"
    text = attributes.read_text(encoding="utf-8") if attributes.exists() else ""
    if line not in text.splitlines():
        attributes.write_text(text + ("" if text.endswith("\n") or not text else "\n") + line + "\n", encoding="utf-8")
        changed.append(f"{attributes}: {line}")
    driver = f"{command} merge-driver %O %A %B %P"
    if git("config", "--local", "merge.autology.driver").stdout.strip() != driver:
        git("config", "--local", "merge.autology.name", DRIVER_NAME)
        git("config", "--local", "merge.autology.driver", driver)
        changed.append(f"git config merge.autology.driver = {driver}")
    return changed
