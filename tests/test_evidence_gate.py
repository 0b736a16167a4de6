"""The evidence gate (issue 28): grounded means the memory knows the prompt's subject.

- the gate's parts on their own: the subject's weights, the stricter word matching, the support;
- a real store (this repository's own decision log beside its own code): questions about nothing a
  software project knows get nothing from the prompt hook and are not grounded in ``autology_search``,
  while questions the log answers get the record that answers them, alone or nearly;
- a property: adding nodes and code that share no word with an off-topic prompt never grounds it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from core_helpers import dogfood_project, git
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autology_mcp.hooks.prompt import chosen_items, prompt_query, user_prompt_submit
from autology_mcp.knowledge.service import Autology
from autology_mcp.retrieval import gate
from autology_mcp.retrieval.engine import search


# Questions no software project answers: everyday life and general knowledge. Written for this test
# (the calibration sets, bench/gate_sets.py, come from public sources), and quoted nowhere in the
# repository: the store below holds its docs, and a question the docs quote is one they know.
OFF_TOPIC = [
    "What colour is Tom's new bicycle?",
    "Does Priya's bakery hire many people in the summer?",
    "Which band played the theme song of the TV show Friends?",
    "How long should I boil an egg for a runny yolk?",
    "What is the capital city of Australia?",
    "Who painted the ceiling of the Sistine Chapel?",
    "How many calories are in a banana?",
    "Is it going to rain in Lisbon tomorrow afternoon?",
    "What did Sarah cook for her birthday dinner last week?",
    "Which planet has the most moons?",
    "How do I get red wine stains out of a carpet?",
    "When did the Berlin Wall fall?",
    "What's a good name for a golden retriever puppy?",
    "How far is the moon from the earth?",
    "Why do cats purr when they are happy?",
    "Which football club has won the most Champions League titles?",
    "Can you recommend a novel like Pride and Prejudice?",
    "What time does the bakery on Main Street open on Sundays?",
    "How tall is Mount Everest?",
    "Did Maria enjoy her holiday in Greece with her sister?",
    "What is the best way to train for a marathon?",
    "Who wrote the opera The Magic Flute?",
    "How much should I tip a taxi driver in New York?",
    "What does a koala eat?",
]


pytestmark = pytest.mark.usefixtures("clean_env")


# ------------------------------------------------------------------------------ the parts


def test_the_subject_leaves_out_task_words_numbers_and_single_letters() -> None:
    assert gate.subject_terms("Fix swapping TypeVars with defaults (#123), it's done") == [
        "swapping", "type", "vars", "defaults", "done"]
    assert gate.subject_terms("add support for the new thing") == ["thing"]


def test_a_word_the_memory_never_mentions_weighs_most_and_counts_against_every_hit() -> None:
    s = gate.subject(["websocket", "backoff", "evan"], {"websocket": 40, "backoff": 3, "evan": 0}, 43)
    assert s.unknown == ("evan",)
    assert s.weights["evan"] > s.weights["backoff"] > s.weights["websocket"]
    assert 0 < s.unknown_share < 1
    full = gate.coverage(s, "reconnect the websocket with exponential backoff")
    assert full == pytest.approx(1 - s.unknown_share)
    assert gate.support(full, 0.0, s.unknown_share) < gate.support(full, 0.0, 0.0)


def test_the_weights_ignore_documents_that_hold_none_of_the_words() -> None:
    """The weights depend on the documents holding the query's words only: unrelated documents added to
    the memory change neither the weights nor any coverage."""
    df = {"websocket": 40, "backoff": 3, "evan": 0}
    assert gate.subject(list(df), df, sum(df.values())) == gate.subject(list(df), dict(df), sum(df.values()))


def test_a_short_stem_must_be_the_word_itself_a_long_one_may_start_it() -> None:
    text = "Hello: the show should stop; a configurable retry policy retries twice. He shoes horses."
    assert gate.held(["he", "sho", "configur", "retri", "mil"], text) == {"he", "sho", "configur", "retri"}
    assert gate.held(["he"], "Hello, help, here") == set()
    assert gate.held(["sho"], "show should short") == set()
    assert gate.held(["mil"], "a million military") == set()


@pytest.mark.parametrize("cov,title,unknown", [(0.0, 0.0, 0.0), (0.5, 0.2, 0.1), (1.0, 1.0, 0.0), (0.3, 0.0, 0.9)])
def test_support_is_a_probability_rising_with_coverage_and_falling_with_unknown_words(cov, title, unknown) -> None:
    p = gate.support(cov, title, unknown)
    assert 0.0 < p < 1.0
    assert gate.support(cov + 0.1, title, unknown) > p
    assert gate.support(cov, title + 0.1, unknown) > p
    assert gate.support(cov, title, unknown + 0.1) < p


def hit(kind: str, score: float, support: float, key: str) -> dict:
    return {"kind": kind, "score": score, "node_id": key if kind == "node" else None, "ref": key,
            "components": {"support": support}}


def test_one_item_when_one_clearly_wins_more_only_when_as_good() -> None:
    hits = [hit("node", 0.80, 0.9, "a"), hit("node", 0.70, 0.8, "b"), hit("code", 0.79, 0.9, "c")]
    assert [h["ref"] for h in chosen_items(hits, 0.12, 5)] == ["a"]  # b scores under 95 % of a; c is code
    hits = [hit("node", 0.80, 0.9, "a"), hit("node", 0.78, 0.5, "b"), hit("node", 0.77, 0.05, "c")]
    assert [h["ref"] for h in chosen_items(hits, 0.12, 5)] == ["a", "b"]  # c fails the gate on its own
    assert [h["ref"] for h in chosen_items(hits, 0.12, 1)] == ["a"]
    code_only = [hit("code", 0.6, 0.4, "x"), hit("doc", 0.59, 0.3, "y"), hit("node", 0.9, 0.05, "n")]
    assert [h["ref"] for h in chosen_items(code_only, 0.12, 5)] == ["x", "y"]  # no node passes: code and docs
    assert chosen_items([hit("node", 0.9, 0.1, "n")], 0.12, 5) == []
    # a node that passes only the item threshold does not push aside the code hit that grounds the answer
    grounded_by_code = [hit("code", 0.8, 0.6, "x"), hit("node", 0.79, 0.13, "n")]
    assert [h["ref"] for h in chosen_items(grounded_by_code, 0.12, 5, node_threshold=0.2)] == ["x", "n"]
    assert [h["ref"] for h in chosen_items(grounded_by_code, 0.12, 5, node_threshold=0.1)] == ["n"]


# ------------------------------------------------------------------------------ a real store


@pytest.fixture(scope="module")
def dogfood(tmp_path_factory) -> Path:
    """This repository's own decision log (``.autology/nodes``) beside its own code and docs, in a
    fresh git work tree with the code index built."""
    return dogfood_project(tmp_path_factory.mktemp("dogfood") / "autology")


def prompt(root: Path, text: str, session: str) -> dict | None:
    return user_prompt_submit({"session_id": session, "cwd": str(root), "prompt": text}, root)


@pytest.mark.parametrize("question", OFF_TOPIC)
def test_off_topic_prompts_on_a_real_store_get_nothing(dogfood: Path, question: str) -> None:
    assert prompt(dogfood, question, f"off-{abs(hash(question))}") is None
    answer = search(dogfood, question)
    assert answer["verdict"] in ("weak", "no_evidence"), (answer["verdict"], answer["trace"]["gate"])
    assert "capture" not in (answer["guidance"] or "")  # no push to record trivia as a decision
    assert "does not know" in answer["guidance"]


def node_id_titled(root: Path, start: str) -> str:
    for path in (root / ".autology" / "nodes" / "decisions").glob("*.md"):
        text = path.read_text(encoding="utf-8")
        if f"\n# {start}" in text:
            return path.stem
    raise AssertionError(f"no decision titled {start!r}")


@pytest.mark.parametrize("question,title", [
    ("why don't we use embeddings for session search?", "Session recall stays lexical"),
    ("which lexical search engine do we use for the node index?", "SQLite FTS5 is the lexical search engine"),
])
def test_a_question_the_log_answers_gets_that_record_first(dogfood: Path, question: str, title: str) -> None:
    out = prompt(dogfood, question, f"on-{abs(hash(question))}")
    assert out is not None
    text = out["hookSpecificOutput"]["additionalContext"]
    items = [line for line in text.split("\n") if line.startswith("- ")]
    assert node_id_titled(dogfood, title) in items[0]
    assert len(items) <= 2, items
    assert search(dogfood, question)["verdict"] in ("grounded", "ambiguous")


# ------------------------------------------------------------------------------ a property

WORDS = st.text(alphabet="bcdfghjklmnpqrstvwxz", min_size=5, max_size=9)  # no vowels: never an English word


@pytest.fixture(scope="module")
def small_store(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("gate-property") / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "retry.py").write_text("def retry(times=3):\n    '''Retry the upload with backoff.'''\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    service = Autology.open(root)
    service.capture("Retry uploads with exponential backoff",
                    "## Context\nUploads fail.\n\n## Decision\nRetry uploads with backoff.\n\n## Alternatives\nNone.\n\n"
                    "## Consequences\nSlower failures.", type="decision")
    service.capture("Football scores are cached", "The scores page caches football results for a minute.",
                    type="convention")
    service.close()
    from autology_mcp.code.service import build_index

    build_index(root)
    return root


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(nodes=st.lists(st.lists(WORDS, min_size=3, max_size=12), min_size=1, max_size=6),
       files=st.lists(st.lists(WORDS, min_size=3, max_size=12), min_size=0, max_size=3))
def test_unrelated_nodes_and_code_never_ground_an_off_topic_prompt(small_store: Path, nodes, files) -> None:
    """The store mentions football once; the question is about a football club's history. Whatever
    nodes and code files that share none of the question's words are added, it stays ungrounded."""
    question = "Which football club has won the most league titles?"
    before = search(small_store, question)
    assert before["verdict"] in ("weak", "no_evidence")
    root = small_store.parent / f"copy-{abs(hash(json.dumps([nodes, files])))}"
    shutil.copytree(small_store, root, dirs_exist_ok=True)
    try:
        service = Autology.open(root)
        for words in nodes:
            service.capture(" ".join(words[:3]).capitalize(), " ".join(words) + ".", type="concept")
        service.close()
        for i, words in enumerate(files):
            (root / "src" / f"gen_{i}.py").write_text("".join(f"def {w}():\n    return '{w}'\n" for w in words))
        git(root, "add", "-A")
        git(root, "commit", "-qm", "more", "--allow-empty")
        from autology_mcp.code.service import build_index

        build_index(root)
        after = search(root, question)
        assert after["verdict"] in ("weak", "no_evidence")
        assert after["trace"]["gate"]["confidence"] <= before["trace"]["gate"]["confidence"] + 1e-9
        assert prompt(root, prompt_query(question), "p") is None
    finally:
        shutil.rmtree(root, ignore_errors=True)
