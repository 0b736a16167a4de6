"""History as memory (issue 41): the repository's commits, indexed from git and searchable.

Real git repositories in temp dirs: commits with bodies, trailers, merges, bots and a secret; the index
kept in step with HEAD through a commit, a branch switch, a rebase and a reset; the history channel in
unified search, the context bundle and the prompt hook; ``autology history`` on the command line.
"""

from __future__ import annotations

import json
import math
import subprocess
import uuid
from pathlib import Path

import pytest
from core_helpers import GIT_ENV, git
from hypothesis import given, settings
from hypothesis import strategies as st

from autology_mcp.code.service import build_index
from autology_mcp.common.errors import ValidationError
from autology_mcp.history import log, text
from autology_mcp.history.index import HistoryIndex
from autology_mcp.hooks.prompt import user_prompt_submit
from autology_mcp.knowledge.service import Autology
from autology_mcp.retrieval.bundle import context
from autology_mcp.retrieval.engine import search

pytestmark = pytest.mark.usefixtures("clean_env")

SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def commit(repo: Path, message: str, files: dict[str, str] | None = None, author: str = "Ana Lima <ana@example.com>",
           allow_empty: bool = False, date: str | None = None) -> str:
    for name, body in (files or {}).items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(body)
    git(repo, "add", "-A")
    args = (["commit", "-q", "-m", message, f"--author={author}"] + (["--allow-empty"] if allow_empty else [])
            + ([f"--date={date}"] if date else []))
    git(repo, *args)
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    Autology.open(root).close()
    commit(root, "Add the upload client", {"src/upload.py": "def upload(): pass\n"})
    commit(root, "Switch the connection pool to httpcore\n\nurllib3's pool leaked sockets under load, so the upload\n"
                 "client now keeps its connections in httpcore's pool.\n\nSigned-off-by: Ana Lima <ana@example.com>\n"
                 "Co-authored-by: Bo Chen <bo@example.com>", {"src/pool.py": "POOL = 'httpcore'\n"})
    commit(root, "Bump requests from 2.31.0 to 2.32.0", {"requirements.txt": "requests==2.32.0\n"},
           author="dependabot[bot] <support@github.com>")
    commit(root, f"Rotate the deploy token [skip ci]\n\nThe old one was {SECRET}.", {"deploy.cfg": "token=env\n"})
    return root


def index_of(root: Path) -> HistoryIndex:
    index = HistoryIndex(root)
    index.sync()
    return index


# ------------------------------------------------------------------------------ reading and cleaning


def test_a_commit_is_read_whole_and_its_message_cleaned(repo: Path) -> None:
    commits = {c.subject: c for c in log.read(repo, limit=10)}
    pool = commits["Switch the connection pool to httpcore"]
    assert pool.files == ("src/pool.py",) and pool.author == "Ana Lima" and not pool.merge
    subject, body = text.message(pool)
    assert "urllib3's pool leaked sockets" in body and "Signed-off-by" not in body and "Bo Chen" not in body
    rotated = next(c for s, c in commits.items() if s.startswith("Rotate"))
    subject, body = text.message(rotated)
    assert "[skip ci]" not in subject and SECRET not in body and "REDACTED" in body
    assert text.is_bot(commits["Bump requests from 2.31.0 to 2.32.0"])
    assert not text.is_bot(pool)


def test_a_merge_is_its_pull_request_title_and_the_files_it_brought(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "feature")
    commit(repo, "Retry uploads with backoff", {"src/retry.py": "def retry(): pass\n"})
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "feature", "-m", "Merge pull request #12 from ana/feature",
        "-m", "Retry failed uploads with exponential backoff")
    merge = next(c for c in log.read(repo, limit=1))
    assert merge.merge and merge.files == ("src/retry.py",)
    assert text.message(merge) == ("Retry failed uploads with exponential backoff", "")
    git(repo, "checkout", "-q", "-b", "other")
    commit(repo, "A side change", {"side.txt": "x\n"})
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "other", "-m", "Merge branch 'other'")
    assert text.message(next(c for c in log.read(repo, limit=1))) == ("", "")


@settings(max_examples=60, deadline=None)
@given(subject=st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=60).filter(str.strip),
       path=st.from_regex(r"[a-z]{1,8}( [a-z]{1,8})?/[a-z]{1,8}\.(py|txt)", fullmatch=True))
def test_any_subject_and_path_survive_the_parse(tmp_path_factory, subject: str, path: str) -> None:
    """Control characters frame git's output: no subject or file name can break it."""
    root = tmp_path_factory.mktemp("parse")
    git(root, "init", "-q", "-b", "main")
    sha = commit(root, subject, {path: "x\n"})
    (found,) = list(log.read(root, limit=5))
    assert found.sha == sha and found.subject == " ".join(subject.split()) or found.subject == subject.strip()
    assert found.files == (path,)


# ------------------------------------------------------------------------------ the index in step with HEAD


def test_the_index_follows_commits_branches_rebases_and_resets(repo: Path) -> None:
    index = HistoryIndex(repo)
    first = index.sync()
    assert first.mode == "reconciled" and first.commits == 4
    assert index.sync().mode == "unchanged"
    new = commit(repo, "Document the pool switch", {"docs/pool.md": "httpcore\n"})
    appended = index.sync()
    assert appended.mode == "appended" and appended.added == 1 and appended.head == new
    assert [h.sha for h in index.search("document pool switch", 1)] == [new]
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    reset = index.sync()
    assert reset.mode == "reconciled" and reset.removed == 1 and reset.commits == 4
    assert not [h for h in index.search("document pool switch", 5) if h.sha == new]
    index.close()


def test_each_branch_has_its_own_index(repo: Path) -> None:
    main = index_of(repo)
    git(repo, "checkout", "-q", "-b", "topic")
    only_here = commit(repo, "Cache the token between uploads", {"src/token.py": "CACHE = {}\n"})
    topic = index_of(repo)
    assert topic.path != main.path
    assert [h.sha for h in topic.search("cache token uploads", 1)] == [only_here]
    git(repo, "checkout", "-q", "main")
    assert only_here not in [h.sha for h in index_of(repo).search("cache token uploads", 5)]
    main.close()
    topic.close()


def test_a_bound_keeps_the_newest_commits(repo: Path) -> None:
    (repo / ".autology" / "config.toml").write_text("[history]\nmax_commits = 2\n")
    index = index_of(repo)
    assert index.count() == 2
    assert not index.search("upload client", 5) or all("Add the upload client" != h.subject for h in index.search("upload client", 5))
    index.close()


def test_at_the_bound_a_commit_is_appended_and_a_reconcile_trims_the_oldest(repo: Path) -> None:
    (repo / ".autology" / "config.toml").write_text("[history]\nmax_commits = 20\n")
    for i in range(16):
        commit(repo, f"Step {i} of the migration", {"steps.txt": f"{i}\n"})
    index = index_of(repo)
    assert index.count() == 20
    newest = commit(repo, "The last step of the migration", {"steps.txt": "last\n"})
    appended = index.sync()
    assert appended.mode == "appended" and appended.commits == 21  # past the bound by at most 5 %
    git(repo, "checkout", "-q", "--detach", "HEAD~1")
    git(repo, "checkout", "-q", "main")  # HEAD is back where it was: nothing to do
    assert index.sync().mode == "unchanged"
    git(repo, "commit", "-q", "--amend", "-m", "The very last step of the migration")
    trimmed = index.sync()
    assert trimmed.mode == "reconciled" and trimmed.commits == 20
    assert newest not in [h.sha for h in index.search("last step migration", 5)]
    index.close()


def test_a_secret_in_a_commit_reaches_neither_the_index_nor_an_answer(repo: Path) -> None:
    index = index_of(repo)
    index.close()
    raw = b"".join(p.read_bytes() for p in (repo / ".autology" / "cache" / "history").iterdir() if p.is_file())
    assert SECRET.encode() not in raw
    answer = search(repo, "deploy token rotated", scope=["history"], detail="full")
    assert answer["hits"] and SECRET not in json.dumps(answer)


def test_a_commit_is_found_by_the_names_it_changed(repo: Path) -> None:
    """A message that never names what it changed ("Stop the leak") is found by the names of the lines
    it added and removed, and by the function its hunk is in; a lock file's lines and a merge's diff are
    not read."""
    commit(repo, "Add the session cache", {"src/cache.py": "def evict_stale_sessions(cache):\n    return cache\n"})
    commit(repo, "Stop the leak", {"src/cache.py": "def evict_stale_sessions(cache):\n    cache.clear_expired()\n"
                                                   "    return cache\n", "poetry.lock": "lockonlyword = 1\n"})
    index = index_of(repo)
    assert [h.subject for h in index.search("clear_expired", 3)] == ["Stop the leak"]
    assert index.search("clear_expired", 3)[0].changed == ("clear_expired",)
    assert index.search("clear_expired", 3, changes=False) == []  # a hook's search: the messages alone
    # the function whose body changed is named by the hunk: both commits touched it, the one that
    # defined it and the one that changed it
    assert {h.subject for h in index.search("evict_stale_sessions", 5)} == {"Add the session cache", "Stop the leak"}
    assert index.search("lockonlyword", 3) == []
    # a name met in several cases is named once, in the form first met
    commit(repo, "Tidy the banner", {"src/banner.py": "Preview = 1\nPREVIEW = 2\npreview = 3\n"})
    index.sync()
    assert index.search("preview", 3)[0].changed == ("Preview",)
    git(repo, "checkout", "-q", "-b", "feature")
    commit(repo, "Count the evictions", {"src/stats.py": "tally = 0\n"})
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "feature", "-m", "Merge pull request #7 from ana/feature\n\nEviction counter")
    index.sync()
    assert [h.subject for h in index.search("tally", 5)] == ["Count the evictions"]  # not the merge's diff too
    assert [h.subject for h in index.search("eviction counter", 5)][0] == "Eviction counter"  # by its title
    index.close()


def test_changed_lines_can_be_turned_off_and_on_again(repo: Path) -> None:
    """``changed_lines = false``: no diff is read, a commit is found by its message alone; turned on
    again, the index is built again with them."""
    commit(repo, "Stop the leak", {"src/cache.py": "def evict(cache):\n    cache.clear_expired()\n"})
    (repo / ".autology" / "config.toml").write_text("[history]\nchanged_lines = false\n")
    index = index_of(repo)
    assert index.search("clear_expired", 3) == [] and index.search("leak", 3)[0].subject == "Stop the leak"
    (repo / ".autology" / "config.toml").write_text("[history]\nchanged_lines = true\n")
    rebuilt = index.sync()
    assert rebuilt.mode == "reconciled" and rebuilt.added == rebuilt.commits
    assert [h.subject for h in index.search("clear_expired", 3)] == ["Stop the leak"]
    assert index.sync().mode == "unchanged"
    (repo / ".autology" / "config.toml").write_text("[history]\nchanged_lines = 1\n")
    with pytest.raises(ValidationError, match="changed_lines"):
        index.sync()
    index.close()


def test_a_secret_in_a_changed_line_reaches_no_index(repo: Path) -> None:
    """A key committed in the code (and removed later) is redacted before its line's words are kept,
    and a random-looking run (a key's body) is left out whole; the names around it are kept."""
    aws = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7"
    commit(repo, "Configure the uploader", {"src/settings.py": f"GITHUB = '{SECRET}'\nAWS_SECRET = '{aws}'\n"
                                                               f"BLOB = '{body}'\nupload_retries = 3\n"})
    commit(repo, "Read the keys from the environment", {"src/settings.py": "upload_retries = 3\n"})
    index_of(repo).close()
    raw = b"".join(p.read_bytes() for p in (repo / ".autology" / "cache" / "history").iterdir() if p.is_file())
    for secret in (SECRET, SECRET[4:], aws, "bPxRfiCYEXAMPLEKEY", body):
        assert secret.encode() not in raw and secret.lower().encode() not in raw
    assert index_of(repo).search("upload_retries", 3)[0].subject == "Configure the uploader"


@given(st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", min_size=24, max_size=60))
@settings(max_examples=200, deadline=None)
def test_no_random_looking_key_survives_as_a_changed_word(key: str) -> None:
    """Whatever a key's body is, no word kept from its line is a piece of it 12 characters or longer
    holding two digits or more (what a name rarely is, and a key nearly always)."""
    words = text.changed_words(f"    value = '{key}'  # config for upload_client").split()
    assert "upload_client" in words
    for word in words:
        assert not (word in key and len(word) >= 12 and sum(c.isdigit() for c in word) >= 2)


def test_a_bot_commit_does_not_outrank_a_persons_explanation(repo: Path) -> None:
    commit(repo, "Bump httpcore from 0.17 to 1.0 in the connection pool",
           {"requirements.txt": "requests==2.32.0\nhttpcore==1.0\n"}, author="dependabot[bot] <support@github.com>")
    hits = index_of(repo).search("httpcore connection pool", 3)
    assert hits[0].subject == "Switch the connection pool to httpcore"
    assert next(h for h in hits if h.bot).score < hits[0].score


def test_of_two_commits_that_say_as_much_the_recent_one_comes_first(repo: Path) -> None:
    """Recency orders commits the words cannot tell apart; it does not lift a recent commit that says
    less over an old one that holds the whole question, and the messages' own scores (what the history
    prior reads) are not weighted by it."""
    commit(repo, "Retry the upload when the gateway times out", {"src/retry.py": "TRIES = 3\n"},
           date="2021-03-01T10:00:00+00:00")
    commit(repo, "Retry the upload when the gateway times out", {"src/retry.py": "TRIES = 5\n"},
           date="2024-05-01T10:00:00+00:00")
    commit(repo, "Log the gateway name", {"src/log.py": "NAME = 1\n"}, date="2024-05-02T10:00:00+00:00")
    for i in range(12):  # the question's words held by few commits, as in a real history; the last is HEAD
        commit(repo, f"Tidy imports {i}", {"src/x.py": f"# {i}\n"}, date=f"2024-05-03T10:{i:02d}:00+00:00")
    index = index_of(repo)
    hits, by_message = index.ranked("why retry the upload when the gateway times out?", 5)
    subjects = [h.subject for h in hits]
    old, new = sorted((h for h in hits if h.subject.startswith("Retry")), key=lambda h: h.date)
    assert hits[0].sha == new.sha and new.score > old.score
    assert old.said == new.said and {h.said for h in by_message if h.subject.startswith("Retry")} == {old.said}
    # the recent commit that shares one word ranks under the old one that holds them all
    assert subjects.index("Log the gateway name") > [h.sha for h in hits].index(old.sha)


def test_recency_keeps_all_of_a_score_at_head_and_never_less_than_its_floor() -> None:
    from autology_mcp.history.index import RECENCY_DAYS, RECENCY_WEIGHT, recency

    day = 86_400
    assert recency(0) == 1.0 and recency(-30 * day) == 1.0  # dated after HEAD (a rebase keeps author dates)
    assert recency(RECENCY_DAYS * day) == pytest.approx(1 - RECENCY_WEIGHT + RECENCY_WEIGHT / math.e)
    assert 1 - RECENCY_WEIGHT <= recency(20 * 365 * day) < recency(365 * day) < recency(day) < 1.0


def test_a_word_most_commits_hold_is_not_matched_but_the_rare_ones_are(repo: Path) -> None:
    """"fix" in 20 of 24 commits says little: the commit with the rare words still comes first, a commit
    holding only "fix" is not a hit at all, and with only common words the two rarest are still matched."""
    for i in range(20):
        commit(repo, f"Fix typo {i}", {f"docs/page{i}.md": "text\n"})
    index = index_of(repo)
    hits = index.search("fix the leaked sockets", 10)
    assert [h.subject for h in hits] == ["Switch the connection pool to httpcore"]
    common_only = index.search("fix typo", 5)
    assert len(common_only) == 5 and all(h.subject.startswith("Fix typo") for h in common_only)
    # a hook's search is stricter (5 %) and still finds the rare word
    assert index.search("fix sockets", 3, common_share=0.05)[0].subject == "Switch the connection pool to httpcore"


# ------------------------------------------------------------------------------ in unified retrieval and the hook


def test_a_day_one_repository_answers_a_why_question_from_its_commits(repo: Path) -> None:
    """No knowledge node at all: the commit that explains is the evidence, quoted in the block."""
    answer = search(repo, "why do we use httpcore for the connection pool?")
    assert answer["verdict"] == "grounded"
    first = answer["hits"][0]
    assert first["kind"] == "commit" and first["title"] == "Switch the connection pool to httpcore"
    assert first["commit"]["files"] == ["src/pool.py"] and "leaked sockets" in first["snippet"]
    out = user_prompt_submit({"session_id": uuid.uuid4().hex, "cwd": str(repo),
                              "prompt": "Why do we use httpcore for the connection pool?"}, repo)
    block = out["hookSpecificOutput"]["additionalContext"]
    assert f"- commit {first['ref']} (" in block and '"Switch the connection pool to httpcore"' in block
    assert "commit messages" in block.split("\n")[0]  # the header says commit text is quoted data
    assert user_prompt_submit({"session_id": uuid.uuid4().hex, "cwd": str(repo),
                               "prompt": "How long should I boil an egg?"}, repo) is None


def test_commits_that_hold_the_subject_rank_beside_code_not_under_it(tmp_path: Path) -> None:
    """A commit weighs as much as code (kind prior 0.85), and two commits are no more alike than two files
    in different folders: the commits that explain an upload retry on a socket reset come before the code
    that only mentions it (at 0.7, with every commit in one "folder", the code came first and the second
    commit fourth; bench/history_eval.py, issue 41)."""
    from autology_mcp.retrieval.candidates import Candidate
    from autology_mcp.retrieval.fusion import SAME_KIND, location_similarity

    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    Autology.open(root).close()
    code = 'def upload(path, retries=3):\n    """Upload a file; retry when the socket resets."""\n    return send(path)\n'
    commit(root, "Add the upload client", {
        "src/upload.py": code, "docs/upload.md": "# Upload\nThe upload retries when the socket resets.\n",
        "src/cli/upload_cmd.py": "from upload import upload\n# the upload command: retry on socket reset\n"})
    explained = [commit(root, message, {"src/upload.py": code + f"# {i}\n"}) for i, message in enumerate((
        "Retry the upload when the socket resets\n\nA reset socket made the upload fail at once; it now retries.",
        "Wait between upload retries after a socket reset\n\nRetrying a reset socket at once failed again.",
        "Cap the upload retries after socket resets at three\n\nEndless retries on a reset socket hung the upload."))]
    build_index(root)
    hits = search(root, "upload retries after a socket reset")["hits"]
    assert [h["kind"] for h in hits[:3]] == ["commit", "commit", "code"] and hits[2]["path"] == "src/upload.py"
    assert {h["commit"]["sha"] for h in hits[:2]} <= set(explained)
    one, two = (Candidate(key=f"commit:{sha}", kind="commit", ref=sha[:10], title="") for sha in explained[:2])
    assert location_similarity(one.tree, two.tree, True) == SAME_KIND == location_similarity("a/x.py", "b/y.py", True)


def test_a_record_comes_before_a_commit_as_good(repo: Path) -> None:
    """A decision and the commit that made it, both holding the prompt's words: the record comes first
    (a commit never comes before a record, issue 41), and the commit still ranks above the code."""
    service = Autology.open(repo)
    try:
        node = service.capture("Pooled connections through httpcore",
                               "## Context\nurllib3 leaked sockets under load.\n\n## Decision\nThe upload client "
                               "keeps its connections in httpcore.\n\n## Alternatives\nPatch urllib3.\n\n"
                               "## Consequences\nOne more dependency.", type="decision")
    finally:
        service.close()
    kinds = [(h["kind"], h.get("node_id")) for h in search(repo, "Switch the connection pool to httpcore")["hits"]]
    assert kinds[0] == ("node", node.id) and ("commit", None) in kinds
    assert kinds.index(("commit", None)) < min((i for i, (k, _) in enumerate(kinds) if k == "code"), default=99)


def test_the_bundle_has_the_commits(repo: Path) -> None:
    bundle = context(repo, "switch the connection pool")
    assert bundle["history"] and bundle["history"][0]["subject"] == "Switch the connection pool to httpcore"
    assert bundle["history"][0]["files"] == ["src/pool.py"]


def test_scope_history_alone_and_history_turned_off(repo: Path) -> None:
    assert {h["kind"] for h in search(repo, "connection pool", scope=["history"])["hits"]} == {"commit"}
    (repo / ".autology" / "config.toml").write_text("[history]\nenabled = false\n")
    answer = search(repo, "connection pool")
    assert not [h for h in answer["hits"] if h["kind"] == "commit"]
    assert next(c for c in answer["trace"]["channels"] if c["name"] == "history")["status"] == "disabled"


def test_the_post_commit_hook_takes_the_new_commit_in_at_once(repo: Path) -> None:
    from autology_mcp.hooks.handlers import post_commit

    index_of(repo).close()
    sha = commit(repo, "Explain the retry budget in the pool", {"src/pool.py": "POOL = 'httpcore'\nBUDGET = 3\n"})
    post_commit({"tool_name": "Bash", "cwd": str(repo), "tool_input": {"command": "git commit -m x"},
                 "tool_response": {"stdout": ""}}, repo)
    index = HistoryIndex(repo)
    assert index.head() == sha and index.search("retry budget pool", 1)[0].sha == sha
    index.close()


def test_files_past_commits_like_the_query_touched_rank_higher(repo: Path, capsys) -> None:
    """The history prior (issue 41, item 3): two retry modules that look alike; an earlier commit about
    jitter touched only the second. A jitter question ranks it first, a question no commit's message is
    like keeps the code search's order (the commits' changed words do not vote), and the prior changes no
    hit's support (it orders, it is not evidence)."""
    retry = "def retry(call, attempts):\n    # retry the call, waiting between attempts\n    return call()\n"
    commit(repo, "Add the retry helpers", {"src/retry_a.py": retry + "# retry retry\n", "src/retry_b.py": retry})
    commit(repo, "Spread the waits with jitter so clients do not retry in lockstep",
           {"src/retry_b.py": retry + "SPREAD = 0.1\n"})
    build_index(repo)
    query = "the retry waits need more jitter"

    def ranked(weight: float) -> tuple[list[str], dict[str, float]]:
        (repo / ".autology" / "config.toml").write_text(f"[retrieval]\nhistory_prior = {weight}\n")
        hits = [h for h in search(repo, query, scope=["code"])["hits"] if h["path"].startswith("src/retry")]
        return [h["path"] for h in hits], {h["path"]: h["components"]["support"] for h in hits}

    (off, off_support), (on, on_support) = ranked(0.0), ranked(0.3)
    assert off == ["src/retry_a.py", "src/retry_b.py"]
    assert on == ["src/retry_b.py", "src/retry_a.py"]
    assert on_support == off_support
    hit = next(h for h in search(repo, query, scope=["code"])["hits"] if h["path"] == "src/retry_b.py")
    best_commit = index_of(repo).search(query, 1)[0]
    assert best_commit.files == ("src/retry_b.py",) and hit["components"]["history_prior"] == best_commit.said
    from autology_mcp.cli.main import main  # the command line shows it beside the score

    assert main(["--root", str(repo), "search", "--scope", "code", query]) == 0
    assert f"history prior {best_commit.said:.2f}" in capsys.readouterr().out
    unlike_hits = search(repo, "call attempts between", scope=["code"])["hits"]
    unlike = [h["path"] for h in unlike_hits]
    assert {"src/retry_a.py", "src/retry_b.py"} <= set(unlike)
    assert not any("history_prior" in h["components"] for h in unlike_hits)
    (repo / ".autology" / "config.toml").write_text("[retrieval]\nhistory_prior = 0\n")
    assert unlike == [h["path"] for h in search(repo, "call attempts between", scope=["code"])["hits"]]


def test_the_history_prior_never_lifts_a_file_over_the_code_that_defines_the_name_asked_about(repo: Path) -> None:
    """An identifier lookup (bench/identifier_eval.py): commits about the client's use of a helper touched
    only the client, so the prior votes for it; the helper's definition still comes first, for the name
    alone and in a question. A question naming no identifier keeps the prior's order."""
    commit(repo, "Add the backoff helper", {"src/backoff.py": "def compute_backoff(attempt):\n    return 2 ** attempt\n"})
    for n, why in enumerate(("Call compute_backoff between client retries", "Cap compute_backoff waits in the client",
                             "Log each compute_backoff wait of the client")):
        commit(repo, why, {"src/client.py": "from src.backoff import compute_backoff\n\n\n"
                                            f"def send(request):\n    # wait compute_backoff(attempt) between tries {n}\n"
                                            "    return compute_backoff(request)\n"})
    build_index(repo)

    def files(query: str) -> list[str]:
        return [h["path"] for h in search(repo, query, scope=["code"])["hits"]]

    assert files("compute_backoff")[0] == "src/backoff.py"
    assert files("where is compute_backoff defined")[0] == "src/backoff.py"
    prior = next(h for h in search(repo, "compute_backoff", scope=["code"])["hits"] if h["path"] == "src/client.py")
    assert "history_prior" not in prior["components"]  # the client holds the name, but does not define it
    assert files("waits between client retries")[0] == "src/client.py"
    assert files("Log the client's compute_backoff waits")[0] == "src/client.py"  # a change: the prior stands


@given(st.lists(st.tuples(st.floats(0, 1), st.lists(st.sampled_from("abcdef"), max_size=4)), max_size=6),
       st.integers(1, 8))
def test_a_file_prior_is_from_0_to_1_and_the_best_file_has_the_best_commits_score(commits, depth) -> None:
    from autology_mcp.retrieval.history_prior import file_prior

    commits = sorted(commits, key=lambda c: -c[0])
    prior = file_prior(commits, depth)
    voters = [c for c in commits[:depth] if c[0] > 0 and c[1]]
    assert bool(prior) == bool(voters)
    assert set(prior) == {f for _, files in voters for f in files}
    assert all(0 <= v <= 1 for v in prior.values())
    assert not prior or max(prior.values()) == pytest.approx(voters[0][0])


def test_a_commit_touching_fewer_files_says_more_about_each() -> None:
    from autology_mcp.retrieval.history_prior import file_prior

    prior = file_prior([(0.8, ["wide1", "wide2", "wide3", "wide4"]), (0.6, ["narrow"])], 10)
    assert prior["narrow"] == pytest.approx(0.8) and prior["wide1"] < prior["narrow"]



def read(repo: Path, rel: str, session: str, offset: int | None = None, limit: int | None = None) -> str | None:
    from autology_mcp.hooks.edit import post_read

    window = {"offset": offset, "limit": limit} if offset else {}
    out = post_read({"session_id": session, "cwd": str(repo), "hook_event_name": "PostToolUse", "tool_name": "Read",
                     "tool_input": {"file_path": str(repo / rel), **window}, "tool_response": {"type": "text"}}, repo)
    return out["hookSpecificOutput"]["additionalContext"] if out else None


def test_a_read_is_told_the_commit_that_explains_the_lines_it_shows(repo: Path) -> None:
    """Blame at a read (issue 41): the lines read were last changed by a commit whose message explains
    them; it is told, quoted, from the index's text (a secret in it redacted), once per session. Lines
    last changed by a commit that explains nothing (no body) get nothing; nor does history turned off."""
    body = [f"line {i}\n" for i in range(1, 21)]
    commit(repo, "Add the limits module", {"src/limits.py": "".join(body)}, date="2024-01-01T10:00:00+00:00")
    body[2] = "MAX_RETRIES = 5\n"
    why = commit(repo, "Cap the retries at five\n\nThe billing API bans a client after six failed calls in a "
                       f"minute, so five is the most we may try. Token for the test account: {SECRET}",
                 {"src/limits.py": "".join(body)}, date="2024-02-01T10:00:00+00:00")
    body[15] = "TIMEOUT = 30\n"
    commit(repo, "Raise the timeout", {"src/limits.py": "".join(body)}, date="2024-03-01T10:00:00+00:00")

    text = read(repo, "src/limits.py", "s1", offset=1, limit=5)
    assert text is not None and f"- commit {why[:10]} (" in text
    assert '"Cap the retries at five"' in text and "bans a client after six failed calls" in text
    assert SECRET not in text and "commit messages" in text.split("\n")[0]
    assert read(repo, "src/limits.py", "s2", offset=14, limit=4) is None  # "Raise the timeout" explains nothing
    assert read(repo, "src/pool.py", "s1") is not None  # the whole file: its last commit explains (its body)
    assert read(repo, "src/pool.py", "s1") is None  # once per file and commit per session
    (repo / ".autology" / "config.toml").write_text("[history]\nenabled = false\n")
    assert read(repo, "src/limits.py", "s3", offset=1, limit=5) is None


def test_a_session_is_told_at_most_five_commits_by_its_reads(repo: Path) -> None:
    for i in range(7):
        commit(repo, f"Explain module {i}\n\nModule {i} keeps its own cache because the shared one was evicted too "
                     "often under load.", {f"src/mod{i}.py": f"X = {i}\n"}, date=f"2024-0{i + 1}-01T10:00:00+00:00")
    told = [read(repo, f"src/mod{i}.py", "s1") for i in range(7)]
    assert [t is not None for t in told] == [True] * 5 + [False] * 2
    assert read(repo, "src/mod6.py", "s2") is not None  # another session


# ------------------------------------------------------------------------------ the command line


def test_the_command_line(repo: Path, capsys) -> None:
    from autology_mcp.cli.main import main

    assert main(["--root", str(repo), "history", "build"]) == 0
    assert "4 commit(s) indexed" in capsys.readouterr().out
    assert main(["--root", str(repo), "history", "search", "--json", "connection", "pool"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert hits[0]["subject"] == "Switch the connection pool to httpcore" and hits[0]["files"] == ["src/pool.py"]
    assert main(["--root", str(repo), "history", "search", "pool", "--limit", "0"]) == 1
    assert "limit" in capsys.readouterr().err
    assert main(["--root", str(repo), "history", "status"]) == 0
    assert "history on: 4 commit(s) indexed" in capsys.readouterr().out


def test_outside_git_there_is_no_history(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    index = HistoryIndex(root)
    assert index.sync().mode == "not a git repository" and index.search("anything") == []
    index.close()
    assert subprocess.run(["git", "init", "-q", str(tmp_path / "new")], env={**GIT_ENV, "PATH": "/usr/bin:/bin"}).returncode == 0
    assert HistoryIndex(tmp_path / "new").sync().mode == "empty"
