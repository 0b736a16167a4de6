"""``autology setup <agent>``: plan the edits (:mod:`autology_mcp.setup.agents`), show them, write them,
and undo them.

- **Idempotent:** a second run plans no change.
- **Nothing of the user's is lost:** JSON edits keep every key and hook of the user's; TOML and Markdown
  get one marked block at the end.
- **Undone byte for byte:** before a file is first changed, its exact bytes (or that there was no file)
  are kept in ``.autology/local/setup.json``, with a digest of what setup wrote. ``--remove`` puts those
  bytes back when the file is still what setup wrote; when someone changed it since (or on another
  machine, which has no backup), it takes out only autology's entries and block and keeps the rest as
  it is now (a JSON file is then written with two-space indents).
- **Shared files:** ``.mcp.json`` is read by Claude Code and Copilot CLI alike, and an instructions file
  may be another's under a link (``CLAUDE.md`` -> ``AGENTS.md``): removing one agent's setup leaves a
  file alone while another agent that is still set up (its hooks are there) uses the same file. A link is
  written through, to its target in the project, and stays a link.
"""

from __future__ import annotations

import base64
import difflib
import hashlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from autology_mcp.common.errors import ValidationError
from autology_mcp.common.fsutil import atomic_write
from autology_mcp.setup.agents import AGENTS, HOOKS_FILE, files_for

RECORD = Path(".autology") / "local" / "setup.json"


@dataclass(frozen=True)
class Change:
    path: str  # relative to the project root
    before: bytes | None  # None: no file
    after: bytes | None  # None: the file is removed
    how: str = ""  # for --remove: "restored" (the exact bytes kept at setup) or "autology's entries taken out"

    def diff(self) -> str:
        old = (self.before or b"").decode("utf-8", "replace").splitlines(keepends=True)
        new = (self.after or b"").decode("utf-8", "replace").splitlines(keepends=True)
        lines = difflib.unified_diff(old, new, f"a/{self.path}" if self.before is not None else "/dev/null",
                                     f"b/{self.path}" if self.after is not None else "/dev/null")
        return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def commands() -> tuple[list[str], list[str]]:
    """(hook command prefix, MCP server command) for this installation: the ``autology`` command when the
    one on PATH is this installation's (portable: teammates who installed autology run the same), else
    this interpreter by absolute path (works here; a teammate runs ``autology setup`` on their machine)."""
    import shutil

    script = Path(sys.executable).with_name("autology")
    on_path = shutil.which("autology")
    if on_path and script.exists() and Path(on_path).resolve() == script.resolve():
        return ["autology"], ["autology"]
    return [sys.executable, "-m", "autology_mcp.hooks"], [sys.executable, "-m", "autology_mcp"]


def _target(root: Path, rel: str) -> Path:
    """The file to read and write for ``rel``: a link's target, which must be in the project."""
    path = root / rel
    if not path.is_symlink():
        return path
    target = path.resolve()
    if not target.is_relative_to(root.resolve()):
        raise ValidationError(rel, f"a link to {target}, outside the project; autology setup leaves it alone")
    return target


def _read(root: Path, rel: str) -> bytes | None:
    try:
        return _target(root, rel).read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError as exc:
        raise ValidationError(rel, "a folder; autology setup writes a file there") from exc


def _digest(data: bytes | None) -> str | None:
    return hashlib.sha256(data).hexdigest() if data is not None else None


def _load_record(root: Path) -> dict:
    try:
        data = json.loads((root / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _check_agent(agent: str) -> None:
    if agent not in AGENTS:
        raise ValidationError("agent", f"unknown agent {agent!r}", AGENTS)


def plan(root: Path, agent: str) -> list[Change]:
    """The changes ``autology setup <agent>`` makes (only the files it changes)."""
    _check_agent(agent)
    changes = []
    for edit in files_for(agent, *commands()):
        before = _read(root, edit.path)
        after = edit.add(before)
        if after != before:
            changes.append(Change(edit.path, before, after))
    return changes


def plan_remove(root: Path, agent: str) -> list[Change]:
    """The changes ``autology setup <agent> --remove`` makes."""
    _check_agent(agent)
    prefixes = commands()
    kept = _load_record(root).get(agent, {})
    shared = _used_by_others(root, agent, prefixes)
    changes = []
    for edit in files_for(agent, *prefixes):
        if _target(root, edit.path).resolve() in shared:
            continue  # another agent that is still set up uses this file
        current = _read(root, edit.path)
        backup = kept.get(edit.path)
        if isinstance(backup, dict) and backup.get("after") == _digest(current) and current is not None:
            before = base64.b64decode(backup["before"]) if backup.get("before") is not None else None
            if before != current:
                changes.append(Change(edit.path, current, before, "restored"))
            continue
        after = edit.remove(current)
        if after != current:
            changes.append(Change(edit.path, current, after, "autology's entries taken out"))
    return changes


def _used_by_others(root: Path, agent: str, prefixes: tuple[list[str], list[str]]) -> set[Path]:
    """The files (resolved) of the other agents that are set up here: their hooks are in place."""
    used: set[Path] = set()
    for other in AGENTS:
        if other != agent and has_our_hooks(root, HOOKS_FILE[other]):
            used |= {_target(root, e.path).resolve() for e in files_for(other, *prefixes)}
    return used


def has_our_hooks(root: Path, rel: str) -> bool:
    from autology_mcp.setup.edits import is_ours, load_json

    try:
        hooks = load_json(rel, _read(root, rel)).get("hooks")
    except ValidationError:
        return False
    return isinstance(hooks, dict) and any(
        isinstance(entries, list) and any(is_ours(e) for e in entries) for entries in hooks.values())


def write(root: Path, agent: str, changes: list[Change], removing: bool = False) -> None:
    """Write the changes, keeping (setup) or forgetting (--remove) each file's original bytes."""
    record = _load_record(root)
    kept = record.setdefault(agent, {})
    for change in changes:
        path = _target(root, change.path)
        if not removing:
            backup = kept.get(change.path)
            if not (isinstance(backup, dict) and backup.get("after") == _digest(change.before)):
                # first change of this file, or it was changed since: what is there now is the user's
                kept[change.path] = {"before": _b64(change.before)}
            kept[change.path]["after"] = _digest(change.after)
        else:
            kept.pop(change.path, None)
        if change.after is None:
            path.unlink(missing_ok=True)
            _remove_empty_folders(root, path.parent)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, change.after)
    if removing:
        record.pop(agent, None)
    _save_record(root, record)


def _b64(data: bytes | None) -> str | None:
    return base64.b64encode(data).decode("ascii") if data is not None else None


def _save_record(root: Path, record: dict) -> None:
    from autology_mcp.knowledge.trust.untrusted import ensure_local_ignored

    path = root / RECORD
    if not record:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(record, indent=1, sort_keys=True) + "\n")
    ensure_local_ignored(root / ".autology")


def _remove_empty_folders(root: Path, folder: Path) -> None:
    """Folders setup made (``.codex/``, ``.github/hooks/``) go when the removal leaves them empty."""
    root = root.resolve()
    folder = folder.resolve()
    while folder != root and root in folder.parents:
        try:
            os.rmdir(folder)
        except OSError:
            return
        folder = folder.parent
