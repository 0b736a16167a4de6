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
from autology_mcp.retrieval.echo import content_stems, is_echo, without_echoes
from autology_mcp.retrieval.engine import search
from autology_mcp.sessions.chunking import render_turn, rendered_turns
from autology_mcp.sessions.transcript import Turn

BANANA = "what's a good recipe for banana bread?"
WEBHOOKS = "how do we retry failed payment webhooks?"
WEBHOOK_ANSWER = (
    "`WebhookRetrier` in shop/webhooks.py does the retry of a failed payment webhook: exponential backoff from "
    "2 seconds, at most 5 attempts, then the event goes to the `webhook_dlq` table and `ops/replay.py` "
    "replays it by hand."
)  # "retry", not "retried": the gate's light stem does not meet the two (retry / retri)
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
    "Mash three very ripe bananas, stir in melted butter, sugar, an egg, vanilla, baking soda, salt and "
    "flour, and bake it at 175 °C for about an hour.",
])
def test_the_banana_bread_question_asked_again_injects_nothing(shop: Path, tmp_path: Path, answer: str) -> None:
    ended_session(shop, tmp_path, "s-banana", [("user", BANANA), ("assistant", answer)])
    hits = search(shop, BANANA, scope=["sessions"])["hits"]
    assert hits and hits[0]["session_id"] == "s-banana"  # the session is still found (ranking is unchanged) ...
    assert prompt(shop, BANANA) == ""  # ... but its own copy of the question grounds nothing
    assert prompt(shop, "Hey, can you tell me a good banana bread recipe? Thanks!") == ""  # nearly the same


def test_an_echo_without_a_real_answer_is_weighed_on_the_rest(shop: Path, tmp_path: Path) -> None:
    """The session is found with the whole subject in its title and first turn; its support without them is low."""
    ended_session(shop, tmp_path, "s-banana", [("user", BANANA), ("assistant", "I can only help with this repository.")])
    answer = search(shop, BANANA)
    session = next(h for h in answer["hits"] if h.get("session_id") == "s-banana")
    assert session["components"]["title_coverage"] == 0.0 and session["components"]["coverage"] == 0.0
    assert answer["verdict"] in ("weak", "no_evidence")
    assert "banana" not in session["snippet"].lower()  # the proof line is not the question itself


# ------------------------------------------------------------------------------ the other side


def test_an_earlier_real_answer_about_the_project_still_grounds(shop: Path, tmp_path: Path) -> None:
    """The same question about the project, answered with its own names (a class, files, a table), in a past
    session: asked again in a new session, that answer is injected, its proof line from the answer."""
    ended_session(shop, tmp_path, "s-webhooks", [("user", WEBHOOKS), ("assistant", WEBHOOK_ANSWER)])
    text = prompt(shop, WEBHOOKS)
    assert "past session s-webhooks" in text
    assert "WebhookRetrier" in text  # the answer is what grounds it, and what the model is shown
    follow_up = prompt(shop, "what backoff does the payment webhook retry use?", "another-session")
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


def test_a_handoff_loses_the_asked_prompts_that_echo() -> None:
    query = content_stems(BANANA)
    text = f"{BANANA}\nAsked: {BANANA} | fix the flaky checkout test\nDone: Mashed bananas, flour, an hour at 175 °C."
    weighed = without_echoes(query, "handoff", BANANA, text)
    assert weighed.title == "" and weighed.title_echo and weighed.echoes == 2
    assert weighed.text == "Asked: fix the flaky checkout test\nDone: Mashed bananas, flour, an hour at 175 °C."


def test_a_chunk_keeps_the_answers_and_the_other_turns() -> None:
    title = "Checkout work"
    body = "\n".join(render_turn(t) for t in [Turn(0, "user", BANANA, ""), Turn(1, "assistant", "Bananas, flour.", ""),
                                             Turn(2, "user", "now fix the checkout test", "")])
    weighed = without_echoes(content_stems(BANANA), "session_chunk", title, f"{title}\n{body}")
    assert weighed.echoes == 1 and not weighed.title_echo
    assert weighed.text == "Checkout work\nClaude: Bananas, flour.\nUser: now fix the checkout test"


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
