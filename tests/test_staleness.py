"""Staleness that means something (issue 29): a node is stale when the code it talks about moved on
(a name it mentions gone, its lines or symbol changed, its file mostly rewritten), decided from git
history and the working tree; another later commit is information, not a flag. Real git
repositories in temp dirs, with a clone, a checkout, a rebase and a rename."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from autology_mcp.knowledge.analyze import analyze
from autology_mcp.knowledge.service import Autology
from autology_mcp.knowledge.staleness import follow_span, judge, mentions

RETRY = '''"""Retries."""

MAX_ATTEMPTS = 5


def backoff(attempt):
    return 2 ** attempt


def retry(call, retry_after=None):
    for attempt in range(MAX_ATTEMPTS):
        try:
            return call()
        except OSError:
            sleep(retry_after or backoff(attempt))
'''

DECISION = ("## Context\nCalls fail.\n\n## Decision\nRetry with `backoff`, honour `retry_after`, at most `MAX_ATTEMPTS`.\n\n"
            "## Alternatives\nNone.\n\n## Consequences\nSlower failures.")


def git(root: Path, *args: str, when: str | None = None) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "T",
           "GIT_COMMITTER_EMAIL": "t@e", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    if when:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = when
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True, env=env).stdout


def commit(root: Path, message: str, when: str = "2030-01-01T00:00:00Z") -> None:
    git(root, "add", "-A")
    git(root, "commit", "-qm", message, when=when)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "retry.py").write_text(RETRY)
    (root / "src" / "other.py").write_text("x = 1\n")
    git(root, "init", "-q", "-b", "main")
    commit(root, "the code", when="2020-01-01T00:00:00Z")
    Autology.open(root).close()
    return root


def capture(root: Path, refs: list[str], content: str = DECISION, title: str = "Retry failed calls") -> str:
    if "## Context" not in content:
        content = f"## Context\nWhy.\n\n## Decision\n{content}\n\n## Alternatives\nNone.\n\n## Consequences\nSome."
    service = Autology.open(root)
    try:
        return service.capture(title, content, type="decision", references=refs).id
    finally:
        service.close()


def findings(root: Path, node_id: str) -> list:
    service = Autology.open(root)
    try:
        return judge(root, service.store, [service.store.get(node_id)], explain=True).get(node_id, [])
    finally:
        service.close()


def only(root: Path, node_id: str):
    found = findings(root, node_id)
    assert len(found) == 1, found
    return found[0]


def edit(root: Path, old: str, new: str, path: str = "src/retry.py") -> None:
    file = root / path
    text = file.read_text()
    assert old in text
    file.write_text(text.replace(old, new))


# ------------------------------------------------------------------------------ the parts


def test_what_a_node_mentions() -> None:
    names, paths = mentions("Use `HTTPAdapter.max_retries` in `src/net/` and retry_after, "
                            "not e.g. the Session or `requests.sessions`; MAX_RETRIES; camelCase.")
    assert {"max_retries", "retry_after", "MAX_RETRIES", "camelCase"} <= names
    assert not {"Session", "e.g", "sessions", "requests"} & names
    assert paths == {"src/net"}


def test_a_span_moves_with_lines_added_above_and_breaks_when_its_lines_change() -> None:
    before = ["a", "b", "c", "d", "e"]
    assert follow_span(before, ["new", "a", "b", "c", "d", "e"], (2, 4)) == (3, 5)
    assert follow_span(before, ["a", "b", "c", "d", "e", "tail"], (2, 4)) == (2, 4)
    assert follow_span(before, ["a", "b", "C", "d", "e"], (2, 4)) is None
    assert follow_span(before, ["a", "b", "x", "c", "d", "e"], (2, 4)) is None  # inserted inside
    assert follow_span(before, ["a", "e"], (2, 4)) is None


# ------------------------------------------------------------------------------ the rule


def test_a_later_commit_that_keeps_what_the_node_says_is_information_not_a_flag(repo: Path) -> None:
    node = capture(repo, ["src/retry.py"])
    commit(repo, "record the decision")
    assert only(repo, node).stale is False and only(repo, node).later is None
    edit(repo, '"""Retries."""', '"""Retries, with a docstring that says more."""')
    commit(repo, "Say more in the docstring")
    f = only(repo, node)
    assert f.stale is False
    assert f.later.startswith("1 later commit, the last: Say more in the docstring (")
    assert kinds(repo) == []


def test_a_name_the_node_mentions_gone_is_stale_and_names_the_commit(repo: Path) -> None:
    node = capture(repo, ["src/retry.py"])
    commit(repo, "record the decision")
    edit(repo, "retry_after or ", "")
    edit(repo, "def retry(call, retry_after=None):", "def retry(call):")
    commit(repo, "Drop the retry_after hint")
    sha = git(repo, "rev-parse", "--short=9", "HEAD").strip()
    f = only(repo, node)
    assert f.stale and f.why == f"`retry_after` is gone from src/retry.py ({sha}, 2030-01-01)"
    assert kinds(repo) == [("stale", node)]


def test_a_rewritten_file_is_stale(repo: Path) -> None:
    node = capture(repo, ["src/other.py"], content="Other holds one constant.")
    commit(repo, "record")
    (repo / "src" / "other.py").write_text("".join(f"value_{i} = {i}\n" for i in range(10)))
    commit(repo, "Rewrite other")
    f = only(repo, node)
    assert f.stale and f.why.startswith("most of src/other.py was rewritten")


def test_a_line_range_follows_its_lines_and_is_stale_when_they_change(repo: Path) -> None:
    node = capture(repo, ["src/retry.py#L6-7"], content="backoff doubles each attempt.")  # def backoff + return
    commit(repo, "record")
    edit(repo, '"""Retries."""', '"""Retries."""\n\nimport time\n')  # two lines above the span
    commit(repo, "Import time")
    assert only(repo, node).stale is False
    edit(repo, "    return 2 ** attempt", "    return 3 ** attempt")
    commit(repo, "Triple instead")
    sha = git(repo, "rev-parse", "--short=9", "HEAD").strip()
    assert only(repo, node).why == f"lines 6-7 of src/retry.py changed ({sha}, 2030-01-01)"


def test_a_symbol_is_stale_when_its_definition_changes_or_goes(repo: Path) -> None:
    node = capture(repo, ["src/retry.py#backoff"], content="backoff doubles each attempt.")
    commit(repo, "record")
    edit(repo, "            return call()", "            return call()  # the call")  # in retry, not backoff
    commit(repo, "Comment retry")
    assert only(repo, node).stale is False
    edit(repo, "    return 2 ** attempt", "    return min(60, 2 ** attempt)")
    commit(repo, "Cap backoff")
    assert only(repo, node).why.startswith("`backoff` of src/retry.py changed (")
    edit(repo, "def backoff(attempt):\n    return min(60, 2 ** attempt)\n", "")
    edit(repo, "retry_after or backoff(attempt)", "retry_after or 1")
    assert only(repo, node).why == "`backoff` is gone from src/retry.py (uncommitted)"


def test_uncommitted_edits_count(repo: Path) -> None:
    node = capture(repo, ["src/retry.py"])
    commit(repo, "record")
    edit(repo, "MAX_ATTEMPTS", "ATTEMPTS")  # every use
    f = only(repo, node)
    assert f.stale and f.why == "`MAX_ATTEMPTS` is gone from src/retry.py (uncommitted)"
    git(repo, "checkout", "--", "src/retry.py")
    assert only(repo, node).stale is False


def test_a_folder_reference_is_stale_when_a_name_it_held_is_gone(repo: Path) -> None:
    node = capture(repo, ["src"])
    commit(repo, "record")
    edit(repo, "def backoff(attempt):\n    return 2 ** attempt\n", "def delay(attempt):\n    return 2 ** attempt\n")
    edit(repo, "backoff(attempt))", "delay(attempt))")
    commit(repo, "Rename backoff to delay")
    f = only(repo, node)
    assert f.stale and f.why == "`backoff` is gone from src/"


def test_a_fresh_clone_a_checkout_and_new_mtimes_change_nothing(repo: Path, tmp_path: Path) -> None:
    node = capture(repo, ["src/retry.py"])
    commit(repo, "record")
    edit(repo, '"""Retries."""', '"""Retries!"""')
    commit(repo, "Punctuation")
    before = only(repo, node)
    assert before.stale is False and before.later
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    assert only(clone, node) == before  # every file's mtime is new in a clone
    git(repo, "checkout", "-q", "-b", "side", "HEAD~1")
    git(repo, "checkout", "-q", "main")
    os.utime(repo / "src" / "retry.py")
    assert only(repo, node) == before


def test_a_rebase_keeps_the_node_after_the_code_it_saw(repo: Path) -> None:
    """A rebase gives the node's commit and the code's commits new dates; the node still comes after
    the code it was written against, so nothing it describes is "later"."""
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "src" / "retry.py").write_text(RETRY.replace("MAX_ATTEMPTS = 5", "MAX_ATTEMPTS = 5\nJITTER = 0.1"))
    commit(repo, "Add jitter", when="2021-01-01T00:00:00Z")
    node = capture(repo, ["src/retry.py"], content="Retries add `JITTER` to the `backoff`.")
    commit(repo, "record the jitter decision", when="2021-01-02T00:00:00Z")
    git(repo, "checkout", "-q", "main")
    (repo / "src" / "other.py").write_text("x = 2\n")
    commit(repo, "Main moves on", when="2021-06-01T00:00:00Z")
    git(repo, "checkout", "-q", "feature")
    git(repo, "rebase", "-q", "main", when="2031-01-01T00:00:00Z")  # committer dates now after everything
    f = only(repo, node)
    assert f.stale is False and f.later is None


def test_a_renamed_file_is_named_with_its_new_path(repo: Path) -> None:
    node = capture(repo, ["src/retry.py"])
    commit(repo, "record")
    git(repo, "mv", "src/retry.py", "src/backoff.py")
    commit(repo, "Move retry to backoff")
    sha = git(repo, "rev-parse", "--short=9", "HEAD").strip()
    assert only(repo, node).why == f"src/retry.py was renamed to src/backoff.py ({sha}, 2030-01-01)"
    found = analyze(Autology.open(repo).store, ["references"])["categories"]["references"]["findings"]
    assert [(f["kind"], f["detail"]) for f in found] == [
        ("missing_file", f"references src/retry.py, which does not exist: src/retry.py was renamed to src/backoff.py "
                         f"({sha}, 2030-01-01)")]


def test_outside_git_nothing_is_stale(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    (root / "src").mkdir(parents=True)
    (root / "src" / "retry.py").write_text(RETRY)
    Autology.open(root).close()
    node = capture(root, ["src/retry.py"])
    (root / "src" / "retry.py").write_text("")
    assert findings(root, node) == []


def kinds(root: Path) -> list[tuple[str, str]]:
    service = Autology.open(root)
    try:
        report = analyze(service.store, ["references"])
    finally:
        service.close()
    return [(f["kind"], f["id"]) for f in report["categories"]["references"]["findings"]]


def test_this_repository_is_judged_without_error() -> None:
    """The rule runs over the project's own decision log (the figures are in docs/benchmarks.md)."""
    repo = Path(__file__).resolve().parents[1]
    if shutil.which("git") is None or not (repo / ".git").exists():
        pytest.skip("not a git checkout")
    service = Autology.open(repo)
    try:
        nodes = list(service.store.index.all_nodes())
        judged = judge(repo, service.store, nodes)
    finally:
        service.close()
    assert judged and all(f.why for fs in judged.values() for f in fs if f.stale)


def test_doctor_names_what_moved_on_without_failing(repo: Path) -> None:
    from autology_mcp.knowledge.doctor import diagnose

    node = capture(repo, ["src/retry.py"])
    commit(repo, "record")
    edit(repo, "MAX_ATTEMPTS", "ATTEMPTS")
    commit(repo, "Rename the constant")
    service = Autology.open(repo)
    try:
        report = diagnose(service.store)
    finally:
        service.close()
    assert report.ok
    assert any(node[:8] in note and "`MAX_ATTEMPTS` is gone from src/retry.py (" in note for note in report.notes)



def test_without_explain_the_history_is_read_only_for_a_flag(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """analyze and doctor judge thousands of nodes: a reference whose code still holds costs its file at
    the base and now, not a walk of the history."""
    from autology_mcp.knowledge import staleness

    node = capture(repo, ["src/retry.py"])
    commit(repo, "record the decision")
    edit(repo, '"""Retries."""', '"""Retries, with a docstring that says more."""')
    commit(repo, "Say more in the docstring", when="2030-02-01T00:00:00Z")
    asked: list[str] = []
    real = staleness.History.later
    monkeypatch.setattr(staleness.History, "later", lambda self, b, p: asked.append(p) or real(self, b, p))
    service = Autology.open(repo)
    try:
        found = judge(repo, service.store, [service.store.get(node)])[node]
    finally:
        service.close()
    assert [f.stale for f in found] == [False] and found[0].later is None and asked == []


def test_a_base_found_by_time_matches_git_rev_list(repo: Path) -> None:
    """Past a few distinct times, one listing of the history answers by bisection: the same commit as
    ``git rev-list -1 --before``."""
    from autology_mcp.knowledge.staleness import History

    for i in range(12):
        (repo / "src" / "other.py").write_text(f"x = {i}\n")
        commit(repo, f"step {i}", when=f"2026-01-{i + 1:02d}T12:00:00Z")
    times = [int(t) for t in git(repo, "log", "--format=%ct").split()]
    h = History(repo)
    for t in [min(times) - 10, *times, *(x + 3600 for x in times)]:
        want = git(repo, "rev-list", "-1", f"--before=@{t}", "HEAD").strip() or None
        assert h._before(t) == want
    assert h._times is not None  # the later questions were answered from one listing


def test_asking_for_a_folder_as_a_file_keeps_the_blob_reader_in_step(repo: Path) -> None:
    """git cat-file --batch answers a tree with its bytes too: they are read and dropped, so the next
    file's text is its own."""
    from autology_mcp.knowledge.staleness import History

    h = History(repo)
    head = h.head
    assert h.content(head, "src") is None
    assert h.content(head, "src/other.py") == "x = 1\n"
    assert h.content(head, "nothing/here.py") is None
    assert h.content(head, "src/retry.py") == RETRY
    h.close()


def test_past_a_few_bases_one_walk_of_the_recent_history_answers_later(repo: Path) -> None:
    """analyze over a large store asks for the later commits of many bases: past a few, one walk of the
    recent history answers, with the same commits as base..HEAD on a merged history."""
    from autology_mcp.knowledge import staleness

    bases = []
    for i in range(6):
        (repo / "src" / "other.py").write_text(f"x = {i}\n")
        commit(repo, f"main {i}", when=f"2026-01-{i + 1:02d}T12:00:00Z")
        bases.append(git(repo, "rev-parse", "HEAD").strip())
    git(repo, "checkout", "-q", "-b", "side", bases[1])
    (repo / "src" / "retry.py").write_text(RETRY + "\n# side\n")
    commit(repo, "side change", when="2026-01-02T18:00:00Z")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-edit", "side", when="2026-01-08T12:00:00Z")
    (repo / "src" / "retry.py").write_text(RETRY + "\n# side\n# main\n")
    commit(repo, "main change", when="2026-01-09T12:00:00Z")
    exact = staleness.History(repo)
    exact._bases_asked.update(f"other{i}" for i in range(staleness.BASES_BEFORE_WINDOW))  # force the window
    for base in bases:
        want = [line for line in git(repo, "log", "--format=%H", f"{base}..HEAD", "--", "src/retry.py").split()][::-1]
        assert [c.sha for c in exact.later(base, "src/retry.py")] == want
    assert exact._window is not None


def test_a_name_moved_to_another_file_of_its_folder_is_not_gone(repo: Path) -> None:
    node = capture(repo, ["src/retry.py"])
    commit(repo, "record the decision")
    text = (repo / "src" / "retry.py").read_text()
    (repo / "src" / "retry.py").write_text(text.replace("def backoff(attempt):\n    return 2 ** attempt\n", ""))
    (repo / "src" / "backoff.py").write_text("def backoff(attempt):\n    return 2 ** attempt\n")
    assert only(repo, node).stale is False  # moved within src/: the decision still holds
    (repo / "src" / "backoff.py").unlink()  # gone from the folder too
    (repo / "src" / "retry.py").write_text(text.replace("def backoff(attempt):\n    return 2 ** attempt\n", "")
                                           .replace("backoff(attempt)", "2 ** attempt"))
    assert "`backoff` is gone from src/retry.py" in only(repo, node).why


def test_a_folder_that_is_gone_is_stale(repo: Path) -> None:
    node = capture(repo, ["src"], content="Everything lives in one package.")
    commit(repo, "record the decision")
    shutil.rmtree(repo / "src")
    assert only(repo, node).why == "src/ is gone"


def test_a_name_only_used_in_another_file_of_its_folder_is_still_gone(repo: Path) -> None:
    """Moved means defined elsewhere: another module that imports or calls the name does not hold what
    the node said about this file."""
    node = capture(repo, ["src/retry.py"])
    commit(repo, "record the decision")
    text = (repo / "src" / "retry.py").read_text()
    (repo / "src" / "retry.py").write_text(text.replace("def backoff(attempt):\n    return 2 ** attempt\n", "")
                                           .replace("backoff(attempt)", "2 ** attempt"))
    (repo / "src" / "other.py").write_text("from somewhere import backoff\nx = backoff(1)\n")
    assert "`backoff` is gone from src/retry.py" in only(repo, node).why


def test_a_running_server_sees_uncommitted_edits_under_a_folder_after_asking_once(repo: Path) -> None:
    """The History is kept while HEAD stays (a server's hooks), but what the work tree holds is asked
    again each time: a name removed after a first question is seen at the next."""
    node = capture(repo, ["src"])
    commit(repo, "record the decision")
    assert only(repo, node).stale is False
    text = (repo / "src" / "retry.py").read_text()
    (repo / "src" / "retry.py").write_text(text.replace("retry_after", "delay"))
    assert "`retry_after` is gone from src/" in only(repo, node).why
