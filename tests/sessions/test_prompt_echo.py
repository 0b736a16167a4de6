"""A prompt never grounds on its own earlier copies (issue 38): sessions ingested through the real
SessionEnd hook, then the real prompt hook asked the same thing."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sessions_helpers import assistant_line, user_line

from autology_mcp.hooks.handlers import session_end
from autology_mcp.hooks.prompt import user_prompt_submit
from autology_mcp.knowledge.service import Autology
from autology_mcp.knowledge.store import NodeStore
from autology_mcp.retrieval.echo import (
    content_stems,
    is_echo,
    is_question,
    statements,
    user_evidence,
    without_echoes,
)
from autology_mcp.retrieval.engine import search
from autology_mcp.retrieval.gate import Subject, subject, subject_terms
from autology_mcp.sessions.chunking import render_turn, rendered_turns
from autology_mcp.sessions.transcript import Turn

BANANA = "what's a good recipe for banana bread?"
WEBHOOKS = "how do we retry failed payment webhooks?"
WEBHOOK_ANSWER = (
    "Failed payment webhooks are retried by `WebhookRetrier` in shop/webhooks.py: exponential backoff from "
    "2 seconds, at most 5 attempts, then the event goes to the `webhook_dlq` table and `ops/replay.py` "
    "replays it by hand."
)
ADR = "## Context\nc\n## Decision\nd\n## Alternatives\na\n## Consequences\nc"


@pytest.fixture(autouse=True)
def claude_config(tmp_path: Path, monkeypatch) -> Path:
    """Claude Code's config folder: the SessionEnd hook ingests only transcripts under its projects/."""
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    return tmp_path / "projects"


@pytest.fixture
def shop(project: Path) -> Path:
    """A project with some knowledge about other things than the tests' subjects."""
    store = NodeStore(project)
    try:
        app = Autology(store)
        app.capture("Orders are stored in PostgreSQL", ADR, type="decision", tags=["storage"])
        app.capture("Prices are kept in integer cents", "Money is never a float: `Price.cents` everywhere.",
                    type="convention", tags=["money"])
    finally:
        store.close()
    return project


def ended_session(root: Path, tmp_path: Path, session_id: str, turns: list[tuple[str, str]]) -> None:
    """A Claude Code transcript of ``turns`` (role, text), ended: the SessionEnd hook ingests it."""
    lines = []
    for i, (role, text) in enumerate(turns):
        stamp = f"2026-10-0{1 + i // 10}T10:{i % 10:02d}:00.000Z"
        make = user_line if role == "user" else assistant_line
        lines.append(make(session_id, text, stamp, f"{session_id}-{i}"))
    transcript = tmp_path / "projects" / "-project" / f"{session_id}.jsonl"
    transcript.parent.mkdir(parents=True, exist_ok=True)
    transcript.write_text("\n".join(lines).replace("/home/dev/shop", str(root)) + "\n")
    session_end({"session_id": session_id, "transcript_path": str(transcript), "cwd": str(root),
                 "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}, root)
    assert (root / ".autology" / "sessions" / f"{session_id}.jsonl").is_file()


def prompt(root: Path, text: str, session_id: str = "new-session") -> str:
    """What the prompt hook injects for ``text`` ("" for nothing)."""
    out = user_prompt_submit({"session_id": session_id, "prompt": text, "cwd": str(root),
                              "hook_event_name": "UserPromptSubmit"}, root)
    return out["hookSpecificOutput"]["additionalContext"] if out else ""


# ------------------------------------------------------------------------------ the echo side


@pytest.mark.parametrize("answer", [
    "That is outside this repository; I can help with the shop's code, its tests or its deploys.",
    "Let me look into that.",
])
def test_the_banana_bread_question_asked_again_injects_nothing(shop: Path, tmp_path: Path, answer: str) -> None:
    ended_session(shop, tmp_path, "s-banana", [("user", BANANA), ("assistant", answer)])
    hits = search(shop, BANANA, scope=["sessions"])["hits"]
    assert hits and hits[0]["session_id"] == "s-banana"  # the session is still found (ranking is unchanged) ...
    assert prompt(shop, BANANA) == ""  # ... but its own copy of the question grounds nothing
    assert prompt(shop, "Hey, can you tell me a good banana bread recipe? Thanks!") == ""  # nearly the same
    assert prompt(shop, "banana bread recipe") == ""


def test_an_echo_without_a_real_answer_is_weighed_on_the_rest(shop: Path, tmp_path: Path) -> None:
    """The session is found with the whole subject in its title and first turn; its support without them is nil."""
    ended_session(shop, tmp_path, "s-banana", [("user", BANANA), ("assistant", "I can only help with this repository.")])
    answer = search(shop, BANANA)
    session = next(h for h in answer["hits"] if h.get("session_id") == "s-banana")
    assert session["components"]["title_coverage"] == 0.0 and session["components"]["coverage"] == 0.0
    assert answer["verdict"] in ("weak", "no_evidence")
    assert "banana" not in session["snippet"].lower()  # the proof line is not the question itself


def test_the_users_other_questions_are_no_evidence_either(shop: Path, tmp_path: Path) -> None:
    """A past session that asked a longer question about the same thing, and got no answer: not an echo by
    its words, but a question; it grounds nothing."""
    ended_session(shop, tmp_path, "s-banana", [
        ("user", "Is there a good banana bread recipe without eggs for the office party on Friday?"),
        ("assistant", "Let me look into that."),
    ])
    assert prompt(shop, BANANA) == ""


# ------------------------------------------------------------------------------ the other side


def test_an_earlier_real_answer_grounds_the_same_question(shop: Path, tmp_path: Path) -> None:
    """A past session where the same question got a real answer is evidence, through the answer: the question
    gives it its subject (the answer never says "bread" or "recipe"), and the proof line shown is the answer."""
    ended_session(shop, tmp_path, "s-banana", [("user", BANANA), (
        "assistant", "Mash three very ripe bananas, stir in melted butter, sugar, an egg, vanilla, baking soda, "
                     "salt and flour, and bake it at 175 °C for about an hour.")])
    text = prompt(shop, BANANA)
    assert "past session s-banana" in text and "Mash three very ripe bananas" in text


def test_an_earlier_real_answer_about_the_project_still_grounds(shop: Path, tmp_path: Path) -> None:
    """The same question about the project, answered with its own names (a class, files, a table), in a past
    session: asked again in a new session, that answer is injected, its proof line from the answer."""
    ended_session(shop, tmp_path, "s-webhooks", [("user", WEBHOOKS), ("assistant", WEBHOOK_ANSWER)])
    text = prompt(shop, WEBHOOKS)
    assert "past session s-webhooks" in text
    assert "WebhookRetrier" in text  # the answer is what grounds it, and what the model is shown
    follow_up = prompt(shop, "where are failed payment webhooks retried, and how many attempts?", "another-session")
    assert "past session s-webhooks" in follow_up and "WebhookRetrier" in follow_up


def test_a_user_turn_that_says_something_of_its_own_still_counts(shop: Path, tmp_path: Path) -> None:
    """The user's own statement is evidence when it holds more than the prompt: not an echo."""
    ended_session(shop, tmp_path, "s-limits", [
        ("user", "From now on the payment webhook retries stop after 5 attempts because the acquirer "
                 "rate-limits us at 10 requests a second."),
        ("assistant", "Understood."),
    ])
    assert "past session s-limits" in prompt(shop, "payment webhook retries attempts")


def test_the_current_session_never_grounds_its_own_prompts(shop: Path, tmp_path: Path) -> None:
    """A session ingested while it goes on (resumed, or `autology sessions ingest` run in it): its own turns are
    not searched for its prompts; another session still finds them."""
    ended_session(shop, tmp_path, "s-webhooks", [("user", WEBHOOKS), ("assistant", WEBHOOK_ANSWER)])
    assert prompt(shop, WEBHOOKS, session_id="s-webhooks") == ""
    assert "past session s-webhooks" in prompt(shop, WEBHOOKS, session_id="s-other")
    kept = search(shop, WEBHOOKS, scope=["sessions"], exclude_session="s-webhooks")
    assert not [h for h in kept["hits"] if h.get("session_id") == "s-webhooks"]


# ------------------------------------------------------------------------------ the rule


def test_what_is_an_echo() -> None:
    query = content_stems("what's a good recipe for banana bread")
    assert is_echo(query, BANANA)
    assert is_echo(query, "Can you please tell me a good banana bread recipe? thanks!")
    assert is_echo(query, "banana bread")  # a part of the prompt says nothing the prompt does not
    assert not is_echo(query, "I baked banana bread with walnuts, cinnamon and brown sugar for the team retreat")
    assert not is_echo(query, "yes, go on")  # no content word: nothing of the subject, kept
    webhooks = content_stems("payment webhook retries attempts")
    assert not is_echo(webhooks, "the payment webhook retries stop after 5 attempts because the acquirer rate-limits us")


def subject_of(query: str) -> Subject:
    """The gate's subject of ``query``, every term weighing the same."""
    return subject(subject_terms(query), {t: 1 for t in subject_terms(query)}, 10)


def test_what_is_a_question() -> None:
    assert is_question("Can you check the retry limit?")
    assert is_question("why do payment retries wait a random amount of time")  # typed without the mark
    assert is_question("What's a good recipe for banana bread")
    assert not is_question("When we moved, we dropped the cache")  # a comma: a statement
    assert not is_question("What we chose is Postgres.")  # a full stop: a statement
    assert not is_question("Retries stop after 5 attempts")


def test_what_the_user_asked_is_left_out() -> None:
    assert statements("Can you check the retry limit? It is 5 attempts now.") == "It is 5 attempts now."
    assert statements("It is 5 attempts now.\nWhy?") == "It is 5 attempts now."
    assert statements("no question here") == "no question here"
    query = content_stems(BANANA)
    assert user_evidence(query, "banana bread, please") == ""
    assert user_evidence(query, "I baked banana bread for the team retreat") == "I baked banana bread for the team retreat"


def test_a_handoff_without_an_answer_loses_the_asked_prompts() -> None:
    text = f"{BANANA}\nAsked: {BANANA} | fix the flaky checkout test\nDone: Let me look into that."
    weighed = without_echoes(subject_of(BANANA), content_stems(BANANA), "handoff", BANANA, text)
    assert weighed.title == "" and weighed.echoes == 2
    assert weighed.text == "Asked: fix the flaky checkout test\nDone: Let me look into that."


def test_a_session_that_answers_is_weighed_whole_its_proof_the_answer() -> None:
    title = "Checkout work"
    body = "\n".join(render_turn(t) for t in [Turn(0, "user", BANANA, ""),
                                             Turn(1, "assistant", "Three ripe bananas, flour, an hour.", ""),
                                             Turn(2, "user", "now fix the checkout test", "")])
    weighed = without_echoes(subject_of(BANANA), content_stems(BANANA), "session_chunk", title, f"{title}\n{body}")
    assert weighed.echoes == 1 and weighed.text == f"{title}\n{body}"  # the answer holds "banana": weighed whole
    assert weighed.proof == "Checkout work\nClaude: Three ripe bananas, flour, an hour.\nUser: now fix the checkout test"
    nothing = "\n".join(render_turn(t) for t in [Turn(0, "user", BANANA, ""), Turn(1, "assistant", "Let me see.", "")])
    weighed = without_echoes(subject_of(BANANA), content_stems(BANANA), "session_chunk", BANANA, f"{BANANA}\n{nothing}")
    assert (weighed.text, weighed.title, weighed.echoes) == ("Claude: Let me see.", "", 2)


_text = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=60).filter(
    lambda t: t.strip("\n") == t and not any(line.startswith(("User: ", "Claude: ", "Summary of the earlier"))
                                             for line in t.split("\n")))


@given(st.lists(st.tuples(st.sampled_from(["user", "assistant", "compact_summary"]), _text), min_size=1, max_size=6))
def test_rendered_turns_reads_back_what_chunking_renders(turns: list[tuple[str, str]]) -> None:
    body = "\n".join(render_turn(Turn(i, role, text, "")) for i, (role, text) in enumerate(turns))
    assert rendered_turns(body) == turns


@given(st.text(max_size=200))
def test_every_text_is_its_own_echo_unless_it_has_no_content_word(text: str) -> None:
    stems = content_stems(text)
    assert is_echo(stems, text) == bool(stems)
