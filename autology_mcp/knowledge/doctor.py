"""``autology doctor``: what is wrong with a store, without changing any node file."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from autology_mcp.common.paths import find_git_toplevel
from autology_mcp.knowledge import models
from autology_mcp.knowledge.graph import read_graph_index, relation_keys
from autology_mcp.knowledge.markdown import stand_in_id
from autology_mcp.knowledge.merge import driver_problems, lost_side
from autology_mcp.knowledge.store import NodeStore


@dataclass
class Problem:
    kind: str  # malformed | duplicate_id | dangling_relation | misplaced | breaks_rule | unmerged | merge_driver
    path: str
    message: str


@dataclass
class DoctorReport:
    nodes: int = 0
    relations: int = 0
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # advice, not problems: `ok` ignores them

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict:
        data = {
            "ok": self.ok,
            "nodes": self.nodes,
            "relations": self.relations,
            "problems": [p.__dict__ for p in self.problems],
        }
        if self.notes:
            data["notes"] = list(self.notes)
        return data


def diagnose(store: NodeStore) -> DoctorReport:
    """Check the files against each other. Reads the store; only derived indexes may be refreshed."""
    report = DoctorReport()
    # Read graph/index.json before reconcile, which rewrites it; compare it with the relations of the
    # files once the cache has caught up (the cache may be stale or just deleted). Absent = fresh clone.
    on_file = read_graph_index(store.paths.graph_index)
    index_exists = store.paths.graph_index.exists()
    store.reconcile()
    in_sync_before = not index_exists or (
        on_file is not None and relation_keys(on_file) == relation_keys(store.index.relations())
    )
    if not in_sync_before:  # derived and gitignored: behind after a merge or a checkout, as every command finds it
        report.notes.append(
            f"{store.rel(store.paths.graph_index)} was behind the relations in the node files (a merge, a checkout "
            "or a hand edit) and has been rewritten from them"
        )
    for path, error in store.index.errors():
        kind = "duplicate_id" if error.startswith("duplicate id") else "malformed"
        report.problems.append(Problem(kind, path, error))
    summaries = store.index.node_summaries()
    report.nodes = len(summaries)
    known = {node_id for node_id, *_ in summaries}
    for node_id, node_type, _status, _title, path in summaries:
        expected = store.rel(store.paths.node_file(node_type, node_id))
        if path != expected and node_id != stand_in_id(path):  # no id of its own: a rule break says so
            report.problems.append(
                Problem("misplaced", path, f"a {node_type} node with id {node_id} belongs at {expected}")
            )
    paths = {node_id: path for node_id, _t, _s, _ti, path in summaries}
    report.problems.extend(rule_problems(store, paths))
    relations = store.index.relations()
    report.relations = len(relations)
    for r in relations:
        if r.target not in known:
            report.problems.append(
                Problem(
                    "dangling_relation",
                    paths.get(r.source, r.source),
                    f"relation {r.type.value} from {r.source} points at {r.target}, which does not exist",
                )
            )
    report.problems.extend(unmerged_node_files(store))
    report.problems.extend(Problem("merge_driver", path, message) for path, message in driver_problems(store.root))
    report.problems.sort(key=lambda p: (p.kind, p.path, p.message))
    live = [n for n in store.index.all_nodes() if n.status.value != "superseded" and n.references]
    report.notes.extend(stale_notes(store, live))
    report.notes.extend(fingerprint_notes(live))
    report.notes.extend(instruction_notes(store))
    if report.nodes > models.NODE_COUNT_GUIDANCE:
        report.notes.append(
            f"{report.nodes} nodes is above the {models.NODE_COUNT_GUIDANCE:,} the benchmarks cover: everything works, "
            "but a start without a cache, a full rebuild and queries get slower as the store grows (docs/limits.md)"
        )
    return report


def rule_problems(store: NodeStore, paths: dict[str, str]) -> list[Problem]:
    """Each rule a hand-written node file breaks (knowledge/rules.py): the node is read and searched
    with a stand-in for what breaks it, and a write through the tools keeps what the person wrote."""
    from autology_mcp.knowledge.rules import rule_breaks

    return [
        Problem("breaks_rule", paths.get(node.id, node.id), f"{b.rule}: {b.fix}")
        for node in store.index.all_nodes() for b in rule_breaks(node)
    ]


STALE_SHOWN = 5


def stale_notes(store: NodeStore, live: list) -> list[str]:
    """The nodes of ``live`` (not superseded, with references) whose code moved on (the staleness rule,
    as ``autology analyze`` and the edit hooks judge it): advice, not problems, since the node may still
    hold; the first few, with what changed."""
    from autology_mcp.knowledge.trust.staleness import judge

    judged = judge(store.root, store, live)
    stale = [(n, f) for n in live for f in judged.get(n.id, []) if f.stale]
    if not stale:
        return []
    nodes = len({n.id for n, _ in stale})
    return [_note(f"{nodes} node(s) describe code that has moved on since they were reviewed: check them "
                  "(`autology analyze` lists every one), then update or supersede them",
                  [(n, f.why or "") for n, f in stale], "")]


def fingerprint_notes(live: list) -> list[str]:
    """The nodes of ``live`` (not superseded, with references) with no record of the code they were
    written against (written before issue 38, or edited by hand since): a rebase, a squash-merge or the
    next commit of their file moves their base and clears their flags; one command records it (no git
    is read to tell)."""
    from autology_mcp.knowledge.trust.fingerprints import fingerprinted

    missing = [n for n in live if not fingerprinted(n)]
    if not missing:
        return []
    return [f"{len(missing)} node(s) have no record of the code they were written against (written before it was "
            "kept, or edited by hand since): a rebase, a squash-merge or a relate would clear their stale flags; "
            "`autology analyze --record-fingerprints` records it from the commit that last changed each file, then "
            "commit the node files"]


def _note(header: str, rows: list, more: str) -> str:
    """A note: its header, then the first :data:`STALE_SHOWN` (node, why) rows, then how many more."""
    lines = [header] + [f"  {n.id[:8]} {n.title[:60]!r}: {why}" for n, why in rows[:STALE_SHOWN]]
    if len(rows) > STALE_SHOWN:
        lines.append(f"  … and {len(rows) - STALE_SHOWN} more{more}")
    return "\n".join(lines)


def instruction_notes(store: NodeStore) -> list[str]:
    """The nodes whose text addresses the agent with instructions and no person reviewed on this machine
    (:mod:`autology_mcp.knowledge.trust.untrusted`): the hooks hold them back; a note, since the text may be
    harmless."""
    from autology_mcp.knowledge.trust.untrusted import flagged_nodes

    waiting = [(n, flags) for n, flags, reviewed in flagged_nodes(store.paths.base, store.index.all_nodes()) if not reviewed]
    if not waiting:
        return []
    return [_note(f"{len(waiting)} node(s) hold text that addresses the agent with instructions: the hooks do not "
                  "inject them until a person reads them and accepts them at a terminal (`autology review ID` shows one)",
                  [(n, flags[0].text()) for n, flags in waiting], " (`autology review`)")]


_UNMERGED = {
    "UD": "deleted on their branch, edited on ours: keep it with `git add {path}` or drop it with `git rm {path}`",
    "DU": "deleted on our branch, edited on theirs: keep it with `git add {path}` or drop it with `git rm {path}`",
    "UU": "both branches changed it and the conflict is marked in the file: edit it, then `git add {path}`",
    "AA": "both branches added it and the conflict is marked in the file: edit it, then `git add {path}`",
    "AU": "an unfinished merge: resolve it, then `git add {path}`",
    "UA": "an unfinished merge: resolve it, then `git add {path}`",
    "DD": "deleted on both branches: `git rm {path}`",
}


def unmerged_node_files(store: NodeStore) -> list[Problem]:
    """Node files git left unmerged (an unfinished merge or rebase), with how to finish each."""
    import subprocess

    try:
        result = subprocess.run(
            ["git", "-C", str(store.root), "status", "--porcelain=v1", "-z", "--", str(store.paths.nodes)],
            capture_output=True, text=True, timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    if result.returncode != 0:
        return []  # not a git work tree
    unmerged = [(entry[:2], entry[3:]) for entry in result.stdout.split("\0") if entry[:2] in _UNMERGED]
    top = find_git_toplevel(store.root) if unmerged else None  # git prints paths from the work tree's top
    if top is None:
        return []
    problems = []
    for state, path in unmerged:
        lost = lost_side(top, path) if state in ("UU", "AA") else None
        message = _LOST.format(path=path, **_SIDES[lost]) if lost else _UNMERGED[state].format(path=path)
        problems.append(Problem("unmerged", store.rel(top / path), "git merge left it unmerged: " + message))
    return problems


# A node file both sides changed that holds one side only, with no conflict markers: what git leaves
# when the merge driver fails (its program gone: `merge_driver` says so). `git add` would drop the other.
_SIDES = {
    "theirs": {"lost": "their side (stage 3: the branch merged in; in a rebase, your commit being replayed)",
               "kept": "ours", "stage": 3},
    "ours": {"lost": "our side (stage 2: the branch you are on; in a rebase, the branch rebased onto)",
             "kept": "theirs", "stage": 2},
}
_LOST = (
    "it holds only {kept}, with no conflict markers (what a failed merge driver leaves): {lost} is lost from the"
    " file, and `git add` now would drop it. Get it back: `autology merge-file {path}` (merges git's three versions"
    " of it as the driver does), or fix the driver and `git checkout -m -- {path}`; `git show :{stage}:{path}` shows"
    " the lost side. Then check the file and `git add {path}`"
)


def render(report: DoctorReport, root: Path) -> str:
    lines = [f"{report.nodes} nodes, {report.relations} relations in {root}"]
    if report.ok:
        lines.append("✓ no problems found")
    for p in report.problems:
        lines.append(f"✗ [{p.kind}] {p.path}: {p.message}")
    lines.extend(f"! {note}" for note in report.notes)
    return "\n".join(lines)
