"""Three-way merge of one node file, for ``autology merge-driver`` (git's custom merge driver) and
``autology merge-file`` (a file a failed driver left with one side, merged again from git's index);
and what ``autology doctor`` checks of a clone's merge setup (:func:`driver_problems`, :func:`lost_side`).

Two branches that each relate a node, tag it or edit different lines of it would otherwise conflict
inside the frontmatter (the ``relations:`` list, the ``modified:`` line) and the ``## Related`` list.
Merged field by field instead:

- relations (keyed by target and type), tags and references: a three-way set merge, so what either
  side added is kept and what either side removed stays removed; a relation both sides changed
  keeps the description and confidence of the side modified later;
- ``modified``: the later of the two; ``created``: the earlier;
- title, type, status, confidence, session, source and each unknown key: taken from the side that
  changed it; both changed it differently: a conflict, except the fingerprint of the code the node
  saw (``code_seen``, :mod:`autology_mcp.knowledge.trust.fingerprints`), taken from the side modified later:
  it is void unless taken for the merged text, and then either side's is as good;
- content: git's three-way line merge (``git merge-file``), conflict markers only where both sides
  changed the same lines;
- ``## Related`` is rendered again from the merged relations.

A file with a value a person wrote against a write rule (an unknown type, a status that is not one:
knowledge/rules.py) on any side is merged by git's line merge, which keeps it as written.

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
    if any(n is not None and n.as_written for n in (b, o, t)):  # a value as a person wrote it against a write rule
        text, conflicted = _merge_lines(base, ours, theirs, labels)  # (knowledge/rules.py): git's line merge keeps it
        return MergeResult(text, ["a side breaks a write rule (`autology doctor`): merged line by line"] if conflicted else [])
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


# --------------------------------------------------------------------------------------------
# The merge setup of one clone, and merging a file git left unmerged again (``autology doctor``,
# ``autology merge-file``)
# --------------------------------------------------------------------------------------------

FIX_DRIVER = "run `autology init` in this clone (it registers the driver with the interpreter it runs on)"


def _git(cwd: Path, *args: str, text: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=text, timeout=30)


def driver_problems(root: Path) -> list[tuple[str, str]]:
    """What keeps git from merging this project's node files with the merge driver in this clone:
    (a path, what is wrong and how to fix it). [] outside git, or where no ``.gitattributes`` names the
    driver for node files (``autology init --no-git``: git's line merge is what was chosen)."""
    import shlex
    import shutil

    top = find_git_toplevel(Path(root))
    if top is None:
        return []
    sample = (Path(root).resolve() / ".autology" / "nodes" / "concepts" / "x.md").relative_to(top.resolve()).as_posix()
    try:
        attr = _git(top, "check-attr", "merge", "--", sample)
        if attr.returncode != 0 or not attr.stdout.rstrip().endswith(": merge: autology"):
            return []
        driver = _git(top, "config", "--get", "merge.autology.driver").stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return []
    if not driver:
        return [(".gitattributes", "names the autology merge driver for node files, but this clone has not registered it"
                 " (no merge.autology.driver in .git/config; a fresh clone has none): git would merge node files line by"
                 " line, and two branches that relate or tag one node would conflict. Fix: " + FIX_DRIVER)]
    try:
        words = shlex.split(driver)
    except ValueError:
        words = []
    executable = words[0] if words else ""
    found = shutil.which(executable) if executable else None
    where = ".git/config"
    if found is None:
        return [(where, f"the registered merge driver's program {executable or driver!r} does not exist or cannot be run"
                 " (a moved or deleted virtualenv?): at a merge git would leave each node file both sides changed with"
                 " only our side and no conflict markers. Fix: " + FIX_DRIVER)]
    if words[1:3] == ["-m", "autology_mcp"]:
        try:
            probe = subprocess.run([found, "-c", "import autology_mcp.knowledge.merge"], capture_output=True, timeout=60)
        except (OSError, subprocess.SubprocessError) as exc:
            probe = subprocess.CompletedProcess([found], 1, b"", str(exc).encode())
        if probe.returncode != 0:
            return [(where, f"the registered merge driver's interpreter {executable} cannot import autology_mcp (a"
                     " virtualenv rebuilt without it?): at a merge git would leave each node file both sides changed"
                     " with only our side. Fix: " + FIX_DRIVER)]
    return []


def lost_side(top: Path, path: str) -> str | None:
    """For a node file git left unmerged with stages 2 (ours) and 3 (theirs) and no conflict markers:
    which side the file lost (the file is the other side, byte for byte: a merge driver that failed
    leaves ours), or None. ``path`` is relative to the work tree's top."""
    try:
        ours = _git(top, "show", f":2:{path}", text=False)
        theirs = _git(top, "show", f":3:{path}", text=False)
        text = (top / path).read_bytes()
    except (OSError, subprocess.SubprocessError):
        return None
    if ours.returncode != 0 or theirs.returncode != 0 or ours.stdout == theirs.stdout:
        return None
    if text == ours.stdout:
        return "theirs"
    if text == theirs.stdout:
        return "ours"
    return None


def merge_unmerged(root: Path, path: Path) -> MergeResult:
    """Merge a node file git left unmerged again, from the three versions in git's index (stage 1 the
    common ancestor, absent when both sides added it; 2 ours; 3 theirs), as the merge driver does;
    the result is written to the file. StorageError when git holds no such stages for it."""
    from autology_mcp.common.errors import StorageError

    top = find_git_toplevel(Path(root))
    if top is None:
        raise StorageError(str(path), "not in a git work tree")
    path = Path(path)
    if not path.is_absolute() and not path.exists():
        path = top / path  # as git status and `autology doctor` print it: from the work tree's top
    try:
        rel = path.resolve().relative_to(top.resolve()).as_posix()
    except ValueError:
        raise StorageError(str(path), f"not in the git work tree {top}") from None
    texts = {}
    for stage in (1, 2, 3):
        shown = _git(top, "show", f":{stage}:{rel}", text=False)
        texts[stage] = shown.stdout.decode("utf-8") if shown.returncode == 0 else None
    if texts[2] is None or texts[3] is None:
        raise StorageError(str(path), "git holds no unmerged versions of it (ours and theirs: stages 2 and 3); "
                           "is a merge under way, and is the file still unmerged (`git status`)?")
    result = merge_texts(texts[1] or "", texts[2], texts[3], path=rel)
    Path(path).write_text(result.text, encoding="utf-8")
    return result
