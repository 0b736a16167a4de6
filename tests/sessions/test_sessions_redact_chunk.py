"""Redaction of secrets (examples and properties) and chunking bounds."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autology_mcp.sessions.chunking import BODY_MAX, CHUNK_MAX, chunk_turns, split_text
from autology_mcp.common.redact import redact
from autology_mcp.sessions.transcript import TITLE_MAX, Turn

ALNUM = string.ascii_letters + string.digits


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 here", "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"),
        ("OPENAI_API_KEY=sk-proj-AbCdEfGhIjKlMnOpQrStUv12", "AbCdEfGhIjKlMnOpQrStUv12"),
        ("token ghp_" + "a1" * 18, "a1" * 18),
        ("github_pat_11AAAAAAA0aaaaaaaaaaaa_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "bbbbbbbbbbbbbbbbbbbb"),
        ("slack xoxp-2222222222-3333333333-abcdefABCDEF", "abcdefABCDEF"),
        ("AKIAIOSFODNN7EXAMPLE is the id", "IOSFODNN7EXAMPLE"),
        ("AIzaSyA-1234567890abcdefghijklmnopqrstu", "1234567890abcdefghijklmnop"),
        ("Authorization: Bearer abc123.def456-ghi789", "abc123.def456-ghi789"),
        ("jwt eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3In0.c2lnbmF0dXJlX2hlcmU", "c2lnbmF0dXJlX2hlcmU"),
        ("git clone https://deploy:pa55w0rd-XYZ@github.com/acme/app.git", "pa55w0rd-XYZ"),
        ("redis://:topsecretpw@cache:6379", "topsecretpw"),
        ("password = 'open sesame'", "open sesame"),
        ('{"client_secret": "Qm9vYmllcw=="}', "Qm9vYmllcw=="),
        ("export DB_PASSWORD=s3cr3t!!", "s3cr3t!!"),
        ("mysql -u root --password hunter22 shop", "hunter22"),
        ("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\n-----END PRIVATE KEY-----", "MIIEvQIBADANBg"),
        ("-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg (cut off", "MHcCAQEEIBkg"),
        ("stripe sk_live_51HfakeFAKEfake0123", "51HfakeFAKEfake0123"),
        ("hook https://hooks.slack.com/services/T000/B000/XXXXXXXX", "XXXXXXXX"),
    ],
)
def test_known_secret_shapes_are_redacted(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out
    assert "[REDACTED:" in out


@pytest.mark.parametrize(
    "text",
    [
        "We decided to rotate the token every 90 days.",
        "token = get_token()",
        "The password reset flow sends an email.",
        "git commit -m 'Tune the retry' (abc1234)",
        "See https://example.com/docs/auth for details.",
        "class TokenBucket: rate limiting with a bucket",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) == text


secrets = st.one_of(
    st.text(ALNUM, min_size=24, max_size=40).map(lambda s: "sk-ant-api03-" + s),
    st.text(ALNUM, min_size=36, max_size=40).map(lambda s: "ghp_" + s),
    st.text(ALNUM + "_", min_size=30, max_size=60).map(lambda s: "github_pat_" + s),
    st.text(ALNUM + "-", min_size=12, max_size=40).map(lambda s: "xoxb-" + s),
    st.text(string.ascii_uppercase + string.digits, min_size=16, max_size=16).map(lambda s: "AKIA" + s),
    st.tuples(st.text(ALNUM, min_size=10, max_size=20), st.text(ALNUM, min_size=10, max_size=20)).map(
        lambda p: f"eyJ{p[0]}.eyJ{p[1]}.{p[1]}{p[0]}"
    ),
)
filler = st.text(alphabet=string.ascii_letters + " .,\n", max_size=60)


@settings(max_examples=200, deadline=None)
@given(filler, secrets, filler)
def test_property_planted_token_never_survives(before: str, secret: str, after: str) -> None:
    out = redact(f"{before} {secret} {after}")
    assert secret not in out
    assert redact(out) == out  # idempotent


@settings(max_examples=150, deadline=None)
@given(st.text(ALNUM + "!#%&*+-/=?^_~", min_size=4, max_size=30), st.sampled_from(["password", "api_key", "SECRET", "db_token"]))
def test_property_assignments_lose_their_value(value: str, key: str) -> None:
    out = redact(f"{key}={value}")
    assert value not in out or value in key


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300))
def test_property_redaction_is_idempotent(text: str) -> None:
    once = redact(text)
    assert redact(once) == once


def turns_of(texts: list[str]) -> list[Turn]:
    return [Turn(i, "user" if i % 2 == 0 else "assistant", t, f"2026-01-01T00:00:{i % 60:02d}Z") for i, t in enumerate(texts)]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(alphabet=string.ascii_letters + " .\n", min_size=1, max_size=3000).filter(str.strip), max_size=25))
def test_property_chunks_are_bounded_and_cover_every_turn_in_order(texts: list[str]) -> None:
    turns = turns_of(texts)
    chunks = chunk_turns(turns)
    title = "T" * TITLE_MAX
    assert all(len(c.text(title)) <= CHUNK_MAX for c in chunks)
    assert [c.n for c in chunks] == list(range(len(chunks)))
    covered = [n for c in chunks for n in range(c.turn_start, c.turn_end + 1)]
    assert sorted(set(covered)) == [t.n for t in turns]
    assert covered == sorted(covered)  # in order; a long turn spans several chunks
    assert chunk_turns(turns) == chunks  # deterministic


def test_chunks_break_at_turn_boundaries_and_prefix_the_title() -> None:
    turns = turns_of(["a" * 600, "b" * 600, "c" * 600])
    chunks = chunk_turns(turns)
    assert [(c.turn_start, c.turn_end) for c in chunks] == [(0, 1), (2, 2)]
    assert chunks[0].text("My title").startswith("My title\nUser: aaa")
    assert chunks[1].timestamp == "2026-01-01T00:00:02Z"


def test_appending_turns_keeps_earlier_chunks() -> None:
    texts = [f"turn {i} " + "word " * 80 for i in range(12)]
    before = chunk_turns(turns_of(texts))
    after = chunk_turns(turns_of(texts + ["one more turn"]))
    assert after[: len(before) - 1] == before[:-1]


def test_long_turn_is_split_at_word_boundaries() -> None:
    pieces = split_text("word " * 1000, BODY_MAX)
    assert all(len(p) <= BODY_MAX for p in pieces)
    assert all(not p.startswith(" ") and not p.endswith(" ") for p in pieces)
    assert " ".join(pieces).split() == ["word"] * 1000


def _redact_every_rule(text: str) -> str:
    from autology_mcp.common.redact import _RULES, redact_shapes

    for _kind, pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return redact_shapes(text)


pieces = st.sampled_from(
    ["ghs_", "gh", "s_", "sk-", "task-", "xoxb-", "AKIA", "ASIA", "basic", "Bearer ", "token", "key", "pass",
     "word", "://", "u:p@", "--", "password", "=", ": ", '"', "eyJ", ".", "_live_", "hf_", "pypi-", "npm_",
     "PRIVATE KEY", "-----BEGIN ", "-----", "AIza", "glpat-", "hooks.slack.com/services/", " ", "\n"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(pieces, st.text(ALNUM, min_size=1, max_size=40)), max_size=30).map("".join))
def test_property_the_literal_prefilter_changes_nothing(text: str) -> None:
    """Skipping rules whose literals are absent gives exactly what running every rule gives."""
    assert redact(text) == _redact_every_rule(text)
