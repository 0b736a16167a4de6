"""The ranking of records (issue 37): what a change names weighs most, credits weigh nothing, one
ranking everywhere, and the block names what the gate lets through.

- the query's parts on their own: credits, pull-request numbers and conventional-commit types taken
  out (and what stays: "by default", a name asked about), identifiers found;
- a real store (this repository's own decision log beside its own code): identifier prompts get the
  record about the identifier first, in ``autology_query``, in ``autology_search`` and in the prompt
  hook's block; a record that names the credited person is not pulled in; a compound identifier meets
  the title's words; the node order is ``autology_query``'s in every answer;
- a property: records sharing no word with a prompt never push the record whose title holds the
  prompt's identifier out of the block.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest
from core_helpers import dogfood_project
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autology_mcp.common.query_text import identifier_words, without_boilerplate
from autology_mcp.hooks.prompt import ALSO, prompt_query, user_prompt_submit
from autology_mcp.knowledge.service import Autology
from autology_mcp.retrieval.engine import search

CACHE_DECISION = "Cache databases open through common/sqlite: busy is never damage"
MERGE_DECISION = "Node files merge through a git merge driver, field by field"
STEMMER_DECISION = "The keyword check keeps its light stemmer; the claim check takes FTS5's Porter"


pytestmark = pytest.mark.usefixtures("clean_env")


# ------------------------------------------------------------------------------ the query's parts


@pytest.mark.parametrize(("text", "left"), [
    ("Add support for `typing_extensions.TypeIs`. Patch by Jelle Zijlstra.", "Add support for `typing_extensions.TypeIs`."),
    ("Fix swapping TypeVars with defaults (Randolf Scholz, PR 18123)", "Fix swapping TypeVars with defaults"),
    ("Preserve unions in generated .pyi files (hamdanal, #17000)", "Preserve unions in generated .pyi files"),
    ("Add support for t-strings (Neil Schemenauer and Brian Schubert)", "Add support for t-strings"),
    ("Enable runtime checks. Patch by Marc Mueller (@cdce8p)", "Enable runtime checks."),
    ("String Identifier for Messages and Requests (#3042)", "String Identifier for Messages and Requests"),
    ("feat(validation): unify Use* names", "validation unify Use* names"),
    ("fix: retry on gh-123 and bpo-4567. Thanks to Ana for the report", "retry on and."),
    ("Minimal implementation of dataclass\\_transform", "Minimal implementation of dataclass_transform"),
])
def test_credits_and_numbers_are_taken_out(text: str, left: str) -> None:
    assert without_boilerplate(text) == left


@pytest.mark.parametrize("text", [
    "Enable strict bytes by default",
    "Who is Jelle Zijlstra?",
    "Support for variadic generics (TypeVarTuple)",
    "Deprecate the fallback (setuptools v63 and older)",
    "What did Marc Mueller say about the release?",
    "Patch by Jelle Zijlstra",  # nothing else: the query stays as it is
])
def test_what_is_not_boilerplate_stays(text: str) -> None:
    assert without_boilerplate(text) == text


def test_identifiers_are_found_in_their_usual_forms() -> None:
    words = identifier_words("Add `typing_extensions.TypeIs`, LiteralString, uniqueId, merge_driver, @override, "
                             "{{array}}, --strict-bytes and setup.py; not Title Case or ALLCAPS")
    assert words == ["typing", "extensions", "typeis", "literalstring", "uniqueid", "merge", "driver", "override",
                     "array", "strict", "bytes", "setup", "py"]


@settings(max_examples=200)
@given(st.text(max_size=120))
def test_boilerplate_removal_never_empties_a_query_and_is_stable(text: str) -> None:
    once = without_boilerplate(text)
    assert without_boilerplate(once) == once
    if re.search(r"[^\W_]", text):
        assert re.search(r"[^\W_]", once)


# ------------------------------------------------------------------------------ a real store


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """This repository's decision log beside its code, and one more record that names a person many
    times (as a governance or release record does): the record a credit would pull in."""
    root = dogfood_project(tmp_path_factory.mktemp("records") / "autology")
    service = Autology.open(root)
    service.capture("Release managers and their terms",
                    "Jelle Zijlstra manages the releases. Jelle Zijlstra and Ana Lima review the changelog: the "
                    "entries about the cache databases, the keyword check and the merge driver go to Jelle "
                    "Zijlstra, who signs the tags.", type="convention")
    service.close()
    return root


def titles(root: Path, query: str, limit: int = 3) -> list[str]:
    service = Autology.open(root)
    try:
        return [h.node.title for h in service.query(query, limit=limit)]
    finally:
        service.close()


def block(root: Path, prompt: str) -> str:
    out = user_prompt_submit({"session_id": uuid.uuid4().hex, "cwd": str(root), "prompt": prompt}, root)
    return out["hookSpecificOutput"]["additionalContext"] if out else ""


def block_titles(text: str) -> list[str]:
    """The titles of the records a block gives with their text (its "- [decision] id: "title"" lines)."""
    return re.findall(r'^- \[\w+[^\]]*\] [0-9a-f-]{36}: "((?:[^"\\]|\\.)*)"', text, re.MULTILINE)


@pytest.mark.parametrize(("prompt", "expected"), [
    ("Open the cache databases with `common.sqlite.connect_wal` everywhere. Patch by Jelle Zijlstra (#4021)", CACHE_DECISION),
    ("Retry `SQLITE_BUSY` in connect_wal (Jelle Zijlstra, PR 88)", CACHE_DECISION),
    ("Keep the `lightStemmer` for the keyword check. Patch by Jelle Zijlstra", STEMMER_DECISION),
])
def test_an_identifier_prompt_gets_the_record_about_it_everywhere(store: Path, prompt: str, expected: str) -> None:
    assert titles(store, prompt)[0] == expected
    answer = search(store, prompt_query(prompt), limit=10)
    assert next(h["title"] for h in answer["hits"] if h["kind"] == "node") == expected
    text = block(store, prompt)
    assert block_titles(text)[0] == expected, text
    assert "Release managers and their terms" not in block_titles(text)  # the credited person's record is not pulled in


def test_a_credited_name_alone_still_finds_the_person(store: Path) -> None:
    """The credit is taken out of a change description, not out of every query: asked about the person,
    node search finds the record that names them."""
    assert titles(store, "Jelle Zijlstra")[0] == "Release managers and their terms"
    assert titles(store, "Register the merge driver. Patch by Jelle Zijlstra")[0] == MERGE_DECISION


@pytest.mark.parametrize("credit", [" Patch by Jelle Zijlstra.", " (Jelle Zijlstra, PR 88)", " (#4021)"])
def test_a_credit_changes_no_score_and_no_block(store: Path, credit: str) -> None:
    """The person a change credits and its pull-request number weigh nothing: every record scores the
    same with them as without, and the block is the same (the record that names the person included)."""
    change = "Register the merge driver in every clone."
    service = Autology.open(store)
    try:
        plain = [(h.node.id, h.score) for h in service.query(change, limit=10)]
        assert [(h.node.id, h.score) for h in service.query(change + credit, limit=10)] == plain
    finally:
        service.close()
    assert block_titles(block(store, change + credit)) == block_titles(block(store, change))


def test_a_compound_identifier_meets_the_title_words(store: Path) -> None:
    """``mergeDriver`` is one word to the index; the title's "merge driver", written as one, is a label."""
    assert titles(store, "Register the `mergeDriver` in every clone")[0] == MERGE_DECISION


@pytest.mark.parametrize("prompt", [
    "Open the cache databases with `common.sqlite.connect_wal` everywhere",
    "how are untrusted node titles quoted in the hooks",
    "merge driver for node files in git",
    "semantic recall model weights",
    "prompt hook evidence gate threshold",
])
def test_every_answer_orders_records_as_autology_query_does(store: Path, prompt: str) -> None:
    service = Autology.open(store)
    try:
        ranking = [h.node.id for h in service.query(prompt, limit=20)]
        for scope in (None, ["nodes"]):
            nodes = [h["node_id"] for h in search(store, prompt, scope=scope, limit=10, store=service.store)["hits"]
                     if h["kind"] == "node" and h["node_id"] in ranking]
            assert nodes == sorted(nodes, key=ranking.index), scope
    finally:
        service.close()


def test_the_block_names_other_records_that_pass_the_gate(store: Path) -> None:
    text = block(store, "Quote every `untrusted` node title the hooks inject")
    also = next(line for line in text.split("\n") if line.startswith(ALSO))
    named = re.findall(r'"((?:[^"\\]|\\.)*)" ([0-9a-f-]{36})', also[len(ALSO):])
    assert named and len(named) <= 3
    assert all(title not in block_titles(text) for title, _ in named)
    assert len(text) <= 400 * 4


# ------------------------------------------------------------------------------ a property

_FILLER = ["queue", "worker", "parser", "schema", "index", "token", "session", "cache", "router",
           "billing", "export", "report", "widget", "socket", "thread", "logger", "config", "plugin", "mailer"]


@pytest.fixture(scope="module")
def identifier_store(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("identifier-property") / "project"
    root.mkdir()
    service = Autology.open(root)
    service.capture("Use `RetryBudget` for upload retries",
                    "## Context\nUploads fail.\n\n## Decision\nThe RetryBudget caps retries per upload.\n\n"
                    "## Alternatives\nNone.\n\n## Consequences\nFewer retries.", type="decision")
    service.capture("Uploads go through the queue", "Every upload is queued and retried by a worker.",
                    type="convention")
    service.close()
    return root


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(others=st.lists(st.tuples(st.lists(st.sampled_from(_FILLER), min_size=2, max_size=5),
                                 st.lists(st.sampled_from(_FILLER), min_size=5, max_size=40)),
                       min_size=1, max_size=25),
       prompt=st.sampled_from(["Raise the `RetryBudget` for large uploads",
                               "Why does RetryBudget stop the upload retries?",
                               "Make the retry_budget configurable"]))
def test_unrelated_records_never_push_the_identifier_record_out_of_the_block(
        identifier_store: Path, tmp_path_factory, others, prompt: str) -> None:
    """Records that share no word with the prompt change every IDF and the score's scale: the record
    whose title holds the prompt's identifier stays in the block with its text."""
    import shutil

    root = tmp_path_factory.mktemp("with-others") / "project"
    shutil.copytree(identifier_store, root)
    assert "Use `RetryBudget` for upload retries" in block_titles(block(root, prompt)), prompt
    service = Autology.open(root)
    for title_words, content_words in others:
        service.capture(" ".join(title_words).capitalize(), " ".join(content_words) + ".", type="concept")
    service.close()
    assert "Use `RetryBudget` for upload retries" in block_titles(block(root, prompt)), prompt


# ------------------------------------------------------------------------------ the first record is never cut


@pytest.fixture(scope="module")
def crowded_store(tmp_path_factory) -> Path:
    """A record about ``TypeIs``, records full of a changelog's common words, and a dozen code files full
    of them too: on the blend's words, the code and the common-word records outscore the record about
    the identifier the change names."""
    import subprocess

    from autology_mcp.code import service as code_index

    root = tmp_path_factory.mktemp("crowded") / "project"
    (root / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for i in range(12):
        (root / "src" / f"typing_extensions_{i}.py").write_text(
            f'"""Support for typing extensions, part {i}: add support patch by adding."""\n\n' + "\n".join(
                f"def add_support_{j}(typing, extensions):\n    '''Add support for typing extensions {j}.'''\n"
                f"    return typing + extensions\n" for j in range(6)))
    service = Autology.open(root)
    service.capture("Narrowing types with `TypeIs`",
                    "A `TypeIs` function narrows the type of its argument in both branches.", type="convention")
    for title, body in [
        ("Typing extensions support policy", "We add support for new typing features to typing extensions first, "
         "then to typing. Support for typing extensions is a patch release."),
        ("Adding support for new extensions", "Extensions get support in typing: adding support for each extension "
         "is patched in typing extensions."),
        ("Typing support in extensions modules", "Support typing extensions; adding typing support patch by patch."),
        ("Patch releases of typing extensions", "Every patch of typing extensions adds support for typing features."),
        ("Support matrix for typing", "Typing support: extensions, patches, adding support."),
    ]:
        service.capture(title, body, type="convention")
    service.close()
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm",
                    "init"], check=True)
    code_index.build_index(root)
    return root


def test_the_node_searchs_first_record_is_never_cut_by_the_blend(crowded_store: Path) -> None:
    """The issue's example: the blend scores code and common-word records above the record about
    ``TypeIs`` (it holds few of the change's words), so it once fell below the tenth hit and the block
    gave a record about "support" instead. Records fill the nodes' places in the node search's order,
    taken from every record that clears the floor."""
    prompt = "Add support for, adding typing_extensions.TypeIs. Patch by Jelle Zijlstra"
    expected = "Narrowing types with `TypeIs`"
    assert titles(crowded_store, prompt)[0] == expected
    answer = search(crowded_store, prompt_query(prompt), limit=10, detail="brief", refresh_code=False)
    assert [h["title"] for h in answer["hits"] if h["kind"] == "node"][0] == expected
    assert block_titles(block(crowded_store, prompt)) == [expected]


def test_records_beyond_the_hits_are_still_named(crowded_store: Path) -> None:
    """Code took every other place of the ten hits; the records that cleared the floor behind it are
    listed beyond the hits (``more_records``, in the node search's order) and the block names them."""
    prompt = "Add support for, adding typing_extensions.TypeIs. Patch by Jelle Zijlstra"
    answer = search(crowded_store, prompt_query(prompt), limit=10, detail="brief", refresh_code=False, more_records=3)
    in_hits = {h["node_id"] for h in answer["hits"] if h["kind"] == "node"}
    beyond = [r["node_id"] for r in answer["more_records"]]
    assert beyond and not in_hits & set(beyond)
    service = Autology.open(crowded_store)
    try:
        ranking = [h.node.id for h in service.query(prompt, limit=20)]
    finally:
        service.close()
    assert beyond == sorted(beyond, key=ranking.index)
    assert "more_records" not in search(crowded_store, prompt_query(prompt), limit=10, refresh_code=False)
    text = block(crowded_store, prompt)
    also = next(line for line in text.split("\n") if line.startswith(ALSO))
    assert [node_id for node_id in beyond if node_id in also] == beyond


def test_records_beyond_the_hits_take_nothing_from_the_hits_budget(crowded_store: Path) -> None:
    """The budget cuts the answer as it would without them: the hits are the same, the list is extra."""
    prompt = "Add support for, adding typing_extensions.TypeIs. Patch by Jelle Zijlstra"
    for max_tokens in (300, 600, 2000):
        plain = search(crowded_store, prompt_query(prompt), limit=10, max_tokens=max_tokens, refresh_code=False)
        more = search(crowded_store, prompt_query(prompt), limit=10, max_tokens=max_tokens, refresh_code=False,
                      more_records=3)
        assert more["hits"] == plain["hits"] and more["cut"] == plain["cut"] and more["more_records"]
