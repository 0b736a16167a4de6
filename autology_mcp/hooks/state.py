"""What the hooks already told one Claude Code session, so they never say it twice.

One small JSON file per session under ``.autology/cache/hooks/`` (derived, gitignored, private to the
machine): the items the prompt hook injected (``prompt``: node ids and ``path:lines``), the files the
edit hooks looked at (``edit``) and the nodes they told (``nodes``). A node is told once per session,
whichever hook or file brought it (:func:`told_nodes`). After a compaction or a ``/clear`` the model
no longer has what was told, so SessionStart forgets it (:func:`forget_told`). Reads and
writes hold an ``flock`` on the file, so two hooks of one session running at once (parallel edits)
do not lose each other's entries. Files of sessions untouched for :data:`KEEP_DAYS` are removed.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

KEEP_DAYS = 7
MAX_ENTRIES = 2000  # per list; a session that long forgets its oldest entries first
_SAFE = re.compile(r"[^A-Za-z0-9._-]")


def state_dir(root: Path) -> Path:
    return Path(root) / ".autology" / "cache" / "hooks"


def _file(root: Path, session_id: str) -> Path:
    name = _SAFE.sub("_", session_id)[:128] or "unknown"
    return state_dir(root) / f"session-{name}.json"


@contextmanager
def session_state(root: Path, session_id: str | None) -> Iterator[dict[str, list[str]]]:
    """The session's state, locked; changes to the yielded dict are saved on exit.

    Without a session id (no way to tell sessions apart) the state is empty and nothing is saved.
    Without a ``.autology/cache/`` folder nothing is created: a hook never creates the store."""
    if not session_id or not (Path(root) / ".autology").is_dir():
        yield {}
        return
    folder = state_dir(root)
    folder.mkdir(parents=True, exist_ok=True)
    path = _file(root, session_id)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    with os.fdopen(fd, "r+", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            state = json.loads(handle.read() or "{}")
        except ValueError:
            state = {}
        if not isinstance(state, dict):
            state = {}
        state = {k: [x for x in v if isinstance(x, str)] for k, v in state.items() if isinstance(v, list)}
        before = json.dumps(state, sort_keys=True)
        yield state
        after = {k: v[-MAX_ENTRIES:] for k, v in state.items()}
        if json.dumps(after, sort_keys=True) != before:
            handle.seek(0)
            handle.truncate()
            handle.write(json.dumps(after, sort_keys=True))
            handle.flush()
    _prune(folder, keep=path)


def told_nodes(state: dict[str, list[str]]) -> set[str]:
    """The nodes whose text already reached the model in this session: by the prompt hook (its node
    items) or by the edit hooks."""
    return set(state.get("nodes", [])) | set(state.get("prompt", []))


def forget_told(root: Path, session_id: str | None) -> None:
    """Everything told in this session may be told again (the context was compacted or cleared)."""
    with session_state(root, session_id) as state:
        for key in ("prompt", "edit", "nodes", "commits"):
            state.pop(key, None)


def _prune(folder: Path, keep: Path) -> None:
    """Remove state files of sessions untouched for KEEP_DAYS (cheap: one listing of a small folder)."""
    cutoff = time.time() - KEEP_DAYS * 86400
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith("session-") and entry.path != str(keep):
            try:
                if entry.stat().st_mtime < cutoff:
                    os.unlink(entry.path)
            except OSError:
                continue
