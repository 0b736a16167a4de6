"""The code a node saw (:mod:`.staleness`): the fingerprint recorded in its frontmatter when it is
written or reviewed (:func:`fingerprint`: each referenced file's blob id, the names and values the node
gives that each file held, what was deprecated elsewhere and under a folder then, and the hash of the
text it was taken for), whether a node holds one for what it says now (:func:`fingerprinted`), what it
recorded (:func:`recorded_code`, :func:`recorded_names`), and the nodes that need one
(:func:`missing_fingerprints`)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from autology_mcp.knowledge.models import FINGERPRINT_KEY, KnowledgeNode
from autology_mcp.knowledge.references import reference_path
from autology_mcp.knowledge.trust.code_compare import code_words, file_literals
from autology_mcp.knowledge.trust.deprecations import _elsewhere, folder_deprecated, watched
from autology_mcp.knowledge.trust.folder_files import counts_or_no_others, held_snippets, named_files, sources_at
from autology_mcp.knowledge.trust.git_history import GIT_TIMEOUT, History, history, read
from autology_mcp.knowledge.trust.mentions import Said, holds, mentions
from autology_mcp.knowledge.trust.modules import imports_bound


FINGERPRINT = FINGERPRINT_KEY  # the frontmatter key
FOLDER_NAMES = 40  # the names a folder's files held, recorded at most


def node_hash(title: str, content: str, references) -> str:
    """What a fingerprint was taken for: the node's title, content and references (not its tags,
    status or relations, which do not say anything about the code)."""
    import hashlib

    text = "\x00".join([title, content, *references])
    return hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()[:12]


def fingerprint(root: Path, title: str, content: str, references, rev: str | None = None) -> dict | None:
    """The code a node is written (or reviewed) against: each referenced file's git blob id (12 hex),
    as the work tree holds it now, written to git's object store (``git hash-object -w``, as ``git
    add`` does) so the text can be read back after a rebase or a squash; with the hash of what the
    node says (:func:`node_hash`). With ``rev``, the code that commit holds instead (its blobs are in
    the object store already): what a node written before fingerprints existed saw at its base
    (:func:`missing_fingerprints`). None outside git or without a referenced file."""
    paths = sorted({p for p in (reference_path(r) for r in references) if p})
    code = _code_now(Path(root), paths) if rev is None else _code_at(Path(root), rev, paths)
    if code is None:
        return None
    files, folders = code
    if not files and not folders:
        return None
    if rev is None:
        reader = lambda q: read(Path(root) / q)  # noqa: E731
    else:
        reader = lambda q: history(Path(root)).content(rev, q)  # noqa: E731
    git = lambda *a: history(Path(root))._git(*a)  # noqa: E731
    seen = {"for": node_hash(title, content, references), "files": {f: i[:12] for f, (i, _) in sorted(files.items())}}
    names, named = (sorted(found) for found in mentions(f"{title}\n{content}"))
    for folder in folders if names else []:  # a folder has no blob: the names its files held are what it saw
        args = ["git", "grep", "-I", "-h", "-o", "-w", "-F", *(a for n in names[:200] for a in ("-e", n)),
                *([rev] if rev else []), "--", folder, ":(exclude).autology"]
        try:
            grep = subprocess.run(args, cwd=root, capture_output=True, text=True, timeout=GIT_TIMEOUT, errors="replace")
        except (OSError, subprocess.SubprocessError, ValueError):
            continue
        # the names its files held (a folder's overview names many: forty, so that the deprecations below are
        # checked for what the node names, not only its first twenty in the order of the alphabet)
        kept = sorted({line.strip() for line in grep.stdout.splitlines()} & set(names))[:FOLDER_NAMES]
        kept += sorted(p for p in set(named) | named_files(content, folder) if p.startswith(folder + "/") and (  # its files
            (Path(root) / p).exists() if rev is None else history(Path(root)).content(rev, p) is not None))[:20]
        kept += sorted(held_snippets(git, reader, Said(set(), set(), f"{title}\n{content}").snippets, rev, folder))[:10]
        if kept:
            seen.setdefault("names", {})[folder] = kept
        works = sorted(imports_bound(f"{title}\n{content}", folder, reader))[:10]  # the imports it writes that work
        if works:
            seen.setdefault("imports", {})[folder] = works
        # what of them a file under it marked deprecated already ([] says none): a later deprecation is a flag
        seen.setdefault("deprecated", {})[folder] = sorted(folder_deprecated(history(Path(root)), rev, folder,
                                                                              set(kept)))[:20]
    if counts_or_no_others(f"{title}\n{content}"):  # "made of five modules": which they were, for a relate committed later
        for folder in folders:
            sources = sorted(sources_at(git, rev, folder))
            if len(sources) <= 40:  # (a folder of more is no folder a node counts the modules of)
                seen.setdefault("sources", {})[folder] = sources
    held, values = {}, {}
    said = Said(set(names), set(), f"{title}\n{content}")
    for f, (_, text) in sorted(files.items()):  # the names and values it gives that each file held: judged by when the blob is gone (a squash)
        if text is None:
            continue
        code_of = code_words(text, f)
        kept = [n for n in names if holds(code_of, n)][:20]
        if kept:
            held[f] = kept
        stated = said.values_held(file_literals(text, f)) if said.states_values else []
        if stated:
            values[f] = stated[:20]
    elsewhere = {}
    for f, (_, text) in sorted(files.items()):  # what the code takes from other modules, deprecated there already
        anchors = [r.split("#", 1)[1].strip() if "#" in r else "" for r in references if reference_path(r) == f]
        if any(watched(text or "", f, a, said) for a in anchors):  # [] says none was deprecated when it was written
            elsewhere[f] = sorted({k for a in anchors for k in _elsewhere(text or "", f, a, said, reader)})[:20]
    if held:
        seen["names"] = {**held, **seen.get("names", {})}
    if values:
        seen["values"] = values
    if elsewhere:
        seen["elsewhere"] = elsewhere
    return seen


def _code_now(root: Path, paths: list[str]) -> tuple[dict[str, tuple[str, str | None]], list[str]] | None:
    """The work tree's referenced files (path -> (blob id, text)), each written to git's object store,
    and its referenced folders; None when git cannot hash them."""
    files = [p for p in paths if _is_file(root / p)]
    folders = [p for p in paths if _is_dir(root / p)]
    if not files:
        return {}, folders
    try:
        out = subprocess.run(["git", "hash-object", "-w", "--", *files], cwd=root, capture_output=True, text=True,
                             timeout=GIT_TIMEOUT)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    ids = out.stdout.split() if out.returncode == 0 else []
    if len(ids) != len(files):
        return None
    return {f: (i, read(root / f)) for f, i in zip(files, ids)}, folders


def _code_at(root: Path, rev: str, paths: list[str]) -> tuple[dict[str, tuple[str, str | None]], list[str]] | None:
    """The referenced files (path -> (blob id, text)) and folders that commit ``rev`` holds, read through
    the work tree's :class:`History` (its one ``git cat-file --batch``); None outside git."""
    h = history(root)
    if h.head is None:
        return None
    files, folders = {}, []
    for path in paths:
        text = h.content(rev, path)
        if text is not None:
            files[path] = (h.blob_id(rev, path), text)
        elif h._git("ls-tree", "-d", rev, "--", path):
            folders.append(path)
    return files, folders


def missing_fingerprints(root: Path, store, nodes: list[KnowledgeNode]) -> dict[str, str]:
    """The nodes with file or folder references and no fingerprint for what they say now (written
    before issue 38, or edited by hand since), each with its base (node id -> commit): the code
    :func:`fingerprint` records for them with ``rev=base``, so that a rebase or a squash-merge of a
    later commit keeps their flags as it keeps those of nodes written since."""
    wanted = [n for n in nodes if n.references and not fingerprinted(n)]
    h = history(Path(root))
    if h.head is None or not wanted:
        return {}
    return {node_id: base for node_id, base in node_bases(h, store, wanted).items() if base}


def node_bases(h: History, store, nodes: list[KnowledgeNode]) -> dict[str, str | None]:
    """Each node's base (:meth:`History.node_bases`), from its file in ``store`` and its ``modified``."""
    return h.node_bases({n.id: store.rel(store.paths.node_file(n.type.value, n.id)) for n in nodes},
                        {n.id: n.modified.timestamp() for n in nodes})


def fingerprinted(node: KnowledgeNode) -> bool:
    """Whether the node holds a fingerprint taken for what it says now."""
    seen = node.extra.get(FINGERPRINT)
    return isinstance(seen, dict) and seen.get("for") == node_hash(node.title, node.content, node.references)


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except (OSError, ValueError):  # a name too long for the file system
        return False


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False


def recorded_code(node: KnowledgeNode) -> dict[str, str]:
    """The blob ids of the code the node was written against (path -> id), when its fingerprint was
    taken for what the node says now (a hand edit of the text makes it void: its commit is then the base)."""
    seen = node.extra.get(FINGERPRINT)
    if not fingerprinted(node) or not isinstance(seen.get("files"), dict):
        return {}
    return {str(k): str(v) for k, v in seen["files"].items() if isinstance(v, str) and re.fullmatch(r"[0-9a-f]{7,64}", v)}


def recorded_names(node: KnowledgeNode, key: str = "names") -> dict[str, list[str]]:
    """The names the node gives that each referenced file held when the fingerprint was taken (path ->
    names), under the same condition as :func:`recorded_code`; with ``key="values"``, the strings it
    quotes and the numbers it states that each file held (:meth:`Said.values_held`)."""
    if not fingerprinted(node):
        return {}
    names = node.extra[FINGERPRINT].get(key)
    if not isinstance(names, dict):
        return {}
    return {str(k): [str(n) for n in v if isinstance(n, str)] for k, v in names.items() if isinstance(v, list)}
