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
from autology_mcp.knowledge.trust.mentions import mentions
from autology_mcp.knowledge.trust.staleness import judge
from autology_mcp.knowledge.trust.symbol_rules import follow_span

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


def one_file_repo(root: Path, path: str, text: str, message: str) -> Path:
    """A project whose first commit (2020) holds one file, with an empty store."""
    (root / path).parent.mkdir(parents=True)
    (root / path).write_text(text)
    git(root, "init", "-q", "-b", "main")
    commit(root, message, when="2020-01-01T00:00:00Z")
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


def relate_and_commit(root: Path, node_id: str, other_id: str) -> None:
    """``node_id`` relates to ``other_id``, committed: a change of the node's file that is not a change of what it says."""
    service = Autology.open(root)
    try:
        service.relate(node_id, other_id, "relates_to")
    finally:
        service.close()
    commit(root, "relate")


def edit(root: Path, old: str, new: str, path: str = "src/retry.py") -> None:
    file = root / path
    text = file.read_text()
    assert old in text
    file.write_text(text.replace(old, new))


# ------------------------------------------------------------------------------ the parts


def test_what_a_node_mentions() -> None:
    names, paths = mentions("Use `HTTPAdapter.max_retries` in `src/net/` and retry_after, "
                            "not e.g. the Session or `requests.sessions`; MAX_RETRIES; camelCase.")
    assert {"max_retries", "retry_after", "MAX_RETRIES", "camelCase", "sessions"} <= names  # a dotted name's last part
    assert not {"Session", "e.g", "requests"} & names
    assert paths == {"src/net"}


def test_prose_names_count_and_prose_does_not() -> None:
    """Issue 38: ``retry()`` and ``app.retry`` in prose are names; an English word is not, nor a file
    name, an address, a plural "user(s)" or a word before " (" with a space."""
    names, _ = mentions("Retries are done by retry() in app.py, see also client.send_request and "
                        "open_resource(path). The user(s) read setup.cfg (see below) at https://example.com/a.b; "
                        "e.g. i.e. Node.js. It takes a loader callable.")
    assert {"retry", "send_request", "open_resource"} <= names
    assert not {"py", "user", "cfg", "see", "below", "com", "example", "takes", "loader", "callable", "Retries",
                "It", "js"} & names


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
    assert only(repo, node).why.startswith("`backoff` of src/retry.py changed: 100% of its statements rewritten (")
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
    assert only(repo, node).why == f"src/retry.py moved to src/backoff.py ({sha}, 2030-01-01)"
    found = analyze(Autology.open(repo).store, ["references"])["categories"]["references"]["findings"]
    assert [(f["kind"], f["detail"]) for f in found] == [
        ("missing_file", f"references src/retry.py, which does not exist: src/retry.py moved to src/backoff.py "
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
    from autology_mcp.knowledge.trust import git_history

    node = capture(repo, ["src/retry.py"])
    commit(repo, "record the decision")
    edit(repo, '"""Retries."""', '"""Retries, with a docstring that says more."""')
    commit(repo, "Say more in the docstring", when="2030-02-01T00:00:00Z")
    asked: list[str] = []
    real = git_history.History.later
    monkeypatch.setattr(git_history.History, "later", lambda self, b, p: asked.append(p) or real(self, b, p))
    service = Autology.open(repo)
    try:
        found = judge(repo, service.store, [service.store.get(node)])[node]
    finally:
        service.close()
    assert [f.stale for f in found] == [False] and found[0].later is None and asked == []


def test_a_base_found_by_time_matches_git_rev_list(repo: Path) -> None:
    """Past a few distinct times, one listing of the history answers by bisection: the same commit as
    ``git rev-list -1 --before``."""
    from autology_mcp.knowledge.trust.git_history import History

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
    from autology_mcp.knowledge.trust.git_history import History

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
    from autology_mcp.knowledge.trust import git_history

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
    exact = git_history.History(repo)
    exact._bases_asked.update(f"other{i}" for i in range(git_history.BASES_BEFORE_WINDOW))  # force the window
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


# ------------------------------------------------------------------------------ issue 38: what the node says


LOADER = '''"""Config."""


class Config(dict):
    def from_file(self, filename, load, silent=False):  # type: ignore
        """Update the values from a file loaded by ``load``."""
        try:
            with open(filename) as f:
                obj = load(f)
        except OSError:
            if silent:
                return False
            raise
        return self.from_mapping(obj)

    def from_mapping(self, mapping):
        self.update(mapping)
        return True


__version__ = '1.0.1'
'''

# the same code as black would leave it: the signature reflowed, the comment moved, quotes changed, a
# trailing comma, blank lines
LOADER_BLACK = '''"""Config."""


class Config(dict):
    def from_file(
        self,
        filename,
        load,
        silent=False,
    ):
        """Update the values from a file loaded by ``load``."""
        try:
            with open(filename) as f:
                obj = load(f)  # type: ignore
        except OSError:
            if silent:
                return False
            raise

        return self.from_mapping(obj)

    def from_mapping(self, mapping):
        self.update(mapping)
        return True


__version__ = "1.0.1"
'''

LOADER_NODE = ("Config.from_file takes a loader callable (`load`) and reads the file with it; a missing file is "
               "an error unless silent.")


@pytest.fixture
def config_repo(tmp_path: Path) -> Path:
    return one_file_repo(tmp_path / "cfg", "src/config.py", LOADER, "the config")


def test_a_formatter_only_commit_changes_nothing(config_repo: Path) -> None:
    """A black-style reflow, a moved `# type: ignore`, quotes, a trailing comma: no reference is stale,
    whole file, symbol or line span (the span's lines are followed through the reflow)."""
    nodes = [capture(config_repo, [ref], content=LOADER_NODE, title=f"Loading config {i}")
             for i, ref in enumerate(["src/config.py", "src/config.py#Config.from_file", "src/config.py#L16-18",
                                      "src/config.py#L5-15"])]
    commit(config_repo, "record")
    (config_repo / "src" / "config.py").write_text(LOADER_BLACK)
    commit(config_repo, "Apply black")
    assert [only(config_repo, n).stale for n in nodes] == [False] * 4
    edit(config_repo, "                return False", "                return None", path="src/config.py")
    commit(config_repo, "Return None when silent")
    assert [only(config_repo, n).why for n in nodes][:3] == [None] * 3  # the span holds that line
    # issue 38: a span is judged as a symbol is; None for False is no number gone and the node does not give it
    assert only(config_repo, nodes[3]).stale is False
    giving = capture(config_repo, ["src/config.py#L5-20"], content="`from_file` returns None when silent.", title="Silent")
    commit(config_repo, "record the return value")
    edit(config_repo, "                return None", "                return 0", path="src/config.py")
    commit(config_repo, "Return 0 when silent")
    assert only(config_repo, giving).why.startswith("lines 5-20 of src/config.py changed (")


def test_an_added_optional_parameter_is_information_and_a_removed_one_a_flag(config_repo: Path) -> None:
    node = capture(config_repo, ["src/config.py#Config.from_file"], content=LOADER_NODE)
    commit(config_repo, "record")
    edit(config_repo, "def from_file(self, filename, load, silent=False):", "def from_file(self, filename, load, silent=False, text=True):",
         path="src/config.py")
    edit(config_repo, "with open(filename) as f:", 'with open(filename, "r" if text else "rb") as f:', path="src/config.py")
    commit(config_repo, "Add the text parameter")
    f = only(config_repo, node)
    assert f.stale is False
    assert f.later.startswith("`Config.from_file` changed but keeps its parameters and the names the node gives; 1 later commit")
    edit(config_repo, ", silent=False, text=True):", ", text=True):", path="src/config.py")
    edit(config_repo, "            if silent:\n                return False\n", "", path="src/config.py")
    commit(config_repo, "Drop silent")
    assert only(config_repo, node).why.startswith("`Config.from_file` of src/config.py changed: parameter `silent` removed (")


def test_a_required_parameter_or_a_name_the_node_gives_dropped_from_the_symbol_is_a_flag(config_repo: Path) -> None:
    node = capture(config_repo, ["src/config.py#Config.from_file"], content=LOADER_NODE + " It ends in `from_mapping`.")
    commit(config_repo, "record")
    edit(config_repo, "        return self.from_mapping(obj)", "        self.update(obj)\n        return True", path="src/config.py")
    commit(config_repo, "Inline from_mapping")
    assert "`from_mapping` is gone from it" in only(config_repo, node).why
    git(config_repo, "reset", "-q", "--hard", "HEAD~1")
    edit(config_repo, "load, silent=False):", "load, mode, silent=False):", path="src/config.py")
    assert only(config_repo, node).why.startswith("`Config.from_file` of src/config.py changed: parameters reordered")


def test_a_version_string_bump_in_a_span_is_not_a_flag_unless_the_node_quotes_it(config_repo: Path) -> None:
    quiet = capture(config_repo, ["src/config.py#L20-24"], content="`from_mapping` updates in place.", title="Mapping")
    quoting = capture(config_repo, ["src/config.py#L20-24"], content="`from_mapping` updates in place, as of 1.0.1.",
                      title="Mapping as of a version")
    commit(config_repo, "record")
    edit(config_repo, "__version__ = '1.0.1'", "__version__ = '1.0.2'", path="src/config.py")
    commit(config_repo, "Bump the version")
    assert only(config_repo, quiet).stale is False
    assert only(config_repo, quoting).why.startswith("lines 20-24 of src/config.py changed (")


def test_a_deprecation_of_a_name_the_node_mentions_is_a_flag(config_repo: Path) -> None:
    node = capture(config_repo, ["src/config.py"], content="Mappings go through `from_mapping`.")
    symbol = capture(config_repo, ["src/config.py#Config.from_mapping"], content="It updates in place.", title="Map")
    other = capture(config_repo, ["src/config.py"], content="Files go through `from_file`.", title="Files")
    commit(config_repo, "record")
    edit(config_repo, "    def from_mapping(self, mapping):\n",
         "    def from_mapping(self, mapping):\n        warnings.warn('use update', DeprecationWarning, stacklevel=2)\n",
         path="src/config.py")
    commit(config_repo, "Deprecate from_mapping")
    sha = git(config_repo, "rev-parse", "--short=9", "HEAD").strip()
    assert only(config_repo, node).why == f"`from_mapping` is deprecated in src/config.py ({sha}, 2030-01-01)"
    assert only(config_repo, symbol).why.startswith("`from_mapping` is deprecated in src/config.py (")
    assert only(config_repo, other).stale is False


def test_a_deprecation_by_message_or_decorator_is_found() -> None:
    from autology_mcp.knowledge.trust.code_compare import deprecated

    module = ('import warnings\n\ndef __getattr__(name):\n    if name == "_app_ctx_stack":\n'
              '        warnings.warn("\'_app_ctx_stack\' is deprecated and will be removed.", DeprecationWarning)\n'
              '        return 1\n    raise AttributeError(name)\n\n@deprecated("use g")\ndef old_g():\n    pass\n\n'
              'def doc():\n    """Deprecated: use other."""\n\ndef fine():\n    warnings.warn("careful", UserWarning)\n')
    assert deprecated(module, "m.py", {"_app_ctx_stack", "old_g", "doc", "fine", "name"}) == {"_app_ctx_stack", "old_g", "doc"}
    assert deprecated("/** @deprecated use fetch */\nfunction fetchAll() {}\n", "m.js", {"fetchAll", "other"}) == {"fetchAll"}
    assert deprecated("// Deprecated: use Fetch.\nfunc FetchAll() {}\n", "m.go", {"FetchAll"}) == {"FetchAll"}
    assert deprecated("The `hooks` flag is deprecated.\n", "docs/x.md", {"hooks"}) == set()  # a document


def test_a_prose_name_renamed_is_a_flag(repo: Path) -> None:
    node = capture(repo, ["src/retry.py"], content="Retries are done by retry() in retry.py, backing off as it goes.")
    commit(repo, "record")
    edit(repo, "def retry(call, retry_after=None):", "def call_again(call, retry_after=None):")
    commit(repo, "Rename retry")
    assert only(repo, node).why.startswith("`retry` is gone from src/retry.py (")


def test_a_comment_that_named_something_is_not_the_code(repo: Path) -> None:
    edit(repo, "MAX_ATTEMPTS = 5", "MAX_ATTEMPTS = 5  # see jitter_seconds")
    commit(repo, "comment")
    node = capture(repo, ["src/retry.py"], content="At most `MAX_ATTEMPTS`; no `jitter_seconds`.")
    commit(repo, "record")
    edit(repo, "  # see jitter_seconds", "")
    commit(repo, "Drop the comment")
    assert only(repo, node).stale is False


def test_a_moved_file_is_followed_by_a_read_of_its_new_path(repo: Path) -> None:
    from autology_mcp.hooks.edit import post_read

    node = capture(repo, ["src/retry.py"])
    commit(repo, "record")
    (repo / "lib").mkdir()
    git(repo, "mv", "src/retry.py", "lib/retry.py")
    commit(repo, "Move retry into lib")
    sha = git(repo, "rev-parse", "--short=9", "HEAD").strip()
    payload = {"session_id": "s", "cwd": str(repo), "hook_event_name": "PostToolUse", "tool_name": "Read",
               "tool_input": {"file_path": str(repo / "lib" / "retry.py")}, "tool_response": {"type": "text"}}
    text = post_read(payload, repo)["hookSpecificOutput"]["additionalContext"]
    assert node in text
    assert f"STALE: \"src/retry.py moved to lib/retry.py ({sha}, 2030-01-01)\"" in text
    edit(repo, "retry_after", "delay", path="lib/retry.py")
    commit(repo, "Rename retry_after there")
    assert only(repo, node).why.startswith(f"src/retry.py moved to lib/retry.py ({sha}, 2030-01-01); "
                                           "there, `retry_after` is gone from lib/retry.py")


def _flags(root: Path, nodes: list[str]) -> list[str | None]:
    return [only(root, n).why for n in nodes]


def test_relate_tag_and_status_committed_keep_the_flag_and_a_review_clears_it(repo: Path) -> None:
    node = capture(repo, ["src/retry.py"])
    other = capture(repo, ["src/other.py"], content="Other holds `x`.", title="Other")
    commit(repo, "record")
    edit(repo, "MAX_ATTEMPTS", "ATTEMPTS")
    commit(repo, "Rename the constant")
    flagged = only(repo, node).why
    assert flagged.startswith("`MAX_ATTEMPTS` is gone from src/retry.py (")
    service = Autology.open(repo)
    try:
        service.relate(node, other, "relates_to")
        commit(repo, "relate")
        assert only(repo, node).why == flagged
        service.update(node, tags=["retries"])
        commit(repo, "tag")
        assert only(repo, node).why == flagged
        service.update(node, status="needs_review")
        commit(repo, "status")
        assert only(repo, node).why == flagged
        service.mark_reviewed(node)
    finally:
        service.close()
    assert only(repo, node).stale is False  # a person's review: the code as it is now
    commit(repo, "reviewed")
    assert only(repo, node).stale is False


def test_a_hand_edit_of_the_text_voids_the_fingerprint(repo: Path) -> None:
    node = capture(repo, ["src/retry.py"])
    commit(repo, "record")
    edit(repo, "MAX_ATTEMPTS", "ATTEMPTS")
    commit(repo, "Rename the constant")
    assert only(repo, node).stale
    file = next((repo / ".autology" / "nodes").rglob(f"{node}.md"))
    file.write_text(file.read_text().replace("`MAX_ATTEMPTS`", "`ATTEMPTS`"))
    commit(repo, "Edit the node by hand")
    assert only(repo, node).stale is False


def _branch_with_node(repo: Path) -> str:
    """A feature branch records a decision about the code as it was; main renames a name it gives."""
    git(repo, "checkout", "-q", "-b", "feature")
    node = capture(repo, ["src/retry.py", "src/retry.py#backoff", "src/retry.py#L6-7"],
                   content="Retry with `backoff` (it doubles), honour `retry_after`.")
    commit(repo, "record the decision", when="2030-01-02T00:00:00Z")
    git(repo, "checkout", "-q", "main")
    edit(repo, "retry_after", "delay")
    edit(repo, "    return 2 ** attempt", "    return 3 ** attempt")
    commit(repo, "Rename retry_after, triple", when="2030-01-03T00:00:00Z")
    return node


def test_a_rebase_and_a_squash_merge_keep_the_flags_a_merge_has(repo: Path, tmp_path: Path) -> None:
    node = _branch_with_node(repo)
    merged = tmp_path / "merged"
    git(tmp_path, "clone", "-q", str(repo), str(merged))
    git(merged, "fetch", "-q", "origin", "feature:feature")
    git(merged, "merge", "-q", "--no-edit", "feature", when="2030-01-04T00:00:00Z")
    want = [(f.stale, f.why.split(" (")[0] if f.why else None) for f in findings(merged, node)]
    assert want == [(True, "`retry_after` is gone from src/retry.py"), (True, "`backoff` of src/retry.py changed: 100% of "
                    "its statements rewritten"), (True, "lines 6-7 of src/retry.py changed")]

    rebased = tmp_path / "rebased"
    git(tmp_path, "clone", "-q", str(repo), str(rebased))
    git(rebased, "checkout", "-q", "-b", "feature", "origin/feature")
    git(rebased, "rebase", "-q", "main", when="2030-01-05T00:00:00Z")
    squashed = tmp_path / "squashed"
    git(tmp_path, "clone", "-q", str(repo), str(squashed))
    git(squashed, "fetch", "-q", "origin", "feature:feature")
    git(squashed, "merge", "-q", "--squash", "feature")
    commit(squashed, "Record the decision (#12)", when="2030-01-05T00:00:00Z")
    git(squashed, "branch", "-q", "-D", "feature")
    git(squashed, "reflog", "expire", "--expire=now", "--all")
    git(squashed, "gc", "-q", "--prune=now")
    for clone in (rebased, squashed):
        fresh = tmp_path / f"fresh-{clone.name}"
        git(tmp_path, "clone", "-q", "--no-local", str(clone), str(fresh))  # only what the history holds
        got = [(f.stale, f.why.split(" (")[0] if f.why else None) for f in findings(fresh, node)]
        assert got == want, clone.name


def test_the_merge_driver_takes_a_fingerprint_both_sides_changed_without_a_conflict(repo: Path) -> None:
    from autology_mcp.knowledge.markdown import parse_node, render_node
    from autology_mcp.knowledge.merge import merge_texts

    node = capture(repo, ["src/retry.py"])
    service = Autology.open(repo)
    try:
        base = service.store.get(node)
    finally:
        service.close()
    ours = base.replace(content=base.content + "\n\nOurs.", extra={**base.extra, "code_seen": {"for": "a", "files": {}}})
    theirs = base.replace(tags=("t",), extra={**base.extra, "code_seen": {"for": "b", "files": {}}},
                          modified=base.modified.replace(year=base.modified.year + 1))
    result = merge_texts(render_node(base), render_node(ours), render_node(theirs))
    assert result.conflicts == []
    merged = parse_node(result.text)
    assert merged.extra["code_seen"]["for"] == "b" and merged.content.endswith("Ours.") and merged.tags == ("t",)


ENCODER = '''import json


class Encoder(json.JSONEncoder):
    def default(self, o):
        if isinstance(o, Decimal):
            return str(o)
        if o is None:
            raise TypeError("cannot encode {}".format(type(o)))
        return json.JSONEncoder.default(self, o)

    def dumps(self, obj):
        return json.dumps(obj, cls=type(self))

    def load(self, path=None):
        if path is None:
            return
        return read(path)

    @property
    def folder(self):
        return self._folder

    @folder.setter
    def folder(self, value):
        self._folder = value
'''


@pytest.fixture
def encoder_repo(tmp_path: Path) -> Path:
    return one_file_repo(tmp_path / "enc", "src/enc.py", ENCODER, "the encoder")


def _symbol_node(root: Path, symbol: str, content: str) -> str:
    node = capture(root, [f"src/enc.py#{symbol}"], content=content, title=f"About {symbol}")
    commit(root, f"record {symbol}")
    return node


def test_a_statement_changed_flags_only_where_the_use_of_what_the_node_names_changed(encoder_repo: Path) -> None:
    node = _symbol_node(encoder_repo, "Encoder.default", "Decimals become strings; dataclasses fall through and raise TypeError.")
    edit(encoder_repo, 'raise TypeError("cannot encode {}".format(type(o)))', 'raise TypeError(f"cannot encode {type(o)!r}")',
         path="src/enc.py")
    commit(encoder_repo, "An f-string")  # TypeError is used as before: information
    assert only(encoder_repo, node).stale is False
    edit(encoder_repo, "        if o is None:", "        if dataclasses.is_dataclass(o):\n            return asdict(o)\n"
         "        if o is None:", path="src/enc.py")
    commit(encoder_repo, "Encode dataclasses")
    assert "changed: the use of `dataclasses` changed (" in only(encoder_repo, node).why


def test_an_option_passed_through_a_call_is_information(encoder_repo: Path) -> None:
    node = _symbol_node(encoder_repo, "Encoder.dumps", "dumps encodes with this class through json.dumps().")
    edit(encoder_repo, "def dumps(self, obj):\n        return json.dumps(obj, cls=type(self))",
         "def dumps(self, obj, indent=None):\n        return json.dumps(obj, cls=type(self), indent=indent)", path="src/enc.py")
    commit(encoder_repo, "Pass indent through")
    assert only(encoder_repo, node).stale is False


def test_a_value_the_node_gives_changed_is_a_flag(encoder_repo: Path) -> None:
    node = _symbol_node(encoder_repo, "Encoder.load", "Without a `path` it returns None.")
    edit(encoder_repo, "        if path is None:\n            return\n", "        if path is None:\n            return False\n",
         path="src/enc.py")
    commit(encoder_repo, "Return False")
    assert "changed: a value the node gives changed (`None`)" in only(encoder_repo, node).why


def test_a_property_setter_is_part_of_its_symbol(encoder_repo: Path) -> None:
    node = _symbol_node(encoder_repo, "Encoder.folder", "The folder setter keeps the value in `_folder`.")
    edit(encoder_repo, "        self._folder = value", "        self._path = value", path="src/enc.py")  # the getter still says _folder
    commit(encoder_repo, "Keep it elsewhere")
    assert only(encoder_repo, node).why.startswith("`Encoder.folder` of src/enc.py changed: the use of `_folder` changed (")


def test_code_compare_reads_python_by_statements_and_other_code_by_lines() -> None:
    from autology_mcp.knowledge.trust.code_compare import follow, same_code

    assert same_code("x = f(a,b)  # c\n", "x = f(\n    a,\n    b,\n)\n", "m.py")
    assert not same_code("x = f(a, b)\n", "x = f(b, a)\n", "m.py")
    assert same_code("a  =  1;\n\n", "a = 1;\n", "m.js") and not same_code("a = 1;\n", "a = 2;\n", "m.js")
    change = follow("A = 1\nV = '1.0'\nB = 2\n", "# new\nA = 1\nV = '1.1'\nB = 2\n", (1, 3), "m.py")
    assert change.span == (2, 4) and change.changed and change.strings == frozenset({"1.0", "1.1"})


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.text(max_size=300), st.integers(1, 20), st.integers(0, 5))
def test_reading_code_never_raises_on_any_text(before: str, after: str, start: int, width: int) -> None:
    from autology_mcp.knowledge.trust.code_compare import code_words, deprecated, follow, rewritten_share, units

    for path in ("m.py", "m.js"):
        assert isinstance(units(before, path), list)
        change = follow(before, after, (start, start + width), path)
        assert change.span is None or change.span[0] <= change.span[1]
        assert 0.0 <= rewritten_share(before, after, path) <= 1.0
        assert isinstance(deprecated(after, path, {"x", "deprecated"}), set)
        assert isinstance(code_words(before, path), str)


_PY_LINE = st.tuples(st.sampled_from(["x", "y_1", "f(a)"]), st.sampled_from(["'a # b'", '"#"', "1", "'''q\n# r'''", "u'x'"]),
                     st.sampled_from(["", "  # c", " # 'q' \"", "#"]))


@settings(max_examples=200, deadline=None)
@given(st.lists(_PY_LINE, max_size=12))
def test_comments_are_left_out_as_python_reads_them(lines: list) -> None:
    """The one-pass scanner leaves out exactly what the tokenizer calls comments."""
    import io
    import tokenize

    from autology_mcp.knowledge.trust.code_compare import code_words

    text = "".join(f"{name} = {value}{comment}\n" for name, value, comment in lines) + "#"
    comments = [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.COMMENT]
    rows = text.splitlines(keepends=True)
    for tok in reversed(comments):
        row, col = tok.start
        rows[row - 1] = rows[row - 1][:col] + rows[row - 1][tok.end[1]:]
    assert code_words(text, "m.py") == "".join(rows)


def test_a_squash_whose_branch_code_is_gone_still_judges_the_names_it_held(repo: Path, tmp_path: Path) -> None:
    """The branch changed the code and wrote the node; main renamed a name the node gives; the squash
    leaves no commit, nor blob, of the branch's version: the names the fingerprint recorded still tell."""
    git(repo, "checkout", "-q", "-b", "feature")
    edit(repo, "MAX_ATTEMPTS = 5", "MAX_ATTEMPTS = 5\nJITTER = 0.1")
    node = capture(repo, ["src/retry.py"], content="Retries add `JITTER` and honour `retry_after`.")
    commit(repo, "jitter, and the decision", when="2030-01-02T00:00:00Z")
    git(repo, "checkout", "-q", "main")
    edit(repo, "retry_after", "delay")
    commit(repo, "Rename retry_after", when="2030-01-03T00:00:00Z")
    merged = tmp_path / "merged"
    git(tmp_path, "clone", "-q", str(repo), str(merged))
    git(merged, "fetch", "-q", "origin", "feature:feature")
    git(merged, "merge", "-q", "--no-edit", "feature", when="2030-01-04T00:00:00Z")
    assert only(merged, node).why.startswith("`retry_after` is gone from src/retry.py (")
    git(repo, "merge", "-q", "--squash", "feature")
    commit(repo, "Jitter (#3)", when="2030-01-04T00:00:00Z")
    git(repo, "branch", "-q", "-D", "feature")
    fresh = tmp_path / "fresh"
    git(tmp_path, "clone", "-q", "--no-local", str(repo), str(fresh))
    assert only(fresh, node).why == "`retry_after` is gone from src/retry.py (since the node was written)"


def test_mark_reviewed_on_the_command_line_moves_what_the_node_is_judged_against(repo: Path) -> None:
    import sys

    node = capture(repo, ["src/retry.py"])
    commit(repo, "record")
    edit(repo, "MAX_ATTEMPTS", "ATTEMPTS")
    commit(repo, "Rename the constant")
    assert only(repo, node).stale
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    out = subprocess.run([sys.executable, "-m", "autology_mcp", "analyze", "--mark-reviewed", node], cwd=repo,
                         capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("✓ Reviewed: Retry failed calls (decision): its references are judged from the code as it is now")
    assert only(repo, node).stale is False
    missing = subprocess.run([sys.executable, "-m", "autology_mcp", "analyze", "--mark-reviewed", "0" * 8], cwd=repo,
                             capture_output=True, text=True, env=env)
    assert missing.returncode != 0 and "Traceback" not in missing.stderr


def test_a_file_renamed_in_its_folder_is_followed_by_a_read_and_other_reads_bring_nothing(repo: Path) -> None:
    from autology_mcp.hooks.edit import post_read

    node = capture(repo, ["src/retry.py"])
    commit(repo, "record")
    git(repo, "mv", "src/retry.py", "src/backoff.py")
    commit(repo, "Rename retry to backoff")

    def read(path: str, session: str) -> dict | None:
        return post_read({"session_id": session, "cwd": str(repo), "hook_event_name": "PostToolUse", "tool_name": "Read",
                          "tool_input": {"file_path": str(repo / path)}, "tool_response": {"type": "text"}}, repo)

    assert read("src/other.py", "a") is None  # in the folder, but not where it went
    text = read("src/backoff.py", "b")["hookSpecificOutput"]["additionalContext"]
    assert node in text and "STALE: \"src/retry.py moved to src/backoff.py (" in text


def test_a_folder_reference_keeps_its_flag_through_a_committed_relate(repo: Path) -> None:
    node = capture(repo, ["src/"], content="Retries go through `backoff`.")
    other = capture(repo, ["src/other.py"], content="Other holds `x`.", title="Other")
    commit(repo, "record")
    edit(repo, "def backoff(attempt):", "def delay(attempt):")
    edit(repo, "backoff(attempt))", "delay(attempt))")
    commit(repo, "Rename backoff")
    assert only(repo, node).why == "`backoff` is gone from src/"
    relate_and_commit(repo, node, other)
    assert only(repo, node).why == "`backoff` is gone from src/"


# ------------------------------------------------------------------------------ what the node states literally


COMPAT = '''"""Compatibility checks (this docstring may say 'Perhaps you meant ftp://' or 9)."""

MAX_RETRIES = 6


def check_versions(parser_version, codec_version):
    """Fail when a dependency is out of range: 1.21.1 and 3.0.2 are tested, 4 is not."""
    major, minor, patch = (int(x) for x in parser_version.split(".")[:3])
    # parser >= 1.21.1, < 2.0
    assert major == 1
    assert minor >= 21
    codec_major = int(codec_version.split(".")[0])
    assert codec_major >= 3
    assert codec_major < 4


def prepare_url(url):
    if "://" not in url:
        raise ValueError(f"Invalid URL {url!r}: no scheme supplied. Perhaps you meant http://{url}?")
    return url.strip()


def connect(address, timeout=30):
    for attempt in range(MAX_RETRIES):
        open_socket(address, timeout)
'''


@pytest.fixture
def compat_repo(tmp_path: Path) -> Path:
    return one_file_repo(tmp_path / "compat", "src/compat.py", COMPAT, "the checks")


def _compat_nodes(root: Path, nodes: dict[str, tuple[str, str]]) -> dict[str, str]:
    ids = {key: capture(root, [ref], content=content, title=f"Compat {key}") for key, (ref, content) in nodes.items()}
    commit(root, "record")
    return ids


def test_a_string_the_node_quotes_gone_from_the_code_is_a_flag(compat_repo: Path) -> None:
    """What the node quotes (up to an ellipsis, in quotes or backticks), which the referenced code held at
    the base and holds no more, is a flag, for a symbol, a line span and a whole file; a node that
    quotes nothing of it, or quotes what only a docstring said, is not flagged by the same change."""
    quoted = "Without a scheme it raises ValueError: 'Perhaps you meant http://...?'"
    ids = _compat_nodes(compat_repo, {
        "symbol": ("src/compat.py#prepare_url", quoted),
        "span": ("src/compat.py#L18-19", quoted),
        "file": ("src/compat.py", "URLs without a scheme are refused with \"Perhaps you meant http://...\"."),
        "quiet": ("src/compat.py#prepare_url", "Without a scheme it raises ValueError."),
        "docstring": ("src/compat.py", "The module says 'Perhaps you meant ftp://...' somewhere."),
    })
    edit(compat_repo, "Perhaps you meant http://{url}?", "Perhaps you meant https://{url}?", path="src/compat.py")
    edit(compat_repo, "'Perhaps you meant ftp://'", "'Perhaps you meant sftp://'", path="src/compat.py")
    commit(compat_repo, "Suggest https")
    sha = git(compat_repo, "rev-parse", "--short=9", "HEAD").strip()
    assert only(compat_repo, ids["symbol"]).why == ("`prepare_url` of src/compat.py changed: `'Perhaps you meant http://...?'`, "
                                                    f"as the node states it, is gone from it ({sha}, 2030-01-01)")
    assert only(compat_repo, ids["span"]).why == f"lines 18-19 of src/compat.py changed ({sha}, 2030-01-01)"
    assert only(compat_repo, ids["file"]).why == (f"`'Perhaps you meant http://...'`, as the node states it, is gone from src/compat.py "
                                                  f"({sha}, 2030-01-01)")
    assert only(compat_repo, ids["quiet"]).stale is False
    assert only(compat_repo, ids["docstring"]).stale is False  # a docstring is prose about the code, not its value


def test_a_string_the_code_still_holds_or_never_held_is_no_flag(compat_repo: Path) -> None:
    """The old code must have held the quote, and the new must not: the message moved within the file, or
    prose in quotes that no code held, changes nothing."""
    ids = _compat_nodes(compat_repo, {
        "file": ("src/compat.py", "URLs without a scheme get 'Perhaps you meant http://...?' as a hint."),
        "prose": ("src/compat.py#prepare_url", 'A URL is "prepared" here: stripped, or "refused".'),
    })
    edit(compat_repo, 'raise ValueError(f"Invalid URL {url!r}: no scheme supplied. Perhaps you meant http://{url}?")',
         'raise InvalidURL(url)', path="src/compat.py")
    edit(compat_repo, "MAX_RETRIES = 6\n", "MAX_RETRIES = 6\nHINT = 'Perhaps you meant http://{}?'\n", path="src/compat.py")
    commit(compat_repo, "Move the hint")
    assert only(compat_repo, ids["file"]).stale is False
    assert only(compat_repo, ids["prose"]).stale is False


def test_a_number_the_node_states_gone_from_the_code_is_a_flag(compat_repo: Path) -> None:
    """A bound or a limit the node states, which the referenced code held as a literal at the base and
    holds no more, is a flag (a version bound in an assert moved from < 4 to < 5; a retry limit in the
    file); a number it states that is still there, or that only a docstring or a comment held, is not."""
    ids = _compat_nodes(compat_repo, {
        "bound": ("src/compat.py#check_versions", "The codec must be 3.0.2 or later and < 4."),
        "parser": ("src/compat.py#check_versions", "The parser must be 1.21.1 or later, < 2.0."),
        "limit": ("src/compat.py", "Connections are tried at most 6 times (`MAX_RETRIES`)."),
    })
    edit(compat_repo, "assert codec_major < 4", "assert codec_major < 5", path="src/compat.py")
    edit(compat_repo, "# parser >= 1.21.1, < 2.0", "# parser >= 1.21.1, < 3.0", path="src/compat.py")
    commit(compat_repo, "Allow codec 4")
    sha = git(compat_repo, "rev-parse", "--short=9", "HEAD").strip()
    assert only(compat_repo, ids["bound"]).why == ("`check_versions` of src/compat.py changed: `4`, as the node states it, "
                                                   f"is gone from it ({sha}, 2030-01-01)")
    assert only(compat_repo, ids["parser"]).stale is False  # 1.21.1 is still checked; 2.0 was only a comment
    assert only(compat_repo, ids["limit"]).stale is False
    edit(compat_repo, "assert minor >= 21", "assert minor >= 22", path="src/compat.py")
    edit(compat_repo, "MAX_RETRIES = 6", "MAX_RETRIES = 7", path="src/compat.py")
    assert only(compat_repo, ids["parser"]).why == ("`check_versions` of src/compat.py changed: `1.21.1`, as the node "
                                                    "states it, is gone from it (uncommitted)")
    assert only(compat_repo, ids["limit"]).why == "`6`, as the node states it, is gone from src/compat.py (uncommitted)"


def test_small_numbers_dates_and_issues_are_not_values_the_node_states(compat_repo: Path) -> None:
    """0, 1 and 2 alone are everywhere in code and prose; a date, an issue number or a range is not a value."""
    node = _compat_nodes(compat_repo, {"n": ("src/compat.py#check_versions",
                                             "Since 2019-05-01 (#30), 1 check per 2 parts; the parser's major is checked.")})["n"]
    edit(compat_repo, "    assert major == 1\n", "    assert major in (0, 2)\n", path="src/compat.py")
    commit(compat_repo, "Accept majors 0 and 2")
    assert only(compat_repo, node).stale is False


def test_what_a_node_states_literally_is_read_from_its_text() -> None:
    from autology_mcp.knowledge.trust.mentions import Said

    said = Said(set(), set(), "Raises 'Perhaps you meant http://...?' or \"Invalid URL %r: no scheme\"; the app's "
                               "`json_encoder`, `'static/'`, `.env` and `x = f(1)`; bounds >= 1.21.1, < 4, port 5000, "
                               "64-bit lanes, 10,000 nodes, a 0.4 threshold; not 2019-05-01, #123, Python 2/3, UTF-8, "
                               "L10-40, 1 or https://example.com/v/7.7.")
    assert said.literals == {"Perhaps you meant http://...?": ("Perhaps you meant http://",),
                             "Invalid URL %r: no scheme": ("Invalid URL", ": no scheme"),
                             "static/": ("static/",), ".env": (".env",),
                             "https://example.com/v/7.7": ("https://example.com/v/7.7",)}  # a link it gives (mypy)
    assert said.numbers == {"1.21.1": "1.21.1", "21": "1.21.1", "4": "4", "5000": "5000", "64": "64", "10000": "10000",
                            "0.4": "0.4"}  # a fraction has no parts: 0.4 is not a 4


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(list("ab1.2 '\"`…%s{}-#/:,\n") + ["http://", "...", "3.0"]), max_size=80).map("".join))
def test_the_quotes_and_numbers_a_node_states_are_in_its_text(text: str) -> None:
    from autology_mcp.knowledge.trust.mentions import Said

    said = Said(set(), set(), text)
    flat = " ".join(text.split())
    assert all(p in flat and len(p) >= 2 for parts in said.literals.values() for p in parts)
    assert all(token in text.replace(",", "") and atom in token.split(".") + [token] for atom, token in said.numbers.items())


def test_a_value_moved_into_a_constant_the_symbol_uses_is_still_the_symbols(compat_repo: Path) -> None:
    """A limit taken out of a function into a module constant it uses keeps the value the node states;
    the constant changed later takes it away."""
    node = _compat_nodes(compat_repo, {"n": ("src/compat.py#connect", "Connections are tried 6 times.")})["n"]
    edit(compat_repo, "MAX_RETRIES = 6", "MAX_RETRIES = 6\nATTEMPTS = 6", path="src/compat.py")
    edit(compat_repo, "range(MAX_RETRIES)", "range(ATTEMPTS)", path="src/compat.py")
    commit(compat_repo, "Rename the limit")
    assert only(compat_repo, node).stale is False
    edit(compat_repo, "ATTEMPTS = 6", "ATTEMPTS = 8", path="src/compat.py")
    assert only(compat_repo, node).why == ("`connect` of src/compat.py changed: `6`, as the node states it, is gone from it "
                                           "(uncommitted)")


def test_a_files_values_are_read_as_python_holds_them() -> None:
    """A whole file's strings and numbers, read in one pass: adjacent strings joined as Python joins
    them, docstrings and comments left out, 1_000 read as 1000; the same values as its statements give."""
    from autology_mcp.knowledge.trust.code_compare import file_literals, literals, units

    text = ('"""Module docstring with 77 and \'Perhaps\'."""\nLIMIT = 1_000  # not 88\nMSG = (\n    "Perhaps you "  # a comment\n'
            '    f"meant http://{x}?"\n)\n\n\ndef f():\n    """Docstring 99."""\n    return g("utf-8", 3.5)\n')
    found = file_literals(text, "m.py")
    assert found.strings == ("Perhaps you meant http://{x}?", "utf-8")
    assert found.numbers == {"1000", "3.5", "8"}  # a float is no version (one in a string is); utf-8 holds an 8
    assert found.holds_string("Perhaps you meant http://") and not found.holds_string("Docstring")
    assert found.numbers == literals(units(text, "m.py")).numbers
    other = file_literals('x = "a"  // 404\n', "m.js")
    assert other.numbers == {"404"} and other.holds_string("a") and not other.holds_string("b")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_reading_a_files_values_never_raises(text: str) -> None:
    from autology_mcp.knowledge.trust.code_compare import file_literals

    for path in ("m.py", "m.js"):
        found = file_literals(text, path)
        assert all(isinstance(s, str) for s in found.strings) and all(n[:1].isdigit() for n in found.numbers)


def test_a_squash_whose_branch_code_is_gone_still_judges_the_values_it_held(compat_repo: Path, tmp_path: Path) -> None:
    """As for names: the branch wrote the node against its own code, main changed the message the node
    quotes and the limit it states, and the squash left no blob of the branch's version in a fresh clone;
    the values the fingerprint recorded still tell."""
    git(compat_repo, "checkout", "-q", "-b", "feature")
    edit(compat_repo, "def connect(address, timeout=30):", "def connect(address, timeout=30, retries=None):",
         path="src/compat.py")
    node = capture(compat_repo, ["src/compat.py"], content="Without a scheme: 'Perhaps you meant http://...?'; at most 6 "
                                                          "tries.", title="URLs and tries")
    commit(compat_repo, "retries, and the decision", when="2030-01-02T00:00:00Z")
    git(compat_repo, "checkout", "-q", "main")
    edit(compat_repo, "Perhaps you meant http://{url}?", "Perhaps you meant https://{url}?", path="src/compat.py")
    edit(compat_repo, "MAX_RETRIES = 6", "MAX_RETRIES = 4", path="src/compat.py")
    commit(compat_repo, "https, fewer tries", when="2030-01-03T00:00:00Z")
    git(compat_repo, "merge", "-q", "--squash", "feature")
    commit(compat_repo, "Retries (#3)", when="2030-01-04T00:00:00Z")
    git(compat_repo, "branch", "-q", "-D", "feature")
    fresh = tmp_path / "fresh"
    git(tmp_path, "clone", "-q", "--no-local", str(compat_repo), str(fresh))
    assert only(fresh, node).why == ("`'Perhaps you meant http://...?'`, `6`, as the node states them, are gone from "
                                     "src/compat.py (since the node was written)")


# ------------------------------------------------------------------------------ issue 38: same-behaviour rewrites

PORTS = '''"""Serving."""


def run(host=None, port=None, server_name=None):
    sn_host, sn_port = None, None
    if server_name:
        sn_host, _, sn_port = server_name.partition(":")
    host = host or sn_host or "127.0.0.1"
    port = int(next((p for p in (port, sn_port) if p is not None), 5000))
    return host, port


def cookies(jar):
    found = {}
    for cookie in jar:
        found[cookie.name] = cookie.value
    return found


def leave(stack):
    top = stack.top
    if top is not None and top.preserved:
        top.pop()
'''

PORTS_NODE = ("run() takes the host and port from its arguments, then from `server_name`, and falls back to "
              "127.0.0.1:5000; `port=0` is honoured.")


@pytest.fixture
def ports_repo(tmp_path: Path) -> Path:
    return one_file_repo(tmp_path / "ports", "src/serve.py", PORTS, "serving")


def test_a_span_rewritten_with_the_same_names_and_values_is_information(ports_repo: Path) -> None:
    """A `#L` span whose lines are rewritten (a generator into ifs) keeping every name the node gives,
    every value it held and every string it quotes is not a flag (the flask replay's G04); the same
    span losing a value it held, or a name the node gives, is."""
    quiet = capture(ports_repo, ["src/serve.py#L5-10"], content=PORTS_NODE, title="Ports")
    loses_value = capture(ports_repo, ["src/serve.py#L5-10"], content="run() picks a host and a port.", title="Ports 2")
    commit(ports_repo, "record")
    edit(ports_repo, '''    host = host or sn_host or "127.0.0.1"
    port = int(next((p for p in (port, sn_port) if p is not None), 5000))''', '''    if not host:
        host = sn_host if sn_host else "127.0.0.1"
    if port or port == 0:
        port = int(port)
    elif sn_port:
        port = int(sn_port)
    else:
        port = 5000''', path="src/serve.py")
    commit(ports_repo, "Pick the port with ifs")
    assert only(ports_repo, quiet).stale is False
    assert only(ports_repo, loses_value).stale is False
    edit(ports_repo, "        port = 5000", "        port = 8000", path="src/serve.py")
    commit(ports_repo, "Serve on 8000")
    sha = git(ports_repo, "rev-parse", "--short=9", "HEAD").strip()
    assert only(ports_repo, quiet).why == f"lines 5-10 of src/serve.py changed ({sha}, 2030-01-01)"  # states 5000
    assert only(ports_repo, loses_value).why == f"lines 5-10 of src/serve.py changed ({sha}, 2030-01-01)"  # 5000 gone
    renamed = capture(ports_repo, ["src/serve.py#L5-15"], content="Ports come from `server_name`.", title="Ports 3")
    commit(ports_repo, "record again")
    edit(ports_repo, "    if server_name:\n        sn_host, _, sn_port = server_name.partition(\":\")",
         "    if netloc:\n        sn_host, _, sn_port = netloc.partition(\":\")", path="src/serve.py")
    commit(ports_repo, "Rename")
    assert only(ports_repo, renamed).stale  # `server_name` gone from the span's statements


def test_a_span_back_to_the_code_the_node_saw_is_not_stale(ports_repo: Path) -> None:
    """What the node saw against the code now decides; the commits between only name the change (a
    walk of a merged history can put a branch's old state after a newer one)."""
    node = capture(ports_repo, ["src/serve.py#L5-10"], content=PORTS_NODE, title="Ports")
    commit(ports_repo, "record")
    edit(ports_repo, "), 5000))", "), 8000))", path="src/serve.py")
    commit(ports_repo, "8000")
    assert only(ports_repo, node).stale
    edit(ports_repo, "), 8000))", "), 5000))", path="src/serve.py")
    commit(ports_repo, "back to 5000")
    assert only(ports_repo, node).stale is False


def test_a_symbol_restructured_with_the_same_names_and_values_is_information(ports_repo: Path) -> None:
    """A loop turned into a comprehension (every statement rewritten, the same names and values) is
    not a flag (requests' dict_from_cookiejar); a loop put around statements (a value `True` added)
    is a rewrite."""
    jar = capture(ports_repo, ["src/serve.py#cookies"], content="cookies() gives a dict; the last cookie of a name wins.",
                  title="Cookies")
    stack = capture(ports_repo, ["src/serve.py#leave"], content="leave() pops only the preserved context at the top.",
                    title="Leave")
    commit(ports_repo, "record")
    edit(ports_repo, '''    found = {}
    for cookie in jar:
        found[cookie.name] = cookie.value
    return found''', '''    found = {cookie.name: cookie.value for cookie in jar}
    return found''', path="src/serve.py")
    edit(ports_repo, '''    top = stack.top
    if top is not None and top.preserved:
        top.pop()''', '''    while True:
        top = stack.top
        if top is not None and top.preserved:
            top.pop()
        else:
            break''', path="src/serve.py")
    commit(ports_repo, "Comprehension; pop them all")
    assert only(ports_repo, jar).stale is False
    assert "of its statements rewritten" in only(ports_repo, stack).why


def test_a_file_whose_code_moved_into_a_block_is_not_rewritten(repo: Path) -> None:
    """Statements put inside a new `if` (re-indented) are the code the node saw, not a rewrite
    (requests' packages.py)."""
    node = capture(repo, ["src/other.py"], content="Other keeps the aliases.")
    (repo / "src" / "other.py").write_text("import sys\n\ntry:\n    import x\nexcept ImportError:\n    x = None\n"
                                           + "".join(f"a{i} = sys.modules.get('m{i}')\n" for i in range(6)))
    commit(repo, "aliases")
    node = capture(repo, ["src/other.py"], content="Other keeps the aliases.", title="Aliases")
    commit(repo, "record")
    (repo / "src" / "other.py").write_text("import sys\nfrom y import x\n\nif x is not None:\n"
                                           + "".join(f"    a{i} = sys.modules.get('m{i}')\n" for i in range(6)))
    commit(repo, "Alias only when there")
    assert only(repo, node).stale is False


def test_a_number_the_node_states_changed_in_one_statement_is_a_flag(compat_repo: Path) -> None:
    """A bound the node states (`< 3.0`) changed in one statement while another statement of the symbol
    still holds the same number (the other library's bound) is a flag (requests' check_compatibility)."""
    root = compat_repo
    (root / "src" / "bounds.py").write_text('''def check(major, minor, other):
    assert (1, 21) <= (major, minor) < (3, 0)
    assert (3, 0) <= other < (6, 0)
''')
    commit(root, "bounds")
    ids = _compat_nodes(root, {"symbol": ("src/bounds.py#check", "check() accepts major versions below 3.0 only.")})
    edit(root, "< (3, 0)\n", "< (4, 0)\n", path="src/bounds.py")
    commit(root, "Allow 3.x")
    assert "3.0`, as the node states it, is gone from a statement of it" in only(root, ids["symbol"]).why


def test_code_with_an_operator_in_backticks_is_a_snippet() -> None:
    from autology_mcp.knowledge.trust.mentions import Said

    said = Said(set(), set(), "The route is `static_url_path + '/<path:filename>'`, not normalised.")
    assert said.snippets == ["static_url_path + '/<path:filename>'"]


def test_a_function_renamed_inside_a_span_is_a_flag(repo: Path) -> None:
    """A span holding `def backoff` whose function is now `def delay` is stale, whatever the node says."""
    node = capture(repo, ["src/retry.py#L6-7"], content="Waiting grows with each try.")
    commit(repo, "record")
    edit(repo, "def backoff(attempt):", "def delay(attempt):")
    edit(repo, "or backoff(attempt)", "or delay(attempt)")
    commit(repo, "Rename backoff")
    assert only(repo, node).stale


def _old_node(repo: Path) -> str:
    """A node written before fingerprints existed (its file has no ``code_seen``), committed; then the
    code it names moves on: it is stale."""
    import re

    node = capture(repo, ["src/retry.py"], content="Retry with `backoff` (it doubles), honour `retry_after`.")
    service = Autology.open(repo)
    try:
        path = service.store.paths.node_file("decision", node)
    finally:
        service.close()
    path.write_text(re.sub(r"(?m)^code_seen:\n(?:  .*\n)+", "", path.read_text()))
    assert "code_seen" not in path.read_text()
    commit(repo, "record the decision", when="2030-01-02T00:00:00Z")
    edit(repo, "retry_after", "delay")
    commit(repo, "Rename retry_after", when="2030-01-03T00:00:00Z")
    assert only(repo, node).stale is True
    return node


def _tag(repo: Path, node: str) -> None:
    service = Autology.open(repo)
    try:
        service.update(node, tags=["retries"])
    finally:
        service.close()
    commit(repo, "tag the decision", when="2030-01-05T00:00:00Z")


def test_a_node_without_a_fingerprint_loses_its_flag_to_a_tag(repo: Path) -> None:
    """The hole the migration closes: an old node's base is the last commit of its file."""
    node = _old_node(repo)
    _tag(repo, node)
    assert only(repo, node).stale is False


def test_recorded_fingerprints_keep_an_old_nodes_flag_through_a_tag(repo: Path) -> None:
    """``autology analyze --record-fingerprints`` records what the node saw at its base (the code before
    the rename), changes nothing else, and the flag survives the next commits of the node's file."""
    node = _old_node(repo)
    service = Autology.open(repo)
    try:
        before = service.store.get(node)
        said = service.record_fingerprints()
        after = service.store.get(node)
        again = service.record_fingerprints()
    finally:
        service.close()
    assert "1 node(s)" in said and "Every node" in again
    assert after.modified == before.modified and after.tags == before.tags and after.content == before.content
    seen = after.extra["code_seen"]
    assert seen["names"]["src/retry.py"] == ["backoff", "retry_after"]  # the code at the base, not the work tree's
    assert seen["files"]["src/retry.py"] == git(repo, "rev-parse", "HEAD~1:src/retry.py").strip()[:12]
    assert only(repo, node).stale is True
    commit(repo, "record fingerprints", when="2030-01-04T00:00:00Z")
    assert only(repo, node).stale is True
    _tag(repo, node)
    found = only(repo, node)
    assert found.stale is True and "retry_after" in found.why


def test_record_fingerprints_from_the_command_line(repo: Path) -> None:
    node = _old_node(repo)
    from autology_mcp.cli.main import main

    assert main(["--root", str(repo), "analyze", "--record-fingerprints"]) == 0
    service = Autology.open(repo)
    try:
        assert "code_seen" in service.store.get(node).extra
    finally:
        service.close()


def test_doctor_advises_recording_fingerprints_for_old_nodes(repo: Path) -> None:
    from autology_mcp.knowledge.doctor import diagnose

    _old_node(repo)
    service = Autology.open(repo)
    try:
        notes = [n for n in diagnose(service.store).notes if "--record-fingerprints" in n]
        assert len(notes) == 1 and notes[0].startswith("1 node(s)")
        service.record_fingerprints()
        assert not [n for n in diagnose(service.store).notes if "--record-fingerprints" in n]
    finally:
        service.close()


def test_record_fingerprints_in_a_project_below_the_repositorys_top(tmp_path: Path) -> None:
    """A monorepo: the project (and its store) is a folder of the repository; references are relative
    to it, and so is what ``git ls-tree`` is asked at the base."""
    top = tmp_path / "mono"
    root = top / "services" / "api"
    (root / "src").mkdir(parents=True)
    (root / "src" / "retry.py").write_text(RETRY)
    git(top, "init", "-q", "-b", "main")
    commit(top, "the code", when="2020-01-01T00:00:00Z")
    Autology.open(root).close()
    node = _old_node(root)
    service = Autology.open(root)
    try:
        assert "1 node(s)" in service.record_fingerprints()
        seen = service.store.get(node).extra["code_seen"]
    finally:
        service.close()
    assert seen["names"]["src/retry.py"] == ["backoff", "retry_after"]
    assert only(root, node).stale is True


# ------------------------------------------------------------------------------ issue 38: the same behaviour in other idioms

RECORDS = '''"""Records."""
from typing import List, Optional


class Options:
    """Options for one revision. Instances are treated as immutable."""

    def __init__(self, rev: Optional[str] = None, extra: Optional[List[str]] = None) -> None:
        """rev: the revision; extra: more arguments."""
        if extra is None:
            extra = []
        self.rev = rev
        self.extra = extra
        self.branch: Optional[str] = None

    def to_args(self) -> List[str]:
        return [self.rev, *self.extra] if self.rev else list(self.extra)


class Failure(ValueError):
    """Failure keeps its message and its document."""

    def __init__(self, msg, doc):
        super().__init__(msg)
        self.doc = doc


def remove(dist, session, url):
    if dist.by_distutils:
        raise RuntimeError(
            "Cannot uninstall {!r}. It is a distutils installed project.".format(dist.name)
        )
    session.headers["Accept"] = "text/html"
    session.auth = None
    if url.startswith("http"):
        return session.get(url)
    return open(url)


def keep(box, folder):
    box.folder = folder
'''


@pytest.fixture
def records_repo(tmp_path: Path) -> Path:
    return one_file_repo(tmp_path / "records", "src/records.py", RECORDS, "records")


def test_a_message_rebuilt_as_an_f_string_is_information(records_repo: Path) -> None:
    """A message the node quotes, built with `.format()` and rebuilt as an f-string (or with `%`) with
    the same text, is the same code (pip's UninstallPathSet.from_dist); the same message with other
    words is a flag."""
    root = records_repo
    node = capture(root, ["src/records.py#remove"], title="Remove",
                   content='remove() refuses a distutils project: "Cannot uninstall \'X\'. It is a distutils installed project."')
    commit(root, "record")
    edit(root, '"Cannot uninstall {!r}. It is a distutils installed project.".format(dist.name)',
         'f"Cannot uninstall {dist.name!r}. It is a distutils installed project."', path="src/records.py")
    commit(root, "Use an f-string")
    assert only(root, node).stale is False
    edit(root, 'f"Cannot uninstall {dist.name!r}. It is a distutils installed project."',
         '"Cannot uninstall %r. It is a distutils installed project." % (dist.name,)', path="src/records.py")
    commit(root, "Use %")
    assert only(root, node).stale is False
    edit(root, "It is a distutils installed project.", "Its files are unknown.", path="src/records.py")
    commit(root, "Reword")
    assert only(root, node).stale


def test_a_class_turned_into_a_dataclass_with_the_same_fields_is_information(records_repo: Path) -> None:
    """A hand-written `__init__` that only stores its parameters, turned into a frozen dataclass with the
    same fields and a rewritten docstring, keeps what the node says (pip's RevOptions, IndexContent); a
    dataclass that drops a field is a rewrite of the class."""
    root = records_repo
    same = capture(root, ["src/records.py#Options"], title="Options",
                   content="`Options` holds the revision (`rev`), extra arguments and the branch; to_args() lists them.")
    dropped = capture(root, ["src/records.py#Options"], title="Options 2",
                      content="Options holds a revision, its arguments and a branch name, and is treated as immutable.")
    commit(root, "record")
    edit(root, '''class Options:
    """Options for one revision. Instances are treated as immutable."""

    def __init__(self, rev: Optional[str] = None, extra: Optional[List[str]] = None) -> None:
        """rev: the revision; extra: more arguments."""
        if extra is None:
            extra = []
        self.rev = rev
        self.extra = extra
        self.branch: Optional[str] = None
''', '''@dataclass(frozen=True)
class Options:
    """Options for one revision.

    Args:
        rev: the revision.
        extra: more arguments.
    """

    rev: Optional[str] = None
    extra: List[str] = field(default_factory=list)
    branch: Optional[str] = None
''', path="src/records.py")
    edit(root, "from typing import List, Optional\n", "from dataclasses import dataclass, field\nfrom typing import List, Optional\n",
         path="src/records.py")
    commit(root, "Use a dataclass")
    assert only(root, same).stale is False
    assert only(root, dropped).stale is False
    edit(root, "    branch: Optional[str] = None\n", "", path="src/records.py")
    edit(root, "        return [self.rev, *self.extra] if self.rev else list(self.extra)",
         "        return list(self.extra)", path="src/records.py")
    commit(root, "No branch; rev elsewhere")
    assert only(root, dropped).stale


def test_declared_fields_are_read_from_a_plain_init_or_a_dataclass() -> None:
    import ast

    from autology_mcp.knowledge.trust.code_compare import declared_fields, same_fields

    plain = ast.parse("class A:\n    def __init__(self, x, y=None):\n        if y is None:\n            y = []\n"
                      "        self.x = x\n        self.y = y\n").body[0]
    data = ast.parse("@dataclass\nclass A:\n    x: int\n    y: list = field(default_factory=list)\n"
                     "    n: ClassVar[int] = 0\n").body[0]
    busy = ast.parse("class A:\n    def __init__(self, x):\n        self.x = x\n        register(self)\n").body[0]
    assert declared_fields(plain)[0] == {"x", "y"} and declared_fields(data)[0] == {"x", "y"}
    assert declared_fields(busy) is None  # an __init__ that does more is behaviour
    assert same_fields(plain, data) is not None and same_fields(busy, data) is None
    other = ast.parse("@dataclass\nclass A:\n    x: int\n").body[0]
    assert same_fields(plain, other) is None


def test_an_import_moved_into_a_function_is_information(records_repo: Path) -> None:
    """`from … import x` inside the function (imported when needed) is no change of what it does (pip's
    get_file_content)."""
    root = records_repo
    node = capture(root, ["src/records.py#remove"], title="Remove",
                   content="remove() fetches an http URL with session.get() and opens anything else with open().")
    commit(root, "record")
    edit(root, "    if url.startswith(\"http\"):\n", "    from os import path  # noqa\n\n    if url.startswith(\"http\"):\n",
         path="src/records.py")
    commit(root, "Import when needed")
    assert only(root, node).stale is False


def test_a_word_the_code_used_already_is_no_new_use(records_repo: Path) -> None:
    """A statement added that uses `session`, in code that uses `session` throughout (three statements or
    more), is not a new use of the node's word "session" (pip's `session.trust_env = False`); a word the
    code starts to use is, and so is a word used in fewer statements (flask's static_folder setter)."""
    root = records_repo
    node = capture(root, ["src/records.py#remove"], title="Remove",
                   content="remove() asks for html on the session, and fetches an http URL with it.")
    cached = capture(root, ["src/records.py#remove"], title="Remove 2",
                     content="remove() fetches every http URL again: nothing is cached between calls.")
    commit(root, "record")
    edit(root, '    session.headers["Accept"] = "text/html"\n',
         '    session.headers["Accept"] = "text/html"\n    session.trust_env = False\n', path="src/records.py")
    commit(root, "Ignore the environment")
    assert only(root, node).stale is False
    assert only(root, cached).stale is False
    edit(root, "        return session.get(url)", "        return cached.get(url) or session.get(url)", path="src/records.py")
    commit(root, "A cache")
    assert "the use of `cached` changed" in only(root, cached).why
    given = capture(root, ["src/records.py#keep"], title="Keep", content="keep() stores the folder as given.")
    commit(root, "record keep")
    edit(root, "    box.folder = folder\n", "    folder = folder.rstrip('/')\n    box.folder = folder\n", path="src/records.py")
    commit(root, "Strip the slash")
    assert "the use of `folder` changed" in only(root, given).why


def test_a_call_with_its_arguments_in_prose_gone_from_the_file_is_a_flag(records_repo: Path) -> None:
    """`session.get(url)` written in prose (not in backticks) is code the node quotes: gone from the file,
    a flag, though every name stays (requests' send() switched to another method); a `def` with those
    parameters is not the call."""
    from autology_mcp.knowledge.trust.mentions import Said
    from autology_mcp.knowledge.trust.symbol_rules import _called_in

    root = records_repo
    node = capture(root, ["src/records.py"], title="Fetch",
                   content="remove() fetches an http URL with session.get(url) and opens the rest.")
    commit(root, "record")
    edit(root, "        return session.get(url)", "        return session.get(url.strip())", path="src/records.py")
    commit(root, "Strip the URL")
    assert "`session.get(url)` is gone" in only(root, node).why
    assert Said(set(), set(), "pick with get_scheme(url), then user(s)").calls == ["get_scheme(url)"]
    assert not _called_in("def get_scheme(url):\n", "get_scheme(url)")
    assert _called_in("    return get_scheme(\n        url)\n", "get_scheme(url)")


def test_a_method_named_by_a_word_of_the_node_added_to_its_class_is_a_flag(records_repo: Path) -> None:
    """`__reduce__` added to a class the node says "reduce" loses an argument of (requests' JSONDecodeError)
    is a flag; another method added is information."""
    root = records_repo
    node = capture(root, ["src/records.py#Failure"], title="Failure",
                   content="Pickling a Failure fails: ValueError's reduce keeps only the message, not the document.")
    commit(root, "record")
    edit(root, "        self.doc = doc\n", "        self.doc = doc\n\n    def describe(self):\n        return self.doc\n",
         path="src/records.py")
    commit(root, "Describe")
    assert only(root, node).stale is False
    edit(root, "    def describe(self):", "    def __reduce__(self):\n        return Failure, (self.args[0], self.doc)\n\n"
         "    def describe(self):", path="src/records.py")
    commit(root, "Pickle both")
    assert "method `__reduce__` added" in only(root, node).why


_PIECE = st.text(st.characters(blacklist_characters="{}%\\\"'\n\r", blacklist_categories=("Cs", "Cc")), max_size=12)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_PIECE, st.sampled_from(["a", "b.c", "f(x)"]), st.sampled_from(["", "!r"])), max_size=4), _PIECE)
def test_a_string_built_three_ways_dumps_alike(parts: list, tail: str) -> None:
    """An f-string, `.format()` and `%` that build the same text from the same values are one form."""
    import ast

    from autology_mcp.knowledge.trust.code_compare import dump

    fstring = "f'" + "".join(f"{p}{{{v}{c}}}" for p, v, c in parts) + tail + "'"
    dotted = "'" + "".join(f"{p}{{{c}}}" for p, _, c in parts) + tail + "'.format(" + ", ".join(v for _, v, _ in parts) + ")"
    percent = "'" + "".join(p + ("%r" if c else "%s") for p, _, c in parts) + tail + "' % (" + \
        "".join(f"{v}, " for _, v, _ in parts) + ")"
    forms = [dump(ast.parse(src).body[0], False) for src in (fstring, dotted, percent) if parts or src == fstring]
    assert len(set(forms)) == 1, forms


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60), st.integers(0, 3))
def test_reading_a_built_string_never_raises(text: str, n: int) -> None:
    import ast

    from autology_mcp.knowledge.trust.code_compare import formatted

    call = ast.Call(func=ast.Attribute(value=ast.Constant(text), attr="format", ctx=ast.Load()),
                    args=[ast.Name(id="a", ctx=ast.Load())] * n, keywords=[])
    mod = ast.BinOp(left=ast.Constant(text), op=ast.Mod(), right=ast.Tuple(elts=call.args, ctx=ast.Load()))
    for node in (call, mod):
        found = formatted(node)
        assert found is None or len(found[0]) == len(found[1]) + 1


# ------------------------------------------------------------------------------ the httpx classes (issue 38)

CLIENT = '''import warnings


def old_helper(x):
    return x


class Client:
    def __init__(self, cookies=None, proxies=None, timeout=5, app=None):
        self.cookies = cookies
        self.proxy_map = self._proxy_map(proxies)
        allow_env_proxies = app is None
        self.env = allow_env_proxies

    def _proxy_map(self, proxies):
        return dict(proxies or {})

    def request(self, url, cookies=None):
        return url, cookies


class Chunker:
    def decode(self, content):
        if self.size is None:
            return [content]
        return self.split(content)

    def links(self, header):
        found = {}
        if header:
            for link in header:
                key = link.get("rel") or link.get("url")
                found[key] = link
        return found

    def scope(self, request):
        return {"path": request.path, "raw_path": request.raw_path}
'''

API = '''from ._client import Client, old_helper


def request(url, cookies=None, proxies=None, timeout=5):
    with Client(cookies=cookies, proxies=proxies, timeout=timeout) as client:
        return client.request(url)


def helper(x):
    return old_helper(x)
'''


@pytest.fixture
def clients_repo(tmp_path: Path) -> Path:
    root = one_file_repo(tmp_path / "clients", "pkg/_client.py", CLIENT, "client")
    (root / "pkg" / "_api.py").write_text(API)
    commit(root, "api", when="2020-01-02T00:00:00Z")
    return root


def _deprecate_proxies(root: Path) -> str:
    edit(root, "    def __init__(self, cookies=None, proxies=None, timeout=5, app=None):\n",
         "    def __init__(self, cookies=None, proxies=None, timeout=5, app=None, proxy=None):\n"
         "        if proxies:\n"
         "            message = \"The 'proxies' argument is deprecated. Use 'proxy'.\"\n"
         "            warnings.warn(message, DeprecationWarning)\n", path="pkg/_client.py")
    edit(root, "self._proxy_map(proxies)", "self._proxy_map(proxies or proxy)", path="pkg/_client.py")
    commit(root, "Add proxy, deprecate proxies")
    return git(root, "rev-parse", "--short=9", "HEAD").strip()


def test_a_parameters_deprecation_is_a_flag_only_for_a_node_that_names_the_parameter(clients_repo: Path) -> None:
    """A deprecation warning raised when a parameter is given (``if proxies: warnings.warn(...)``)
    deprecates the parameter, not its function or class: httpx's `proxies` read as `AsyncClient`'s
    deprecation. A node that names the parameter (as a name, or in a list of the function's
    parameters) is flagged; one about the class that never names it is not."""
    root = clients_repo
    names = capture(root, ["pkg/_client.py#Client.__init__"], content="`proxies` becomes the proxy map.", title="Proxies")
    lists = capture(root, ["pkg/_client.py#Client"], content="Client takes cookies, proxies, timeout and app.",
                    title="Client options")
    about = capture(root, ["pkg/_client.py#Client"], content="`Client` keeps its cookies for every request; the "
                    "environment's proxies are read when no app is given.", title="Client cookies")
    span = capture(root, ["pkg/_client.py#L12-13"], content="`allow_env_proxies = app is None` in Client decides "
                   "whether a proxy from the environment is used.", title="Environment proxies")
    commit(root, "record")
    sha = _deprecate_proxies(root)
    assert only(root, names).why == f"parameter `proxies` of `Client.__init__` is deprecated in pkg/_client.py ({sha}, 2030-01-01)"
    assert only(root, lists).why.startswith("parameter `proxies` of `Client` is deprecated in pkg/_client.py (")
    assert only(root, about).stale is False
    assert only(root, span).stale is False  # `proxies or proxy` uses the added parameter: the prose "proxy" is not it
    edit(root, "        allow_env_proxies = app is None\n", "        if app is not None:\n"
         "            warnings.warn('Use a transport.', DeprecationWarning)\n        allow_env_proxies = True\n",
         path="pkg/_client.py")
    commit(root, "Deprecate app")
    assert only(root, span).why.startswith("parameter `app` of `Client.__init__` is deprecated in pkg/_client.py (")


def test_a_warning_whatever_the_arguments_still_deprecates_the_function() -> None:
    from autology_mcp.knowledge.trust.code_compare import deprecated, deprecated_parameters

    module = ('import warnings\n\ndef f(a, b=None):\n    if b:\n        warnings.warn("b", DeprecationWarning)\n'
              '    return a\n\ndef g(a):\n    warnings.warn("use a", DeprecationWarning)\n\n'
              'def __getattr__(name):\n    if name == "old":\n        warnings.warn("old is deprecated", DeprecationWarning)\n\n'
              'class C:\n    def __init__(self, x=None, y=None):\n        if x is not None and y:\n'
              '            warnings.warn("x with y", DeprecationWarning)\n\n'
              'def h(mode):\n    if mode != "fast":\n        warnings.warn("slow", DeprecationWarning)\n')
    assert deprecated(module, "m.py", {"f", "g", "C", "__getattr__", "old", "h"}) == {"g", "__getattr__", "old", "h"}
    marks = deprecated_parameters(module, "m.py")
    assert {k: set(v[1]) for k, v in marks.items()} == {"f": {"b"}, "C": {"x", "y"}, "C.__init__": {"x", "y"}}
    assert marks["f"][0] == ("a", "b")


def test_a_parameter_passed_on_to_a_function_deprecated_in_another_module_is_a_flag(clients_repo: Path) -> None:
    """The referenced code passes `proxies=` to `Client`, imported from another module that now
    deprecates that parameter: a node that lists it among the options is flagged, with the module and
    its commit; one that does not name it, or names a parameter that is still fine, is not. A name the
    node gives, imported and deprecated where it is defined, is a flag too."""
    root = clients_repo
    lists = capture(root, ["pkg/_api.py#request"], content="request() opens a `Client` with the given cookies, proxies "
                    "and timeout, and closes it.", title="One-shot")
    plain = capture(root, ["pkg/_api.py#request"], content="request() opens a throwaway `Client` and closes it.",
                    title="Throwaway")
    helper = capture(root, ["pkg/_api.py"], content="`helper` calls `old_helper`.", title="Helper")
    commit(root, "record")
    sha = _deprecate_proxies(root)
    assert only(root, lists).why == ("parameter `proxies` of `Client`, which pkg/_api.py passes on, is deprecated in "
                                     f"pkg/_client.py ({sha}, 2030-01-01)")
    assert only(root, plain).stale is False
    assert only(root, helper).stale is False
    edit(root, "def old_helper(x):\n", "def old_helper(x):\n    warnings.warn('use x', DeprecationWarning)\n",
         path="pkg/_client.py")
    commit(root, "Deprecate old_helper")
    assert only(root, helper).why.startswith("`old_helper`, which pkg/_api.py imports, is deprecated in pkg/_client.py (")
    flagged = only(root, lists).why
    service = Autology.open(root)
    try:  # a tag committed later moves the base past the deprecation: the fingerprint still says it came after
        service.update(lists, tags=["api"])
        commit(root, "tag")
    finally:
        service.close()
    assert only(root, lists).why.split(" (")[0] == flagged.split(" (")[0]


def test_a_snippet_the_node_gives_put_under_a_condition_is_a_flag(clients_repo: Path) -> None:
    """``return [content]`` turned into ``return [content] if content else []``: the snippet is still
    there, but what the node says happens now happens only sometimes (httpx's TextChunker). Taken out
    of a condition, or a node that does not give the snippet, is no flag."""
    root = clients_repo
    gives = capture(root, ["pkg/_client.py#Chunker.decode"], content="Without a size, decode returns `[content]`, "
                    "even for empty content.", title="Empty chunk")
    silent = capture(root, ["pkg/_client.py#Chunker.decode"], content="Without a size, decode gives the content whole.",
                     title="Whole chunk")
    commit(root, "record")
    edit(root, "            return [content]\n", "            return [content] if content else []\n", path="pkg/_client.py")
    commit(root, "No empty chunk")
    assert only(root, gives).why.startswith("`Chunker.decode` of pkg/_client.py changed: `[content]` is now under a condition (")
    assert only(root, silent).stale is False
    fresh = capture(root, ["pkg/_client.py#Chunker.decode"], content="decode returns `[content]` if there is content.",
                    title="Chunk when content")
    commit(root, "record again")
    edit(root, "            return [content] if content else []\n", "            return [content]\n", path="pkg/_client.py")
    commit(root, "Empty chunks again")
    assert only(root, fresh).stale is False  # fewer conditions: not this rule


def test_a_loop_rewritten_as_a_comprehension_keeping_the_quoted_strings_is_information(clients_repo: Path) -> None:
    """The strings the node quotes, held by statements rewritten with the same names (the symbol's own
    variables aside), strings and values (httpx's Response.links) are no flag; a statement holding one
    whose code changed (a `raw_path` with the query cut) is: the key, a name the node gives, is kept, and the
    one statement is rewritten."""
    root = clients_repo
    links = capture(root, ["pkg/_client.py#Chunker.links"], content="links() keys each link by its 'rel', or its 'url'; "
                    "no header gives {}.", title="Links")
    scope = capture(root, ["pkg/_client.py#Chunker.scope"], content="The scope's 'raw_path' is the request's raw path.",
                    title="Scope")
    commit(root, "record")
    edit(root, '''        found = {}
        if header:
            for link in header:
                key = link.get("rel") or link.get("url")
                found[key] = link
        return found''', '''        if header is None:
            return {}
        return {(link.get("rel") or link.get("url")): link for link in header}''', path="pkg/_client.py")
    edit(root, '"raw_path": request.raw_path}', '"raw_path": request.raw_path.split(b"?")[0]}', path="pkg/_client.py")
    commit(root, "Comprehension; no query in raw_path")
    assert only(root, links).stale is False
    assert "100% of its statements rewritten" in only(root, scope).why


def test_a_word_of_the_node_counts_unless_it_is_a_parameter_the_function_gained(clients_repo: Path) -> None:
    """A changed statement that starts using a word of the node's prose ("proxy") flags a span, unless
    that word is a parameter the function holding the span gained: its use is the new option's."""
    root = clients_repo
    span = capture(root, ["pkg/_client.py#L11"], content="Client turns its proxies into a proxy map for the mounts.",
                   title="Proxy map")
    commit(root, "record")
    edit(root, "self._proxy_map(proxies)", "self._proxy_map(proxies or proxy)", path="pkg/_client.py")
    edit(root, "import warnings\n", "import warnings\n\nproxy = None\n", path="pkg/_client.py")
    commit(root, "A module-wide proxy")
    assert only(root, span).why.startswith("lines 11-11 of pkg/_client.py changed (")
    git(root, "reset", "-q", "--hard", "HEAD~1")
    edit(root, "timeout=5, app=None):", "timeout=5, app=None, proxy=None):", path="pkg/_client.py")
    edit(root, "self._proxy_map(proxies)", "self._proxy_map(proxies or proxy)", path="pkg/_client.py")
    commit(root, "A proxy parameter")
    assert only(root, span).stale is False


_IMPORTS = st.lists(st.tuples(st.sampled_from(["", ".", "..", "..."]), st.sampled_from(["", "a", "a.b", "pkg._c"]),
                              st.lists(st.sampled_from(["X", "y", "Z as w", "(p,\n q)", "*"]), min_size=1, max_size=3)),
                    max_size=4)


@settings(max_examples=200, deadline=None)
@given(_IMPORTS, st.text(max_size=120), st.sampled_from(["m.py", "pkg/m.py", "src/pkg/sub/m.py"]))
def test_imports_and_their_modules_are_read_from_any_text(imports: list, noise: str, path: str) -> None:
    """The imports pattern and the module paths never raise; a plain ``from .a import X`` is found."""
    from autology_mcp.knowledge.trust.code_compare import deprecated_parameters
    from autology_mcp.knowledge.trust.deprecations import _imports, _module_paths

    text = "".join(f"from {d}{m} import {', '.join(n)}\n" for d, m, n in imports) + noise
    found = _imports(text)
    for local, (dots, module, name) in found.items():
        assert local and name
        for where in _module_paths(path, dots, module):
            assert where.endswith((".py", "/__init__.py")) and not where.startswith("/")
    for d, m, n in imports:
        if m and n == ["X"] and not noise:
            assert "X" in found
    assert isinstance(deprecated_parameters(text + "\ndeprecated\n", path), dict)


def test_a_function_the_node_names_that_no_longer_calls_the_symbol_is_a_flag(clients_repo: Path) -> None:
    """The node says a function of the file calls the referenced `#symbol` (requests' `send()` and
    `get_connection`); the symbol's own code unchanged, that function no longer calling it is a flag.
    Still calling it (with other arguments), or a node that names no caller, is not."""
    root = clients_repo
    hook = capture(root, ["pkg/_client.py#Client._proxy_map"], content="Override `_proxy_map` to change proxies: "
                   "`__init__` calls it for every client.", title="Proxy hook")
    plain = capture(root, ["pkg/_client.py#Client._proxy_map"], content="`_proxy_map` copies the mapping it is given.",
                    title="Proxy copy")
    commit(root, "record")
    edit(root, "self._proxy_map(proxies)", "self._proxy_map(proxies or {})", path="pkg/_client.py")
    commit(root, "Other arguments")
    assert only(root, hook).stale is False
    edit(root, "self._proxy_map(proxies or {})", "dict(proxies or {})", path="pkg/_client.py")
    commit(root, "Inline the map")
    sha = git(root, "rev-parse", "--short=9", "HEAD").strip()
    assert only(root, hook).why == f"`__init__` no longer calls `_proxy_map` in pkg/_client.py ({sha}, 2030-01-01)"
    assert only(root, plain).stale is False


# ------------------------------------------------------------------------------ the click classes (issue 38)

TYPED = '''import typing as t
from typing import Optional


def lookup(table: t.Mapping[str, t.Any], name: Optional[str] = None) -> t.Optional[t.Any]:
    if not isinstance(table, t.Mapping):
        raise TypeError("not a mapping")
    value = t.cast(t.Optional[t.Any], table.get(name))
    return value
'''

TYPED_AGAIN = '''from __future__ import annotations

import collections.abc as cabc
import typing as t


def lookup(table: cabc.Mapping[str, t.Any], name: str | None = None) -> t.Any | None:
    if not isinstance(table, cabc.Mapping):
        raise TypeError("not a mapping")
    value = t.cast("t.Any | None", table.get(name))
    return value
'''


def test_a_typing_only_rewrite_is_no_change_and_a_real_one_beside_it_is() -> None:
    """`from __future__ import annotations`, `Optional[X]` into `X | None`, `typing.Mapping` into
    `collections.abc.Mapping` and a `typing.cast` whose type is now a string compare as the same code
    (click's 56db5465); a cast of another library (SQLAlchemy's, not imported from typing), a
    different ABC, or a changed value do not."""
    from autology_mcp.knowledge.trust.code_compare import dump, find_symbol, parse_python, same_code

    def lookup(text: str) -> str:
        return dump(find_symbol(parse_python(text), "lookup"), False)

    assert lookup(TYPED) == lookup(TYPED_AGAIN)
    assert lookup(TYPED) != lookup(TYPED_AGAIN.replace("(table, cabc.Mapping)", "(table, cabc.Sequence)"))
    assert lookup(TYPED) != lookup(TYPED_AGAIN.replace("table.get(name)", "table.get(name, 0)"))
    assert same_code("import typing\nx = typing.cast(typing.List[int], y)\n", "import typing\nx = y\n", "m.py")
    assert same_code("from typing import Union, Dict\nx: Dict[str, Union[int, None]] = {}\n",
                     "from typing import Union, Dict\nx: dict[str, int | None] = {}\n", "m.py")
    sql = "from sqlalchemy import cast\nq = cast(column, Integer)\n"
    assert not same_code(sql, sql.replace("Integer", "String"), "m.py")
    assert not same_code("x: int = 1\n", "x = 1\n", "m.py")  # an annotated field is declared by its annotation


def test_a_node_on_code_rewritten_for_typing_only_is_not_flagged(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "typed", "pkg/lookup.py", TYPED, "lookup")
    symbol = capture(root, ["pkg/lookup.py#lookup"], content='`lookup(table, name)` returns `table.get(name)` and '
                     'raises TypeError "not a mapping" for anything but a `Mapping`.', title="Lookup")
    span = capture(root, ["pkg/lookup.py#L6-8"], content="lookup checks that the table is a `Mapping` before it "
                   "reads the `value`.", title="Lookup check")
    whole = capture(root, ["pkg/lookup.py"], content="`lookup` reads a `Mapping`.", title="Lookup file")
    commit(root, "record")
    (root / "pkg" / "lookup.py").write_text(TYPED_AGAIN)
    commit(root, "Deferred annotations")
    assert [only(root, n).stale for n in (symbol, span, whole)] == [False, False, False]
    edit(root, "(table, cabc.Mapping)", "(table, cabc.Sequence)", path="pkg/lookup.py")
    commit(root, "Sequences")
    assert only(root, symbol).why.startswith("`lookup` of pkg/lookup.py changed: the use of `Mapping` changed (")
    assert only(root, span).why.startswith("lines 6-8 of pkg/lookup.py changed (")


RUNNERS = '''class BaseRunner:
    """Runs one command."""


class GroupRunner(BaseRunner):
    """Runs subcommands."""
'''

RUNNERS_DEPRECATED = '''import warnings


class _BaseRunner:
    """Runs one command."""


class GroupRunner(_BaseRunner):
    """Runs subcommands."""


def __getattr__(name):
    if name == "BaseRunner":
        warnings.warn("'BaseRunner' is deprecated and will be removed. Use 'GroupRunner' instead.", DeprecationWarning)
        return _BaseRunner
    raise AttributeError(name)
'''


def test_a_name_deprecated_through_a_module_getattr_flags_a_folder_node(tmp_path: Path) -> None:
    """click's `BaseCommand`: kept importable by a module `__getattr__` that warns. A node on the folder
    that names it is flagged, with the file and the commit, and keeps the flag through a committed tag
    (the fingerprint records what was deprecated when the node was written); a node that names only
    the replacement the warning points to is not."""
    root = one_file_repo(tmp_path / "runners", "pkg/core.py", RUNNERS, "runners")
    both = capture(root, ["pkg/"], content="pkg/core.py holds `BaseRunner` and `GroupRunner`.", title="Runners")
    group = capture(root, ["pkg/"], content="pkg/core.py holds `GroupRunner`.", title="Group runner")
    commit(root, "record")
    (root / "pkg" / "core.py").write_text(RUNNERS_DEPRECATED)
    commit(root, "Deprecate BaseRunner")
    sha = git(root, "rev-parse", "--short=9", "HEAD").strip()
    assert only(root, both).why == f"`BaseRunner` is deprecated in pkg/ (pkg/core.py, {sha}, 2030-01-01)"
    assert only(root, group).stale is False
    service = Autology.open(root)
    try:
        service.update(both, tags=["layout"])
    finally:
        service.close()
    commit(root, "tag")
    assert only(root, both).why == "`BaseRunner` is deprecated in pkg/ (pkg/core.py, since the node was written)"


def test_a_deprecation_names_what_is_deprecated_not_what_replaces_it() -> None:
    """A deprecation warning's message counts for the names in its sentence that says "deprecat", not
    for what to use instead (`args` beside click's `protected_args`, `Command` for `BaseCommand`); a
    module `__getattr__` that warns deprecates the names it tests for, whatever its message says."""
    from autology_mcp.knowledge.trust.code_compare import deprecated, named_deprecated

    names = {"protected_args", "args", "BaseCommand", "Command", "split", "shell"}
    protected = "'protected_args' is deprecated. 'args' will contain the rest."
    assert named_deprecated(protected, names) == {"protected_args"}
    assert named_deprecated("'BaseCommand' is deprecated. Use 'Command' instead.", names) == {"BaseCommand"}
    assert named_deprecated("Use Command instead of BaseCommand", names) == {"BaseCommand"}
    assert named_deprecated("'split' is deprecated, it will only be available in 'shell'.", names) == {"split"}
    assert named_deprecated("BaseCommand will be removed in 9.0", names) == {"BaseCommand"}  # no sentence says it
    module = ('import warnings\n\ndef __getattr__(name):\n    if name in ("Old", "Older"):\n'
              '        warnings.warn(f"{name!r} is deprecated", DeprecationWarning)\n        return New\n'
              '    raise AttributeError(name)\n')
    assert deprecated(module, "m.py", {"Old", "Older", "New"}) == {"Old", "Older"}
    assert deprecated(module.replace("warnings.warn", "print"), "m.py", {"Old", "New"}) == set()


def test_a_parameter_deprecated_in_a_docstring_is_not_its_functions() -> None:
    """flask's `dumps`: "``encoding`` is deprecated" in the docstring and a warning when `encoding` is
    given (read from `**kwargs`) deprecate the keyword, not `dumps`; a docstring whose deprecation
    sentence names no parameter before saying it deprecates the function."""
    from autology_mcp.knowledge.trust.code_compare import deprecated, deprecated_parameters

    module = ('import warnings\n\n\ndef dumps(obj, **kwargs):\n    """Dump.\n\n    .. versionchanged:: 2.0\n'
              '        ``encoding`` is deprecated and will be removed in 2.1.\n    """\n'
              '    encoding = kwargs.pop("encoding", None)\n    if encoding is not None:\n'
              '        warnings.warn("\'encoding\' is deprecated.", DeprecationWarning)\n    return obj\n\n\n'
              'def loads(s):\n    """Load.\n\n    .. deprecated:: 2.0\n        Call ``json.loads(s)``.\n    """\n'
              '    return s\n')
    assert deprecated(module, "m.py", {"dumps", "loads"}) == {"loads"}
    assert {k: set(v[1]) for k, v in deprecated_parameters(module, "m.py").items()} == {"dumps": {"encoding"}}


OPTIONS = '''class Option:
    def __init__(self, decls, **attrs):
        self.decls = decls


def option(*decls, **attrs):
    """Attach an option."""

    def decorator(f):
        option_attrs = attrs.copy()
        OptionClass = option_attrs.pop("cls", None) or Option
        f.params = [OptionClass(decls, **option_attrs)]
        return f

    return decorator
'''

OPTIONS_EXPLICIT = '''class Option:
    def __init__(self, decls, **attrs):
        self.decls = decls


def option(*decls, cls=None, **attrs):
    """Attach an option.

    :param cls: the option class.
    """
    if cls is None:
        cls = Option

    def decorator(f):
        f.params = [cls(decls, **attrs)]
        return f

    return decorator
'''


def test_a_keyword_taken_from_kwargs_made_a_parameter_is_the_same_interface(tmp_path: Path) -> None:
    """click's `option`: `cls` read from `**attrs` becomes a parameter of its own (and the docstring grows):
    callers pass the same `cls=`, so a node that names `cls` still holds. A parameter that replaces
    another keyword (`kind=` read before, `cls=` now) is a flag for it."""
    root = one_file_repo(tmp_path / "options", "pkg/options.py", OPTIONS, "options")
    node = capture(root, ["pkg/options.py#option"], content='`option("--verbose", cls=VerboseOption)` builds a new '
                   "option of class `cls` for each function it decorates; `cls` defaults to `Option`.", title="Option")
    commit(root, "record")
    (root / "pkg" / "options.py").write_text(OPTIONS_EXPLICIT)
    commit(root, "cls is a parameter")
    assert only(root, node).stale is False
    git(root, "reset", "-q", "--hard", "HEAD~1")
    (root / "pkg" / "options.py").write_text(OPTIONS.replace('"cls"', '"kind"'))
    commit(root, "kind")
    fresh = capture(root, ["pkg/options.py#option"], content="Each function gets an option of class `cls`, `Option` "
                    "by default.", title="Option kind")
    commit(root, "record again")
    (root / "pkg" / "options.py").write_text(OPTIONS_EXPLICIT)
    commit(root, "cls replaces kind")
    assert only(root, fresh).why.startswith("`option` of pkg/options.py changed: the use of `cls` changed (")


CHARSETS = '''def detect(body):
    """Detect the charset."""
    return chardet.detect(body)["encoding"]


def version():
    return run(["bash", "-c", "echo ${BASH_VERSION}"])
'''


def test_a_statement_put_under_a_new_if_is_not_rewritten_and_a_docstring_is_no_statement(tmp_path: Path) -> None:
    """requests' `apparent_encoding`: its one statement put under `if chardet is not None:` with a
    fallback beside it keeps what the node says; the statement replaced is a flag."""
    root = one_file_repo(tmp_path / "charsets", "pkg/charsets.py", CHARSETS, "charsets")
    node = capture(root, ["pkg/charsets.py#detect"], content="`detect` runs `chardet.detect` over the whole body.",
                   title="Detect")
    commit(root, "record")
    edit(root, '    return chardet.detect(body)["encoding"]\n', '    if chardet is not None:\n'
         '        return chardet.detect(body)["encoding"]\n    return "utf-8"\n', path="pkg/charsets.py")
    commit(root, "A fallback")
    assert only(root, node).stale is False
    edit(root, '        return chardet.detect(body)["encoding"]\n', '        return guess(body[:100])\n',
         path="pkg/charsets.py")
    commit(root, "Guess")
    assert only(root, node).stale


def test_a_quoted_command_compares_without_its_inner_quotation_marks(tmp_path: Path) -> None:
    """The node writes `bash -c "echo ${BASH_VERSION}"` in its own quotes; the code now quotes the
    variable, 'echo "${BASH_VERSION}"': the same command (click's d9af5cfa). Another command is a flag."""
    root = one_file_repo(tmp_path / "quotes", "pkg/charsets.py", CHARSETS, "charsets")
    node = capture(root, ["pkg/charsets.py#version"], content='`version()` runs `bash -c "echo ${BASH_VERSION}"`.',
                   title="Version")
    commit(root, "record")
    edit(root, '"echo ${BASH_VERSION}"', '\'echo "${BASH_VERSION}"\'', path="pkg/charsets.py")
    commit(root, "Quote the variable")
    assert only(root, node).stale is False
    edit(root, '\'echo "${BASH_VERSION}"\'', '\'printf "${BASH_VERSION}"\'', path="pkg/charsets.py")
    commit(root, "printf")
    assert only(root, node).stale


HELP = '''def help_line(opts, help, required):
    extra = []
    if required:
        extra.append("required")
    if extra:
        extra_str = "; ".join(extra)
        help = f"{help}  [{extra_str}]" if help else f"[{extra_str}]"
    return opts, help
'''

HELP_MOVED = '''def help_line(opts, help, required):
    items = ["required"] if required else []
    if items:
        extra_str = "; ".join(items)
        help = f"{help}  [{extra_str}]" if help else f"[{extra_str}]"
    opts = [o.strip() for o in opts]
    return opts, help
'''


def test_a_span_moved_in_its_function_with_a_variable_renamed_is_followed(tmp_path: Path) -> None:
    """click's help extras: the span's three statements moved up their function, `extra` renamed
    `items`, and other statements where they were: the same code, followed there (not judged by what
    took their old place). The same move with another separator is a flag."""
    root = one_file_repo(tmp_path / "help", "pkg/help.py", HELP, "help")
    node = capture(root, ["pkg/help.py#L5-7"], content="The extras are joined with '; ' and put in brackets two "
                   "spaces after the help, `Output file.  [default: out.txt; required]`.", title="Extras")
    commit(root, "record")
    (root / "pkg" / "help.py").write_text(HELP_MOVED)
    commit(root, "Move the extras up")
    assert only(root, node).stale is False
    (root / "pkg" / "help.py").write_text(HELP_MOVED.replace('"; ".join', '", ".join'))
    commit(root, "Commas")
    assert only(root, node).why.startswith("lines 5-7 of pkg/help.py changed (")


def test_the_blob_logs_of_many_paths_in_one_git_call_match_one_call_per_path(tmp_path: Path) -> None:
    """`analyze` reads the `git log --raw` of every path whose fingerprint disagrees with its base in one
    git call; what it reads per path is what a call for that path alone reads, a merge that changed a
    file against both parents included (as a commit with no blob ids, as before)."""
    from autology_mcp.knowledge.trust.git_history import History

    root = tmp_path / "logs"
    root.mkdir()
    (root / "a.py").write_text("x = 1\ny = 2\nz = 3\n")
    (root / "b.py").write_text("b = 1\n")
    git(root, "init", "-q", "-b", "main")
    commit(root, "both", when="2020-01-01T00:00:00Z")
    git(root, "checkout", "-q", "-b", "side")
    edit(root, "z = 3", "z = 30", path="a.py")
    commit(root, "side", when="2020-01-02T00:00:00Z")
    git(root, "checkout", "-q", "main")
    edit(root, "x = 1", "x = 10", path="a.py")
    edit(root, "b = 1", "b = 2", path="b.py")
    commit(root, "main", when="2020-01-03T00:00:00Z")
    git(root, "merge", "-q", "--no-edit", "side")
    edit(root, "b = 2", "b = 3", path="b.py")
    commit(root, "after", when="2020-01-04T00:00:00Z")
    together, alone = History(root), History(root)
    together.blob_logs(["a.py", "b.py", "gone.py"])
    for path in ("a.py", "b.py", "gone.py"):
        alone.blob_logs([path])
        assert together._blob_logs[path] == alone._blob_logs[path]
    assert len(together._blob_logs["a.py"]) == 4  # main, side, the merge (no ids), the first
    assert [ids for _, *ids in together._blob_logs["a.py"]][0] == ["", ""]
    assert together._blob_logs["gone.py"] == []


# ------------------------------------------------------------------------------ the black classes (issue 38)

PARENS = '''def normalize(node, parens_after, *, preview):
    """Make optional parentheses invisible."""
    for comment in list_comments(node.prefix, preview=preview):
        if comment.value == "fmt: off":
            return
    for index, child in enumerate(list(node.children)):
        if preview and child.type == FOR_TARGET:
            hide(node, child)
        elif node.type == IMPORT_FROM:
            if is_lpar(child):
                child.value = ""
                node.children[-1].value = ""
            break
        elif child.type == ATOM:
            hide(node, child)
'''

PARENS_MODE = '''def normalize(node, parens_after, *, mode, features):
    """Make optional parentheses invisible."""
    for comment in list_comments(node.prefix, preview=mode.preview):
        if comment.value == "fmt: off":
            return
    if node.type == WITH_STMT:
        wrap_managers(node, mode, features)
    for index, child in enumerate(list(node.children)):
        if mode.preview and child.type == FOR_TARGET:
            hide(node, child)
        elif node.type == IMPORT_FROM:
            _import_from(node, child)
            break
        elif child.type == ATOM:
            hide(node, child)


def _import_from(parent, child):
    if is_lpar(child):
        child.value = ""
        parent.children[-1].value = ""
'''

PARENS_NOTE = ("Statements go through `normalize(node, parens_after)`: the child after a keyword that is an atom "
               "gets its parentheses hidden, and `from x import (a, b)` has them made invisible; the other children "
               "stay. Around a for loop's target this is preview-only.")


def test_a_parameter_read_through_another_and_statements_split_out_keep_the_symbol(tmp_path: Path) -> None:
    """black's `normalize_invisible_parens`: `preview` becomes `mode.preview` (`mode` a new parameter), a
    branch moves into a new function called in its place (`node` passed as `parent`), and a statement
    using `node` is added; a node that writes the call `normalize(node, parens_after)` and names no
    `preview` still holds. The branch split out with other code, `preview` no longer read at all, or a
    node that names `preview`, or `node` outside the call, is a flag; so is the new function called
    with another value than the statements used (`_import_from(child, child)`)."""
    root = one_file_repo(tmp_path / "parens", "pkg/parens.py", PARENS, "parens")
    node = capture(root, ["pkg/parens.py#normalize"], content=PARENS_NOTE, title="Parens")
    named = capture(root, ["pkg/parens.py#normalize"], content="`normalize` hides parentheses; the `preview` flag "
                    "adds the for loop's target.", title="Parens preview")
    given = capture(root, ["pkg/parens.py#normalize"], content="`normalize(node, parens_after)` hides the "
                    "parentheses of each `node` child that is an atom.", title="Parens node")
    commit(root, "record")
    (root / "pkg" / "parens.py").write_text(PARENS_MODE)
    commit(root, "mode and features")
    assert only(root, node).stale is False
    assert only(root, named).why.startswith("`normalize` of pkg/parens.py changed: parameter `preview` removed (")
    assert only(root, given).why.startswith("`normalize` of pkg/parens.py changed: the use of `node` changed (")
    edit(root, "_import_from(node, child)\n", "_import_from(child, child)\n", path="pkg/parens.py")
    commit(root, "another value")
    assert only(root, node).why.startswith("`normalize` of pkg/parens.py changed: the use of `children` changed (")
    edit(root, "_import_from(child, child)\n", "_import_from(node, child)\n", path="pkg/parens.py")
    commit(root, "the same value again")
    assert only(root, node).stale is False
    edit(root, '        parent.children[-1].value = ""\n', '        parent.children[0].value = ""\n',
         path="pkg/parens.py")
    commit(root, "the first child")
    assert only(root, node).why.startswith("`normalize` of pkg/parens.py changed: the use of `children` changed (")
    (root / "pkg" / "parens.py").write_text(PARENS_MODE.replace("mode.preview and ", ""))
    commit(root, "preview is stable")
    assert only(root, node).why.startswith("`normalize` of pkg/parens.py changed: the use of `preview` changed (")


DOCSTRINGS = '''class Lines:
    def visit_string(self, leaf):
        if is_docstring(leaf):
            if Preview.docstring_quotes in self.mode:
                leaf.value = normalize_quotes(leaf.value)
            leaf.value = strip(leaf.value)
        yield from self.visit_default(leaf)
'''


def test_a_word_the_node_gives_only_as_a_qualifier_is_not_its_own_use(tmp_path: Path) -> None:
    """black's `visit_STRING` gains a statement under another `Preview` member: a node that names
    `Preview.docstring_quotes` says nothing of `Preview` alone, and still holds. A node whose prose names
    Preview itself, or the member it names gone, is a flag."""
    root = one_file_repo(tmp_path / "docs", "pkg/lines.py", DOCSTRINGS, "lines")
    node = capture(root, ["pkg/lines.py#Lines.visit_string"], content="Docstrings are stripped; quotes are "
                   "normalized behind `Preview.docstring_quotes`.", title="Docstrings")
    word = capture(root, ["pkg/lines.py#Lines.visit_string"], content="Docstrings are stripped; Preview decides "
                   "whether their quotes are normalized.", title="Docstrings preview")
    commit(root, "record")
    edit(root, "        if is_docstring(leaf):\n", "        if Preview.unicode_escapes in self.mode:\n"
         "            normalize_escapes(leaf)\n        if is_docstring(leaf):\n", path="pkg/lines.py")
    commit(root, "escapes")
    assert only(root, node).stale is False
    assert only(root, word).why.startswith("`Lines.visit_string` of pkg/lines.py changed: the use of `Preview` changed (")
    edit(root, "            if Preview.docstring_quotes in self.mode:\n                leaf.value = normalize_quotes(leaf.value)\n",
         "            leaf.value = normalize_quotes(leaf.value)\n", path="pkg/lines.py")
    commit(root, "stable quotes")
    assert "`docstring_quotes` is gone from it" in only(root, node).why


AWAITS = '''class Lines:
    def visit_power(self, node):
        if Preview.redundant_parens in self.mode:
            remove_await_parens(node)
        yield from self.visit_default(node)


def remove_await_parens(node):
    if node.children[0].type == AWAIT:
        hide(node.children[1])
'''


def test_a_caller_that_calls_the_symbol_without_the_test_the_node_names_is_a_flag(tmp_path: Path) -> None:
    """black's `remove_await_parens`: "`visit_power` calls it when `Preview.redundant_parens` is on", and
    the 2023 stable style calls it unconditionally: a flag. The test kept beside another one, or a
    node that names no test, is not."""
    root = one_file_repo(tmp_path / "awaits", "pkg/lines.py", AWAITS, "lines")
    node = capture(root, ["pkg/lines.py#remove_await_parens"], content="`remove_await_parens(node)` hides "
                   "parentheses after await. It is preview-only: `Lines.visit_power` calls it when "
                   "`Preview.redundant_parens` is on.", title="Await parens")
    plain = capture(root, ["pkg/lines.py#remove_await_parens"], content="`remove_await_parens(node)` hides "
                    "parentheses after await; `Lines.visit_power` calls it.", title="Await parens plain")
    commit(root, "record")
    edit(root, "        if Preview.redundant_parens in self.mode:\n", "        if Preview.redundant_parens in self.mode "
         "and node.children:\n", path="pkg/lines.py")
    commit(root, "another test")
    assert only(root, node).stale is False and only(root, plain).stale is False
    edit(root, "        if Preview.redundant_parens in self.mode and node.children:\n            remove_await_parens(node)\n",
         "        remove_await_parens(node)\n", path="pkg/lines.py")
    commit(root, "stable")
    sha = git(root, "rev-parse", "--short=9", "HEAD").strip()
    assert only(root, node).why == (f"`visit_power` calls `remove_await_parens` without testing `redundant_parens` now "
                                    f"in pkg/lines.py ({sha}, 2030-01-01)")
    assert only(root, plain).stale is False


FEATURES = '''def features_used(node):
    """The features a file uses."""
    found = set()
    for n in node.pre_order():
        if n.type == FSTRING:
            found.add(F_STRINGS)
        elif n.type == WALRUS:
            found.add(ASSIGNMENT_EXPRESSIONS)
    return found
'''


def test_a_name_the_node_says_the_code_has_not_is_a_flag_when_it_comes(tmp_path: Path) -> None:
    """black's `get_features_used`: "A `match` statement is not among them", and a later commit adds
    `match_stmt` to it: a flag. Another feature added, or `match` added where the node does not deny
    it, is not."""
    from autology_mcp.knowledge.trust.denials import denied

    assert denied("A `match` statement is not among them: it tries every grammar in `get_grammars`.") == {"match"}
    assert denied("Without `--target-version` it guesses; `None` is not returned; `retry` isn't called.") == {"retry"}
    root = one_file_repo(tmp_path / "features", "pkg/features.py", FEATURES, "features")
    node = capture(root, ["pkg/features.py#features_used"], content="`features_used(node)` finds f-strings and "
                   "assignment expressions. A `match` statement is not among them: every grammar is tried.",
                   title="Features")
    other = capture(root, ["pkg/features.py#features_used"], content="`features_used(node)` finds f-strings and "
                    "assignment expressions; a `match` statement decides the grammar.", title="Features grammar")
    commit(root, "record")
    edit(root, "    return found\n", "        elif n.type == POS_ONLY:\n            found.add(POS_ONLY_ARGUMENTS)\n"
         "    return found\n", path="pkg/features.py")
    commit(root, "positional-only")
    assert only(root, node).stale is False and only(root, other).stale is False
    edit(root, "    return found\n", "        elif n.type == match_stmt:\n            found.add(PATTERN_MATCHING)\n"
         "    return found\n", path="pkg/features.py")
    commit(root, "match")
    assert only(root, node).why.startswith("`features_used` of pkg/features.py changed: `match`, which the node says "
                                           "it has not, is in it now (")
    assert only(root, other).stale is False


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["`match`", "`None`", "`a.b`", "`x_y`", "not", "never", "no", "isn't", "is", "the",
                                 "among", ".", ";", ":", "\n", " ", "match_stmt", "rematch", "-"]), max_size=40)
       .map(" ".join))
def test_what_a_node_denies_is_a_name_it_gives_in_backticks(text: str) -> None:
    """Any text: a denied name is a single identifier the text gives in backticks, never a value
    (`None`) or a dotted name; a code holds a name as a part of one only between non-alphanumerics."""
    from autology_mcp.knowledge.trust.denials import denied, holds_part, now_held

    found = denied(text)
    assert found <= {"match", "x_y"}
    assert all(f"`{n}`" in text for n in found)
    assert holds_part("elif n.type == match_stmt:", "match") and not holds_part("rematch(x)", "match")
    assert set(now_held(text, "x = 1", "match_stmt = 2")) == found & {"match"}


# ------------------------------------------------------------------------------ the typer classes: a linter's equivalent rewrites


DEFAULT_HELP = '''def default_help(obj, legacy):
    if legacy and callable(obj.default):
        value = "(dynamic)"
    else:
        value = obj.default
    return value
'''


def test_a_string_marked_for_translation_keeps_a_node_that_quotes_it(tmp_path: Path) -> None:
    """typer's `_extract_default_help_str`: `"(dynamic)"` becomes `_("(dynamic)")`, the same English text:
    a node that quotes it still holds. The text itself changed, or a node that says the help is not
    translated (gettext), is a flag."""
    root = one_file_repo(tmp_path / "help", "pkg/help.py", DEFAULT_HELP, "help")
    node = capture(root, ["pkg/help.py#default_help"], content="`default_help(obj, legacy)` shows a function "
                   "default as the text \"(dynamic)\" on the legacy path.", title="Help defaults")
    about = capture(root, ["pkg/help.py#default_help"], content="`default_help(obj, legacy)` shows \"(dynamic)\" "
                    "as an English literal: help text is not marked for gettext.", title="Help in English")
    commit(root, "record")
    edit(root, 'value = "(dynamic)"', 'value = _("(dynamic)")', path="pkg/help.py")
    commit(root, "gettext")
    assert only(root, node).stale is False
    assert only(root, about).why.startswith("`default_help` of pkg/help.py changed: a statement with a string value "
                                            "the node quotes changed (")
    edit(root, 'value = _("(dynamic)")', 'value = _("(computed)")', path="pkg/help.py")
    commit(root, "another text")
    assert only(root, node).why.startswith("`default_help` of pkg/help.py changed: `'(dynamic)'`, as the node states it, "
                                           "is gone from it (")


UNIONS = '''def click_param(annotation, is_flag):
    if is_union(annotation):
        assert has_none(annotation), "Typer Currently doesn't support Union types"
    if annotation is bool and not (is_flag is False):
        return make_flag(annotation)
    if annotation is not None:
        return make_option(annotation)
    assert False, "A click.Parameter should be returned"
'''


def test_ruffs_equivalent_rewrites_keep_the_symbol_and_a_real_change_beside_them_does_not(tmp_path: Path) -> None:
    """typer's `get_click_param` under ruff: `assert False, msg` becomes `raise AssertionError(msg)` and
    `not (x is False)` becomes `x is not False`. The node names `AssertionError` beside a quoted message
    that says "doesn't": the negation is the message's, so the node does not deny the name, and the
    rewrite keeps it. A `raise` of another error in its place is a flag."""
    from autology_mcp.knowledge.trust.denials import denied

    text = ("`click_param(annotation, is_flag)` refuses any other Union with an `AssertionError` "
            "(\"Typer Currently doesn't support Union types\"), so `int | str` cannot be a type.")
    assert denied(text) == set()
    assert denied("It raises `TypeError`, not `AssertionError` (\"bad\").") == {"AssertionError", "TypeError"}
    root = one_file_repo(tmp_path / "unions", "pkg/main.py", UNIONS, "unions")
    node = capture(root, ["pkg/main.py#click_param"], content=text, title="Unions refused")
    commit(root, "record")
    edit(root, "not (is_flag is False)", "is_flag is not False", path="pkg/main.py")
    edit(root, 'assert False, "A click.Parameter should be returned"',
         'raise AssertionError("A click.Parameter should be returned")', path="pkg/main.py")
    commit(root, "ruff")
    assert only(root, node).stale is False
    edit(root, 'raise AssertionError("A click.Parameter should be returned")',
         'raise TypeError("A click.Parameter should be returned")', path="pkg/main.py")
    commit(root, "another error")
    assert only(root, node).why.startswith("`click_param` of pkg/main.py changed: ")


CALLBACK = '''def get_callback(*, callback=None, convertors={}, context_name=None):
    if not callback:
        return None

    def wrapper(**kwargs):
        for k, v in kwargs.items():
            if k in convertors:
                kwargs[k] = convertors[k](v)
        return callback(**kwargs)

    return wrapper
'''


def test_a_mutable_default_moved_into_the_body_is_the_same_parameter(tmp_path: Path) -> None:
    """typer's `get_callback` under ruff (B006): `convertors={}` becomes `convertors=None` with
    `use_convertors = convertors or {}` first in the body: the same default. A default that is really
    another value, or a body that still reads the parameter beside the new variable, is a flag."""
    from autology_mcp.knowledge.trust.code_compare import parameters_kept, parse_python
    from autology_mcp.knowledge.trust.equivalents import canonical

    def kept(before: str, after: str):
        old, new = (canonical(parse_python(t).body[0]) for t in (before, after))
        return parameters_kept(old, new)

    assert kept("def f(a={}):\n    return a\n", "def f(a=None):\n    if a is None:\n        a = {}\n    return a\n") is None
    assert kept("def f(a=[]):\n    return a\n", "def f(a=None):\n    b = a or []\n    return b\n") is None
    assert kept("def f(a={}):\n    return a\n", "def f(a=None):\n    b = a or {}\n    return b, a\n") == \
        "parameter `a` changed"  # the parameter is read beside the new variable: not the same code
    assert kept("def f(a={}):\n    return a\n", "def f(a=None):\n    b = a or []\n    return b\n") == \
        "parameter `a` changed"  # another default
    root = one_file_repo(tmp_path / "callbacks", "pkg/main.py", CALLBACK, "callbacks")
    node = capture(root, ["pkg/main.py#get_callback"], content="`get_callback(*, callback, convertors, context_name)` "
                   "wraps a command: each value passes through its convertor from `convertors` when there is one.",
                   title="Callbacks")
    commit(root, "record")
    edit(root, "convertors={}, context_name=None):\n", "convertors=None, context_name=None):\n"
         "    use_convertors = convertors or {}\n", path="pkg/main.py")
    edit(root, "            if k in convertors:\n                kwargs[k] = convertors[k](v)\n",
         "            if k in use_convertors:\n                kwargs[k] = use_convertors[k](v)\n", path="pkg/main.py")
    commit(root, "ruff")
    assert only(root, node).stale is False
    edit(root, "convertors or {}", "convertors or {'path': str}", path="pkg/main.py")
    commit(root, "a default convertor")
    assert only(root, node).why.startswith("`get_callback` of pkg/main.py changed: parameter `convertors` changed (")


def test_a_folder_node_that_names_its_files_is_a_flag_when_one_is_deleted_or_renamed(repo: Path, tmp_path: Path) -> None:
    """typer's `typer/` node lists the package's modules by bare name (`_completion_click7.py`, ...):
    deleting or renaming one the folder held is a flag, also after a squash-merge of the node's commit
    (its fingerprint records the files it saw). A file the node does not name, or a name that was
    never a file of the folder (`example.com`), is not."""
    from autology_mcp.knowledge.trust.folder_files import named_files

    assert named_files("holds `retry.py`, `py.typed` and `example.com`; `src/x.py`, `retry`", "src") == \
        {"src/retry.py", "src/py.typed", "src/example.com"}
    (repo / "src" / "legacy.py").write_text("y = 2\n")
    commit(repo, "legacy")
    git(repo, "checkout", "-q", "-b", "feature")
    node = capture(repo, ["src/"], content="src/ holds `retry.py` (the retries, `backoff`), `legacy.py` and the "
                   "docs at `example.com`.", title="The modules")
    commit(repo, "record the layout", when="2030-01-02T00:00:00Z")
    git(repo, "checkout", "-q", "main")
    (repo / "src" / "other.py").unlink()  # not named by the node
    commit(repo, "drop other", when="2030-01-03T00:00:00Z")
    git(repo, "merge", "-q", "--no-edit", "feature", when="2030-01-03T12:00:00Z")
    assert only(repo, node).stale is False
    git(repo, "mv", "src/legacy.py", "src/old.py")
    commit(repo, "rename legacy", when="2030-01-04T00:00:00Z")
    assert only(repo, node).why == "src/legacy.py is gone from src"
    squashed = tmp_path / "squashed"  # the node's commit squashed onto the code after the rename
    git(tmp_path, "clone", "-q", str(repo), str(squashed))
    git(squashed, "checkout", "-q", "-b", "flat", "HEAD")
    git(squashed, "reset", "-q", "--soft", git(squashed, "rev-list", "--max-parents=0", "HEAD").strip())
    commit(squashed, "everything (#1)", when="2030-01-05T00:00:00Z")
    fresh = tmp_path / "fresh"
    git(tmp_path, "clone", "-q", "--no-local", "-b", "flat", str(squashed), str(fresh))
    assert only(fresh, node).why == "src/legacy.py is gone from src"


_STATEMENTS = ["assert False", "assert False, 'm'", "assert x, 'm'", "y = x or {}", "y = x or []", "y = x or {'a': 1}",
               "if x is None:\n        x = {}", "if x is None:\n        x = []\n    else:\n        x = 1",
               "return not (x is False)", "return not (x in y)", "return not x", "return _('text')",
               "return gettext('a', 'b')", "return _(x)", "return x", "return y", "y = 2", "'''doc'''",
               "y = []", "y = list(x)", "y.append(x)", "y.extend(x)", "y += x", "for z in x:\n        y.append(z)",
               "return f(type(x), x)", "g(type(x), x, x.__traceback__)", "z = g(x)\n    return z",
               "if x:\n        if y:\n            return y", "with open(x, 'r') as y:\n        with g(y):\n            pass",
               "return set([x, y]) | set(z for z in x)", "return dict(a=x), list(), tuple([x])",
               "return x in y.keys()", "raise IOError(super(C, self).x)", "return any([z for z in x])"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_STATEMENTS), min_size=1, max_size=6), st.sampled_from(["None", "{}", "[]", "1"]),
       st.booleans())
def test_the_equivalent_rewrites_read_one_way_and_leave_the_tree_alone(body: list, default: str, translated: bool) -> None:
    """Any function built of these statements: the canonical copy compiles, reading it again changes
    nothing, and the tree given is not changed; a translation call is read as its string only with
    ``translated``; statements after a return or a raise are left out."""
    import ast as _ast

    from autology_mcp.knowledge.trust.code_compare import dump
    from autology_mcp.knowledge.trust.equivalents import canonical

    source = f"def f(x={default}):\n" + "".join(f"    {s}\n" for s in body)
    tree = _ast.parse(source).body[0]
    before = dump(tree, False)
    once = canonical(tree, translated)
    assert dump(tree, False) == before
    assert dump(canonical(once, translated), False) == dump(once, False)
    compile(_ast.fix_missing_locations(_ast.Module([once], [])), "f.py", "exec")
    marked = "Call(func=Name(id='_', ctx=Load()), args=[Str('text')])"
    def top_lines(item: str) -> list[str]:  # an item's statements at the function's own level
        first, *rest = item.split("\n")
        return [first] + [line[4:] for line in rest if line.startswith("    ") and not line.startswith("     ")]

    ends = [i for i, s in enumerate(body) if any(line.startswith(("return", "raise", "assert False"))
                                                 for line in top_lines(s))]
    reached = body[:ends[0] + 1] if ends else body  # what comes after a return or a raise never runs: left out
    if "return _('text')" in reached:
        assert (marked in dump(once, False)) is not translated
    assert "Assert(test=Constant(value=False)" not in dump(once, False)  # `assert False` is read as a raise


# ------------------------------------------------------------------------------ the pytest classes (issue 38)


CODE_PATH = '''import inspect
import os


class Code:
    def __init__(self, raw):
        self.raw = raw

    @property
    def path(self):
        if not self.raw.co_filename:
            return ""
        try:
            p = os.path.abspath(self.raw.co_filename)
            if not os.path.exists(p):
                raise OSError("path check failed.")
            return p
        except OSError:
            return self.raw.co_filename
'''


def test_a_prose_word_read_inside_an_attribute_and_then_as_a_variable_is_the_same_use(tmp_path: Path) -> None:
    """pytest's `Code.path`: `self.raw.co_filename` becomes a variable `filename = inspect.getfile(self.raw)`
    read in the same three places. The node's word "filename" was used before (a part of `co_filename`)
    and is used after: its use did not change. A change that brings the word into statements that did
    not use it in any form (the path now the file's basename) is a flag."""
    from autology_mcp.knowledge.trust.code_compare import units
    from autology_mcp.knowledge.trust.mentions import Said

    said = Said(set(), set(), "It gives the filename string as recorded, or the session.")
    before = units("a = x.co_filename\nreturn x.co_filename\n", "f.py")
    after = units("filename = g(x)\na = filename\nreturn filename\nsession = 1\n", "f.py")
    assert said.words_kept(before, after) == {"filename"}  # "session" is used after only
    assert said.words_kept(before, after + units("print(filename)\n", "f.py")) == set()  # one statement more
    root = one_file_repo(tmp_path / "code", "pkg/code.py", CODE_PATH, "code")
    node = capture(root, ["pkg/code.py#Code.path"], content="`Code.path` gives the code object's source file: an "
                   "absolute path when the file exists on disk, the filename string as recorded when it does not, and "
                   "an empty string when the code has no filename.", title="Code paths")
    commit(root, "record")
    edit(root, "        if not self.raw.co_filename:\n", "        filename = inspect.getfile(self.raw)\n"
         "        if not filename:\n", path="pkg/code.py")
    edit(root, "os.path.abspath(self.raw.co_filename)", "os.path.abspath(filename)", path="pkg/code.py")
    edit(root, "            return self.raw.co_filename\n", "            return filename\n", path="pkg/code.py")
    commit(root, "inspect")
    assert only(root, node).stale is False
    edit(root, "            return p\n", "            filename = os.path.basename(p)\n            return filename\n",
         path="pkg/code.py")
    commit(root, "basename")
    assert only(root, node).why.startswith("`Code.path` of pkg/code.py changed: the use of `filename` changed (")


EXCONLY = '''from traceback import format_exception_only


class Info:
    _striptext = "AssertionError: "

    def exconly(self, tryshort=False):
        """Return the exception as a string.

        When 'tryshort' resolves to True, and the exception is an
        AssertionError, the prefix is removed.
        """
        lines = format_exception_only(type(self.value), self.value)
        text = "".join(lines).rstrip()
        if tryshort:
            if text.startswith(self._striptext):
                text = text[len(self._striptext):]
        return text
'''


def test_a_name_only_the_docstring_gave_is_not_the_codes_and_an_exception_passed_alone_is_the_same_call(
        tmp_path: Path) -> None:
    """pytest's `ExceptionInfo.exconly`: its docstring rewritten ("If true" for "resolves to True") and
    `format_exception_only(type(e), e)` now `format_exception_only(e)` (the same call since Python
    3.10). The node's `tryshort=True` names `True`, which only the docstring held: the code did not lose
    it. `_striptext` gone from the code is a flag."""
    root = one_file_repo(tmp_path / "exc", "pkg/code.py", EXCONLY, "code")
    node = capture(root, ["pkg/code.py#Info.exconly"], content="pytest prints an exception's text with "
                   "`traceback.format_exception_only`. `Info.exconly(tryshort=False)` joins the lines and strips "
                   "trailing whitespace; with `tryshort=True` it removes the leading `_striptext`.", title="exconly")
    commit(root, "record")
    edit(root, "        When 'tryshort' resolves to True, and the exception is an\n        AssertionError, the prefix is "
         "removed.\n", "        :param tryshort: If true, strip the prefix of an AssertionError.\n", path="pkg/code.py")
    edit(root, "format_exception_only(type(self.value), self.value)", "format_exception_only(self.value)",
         path="pkg/code.py")
    commit(root, "docs and the 3.10 call")
    assert only(root, node).stale is False
    edit(root, "            if text.startswith(self._striptext):\n                text = text[len(self._striptext):]\n",
         "            text = text.removeprefix('AssertionError: ')\n", path="pkg/code.py")
    commit(root, "removeprefix")
    assert only(root, node).why.startswith("`Info.exconly` of pkg/code.py changed: `_striptext` is gone from it (")


CONDITION = '''import traceback


def evaluate_condition(mark, condition):
    try:
        return eval(condition)
    except Exception as exc:
        msglines = [
            f"Error evaluating {mark.name!r} condition",
            "    " + condition,
            *traceback.format_exception_only(type(exc), exc),
        ]
        fail("\\n".join(msglines))
'''


def test_an_exception_passed_without_its_type_keeps_a_statement_whose_message_the_node_quotes(tmp_path: Path) -> None:
    """pytest's `evaluate_condition`: the statement that builds the message the node quotes ("Error
    evaluating 'skipif' condition") passes the exception alone to `format_exception_only`. The same
    call; the message's lines built from another exception (its cause) are a flag, and so are another
    function's lines (the whole traceback)."""
    import ast

    from autology_mcp.knowledge.trust.equivalents import canonical

    def read(code: str) -> str:
        return ast.unparse(canonical(ast.parse(code)))

    assert read("f(type(e), e)\ng(1, type(e), e, e.__traceback__, 2)") == "f(e)\ng(1, e, 2)"
    assert read("f(type(e), d)\ng(type(e), e, d.__traceback__)") == "f(type(e), d)\ng(e, d.__traceback__)"
    root = one_file_repo(tmp_path / "skip", "pkg/skipping.py", CONDITION, "skipping")
    node = capture(root, ["pkg/skipping.py#evaluate_condition"], content="`evaluate_condition(mark, condition)` fails "
                   "the test when the condition raises, with \"Error evaluating 'skipif' condition\", the condition, "
                   "and the exception's `format_exception_only` lines.", title="Conditions that raise")
    commit(root, "record")
    edit(root, "format_exception_only(type(exc), exc)", "format_exception_only(exc)", path="pkg/skipping.py")
    commit(root, "3.10")
    assert only(root, node).stale is False
    edit(root, "format_exception_only(exc)", "format_exception_only(exc.__cause__)", path="pkg/skipping.py")
    commit(root, "the cause")
    assert only(root, node).why.startswith("`evaluate_condition` of pkg/skipping.py changed: a statement with a string "
                                           "value the node quotes changed (")
    edit(root, "traceback.format_exception_only(exc.__cause__)", "traceback.format_exception(exc)", path="pkg/skipping.py")
    commit(root, "the whole traceback")
    assert only(root, node).why.startswith("`evaluate_condition` of pkg/skipping.py changed: `format_exception_only` "
                                           "is gone from it (")


COMPARE = '''from approx import ApproxBase


def compare_any(left, right, verbose):
    explanation = []
    if istext(left) and istext(right):
        explanation = list(compare_text(left, right, verbose))
    else:
        if isinstance(right, ApproxBase):
            explanation = right.repr_compare(left)
        elif isinstance(left, ApproxBase):
            explanation = left.repr_compare(right)
        elif issequence(left) and issequence(right):
            explanation = list(compare_sequence(left, right, verbose))
        if isiterable(left) and isiterable(right):
            expl = compare_iterable(left, right, verbose)
            explanation.extend(expl)
    return explanation
'''

GENERATOR = '''from approx import ApproxBase


def compare_any(left, right, verbose):
    """Yield the explanation, line by line."""
    if istext(left) and istext(right):
        yield from compare_text(left, right, verbose)
    else:
        if isinstance(right, ApproxBase):
            yield from right.repr_compare(left)
        elif isinstance(left, ApproxBase):
            yield from left.repr_compare(right)
        elif issequence(left) and issequence(right):
            yield from compare_sequence(left, right, verbose)
        if isiterable(left) and isiterable(right):
            yield from compare_iterable(left, right, verbose)
'''


def test_a_function_made_a_generator_of_what_it_collected_keeps_the_node(tmp_path: Path) -> None:
    """pytest's `_compare_eq_any` made a generator: each `explanation = list(x)`, `explanation = x` and
    `explanation.extend(x)` now `yield from x`, the `return explanation` gone. The same values from the same
    calls: what the node says of the explanation holds. A branch that yields something else (the approx
    object's explanation no longer used) is a flag, and a function that returns what is not a list it
    set up (click's `option` returns its `decorator`) is not read as one."""
    import ast

    from autology_mcp.knowledge.trust.equivalents import canonical

    def read(code: str) -> str:
        return ast.unparse(canonical(ast.parse(code)))

    assert read("def f(xs):\n    out = []\n    for x in xs:\n        out.append(x)\n    return out") == \
        "def f(xs):\n    for x in xs:\n        yield x"
    kept = ["def f(xs):\n    out = []\n    if out:\n        out.append(1)\n    return out",  # read another way
            "def f(a):\n\n    def decorator(g):\n        return g\n    return decorator",  # not a list it set up
            "def f(out):\n    out.append(1)\n    return out"]  # a parameter
    for code in kept:
        assert read(code) == ast.unparse(ast.parse(code))
    root = one_file_repo(tmp_path / "cmp", "pkg/compare.py", COMPARE, "compare")
    node = capture(root, ["pkg/compare.py#compare_any"], content="`compare_any(left, right, verbose)` lets an approximate "
                   "comparison explain itself: when either side is an `ApproxBase` (the right side checked first), it "
                   "uses that object's `repr_compare(other_side)` as the explanation.", title="approx explains itself")
    commit(root, "record")
    (root / "pkg" / "compare.py").write_text(GENERATOR)
    commit(root, "a generator")
    assert only(root, node).stale is False
    edit(root, "            yield from right.repr_compare(left)\n", "            yield 'comparison failed'\n",
         path="pkg/compare.py")
    commit(root, "a fixed text")
    assert only(root, node).stale is True


_DOC_PARTS = ['"""One line."""', '"""Two\n    lines."""', "'''x'''", "x = 1", "return x", "y = 'not a docstring'",
              "def inner():\n        '''inner doc'''\n        return 2", "class K:\n        'doc K'\n        z = 3"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_DOC_PARTS), min_size=1, max_size=5))
def test_a_symbols_code_without_its_docstrings_keeps_its_lines_and_its_code(parts: list) -> None:
    """Any function built of these statements: the text has as many lines as the function, no docstring's
    text is left, and every line that is not a docstring's is kept as it was."""
    import ast as _ast

    from autology_mcp.knowledge.trust.code_compare import without_docstrings

    source = "def f():\n" + "".join(f"    {p}\n" for p in parts)
    tree = _ast.parse(source).body[0]
    out = without_docstrings(source, tree).split("\n")
    lines = source.splitlines()
    assert len(out) == len(lines)
    assert not any(doc in line for line in out for doc in ("inner doc", "'doc K'"))  # an inner function's, a class's
    if parts[0].startswith(('"""', "'''")):  # the function's own
        assert out[1] == ""
    for line, kept in zip(lines, out):
        assert kept in ("", line)
        if "x = 1" in line or "return" in line or "not a docstring" in line or "def inner" in line:
            assert kept == line


# ------------------------------------------------------------------------------ the mypy classes (issue 38)

MYPY_STUB = '''from typing import final

@final
class Writer:
    def append(self, /, x: int) -> None: ...
    def write(self, /, b: bytes) -> None: ...
    def getvalue(self) -> bytes: ...
'''


def test_a_signature_the_node_writes_holds_until_a_parameter_it_lists_changes_kind(tmp_path: Path) -> None:
    """mypy's librt stub: the node writes `write(self, /, b: bytes)`, the stub's `def`. An optional parameter
    added after it keeps every parameter the node lists as it was (information); `b` made positional-only
    (`write(self, b: bytes, /)`) changes how a caller may pass it: a flag, though every name is still there."""
    root = one_file_repo(tmp_path / "stub", "pkg/w.pyi", MYPY_STUB, "stub")
    node = capture(root, ["pkg/w.pyi#Writer"], content="The stub of `Writer` puts the `/` right after `self`: "
                   "`append(self, /, x: int)` and `write(self, /, b: bytes)`; the other arguments may be given by keyword.",
                   title="Writer marks only self positional-only")
    commit(root, "record")
    edit(root, "def write(self, /, b: bytes)", "def write(self, /, b: bytes, flush: bool = False)", path="pkg/w.pyi")
    commit(root, "an optional flush")
    assert only(root, node).stale is False
    edit(root, "def write(self, /, b: bytes, flush: bool = False)", "def write(self, b: bytes, /, flush: bool = False)",
         path="pkg/w.pyi")
    commit(root, "b positional-only")
    found = only(root, node)
    assert found.stale is True and "write(self, /, b: bytes)" in found.why


def test_signatures_agree_by_each_listed_parameter_its_place_kind_annotation_and_default() -> None:
    from autology_mcp.knowledge.trust.signatures import signatures_lost

    before = "def f(a, b: int = 1, *, c=None):\n    pass\n"
    assert signatures_lost(before, "def f(a, b: int = 1, d=2, *, c=None):\n    pass\n", ["f(a, b: int = 1)"]) == []
    assert signatures_lost(before, "def f(a, /, b: int = 1, *, c=None):\n    pass\n", ["f(a, b)"]) == ["f(a, b)"]
    assert signatures_lost(before, "def f(b: int = 1, a=0, *, c=None):\n    pass\n", ["f(a, b)"]) == ["f(a, b)"]
    assert signatures_lost(before, "def f(a, b: str = 1, *, c=None):\n    pass\n", ["f(a, b: int)"]) == ["f(a, b: int)"]
    assert signatures_lost(before, "def f(a, b: int = 2, *, c=None):\n    pass\n", ["f(a, b=1)"]) == ["f(a, b=1)"]
    assert signatures_lost(before, "def f(a, b: int = 1, c=None):\n    pass\n", ["f(a, *, c=None)"]) == ["f(a, *, c=None)"]
    # a call that is no def (an argument that is no parameter), a name without parameters, a function gone: not this rule's
    assert signatures_lost(before, "def f(x):\n    pass\n", ["f(1, 2)", "f()", "g(a)"]) == []
    assert signatures_lost(before, "def g(a):\n    pass\n", ["f(a, b)"]) == []


MYPY_NARROW = '''def refers_to(expr, name):
    return expr == name


class Checker:
    def find_type_check(self, node, indices):
        """Narrow type(x) == T."""

        def is_type_call(expr):
            return refers_to(expr, "builtins.type")

        in_calls = []
        compared = None
        for index in indices:
            expr = node.operands[index]
            if is_type_call(expr):
                in_calls.append(expr)
            else:
                compared = self.type_of(expr)
        if not in_calls:
            return None
        return in_calls, compared
'''

MYPY_SPLIT = '''def refers_to(expr, name):
    return expr == name


def is_type_call(expr):
    return refers_to(expr, "builtins.type")


class Checker:
    def find_type_check(self, node, indices):
        """Narrow type(x) == T."""
        in_calls = []
        for index in indices:
            expr = node.operands[index]
            if is_type_call(expr):
                in_calls.append(expr)
        if not in_calls:
            return None
        compared = None
        for index in indices:
            expr = node.operands[index]
            if is_type_call(expr):
                continue
            compared = self.type_of(expr)
        return in_calls, compared
'''


def test_a_loop_split_in_two_and_an_inner_helper_moved_out_keep_the_node(tmp_path: Path) -> None:
    """mypy's `find_type_equals_check`: its inner `is_type_call` moved to the module (still called, still
    `"builtins.type"`) and its loop split in two passes (the `type(...)` calls first, an early return when
    there are none): the statements it held it still holds, and the helper it calls is still its code.
    A second pass that reads another attribute (`node.others`) is a flag, and so is the helper no longer
    asking for `type`."""
    root = one_file_repo(tmp_path / "narrow", "pkg/checker.py", MYPY_NARROW, "checker")
    node = capture(root, ["pkg/checker.py#Checker.find_type_check"],
                   content="`Checker.find_type_check(node, indices)` handles `type(x) == T`: the `operands` that are "
                   "`type(...)` calls (`is_type_call`) are collected; the others give the compared type.",
                   title="type(x) == T narrows")
    commit(root, "record")
    (root / "pkg" / "checker.py").write_text(MYPY_SPLIT)
    commit(root, "two passes")
    assert only(root, node).stale is False
    edit(root, "            compared = self.type_of(expr)\n", "            compared = self.type_of(node.others[index])\n",
         path="pkg/checker.py")
    commit(root, "another attribute")
    assert only(root, node).stale is True
    (root / "pkg" / "checker.py").write_text(MYPY_SPLIT.replace('"builtins.type"', '"builtins.object"'))
    commit(root, "the helper asks for object")
    assert only(root, node).stale is True


MYPY_IFSTMT = '''class IfStmt:
    __slots__ = ("expr", "body", "else_body")

    def __init__(self, expr, body, else_body):
        self.expr = expr
        self.body = body
        self.else_body = else_body
'''


def test_a_field_added_beside_the_strings_the_node_quotes_keeps_it(tmp_path: Path) -> None:
    """mypy's `IfStmt` gained a fourth slot, `"unreachable_else"`, beside `"expr"`, `"body"` and `"else_body"`
    that the node names: every string it quotes is still there, in the same statement (information).
    A slot it names taken away is a flag."""
    root = one_file_repo(tmp_path / "nodes", "pkg/nodes.py", MYPY_IFSTMT, "nodes")
    node = capture(root, ["pkg/nodes.py#IfStmt"], content="`IfStmt(expr, body, else_body)` keeps one condition per node: "
                   "`else_body` is None without an else.", title="IfStmt shape")
    commit(root, "record")
    edit(root, '"else_body")', '"else_body", "unreachable_else")', path="pkg/nodes.py")
    edit(root, "        self.else_body = else_body\n", "        self.else_body = else_body\n        self.unreachable_else = False\n",
         path="pkg/nodes.py")
    commit(root, "a fourth slot")
    assert only(root, node).stale is False
    edit(root, '("expr", "body", "else_body", ', '("expr", "body", ', path="pkg/nodes.py")
    commit(root, "else_body no longer a slot")
    assert only(root, node).stale is True


MYPY_HELP = '''def options(parser):
    group = parser.add_argument_group(
        title="None handling",
        description="How None is handled; see: "
        "https://example.org/docs/kinds.html#no-strict-optional",
    )
    return group
'''


def test_a_link_the_node_gives_is_a_value_it_states(tmp_path: Path) -> None:
    """mypy's "None and Optional handling" help: the node gives the link the description ends with, not in
    quotes. The description's other words reworded keep it; the link pointed elsewhere is a flag."""
    root = one_file_repo(tmp_path / "help", "pkg/main.py", MYPY_HELP, "help")
    node = capture(root, ["pkg/main.py#L2-6"], content="The group's description ends with a link to the docs: "
                   "https://example.org/docs/kinds.html#no-strict-optional.", title="Where the help points")
    commit(root, "record")
    edit(root, "How None is handled; see: ", "How values of None are handled; see: ", path="pkg/main.py")
    commit(root, "reworded")
    assert only(root, node).stale is False
    edit(root, "kinds.html#no-strict-optional", "kinds.html#optional-types", path="pkg/main.py")
    commit(root, "another anchor")
    assert only(root, node).stale is True


MYPY_WORKER = '''def main(server):
    try:
        serve(server)
    except OSError:
        pass
    except Exception as exc:
        report(exc)
'''


def test_a_code_snippet_a_file_under_a_folder_held_and_none_holds_now_is_a_flag(tmp_path: Path) -> None:
    """mypy's build worker: the node on the folder says an OSError ends it silently (`except OSError: pass`,
    a clause: code, not prose; `pass` alone is still in another file). Another file of the folder changed
    keeps it; the clause now printing the error is a flag."""
    root = one_file_repo(tmp_path / "worker", "pkg/worker/worker.py", MYPY_WORKER, "worker")
    (root / "pkg" / "worker" / "other.py").write_text("try:\n    x = 1\nexcept ValueError:\n    pass\n")
    commit(root, "other")
    node = capture(root, ["pkg/worker/"], content="pkg/worker/ is the worker process. An OSError on the connection "
                   "ends it silently (`except OSError: pass`); any other exception is reported.", title="The worker")
    commit(root, "record")
    (root / "pkg" / "worker" / "other.py").write_text("try:\n    x = 2\nexcept ValueError:\n    pass\n")
    commit(root, "other changed")
    assert only(root, node).stale is False
    edit(root, "    except OSError:\n        pass\n", "    except OSError as exc:\n        print(exc)\n",
         path="pkg/worker/worker.py")
    commit(root, "print it")
    found = only(root, node)
    assert found.stale is True and "except OSError: pass" in found.why
    service = Autology.open(root)  # a tag committed later moves the base past the change: the fingerprint keeps the flag
    try:
        service.update(node, tags=["worker"])
    finally:
        service.close()
    commit(root, "tag")
    assert only(root, node).why == found.why


MYPY_OPTIONS = '''import argparse


def process_options(parser, add_flag):
    add_flag("--force-upper", default=False, help=argparse.SUPPRESS)
    add_flag("--union-syntax", default=False, help=argparse.SUPPRESS)
    options = parser.parse_args()
    return options
'''


def test_a_call_telling_the_user_that_a_name_the_node_gives_is_deprecated_is_a_flag(tmp_path: Path) -> None:
    """mypy's `--force-uppercase-builtins`: deprecated by a comment and a `print("Warning: ... is
    deprecated; ...")`, not a `warnings.warn`. A message saying another flag is deprecated, naming this one
    only as what to use instead, or a message that says nothing of deprecation, keeps the node."""
    root = one_file_repo(tmp_path / "opts", "pkg/main.py", MYPY_OPTIONS, "options")
    node = capture(root, ["pkg/main.py#L5-5"], content="`--force-upper` is registered with `add_flag` but hidden from "
                   "`--help`; it exists for tests.", title="--force-upper is a hidden flag")
    commit(root, "record")
    edit(root, "    return options\n", "    if options.union_syntax:\n        print('Warning: --union-syntax is "
         "deprecated; use --force-upper instead')\n    if options.force_upper:\n        print('Note: upper')\n"
         "    return options\n", path="pkg/main.py")
    commit(root, "another flag deprecated, a note")
    assert only(root, node).stale is False
    edit(root, "print('Note: upper')", "print('Warning: --force-upper is deprecated; mypy only supports 3.9+')",
         path="pkg/main.py")
    commit(root, "deprecated")
    found = only(root, node)
    assert found.stale is True and "deprecated" in found.why


VALIDATORS = '''class InstanceOf:
    def __call__(self, inst, attr, value):
        if not isinstance(value, self.type):
            msg = "'{name}' must be {type!r} (got {value!r} that is a {actual!r}).".format(
                name=attr.name,
                type=self.type,
                actual=value.__class__,
                value=value,
            )
            raise TypeError(msg, attr, self.type, value)

    def __repr__(self):
        return "<instance_of validator for type %r>" % (self.type,)
'''


def test_a_string_formatted_with_format_or_percent_made_an_f_string_is_the_same_string(tmp_path: Path) -> None:
    """attrs's validators under ruff (UP031, UP032): `"'{name}' must be {type!r} ...".format(name=attr.name,
    ...)` becomes `f"'{attr.name}' must be {self.type!r} ..."` and `"<... %r>" % (self.type,)` becomes
    `f"<... {self.type!r}>"`: the same message, not a change to a node that quotes it. A message whose
    text changes is still a flag, and a `%d` (which shows a value differently) is not read as `{}`."""
    import ast

    from autology_mcp.knowledge.trust.code_compare import dump

    def same(a: str, b: str) -> bool:
        return dump(ast.parse(a), False) == dump(ast.parse(b), False)

    assert same("x = '{} and {!r:>4}'.format(a, b.c)", "x = f'{a} and {b.c!r:>4}'")
    assert same("x = '{0.name}/{0.kind}'.format(a)", "x = f'{a.name}/{a.kind}'")
    assert same("x = '%(a)s at %(b)r, 100%%' % {'a': p, 'b': q}", "x = f'{p} at {q!r}, 100%'")
    assert not same("x = '%d' % (a,)", "x = f'{a}'")  # `%d` of True is "1", `{}` of it "True"
    assert not same("x = '%(a)s' % {'a': p}", "x = f'{q}'") and not same("x = '{a}'.format(a=p)", "x = f'{a}'")
    assert same("x = '%x|%05.2f|%-4i' % (a, b, c)", "x = f'{a:x}|{b:05.2f}|{c:<4d}'")
    assert same("x = '%(n)s=%(v).1f' % {'n': a, 'v': b}", "x = f'{a}={b:.1f}'")
    assert not same("x = '%5s' % (a,)", "x = f'{a:>5}'")  # a width on `%s` formats str(a), `{a:>5}` a itself
    assert not same("x = '{0[1]}'.format(a)", "x = f'{a[1]}'")  # an index is not read (`{0[k]}` is a string key)
    root = one_file_repo(tmp_path / "validators", "pkg/validators.py", VALIDATORS, "validators")
    node = capture(root, ["pkg/validators.py#InstanceOf"], content="`instance_of` raises `TypeError` with the message "
                   "\"'{name}' must be {type!r} (got {value!r} that is a {actual!r}).\" and the attribute, the type and the "
                   "value as arguments; its repr is \"<instance_of validator for type %r>\".",
                   title="instance_of's TypeError carries attribute, type and value")
    commit(root, "record")
    edit(root, VALIDATORS, VALIDATORS.replace('''"'{name}' must be {type!r} (got {value!r} that is a {actual!r}).".format(
                name=attr.name,
                type=self.type,
                actual=value.__class__,
                value=value,
            )''', '''f"'{attr.name}' must be {self.type!r} (got {value!r} that is a {value.__class__!r})."''').replace(
        '"<instance_of validator for type %r>" % (self.type,)', 'f"<instance_of validator for type {self.type!r}>"'),
        path="pkg/validators.py")
    commit(root, "pre-commit autoupdate")
    assert only(root, node).stale is False
    edit(root, "(got {value!r} that is", "(got {value!r}, a", path="pkg/validators.py")
    commit(root, "shorter message")
    assert only(root, node).stale is True


CONVERTERS = '''_init_converter_pat = "__attr_converter_%s"
_other_pat = "__attr_other_%s"


def _setattr_with_converter(attr_name, value_var):
    return "_setattr('%s', %s(%s))" % (attr_name, _init_converter_pat % (attr_name,), value_var)


def _assign(attr_name, value_var):
    pattern = _other_pat
    return "self.%s = %s" % (attr_name, pattern % (value_var,))
'''


def test_a_name_renamed_throughout_is_the_same_code_unless_the_node_gives_it(tmp_path: Path) -> None:
    """attrs's "Upper-case private constants": `_init_converter_pat` becomes `_INIT_CONVERTER_PAT`, defined
    the same way and used the same way: the functions that use it do what they did. A local variable
    renamed is the same too. A constant renamed and given another value, a call of another function, or a
    rename of the name the node gives is a flag."""
    import ast

    from autology_mcp.knowledge.trust.renames import renamed

    def mapping(before: str, after: str, symbol: str):
        old, new = ast.parse(before), ast.parse(after)
        pick = lambda tree: next(s for s in tree.body if getattr(s, "name", None) == symbol)  # noqa: E731
        return renamed(pick(old), pick(new), old, new)

    after = CONVERTERS.replace("_init_converter_pat", "_INIT_CONVERTER_PAT")
    assert mapping(CONVERTERS, after, "_setattr_with_converter") == {"_init_converter_pat": "_INIT_CONVERTER_PAT"}
    assert mapping(CONVERTERS, CONVERTERS.replace("pattern", "pat"), "_assign") == {"pattern": "pat"}
    assert mapping(CONVERTERS, after.replace('"__attr_converter_%s"', '"__attr_conv_%s"'), "_setattr_with_converter") is None
    assert mapping(CONVERTERS, CONVERTERS.replace("_init_converter_pat %", "_other_pat %"), "_setattr_with_converter") is None
    assert mapping(CONVERTERS, CONVERTERS.replace("(attr_name, _init", "(str(attr_name), _init"),
                   "_setattr_with_converter") is None  # a call added, not a rename
    root = one_file_repo(tmp_path / "converters", "pkg/make.py", CONVERTERS, "converters")
    node = capture(root, ["pkg/make.py#_setattr_with_converter"], content="`_setattr_with_converter(attr_name, "
                   "value_var)` writes `_setattr('x', __attr_converter_x(value))`: the converter is injected into the "
                   "generated function's globals.", title="Converters are passed as __attr_converter_<name> globals")
    named = capture(root, ["pkg/make.py#_setattr_with_converter"], content="The global's name comes from "
                    "`_init_converter_pat`.", title="The converter pattern")
    commit(root, "record")
    edit(root, CONVERTERS, after, path="pkg/make.py")
    commit(root, "Upper-case private constants")
    assert only(root, node).stale is False
    assert only(root, named).stale is True


SETTERS = '''def _setattr(name, value):
    return f"_setattr('{name}', {value})"


def _assign(name, value):
    return f"self.{name} = {value}"


def init_script(attrs, frozen):
    lines = []
    if frozen is True:
        lines.append("_inst_dict = self.__dict__")
        fmt_setter = _setattr
    else:
        fmt_setter = _assign
    args, kw_only = [], []
    for a in attrs:
        lines.append(fmt_setter(a, a))
        if a.startswith("_"):
            kw_only.append(a)
        else:
            args.append(a)
    if kw_only:
        args.append("*")
    args.extend(kw_only)
    return lines, args
'''

SETTERS_SPLIT = SETTERS.replace('''def init_script(attrs, frozen):
    lines = []
    if frozen is True:
        lines.append("_inst_dict = self.__dict__")
        fmt_setter = _setattr
    else:
        fmt_setter = _assign
''', '''def _determine_setters(frozen):
    if frozen is True:
        return ["_inst_dict = self.__dict__"], _setattr
    return [], _assign


def init_script(attrs, frozen):
    lines = []
    extra_lines, fmt_setter = _determine_setters(frozen)
    lines.extend(extra_lines)
''')
assert "_determine_setters" in SETTERS_SPLIT


def test_the_choice_moved_into_a_helper_that_returns_it_is_the_same_code(tmp_path: Path) -> None:
    """attrs's "Refactor setters determination into function": the frozen/mutable choice of setter, and the
    `_inst_dict = self.__dict__` line, move into `_determine_setters()`, which the function calls in their
    place: the names (`_setattr`) and strings the node gives are used by the helper now, so they are
    still the function's work. A helper that then drops the line is a flag."""
    root = one_file_repo(tmp_path / "setters", "pkg/make.py", SETTERS, "setters")
    node = capture(root, ["pkg/make.py#init_script"], content="`init_script()` builds the lines of __init__. Frozen "
                   "classes write through `_setattr` and first bind `_inst_dict = self.__dict__`; others assign "
                   "directly.", title="How __init__ assigns in frozen classes")
    commit(root, "record")
    edit(root, SETTERS, SETTERS_SPLIT, path="pkg/make.py")
    commit(root, "Refactor setters determination into function")
    assert only(root, node).stale is False
    edit(root, '["_inst_dict = self.__dict__"], _setattr', "[], _setattr", path="pkg/make.py")
    commit(root, "no dict binding")
    assert only(root, node).stale is True


def test_a_case_put_in_front_of_an_if_elif_chain_does_not_put_the_others_under_a_condition() -> None:
    """attrs's asdict fast path: `if value_type in _ATOMIC_TYPES:` put before `if has(...)`, which becomes
    an `elif`: the chain is one condition, so `cf(*items)` in a later case is under no more than before.
    A statement moved under a new `if` of its own still is."""
    import ast

    from autology_mcp.knowledge.trust.symbol_rules import _guards, squeezed

    chain = "def f(v):\n    if has(v):\n        x = 1\n    elif many(v):\n        y = cf(*items)\n"
    fast = "def f(v):\n    if type(v) in ATOMIC:\n        z = v\n    elif has(v):\n        x = 1\n" \
        "    elif many(v):\n        y = cf(*items)\n"
    nested = "def f(v):\n    if has(v):\n        x = 1\n    elif many(v):\n        if v:\n            y = cf(*items)\n"
    want = squeezed("cf(*items)")
    assert _guards(ast.parse(chain), want) == _guards(ast.parse(fast), want) == 1
    assert _guards(ast.parse(nested), want) == 2


DEFINE = '''def define(maybe_cls=None, *, kw_only=False, slots=True, frozen=False):
    return attrs(maybe_cls, kw_only=kw_only, slots=slots, frozen=frozen)
'''


def test_a_parameter_gained_that_qualifies_one_the_node_names_is_a_flag(tmp_path: Path) -> None:
    """attrs's `define` gains `force_kw_only=False` beside the `kw_only` its node is about ("kw_only=True makes
    every attribute keyword-only", which now needs force_kw_only=True): a new option named after the option
    the node describes qualifies it. Another parameter gained (`weakref_slot`) is information, and so is
    one named after a parameter the node does not name (`frozen_default` for a node silent on `frozen`)."""
    root = one_file_repo(tmp_path / "define", "pkg/next_gen.py", DEFINE, "define")
    node = capture(root, ["pkg/next_gen.py#define"], content="`define(kw_only=True)` passes kw_only straight to "
                   "attrs: every attribute, inherited ones too, becomes keyword-only.",
                   title="define(kw_only=True) makes every attribute keyword-only")
    commit(root, "record")
    edit(root, "frozen=False):", "frozen=False, weakref_slot=True, frozen_default=None):", path="pkg/next_gen.py")
    commit(root, "more options")
    assert only(root, node).stale is False
    edit(root, "frozen_default=None):", "frozen_default=None, force_kw_only=False):", path="pkg/next_gen.py")
    commit(root, "kw_only like dataclasses")
    found = only(root, node)
    assert found.stale is True and "parameter `force_kw_only` added beside `kw_only`" in found.why


_AUTOFIXED = [  # (before, after ruff's safe fix)
    ("class A(object):\n    def f(self):\n        return super(A, self).f()", "class A:\n    def f(self):\n        return super().f()"),
    ("def f():\n    try:\n        g()\n    except (IOError, socket.error, socket.timeout):\n        pass",
     "def f():\n    try:\n        g()\n    except (OSError, OSError, TimeoutError):\n        pass"),
    ("def f(p):\n    with open(p, 'r') as fh:\n        return fh.read().encode('utf-8')",
     "def f(p):\n    with open(p) as fh:\n        return fh.read().encode()"),
    ("@functools.lru_cache()\ndef f():\n    pass", "@functools.lru_cache\ndef f():\n    pass"),
    ("@lru_cache(maxsize=None)\ndef f():\n    pass", "@cache\ndef f():\n    pass"),
    ("def f(d):\n    return dict(a=1), set([1, 2]), list(i for i in d), dict((k, v) for k, v in d), any([i for i in d]), "
     "list(), tuple([1])",
     "def f(d):\n    return {'a': 1}, {1, 2}, [i for i in d], {k: v for k, v in d}, any(i for i in d), [], (1,)"),
    ("def f(d, k):\n    for a in d.keys():\n        pass\n    return k in d.keys()",
     "def f(d, k):\n    for a in d:\n        pass\n    return k in d"),
    ("def f(a, b):\n    if a:\n        if b:\n            g()", "def f(a, b):\n    if a and b:\n        g()"),
    ("def f():\n    with a():\n        with b() as c:\n            g(c)", "def f():\n    with a(), b() as c:\n        g(c)"),
    ("def f(a):\n    result = g(a)\n    return result", "def f(a):\n    return g(a)"),
    ("def f(a):\n    raise errors.Frozen()", "def f(a):\n    raise errors.Frozen"),
    ("def f():\n    try:\n        g()\n    except (IOError, OSError):\n        pass",
     "def f():\n    try:\n        g()\n    except OSError:\n        pass"),
    ("def f(a):\n    return str(''), int(1), str(), sorted(list(a), key=len), set(tuple(a))",
     "def f(a):\n    return '', 1, '', sorted(a, key=len), set(a)"),
    ("def f(a, b):\n    return not a == b, not a != b", "def f(a, b):\n    return a != b, a == b"),
    ("def f():\n    from netrc import netrc, NetrcParseError\n    import sys, os",
     "def f():\n    from netrc import NetrcParseError, netrc\n    import os, sys"),
]
_NOT_FIXED = [  # the same forms where they do something else
    ("def f(a):\n    result = g(a)\n    log(result)\n    return result", "def f(a):\n    log(g(a))\n    return g(a)"),
    ("def f(p):\n    return open(p, 'rb')", "def f(p):\n    return open(p)"),
    ("def f(a, b):\n    if a:\n        if b:\n            g()\n    else:\n        h()",
     "def f(a, b):\n    if a and b:\n        g()\n    else:\n        h()"),
    ("def f(s):\n    return s.encode('latin-1')", "def f(s):\n    return s.encode()"),
    ("def f(a):\n    return super(B, a).f()", "def f(a):\n    return super().f()"),
    ("def f(d):\n    return list(d)", "def f(d):\n    return [d]"),
    ("def f(a):\n    raise Frozen(a)", "def f(a):\n    raise Frozen"),
    ("def f():\n    try:\n        g()\n    except (ValueError, OSError):\n        pass",
     "def f():\n    try:\n        g()\n    except OSError:\n        pass"),
    ("def f(a):\n    return str(a), int('1'), sorted(sorted(a, key=len))", "def f(a):\n    return a, 1, sorted(a)"),
    ("def f(a, b):\n    return not a == b", "def f(a, b):\n    return a == b"),
    ("def f():\n    from netrc import netrc as n", "def f():\n    from netrc import NetrcParseError as n"),
]


@pytest.mark.parametrize("before,after", _AUTOFIXED)
def test_a_linters_safe_fix_is_the_same_code(before: str, after: str) -> None:
    """ruff's safe autofixes (UP004, UP008, UP011, UP012, UP015, UP024, UP033, UP041, C400-C419, SIM102,
    SIM117, SIM118, SIM201, SIM202, RET504, RSE102, UP018, C414, I001), as a `pre-commit autoupdate` applies them across a codebase: each is read one
    way (trust/autofixes.py), so a symbol they rewrote is not changed."""
    import ast

    from autology_mcp.knowledge.trust.code_compare import dump
    from autology_mcp.knowledge.trust.equivalents import canonical

    assert dump(canonical(ast.parse(before).body[0]), False) == dump(canonical(ast.parse(after).body[0]), False)


@pytest.mark.parametrize("before,after", _NOT_FIXED)
def test_the_same_forms_that_do_something_else_are_a_change(before: str, after: str) -> None:
    """The other side: a variable used twice, a binary mode, an `if` with an `else`, another encoding, a
    `super` of another class and object, a list of a list: not the linter's fix, so a change."""
    import ast

    from autology_mcp.knowledge.trust.code_compare import dump
    from autology_mcp.knowledge.trust.equivalents import canonical

    assert dump(canonical(ast.parse(before).body[0]), False) != dump(canonical(ast.parse(after).body[0]), False)


AUTOFIX_ORIG = '''import socket


class Client(object):
    def fetch(self, url):
        try:
            data = self.conn.get(url)
        except (IOError, socket.timeout):
            return None
        result = data.decode("utf-8")
        return result
'''


def test_a_pre_commit_run_that_applies_the_safe_fixes_keeps_the_node(tmp_path: Path) -> None:
    """Through real git: the class's methods rewritten by the safe fixes (the object base, the exception
    aliases, the variable returned directly) keep a node that says `fetch` returns None when the
    connection fails; catching fewer errors afterwards is a flag."""
    root = one_file_repo(tmp_path / "client", "pkg/client.py", AUTOFIX_ORIG, "client")
    node = capture(root, ["pkg/client.py#Client.fetch"], content="`Client.fetch(url)` returns None when the "
                   "connection fails or times out (`OSError`, `TimeoutError`).", title="fetch swallows connection errors")
    commit(root, "record")
    edit(root, AUTOFIX_ORIG, AUTOFIX_ORIG.replace("Client(object)", "Client").replace(
        "(IOError, socket.timeout)", "(OSError, TimeoutError)").replace(
        "        result = data.decode(\"utf-8\")\n        return result\n", "        return data.decode(\"utf-8\")\n"),
        path="pkg/client.py")
    commit(root, "ruff --fix")
    assert only(root, node).stale is False
    edit(root, "except (OSError, TimeoutError):", "except ConnectionRefusedError:", path="pkg/client.py")
    commit(root, "narrower")
    assert only(root, node).stale is True


RETYPED_ORIG = '''from typing import Optional


class Connection:
    def url_for(self, name: str, **params) -> str:
        path = self.router.url_path_for(name, **params)
        return path.make_absolute_url(base_url=self.base_url)

    def cookie(self, key: str, expires: Optional[int] = None) -> None:
        self.cookies[key] = expires
'''


def test_an_annotation_names_the_types_it_holds() -> None:
    """typing's spellings read as one: `Optional[t.List["Foo"]]` holds list and Foo, a forward reference too."""
    import ast

    from autology_mcp.knowledge.trust.annotations import annotated

    tree = ast.parse('def f(a: Optional[t.List["Foo"]], *rest: Union[int, None]) -> "Dict[str, Bar]":\n    '
                     'def inner(x: Text) -> None: ...\n')
    assert annotated(tree.body[0]) == {("f", "a"): {"list", "Foo"}, ("f", "rest"): {"int"},
                                       ("f", "return"): {"dict", "str", "Bar"}, ("inner", "x"): {"str"},
                                       ("inner", "return"): set()}


def test_a_return_type_the_node_names_changed_is_a_flag(tmp_path: Path) -> None:
    """starlette's `url_for`: `-> str` now `-> URL` makes "the result is a `str`" wrong, though no statement
    changed. The same change keeps a node that says nothing of the type; an annotation rewritten in another
    spelling (`Optional[int]` as `int | None`) or widened with types the node does not name keeps a node
    about that parameter."""
    root = one_file_repo(tmp_path / "urls", "pkg/conn.py", RETYPED_ORIG, "conn")
    typed = capture(root, ["pkg/conn.py#Connection.url_for"], content="`Connection.url_for(name, **params)` builds "
                    "the absolute URL of a route; the result is a `str`.", title="url_for returns a string")
    routed = capture(root, ["pkg/conn.py#Connection.url_for"], content="`Connection.url_for(name, **params)` finds "
                     "the route by name through the router's `url_path_for`.", title="url_for resolves by name")
    cookie = capture(root, ["pkg/conn.py#Connection.cookie"], content="`Connection.cookie(key, expires)` stores the "
                     "expiry under the key, as given.", title="cookie expiry")
    commit(root, "record")
    edit(root, "-> str:", "-> URL:", path="pkg/conn.py")
    edit(root, "expires: Optional[int] = None", "expires: int | None = None", path="pkg/conn.py")
    commit(root, "url_for returns URL")
    found = only(root, typed)
    assert found.stale is True and "the return annotation changed (`str` → `URL`)" in found.why
    assert only(root, routed).stale is False
    assert only(root, cookie).stale is False
    edit(root, "expires: int | None = None", "expires: Optional[Union[datetime, str, int]] = None", path="pkg/conn.py")
    commit(root, "expires takes a datetime")
    assert only(root, cookie).stale is False


MIDDLEWARE_ORIG = '''class Middleware:
    async def call_next(self, message, body):
        response = StreamingResponse(status_code=message["status"], content=body)
        response.raw_headers = message["headers"]
        return response
'''

MIDDLEWARE_SUBCLASSED = '''class Middleware:
    async def call_next(self, message, body):
        response = _StreamingResponse(status_code=message["status"], content=body, info=message.get("info"))
        response.raw_headers = message["headers"]
        return response


class _StreamingResponse(StreamingResponse):
    def __init__(self, content, status_code=200, info=None):
        self._info = info
        super().__init__(content, status_code)
'''


def test_a_class_built_as_a_subclass_the_module_defines_is_still_built(tmp_path: Path) -> None:
    """starlette's call_next: `StreamingResponse(...)` now `_StreamingResponse(...)`, a subclass of it in the same
    module, still returns a `StreamingResponse` "with that status"; the prose word "status" is not the string
    value `"status"` quoted. Built as a class of its own, not a subclass, is a flag."""
    root = one_file_repo(tmp_path / "mw", "pkg/base.py", MIDDLEWARE_ORIG, "middleware")
    node = capture(root, ["pkg/base.py#Middleware.call_next"], content="`call_next` returns a `StreamingResponse` "
                   "with that status and the raw headers of the first message.", title="call_next streams")
    commit(root, "record")
    edit(root, MIDDLEWARE_ORIG, MIDDLEWARE_SUBCLASSED, path="pkg/base.py")
    commit(root, "debug extension")
    assert only(root, node).stale is False
    edit(root, "class _StreamingResponse(StreamingResponse):", "class _StreamingResponse(Response):", path="pkg/base.py")
    commit(root, "not streamed")
    found = only(root, node)
    assert found.stale is True and "`StreamingResponse` is gone from it" in found.why


LOOKUP_ORIG = '''import os


class Files:
    def lookup(self, path):
        for directory in self.directories:
            full = os.path.realpath(os.path.join(directory, path))
            directory = os.path.realpath(directory)
            if os.path.commonprefix([full, directory]) != directory:
                continue
            return full
'''


def test_a_call_the_node_names_now_made_only_under_a_new_condition_is_a_flag(tmp_path: Path) -> None:
    """starlette's follow_symlink: `os.path.realpath` of the requested path now only in the `else` of a new
    option, while the directory's stays unconditional: "resolves it with `os.path.realpath`" holds only
    sometimes. A call the node does not name moved so, or the named call kept as often and as unconditional
    (a local renamed around it), is no flag."""
    root = one_file_repo(tmp_path / "files", "pkg/files.py", LOOKUP_ORIG, "files")
    named = capture(root, ["pkg/files.py#Files.lookup"], content="`Files.lookup(path)` joins the path onto each "
                    "directory and resolves it with `os.path.realpath`, so a symlink pointing out is refused.",
                    title="lookup refuses paths outside")
    other = capture(root, ["pkg/files.py#Files.lookup"], content="`Files.lookup(path)` tries the directories in "
                    "order; the first that holds the file wins.", title="lookup order")
    commit(root, "record")
    edit(root, "            full = os.path.realpath(os.path.join(directory, path))\n",
         "            candidate = os.path.join(directory, path)\n"
         "            full = os.path.realpath(candidate)\n", path="pkg/files.py")
    commit(root, "a local")
    assert only(root, named).stale is False
    edit(root, "            full = os.path.realpath(candidate)\n", "            if self.follow_symlink:\n"
         "                full = os.path.abspath(candidate)\n            else:\n"
         "                full = os.path.realpath(candidate)\n", path="pkg/files.py")
    commit(root, "follow symlinks")
    found = only(root, named)
    assert found.stale is True and "`realpath` is now under a condition" in found.why
    assert only(root, other).stale is False


RECURSE_ORIG = '''def unwrap(node):
    inner = node.children[1]
    if inner.type == AWAIT:
        show(node)
        unwrap(inner)
'''


def test_a_function_calling_itself_behind_a_new_type_check_is_not_a_call_newly_guarded(tmp_path: Path) -> None:
    """black's remove_await_parens: its recursion put behind `isinstance(inner, Node)` (a cast made a check)
    keeps "it recurses into nested awaits"; `show`, which the node names, put under a new condition is a flag."""
    root = one_file_repo(tmp_path / "unwrap", "pkg/lines.py", RECURSE_ORIG, "lines")
    node = capture(root, ["pkg/lines.py#unwrap"], content="`unwrap(node)` makes the brackets visible with `show()` "
                   "around a nested await and recurses into it.", title="unwrap")
    commit(root, "record")
    edit(root, "    if inner.type == AWAIT:\n        show(node)\n        unwrap(inner)\n",
         "    if inner.type == AWAIT:\n        show(node)\n        if isinstance(inner, Node):\n            unwrap(inner)\n",
         path="pkg/lines.py")
    commit(root, "a check, not a cast")
    assert only(root, node).stale is False
    edit(root, "        show(node)\n", "        if VISIBLE:\n            show(node)\n", path="pkg/lines.py")
    commit(root, "only when visible")
    found = only(root, node)
    assert found.stale is True and "`show` is now under a condition" in found.why
