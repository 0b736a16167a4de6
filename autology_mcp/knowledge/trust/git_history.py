"""Git, read once, as staleness needs it (:mod:`.staleness`): :class:`History` answers each question
about one work tree's history (a node's base, a file's text at a commit, the commits after a base
that changed a path, a file's blob log, a deletion or a rename) with as few git calls as it can, and
keeps the answers for as long as HEAD stays where it is; :func:`history` keeps one per work tree and
HEAD between calls (a server's hooks). Every git call has a timeout; outside git, HEAD is None."""

from __future__ import annotations

import bisect
import re
import subprocess
import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass
from pathlib import Path


GIT_TIMEOUT = 5.0
PATHS_BEFORE_WALK = 6  # paths of one base asked with their own git log before one walk of base..HEAD answers all
BASES_BEFORE_WINDOW = 4  # bases answered exactly before one walk of the recent history answers the rest
WINDOW_SLACK = 90 * 86400  # that walk starts this long before the oldest base asked about


@dataclass(frozen=True)
class Commit:
    sha: str
    when: int  # committer time, Unix seconds
    subject: str
    path: str  # the path asked about (a file, or a folder changed under)

    def label(self) -> str:
        from datetime import UTC, datetime

        return f"{self.sha[:9]}, {datetime.fromtimestamp(self.when, UTC).strftime('%Y-%m-%d')}"


def read(path: Path) -> str | None:
    """A file's text, undecodable bytes replaced; None when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except (OSError, ValueError):
        return None


class History:
    """The git history of one work tree as staleness needs it, its answers kept while HEAD stays."""

    def __init__(self, root: Path, where: tuple[str | None, str] | None = None):
        """``where``: HEAD and the root's prefix in the repository (:func:`_where`), when known."""
        self.root = Path(root)
        self.head, self.prefix = where if where is not None else _where(self.root)
        self._node_commits: dict[tuple[str, ...], tuple[dict[str, str], bool]] = {}
        self._at: dict[int, str | None] = {}
        self._times: tuple[list[str], list[int]] | None = None
        self._paths_asked: Counter[str] = Counter()
        self._bases_asked: set[str] = set()
        self._window: tuple[int, list[tuple[Commit, frozenset[str]]], dict[str, list[str]]] | None = None
        self._ancestors: OrderedDict[tuple[str, int], set[str]] = OrderedDict()
        self._times_of: dict[str, int | None] = {}
        self._oldest: int | None = None
        self._touched: dict[str, list[int]] = {}
        self._when: dict[str, int] = {}
        self._renames: dict[str, str] = {}
        self._latest: dict[tuple[str, str, int], list[Commit]] = {}
        self._path_logs: dict[tuple[str, str], list[Commit]] = {}
        self._diffs: dict[tuple[str, str], bool] = {}
        self._deprecating: dict[tuple[str | None, str], set[str]] = {}  # (rev, folder) -> its files that say "deprecat"
        self._contents: OrderedDict[tuple[str, str], str | None] = OrderedDict()
        self._logs: dict[str, list[tuple[Commit, frozenset[str]]]] = {}
        self._batch: subprocess.Popen | None = None
        self._lock = threading.Lock()
        self._ids: dict[str, str] = {}  # "rev:path" -> the blob id cat-file named
        self._blob_logs: dict[str, list[tuple[Commit, str, str]]] = {}
        self._moves: dict[tuple[str, str], tuple[str, Commit] | None] = {}

    def _git(self, *args: str, timeout: float = GIT_TIMEOUT) -> str | None:
        try:
            out = subprocess.run(["git", "-c", "core.quotePath=false", *args], cwd=self.root, capture_output=True,
                                 text=True, timeout=timeout, errors="replace")
        except (OSError, subprocess.SubprocessError, ValueError):
            return None
        return out.stdout if out.returncode == 0 else None

    def node_bases(self, own_files: dict[str, str], modified: dict[str, float]) -> dict[str, str | None]:
        """Each node's base (``own_files``: node id -> its file, relative to the root): the last commit
        that changed the file; for a file with uncommitted edits or never committed, the commit HEAD's
        history was at at its ``modified`` time; None outside git or before the first commit. One walk
        of the log of the nodes' folders, kept while HEAD stays."""
        if self.head is None:
            return dict.fromkeys(own_files)
        folders = tuple(sorted({f.rsplit("/", 1)[0] for f in own_files.values()}))
        status = self._git("status", "--porcelain", "--no-renames", "--untracked-files=all", "--", *folders) or ""
        dirty = {line[3:].strip().strip('"').removeprefix(self.prefix) for line in status.splitlines() if len(line) > 3}
        last = self._last_commits(folders, set(own_files.values()) - dirty)
        return {i: self._before(modified.get(i, 0.0)) if f in dirty or f not in last else last[f]
                for i, f in own_files.items()}

    def _last_commits(self, folders: tuple[str, ...], wanted: set[str]) -> dict[str, str]:
        """The last commit that changed each file under ``folders``, from ``git log`` read newest first
        and stopped as soon as every ``wanted`` file has been seen (a long history is not walked to its
        root for node files committed lately); kept while HEAD stays, walked again only for a file
        not seen yet."""
        last, complete = self._node_commits.get(folders, ({}, False))
        if complete or wanted <= last.keys():
            return last
        try:
            proc = subprocess.Popen(["git", "-c", "core.quotePath=false", "log", "--format=%x00%H", "--name-only",
                                     "--relative", "--", *folders], cwd=self.root, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, text=True, errors="replace")
        except OSError:
            return last
        sha, complete = "", True
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                line = line.rstrip("\n")
                if line.startswith("\x00"):
                    if wanted <= last.keys():
                        complete = False  # every file asked about is known: the rest of the history can wait
                        break
                    sha = line[1:]
                elif line.strip() and line.strip() not in last:
                    last[line.strip()] = sha
        finally:
            proc.kill() if not complete else None
            proc.wait()
        self._node_commits[folders] = (last, complete)
        return last

    def _before(self, when: float) -> str | None:
        """The commit ``git rev-list -1 --before=@when HEAD`` names: the first in HEAD's history (git's
        order) whose commit time is not after ``when``. Past a few questions, one listing of the history
        answers the rest by bisection."""
        key = int(when)
        if key in self._at:
            return self._at[key]
        head_time = self._commit_time(self.head) if self.head else None
        if head_time is not None and key >= head_time:  # written after HEAD was committed: HEAD is the first
            self._at[key] = self.head
            return self.head
        if len(self._at) < 8:
            out = self._git("rev-list", "-1", f"--before=@{key}", "HEAD")
            self._at[key] = (out or "").strip() or None
            return self._at[key]
        if self._times is None:
            shas, lowest = [], []
            for line in (self._git("log", "--format=%H %ct", "HEAD", timeout=60) or "").splitlines():
                sha, _, when = line.partition(" ")
                t = -int(when or 0)  # negated: the running minimum of the times, rising, for bisect
                shas.append(sha)
                lowest.append(max(t, lowest[-1]) if lowest else t)
            self._times = (shas, lowest)
        shas, lowest = self._times
        at = bisect.bisect_left(lowest, -key)  # the first whose running minimum time is <= when
        self._at[key] = shas[at] if at < len(shas) else None
        return self._at[key]

    def content(self, rev: str, path: str) -> str | None:
        """A file's text at a commit (None when it is not there), read through one ``git cat-file
        --batch`` kept open for this HEAD."""
        key = (rev, path)
        with self._lock:
            if key in self._contents:
                self._contents.move_to_end(key)
                return self._contents[key]
            text = self._cat(rev if path == "\x00blob" else f"{rev}:{self.prefix}{path}")
            self._contents[key] = text
            while len(self._contents) > 512:
                self._contents.popitem(last=False)
        return text

    def _cat(self, spec: str) -> str | None:
        try:
            if self._batch is None or self._batch.poll() is not None:
                self._batch = subprocess.Popen(["git", "cat-file", "--batch"], cwd=self.root, stdin=subprocess.PIPE,
                                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            assert self._batch.stdin is not None and self._batch.stdout is not None
            self._batch.stdin.write(spec.encode() + b"\n")
            self._batch.stdin.flush()
            header = self._batch.stdout.readline().decode(errors="replace").split()
            if len(header) != 3:  # "<spec> missing" (or ambiguous): nothing follows
                return None
            data = self._batch.stdout.read(int(header[2]) + 1)[:-1]  # read whatever it is, to stay in step
            if header[1] == "blob":
                self._ids[spec] = header[0]
            return data.decode("utf-8", errors="replace") if header[1] == "blob" else None
        except (OSError, ValueError, AssertionError):
            self._batch = None
            return None

    def blob_id(self, rev: str, path: str) -> str:
        """The blob id of a file at a commit ("" when it is not there)."""
        self.content(rev, path)
        return self._ids.get(f"{rev}:{self.prefix}{path}", "")

    def blob(self, blob_id: str) -> str | None:
        """A blob's text by its id (an abbreviation will do); None when this clone does not have it."""
        if not re.fullmatch(r"[0-9a-f]{7,64}", blob_id or ""):
            return None
        return self.content(blob_id, "\x00blob")

    def since_blob(self, path: str, blob_id: str) -> tuple[list[Commit], bool]:
        """The commits of HEAD's history after the newest one that left ``path`` as ``blob_id``, oldest
        first; with True when no commit of HEAD's history holds that version (a squashed branch's, or
        never committed): then the change is "since the node was written". From the path's ``git log
        --raw`` (:meth:`blob_logs`: ``analyze`` reads those of all the paths it needs in one call), kept
        while HEAD stays."""
        if path not in self._blob_logs:
            self.blob_logs([path])
        log = self._blob_logs[path]
        for at, (_, old, new) in enumerate(log):  # newest first
            if new.startswith(blob_id):  # this commit left it so: the later ones are after it
                return [c for c, _, _ in log[:at]][::-1], False
            if old.startswith(blob_id):  # it was so before this commit (brought by a merge, which --raw leaves out)
                return [c for c, _, _ in log[:at + 1]][::-1], False
        return [], True

    def blob_logs(self, paths: list[str]) -> None:
        """Read the ``git log --raw`` of these paths (each commit of HEAD's history that changed one, newest
        first, with the blob ids before and after) that :meth:`since_blob` needs, in one git call for as
        many as 200 paths at a time: ``analyze`` asks it of every path whose node's fingerprint disagrees
        with its base. Kept while HEAD stays."""
        wanted = [p for p in dict.fromkeys(paths) if p not in self._blob_logs]
        for start in range(0, len(wanted), 200):
            chunk = wanted[start:start + 200]
            out = self._git("log", "--no-renames", "--raw", "-c", "--no-abbrev", "--relative", _FORMAT, "HEAD", "--",
                            *chunk, timeout=60)
            if out is None and len(chunk) > 1:  # (one bad path fails the call: ask them one by one)
                for path in chunk:
                    self.blob_logs([path])
                continue
            logs: dict[str, list[tuple[Commit, str, str]]] = {p: [] for p in chunk}
            fields = (out or "").split("\x00")[1:]
            for sha, when, rest in zip(fields[0::3], fields[1::3], fields[2::3]):
                subject, _, raw = rest.partition("\n")
                for line in raw.splitlines():
                    meta, _, changed = line.partition("\t")
                    parts = meta.split()
                    if line.startswith("::") and changed in logs:  # a merge that changed it against every parent:
                        logs[changed].append((Commit(sha, int(when or 0), subject.strip(), changed), "", ""))  # no ids
                    elif line.startswith(":") and len(parts) > 4 and changed in logs:
                        commit = Commit(sha, int(when or 0), subject.strip(), changed)
                        logs[changed].append((commit, parts[2], parts[3]))
            self._blob_logs.update(logs)

    def close(self) -> None:
        if self._batch is not None:
            try:
                self._batch.stdin.close()  # type: ignore[union-attr]
                self._batch.wait(timeout=2)
            except (OSError, subprocess.SubprocessError):
                self._batch.kill()
            self._batch = None

    def later(self, base: str, path: str) -> list[Commit]:
        """The commits after ``base`` that changed ``path`` (a file, or any file under a folder), oldest
        first. For the first few bases asked about, exactly ``base..HEAD``: a path's own ``git log`` for
        the first few paths of a base, one walk of ``base..HEAD`` past that. Past a few bases (``analyze``
        over a large store, each node with its own base), one walk of the recent history answers them
        all (:meth:`_from_window`)."""
        log = self._logs.get(base)
        key = (base, path)
        if key in self._path_logs:
            return self._path_logs[key]
        if log is None and base not in self._bases_asked and len(self._bases_asked) >= BASES_BEFORE_WINDOW:
            self._path_logs[key] = found = self._from_window(base, path)
            return found
        self._bases_asked.add(base)
        if log is None and self._paths_asked[base] < PATHS_BEFORE_WALK:
            self._paths_asked[base] += 1
            out = self._git("log", "--no-renames", _FORMAT, "--relative", f"{base}..HEAD", "--", path) or ""
            self._path_logs[key] = found = _commits(out, path)[::-1]
            return found
        if log is None:
            out = self._git("log", "--no-renames", _FORMAT, "--name-only", "--relative", f"{base}..HEAD",
                            timeout=60) or ""
            log = [(commit, files) for commit, files, _ in _named_log(out)]
            self._logs[base] = log
        return _touching(log, path)

    def latest(self, base: str, path: str, most: int) -> list[Commit]:
        """At most ``most`` of the newest commits that changed ``path`` since ``base``, oldest first, for the
        information line. When :meth:`later` has not been read, by date: the newest commits of the path
        committed after the base was (git reads back only as far as it needs; ``base..HEAD`` would mark
        every ancestor of the base first, most of a deep history)."""
        if (base, path) in self._path_logs or base in self._logs or self._window is not None:
            return self.later(base, path)[-most:]
        key = (base, path, most)
        if key not in self._latest:
            self._latest[key] = self._latest_by_date(base, path, most)
        return self._latest[key]

    def _latest_by_date(self, base: str, path: str, most: int) -> list[Commit]:
        since = self._commit_time(base)
        out = self._git("log", "--no-renames", f"-n{most}", _FORMAT, "--relative", "HEAD", "--", path) or ""
        found = [c for c in _commits(out, path) if c.sha != base]

        def after(c: Commit) -> bool:  # the same second as the base: ask git whether it is an ancestor
            if since is None or c.when > since:
                return True
            return c.when == since and self._git("merge-base", "--is-ancestor", c.sha, base) is None

        return [c for c in found if after(c)][::-1]

    def _from_window(self, base: str, path: str) -> list[Commit]:
        """``later`` from one walk of the history since a while before the oldest base asked about: the
        commits of it that are not ``base`` or its ancestors (followed through the parents the walk
        read). A branch older than :data:`WINDOW_SLACK` merged after the base is not seen: it only
        changes which commit a flag names, never whether there is one (that compares the texts)."""
        when = self._commit_time(base)
        if when is None:
            return []
        if self._window is None or when - WINDOW_SLACK < self._window[0]:
            start = min(when, self._oldest if self._oldest is not None else when) - WINDOW_SLACK
            out = self._git("log", "--no-renames", _FORMAT.replace("%H", "%H%x00%P"), "--name-only", "--relative",
                            f"--since=@{start}", "HEAD", timeout=120) or ""
            named = _named_log(out, parents=True)
            entries = [(commit, files) for commit, files, _ in named]
            parents = {commit.sha: ups for commit, _, ups in named}
            touched: dict[str, list[int]] = {}  # a file or folder -> the entries that changed it or under it
            for at, (_, files) in enumerate(entries):
                for name in files | {f.rsplit("/", k)[0] for f in files for k in range(1, f.count("/") + 1)}:
                    touched.setdefault(name, []).append(at)
            self._window = (start, entries, parents)
            self._touched = touched
            self._when = {c.sha: c.when for c, _ in entries}
            self._ancestors.clear()
        _, entries, parents = self._window
        # Commits older than the base by more than the slack are taken for its ancestors, as the
        # window's start does: only the rest are looked at.
        candidates = [entries[at][0] for at in self._touched.get(path.rstrip("/"), ())
                      if entries[at][0].when >= when - WINDOW_SLACK]
        if not candidates:
            return []
        # The base's ancestors among them: a walk down the parents from the base, not below a day before
        # the oldest candidate (an ancestor's descendants are, clocks aside, not older than it).
        floor = min(c.when for c in candidates) - 86400
        key = (base, floor)
        seen = self._ancestors.get(key)
        if seen is None:
            seen, todo = {base}, [base]
            while todo:
                sha = todo.pop()
                if self._when.get(sha, floor) < floor:
                    continue
                for parent in parents.get(sha, ()):
                    if parent not in seen:
                        seen.add(parent)
                        todo.append(parent)
            self._ancestors[key] = seen
            while len(self._ancestors) > 64:
                self._ancestors.popitem(last=False)
        return [Commit(c.sha, c.when, c.subject, path) for c in candidates if c.sha not in seen]

    def prepare(self, bases: list[str | None]) -> None:
        """Many nodes with their own bases (``analyze`` over a large store): the times of all of them in
        one git call, so one walk of the history, from before the oldest, answers every :meth:`later`."""
        distinct = [b for b in dict.fromkeys(bases) if b and b not in self._times_of]
        if len(distinct) + len(self._times_of) <= BASES_BEFORE_WINDOW:
            return
        try:
            out = subprocess.run(["git", "log", "--no-walk=unsorted", "--format=%H %ct", "--stdin"], cwd=self.root,
                                 input="\n".join(distinct), capture_output=True, text=True, timeout=60).stdout
        except (OSError, subprocess.SubprocessError):
            return
        for line in out.splitlines():
            sha, _, when = line.partition(" ")
            if when.isdigit():
                self._times_of[sha] = int(when)
        known = [t for t in self._times_of.values() if t is not None]
        self._oldest = min(known) if known else None

    def _commit_time(self, sha: str) -> int | None:
        if sha not in self._times_of:
            out = (self._git("log", "-1", "--format=%ct", sha) or "").strip()
            self._times_of[sha] = int(out) if out.isdigit() else None
        return self._times_of[sha]

    def changed_since(self, base: str, path: str) -> bool:
        """Whether ``path`` (a file or a folder) differs between ``base`` and the work tree (tracked files);
        kept for one :func:`judge` (the work tree changes between questions)."""
        key = (base, path)
        if key not in self._diffs:
            try:
                out = subprocess.run(["git", "diff", "--quiet", base, "--", path], cwd=self.root, capture_output=True,
                                     timeout=GIT_TIMEOUT)
                self._diffs[key] = out.returncode != 0
            except (OSError, subprocess.SubprocessError):
                self._diffs[key] = True
        return self._diffs[key]

    def deleted(self, since: str, path: str) -> Commit | None:
        """The first commit after ``since`` that deleted ``path`` (None: it was not deleted by a commit).
        With the recent history walked already (:meth:`prepare`), the first later commit without the file."""
        if self._window is not None or self._oldest is not None:
            return next((c for c in self.later(since, path) if self.content(c.sha, path) is None), None)
        out = self._git("log", "--diff-filter=D", _FORMAT, f"{since}..HEAD", "--", path) or ""
        deletions = _commits(out, path)
        return deletions[-1] if deletions else None  # the log is newest first: the last is the first deletion

    def renamed(self, base: str, path: str) -> tuple[str, Commit] | None:
        """Where a file gone from the work tree went: its name after the renames since ``base``, and the
        last commit that renamed it (None when it was not renamed, but deleted). Each step is the commit
        that removed the name, read with rename detection: no walk of the whole history. Kept while HEAD stays."""
        if (base, path) not in self._moves:
            self._moves[(base, path)] = self._renamed(base, path)
        return self._moves[(base, path)]

    def _renamed(self, base: str, path: str) -> tuple[str, Commit] | None:
        name, last, since = path, None, base
        for _ in range(8):
            gone = self.deleted(since, name)
            if gone is None:
                break
            if gone.sha not in self._renames:  # one commit often renames many referenced files
                self._renames[gone.sha] = self._git("show", "-M", "--name-status", "--format=", gone.sha) or ""
            out = self._renames[gone.sha]
            new = next((parts[2] for parts in (line.split("\t") for line in out.splitlines())
                        if len(parts) == 3 and parts[0].startswith("R") and parts[1] == self.prefix + name), None)
            if new is None:
                break
            name, last, since = new.removeprefix(self.prefix), gone, gone.sha
            if (self.root / name).exists():
                break
        return (name, last) if last is not None and name != path else None

    def worktree(self, path: str) -> str | None:
        return read(self.root / path)


_histories: OrderedDict[tuple[str, str | None], History] = OrderedDict()
_histories_lock = threading.Lock()


def _where(root: Path) -> tuple[str | None, str]:
    """HEAD and the root's path inside its repository (``sub/dir/``), in one git call; (None, "")
    outside git or before the first commit."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD", "--show-prefix"], cwd=root, capture_output=True, text=True,
                             timeout=GIT_TIMEOUT)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None, ""
    lines = out.stdout.splitlines() if out.returncode == 0 else []
    return (lines[0].strip(), lines[1].strip() if len(lines) > 1 else "") if lines else (None, "")


def history(root: Path) -> History:
    """The work tree's :class:`History` for its current HEAD, kept between calls (a server's hooks)."""
    where = _where(Path(root))
    key = (str(Path(root).resolve()), where[0])
    with _histories_lock:
        have = _histories.get(key)
        if have is None:
            _histories[key] = have = History(root, where)
            while len(_histories) > 8:
                _histories.popitem(last=False)[1].close()
        return have


_FORMAT = "--format=%x00%H%x00%ct%x00%s"  # what _commits reads


def _commits(out: str, path: str) -> list[Commit]:
    """The commits of ``git log`` with :data:`_FORMAT` (no file names), in git's order (newest first)."""
    fields = out.split("\x00")[1:]
    return [Commit(sha, int(when or 0), subject.strip(), path)
            for sha, when, subject in zip(fields[0::3], fields[1::3], fields[2::3])]


def _named_log(out: str, parents: bool = False) -> list[tuple[Commit, frozenset[str], list[str]]]:
    """The commits of ``git log --name-only`` with :data:`_FORMAT` (with ``%P`` after the hash when
    ``parents``), oldest first: each with the files it changed and its parents."""
    width = 4 if parents else 3
    fields = out.split("\x00")[1:]
    entries = []
    for at in range(0, len(fields) - width + 1, width):
        sha, *middle, when, rest = fields[at:at + width]
        subject, _, names = rest.partition("\n")
        entries.append((Commit(sha, int(when or 0), subject.strip(), ""),
                        frozenset(n.strip() for n in names.splitlines() if n.strip()),
                        middle[0].split() if middle else []))
    entries.reverse()
    return entries


def _touching(log: list[tuple[Commit, frozenset[str]]], path: str) -> list[Commit]:
    prefix = path.rstrip("/") + "/"
    return [Commit(c.sha, c.when, c.subject, path) for c, files in log
            if path in files or any(f.startswith(prefix) for f in files)]
