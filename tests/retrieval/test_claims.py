"""The claim check: ref parsing, resolution (paths, lines, nodes), the support rule, outcomes, ledger."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from autology_mcp.common.errors import ValidationError
from autology_mcp.common.text import CLAIM_STOP_WORDS, claim_normal
from autology_mcp.knowledge.service import Autology
from autology_mcp.retrieval import claims as c
from autology_mcp.retrieval import ledger

RETRY = '''import time


def fetch_with_retry(url, attempts=3):
    """Fetch a URL, retrying with exponential backoff when the connection times out."""
    for attempt in range(attempts):
        try:
            return http_get(url, timeout=30)
        except TimeoutError:
            time.sleep(2 ** attempt)
    raise ConnectionError(url)
'''

ADR = "## Context\nc\n## Decision\nd\n## Alternatives\na\n## Consequences\nq\n"


@pytest.fixture
def project(root: Path) -> Path:
    (root / "src").mkdir()
    (root / "src" / "net.py").write_text(RETRY)
    (root / "src" / "blob.bin").write_bytes(b"\0\1\2binary")
    return root


def check(root: Path, *claims, **kw):
    return c.check_claims(root, list(claims), record=False, **kw)


# ------------------------------------------------------------------------------ key terms


def test_key_terms_split_identifiers_drop_stop_words_and_stem():
    assert c.key_terms("The parseHeader function retries the HTTP connection; retry_after is used") == [
        "pars", "header", "retri", "http", "connect", "after",
    ]  # fmt: skip
    assert c.key_terms("it is the one that we use") == []
    assert claim_normal("parsing") == claim_normal("parsed") == claim_normal("parse") == claim_normal("parses")
    assert claim_normal("retries") == claim_normal("retried") == claim_normal("retry")
    assert claim_normal("caching") == claim_normal("cached") == claim_normal("cache")
    assert claim_normal("running") == "run" and claim_normal("install") == "instal" and claim_normal("status") == "statu"


def test_code_abbreviations_meet_the_words_they_stand_for():
    assert c.key_terms("the click context and its parameters") == ["click", "context", "paramet"]
    assert c.support(c.key_terms("the context holds the parameters"), "def f(ctx, params): return ctx.params")[0]
    assert "function" not in c.key_terms("this func calls another fn")  # filler, in every spelling


@pytest.mark.parametrize(
    ("short", "full"),
    [("ctx", "context"), ("cmds", "commands"), ("msg", "message"), ("env", "environment"), ("args", "arguments"),
     ("params", "parameters"), ("attrs", "attributes"), ("info", "information"), ("cfg", "configuration"),
     ("dirs", "directories"), ("err", "errors"), ("exc", "exception"), ("obj", "objects"), ("opts", "options"),
     ("val", "values"), ("num", "number"), ("str", "strings"), ("len", "length"), ("idx", "index"),
     ("cb", "callbacks"), ("req", "requests"), ("resp", "response"), ("tmp", "temporary"), ("prev", "previous"),
     ("src", "source"), ("dst", "destination"), ("refs", "references"), ("docs", "documents"), ("pkg", "package"),
     ("db", "database"), ("auth", "authentication"), ("repo", "repository"), ("app", "application"),
     ("spec", "specification"), ("utils", "utilities")],
)  # fmt: skip
def test_each_abbreviation_meets_its_word(short, full):
    assert claim_normal(short) == claim_normal(full)


def test_support_rule_threshold():
    terms = c.key_terms("retry backoff timeout jitter")
    assert terms == ["retri", "backoff", "timeout", "jitter"]  # FTS5's Porter stems
    ok, matched, missing, coverage = c.support(terms, "retries with exponential backoff")
    assert ok and matched == ["retri", "backoff"] and missing == ["timeout", "jitter"] and coverage == 0.5
    ok, matched, _, coverage = c.support(terms, "retries forever")
    assert not ok and matched == ["retri"] and coverage == 0.25
    assert c.support(["retri"], "we retried")[0]  # one key term: one match is enough
    assert not c.support(["retri", "backoff"], "a retry")[0]  # two key terms: both must match
    assert c.support(c.key_terms("configuration loader"), "config loader")[0]  # prefix of 5+ letters matches
    assert not c.support(["cat", "dog"], "catalog dogma")[0]  # short terms never prefix-match
    assert not c.support([], "anything")[0]


# ------------------------------------------------------------------------------ refs


@pytest.mark.parametrize(
    ("ref", "path", "start", "end"),
    [
        ("src/a.py:10-20", "src/a.py", 10, 20),
        ("src/a.py:12", "src/a.py", 12, 12),
        ("./src/a.py#L3-L9", "src/a.py", 3, 9),
        ("src/a.py#L4-7", "src/a.py", 4, 7),
        ("C:odd:name.py:5", "C:odd:name.py", 5, 5),
    ],
)
def test_parse_span_refs(ref, path, start, end):
    parsed = c.parse_ref(ref)
    assert (parsed.kind, parsed.path, parsed.start_line, parsed.end_line) == ("file", path, start, end)


def test_parse_session_refs():
    handoff = c.parse_ref("3f2b-session_1:handoff")
    assert (handoff.kind, handoff.session_id, handoff.chunk) == ("session", "3f2b-session_1", None)
    first = c.parse_ref("abc:0")
    assert (first.kind, first.session_id, first.chunk) == ("session", "abc", 0)
    maybe = c.parse_ref("abc:4")  # a session chunk if that session is stored, else line 4 of the file 'abc'
    assert (maybe.kind, maybe.path, maybe.start_line, maybe.session_id, maybe.chunk) == ("file", "abc", 4, "abc", 4)
    assert c.parse_ref("src/abc:4").session_id is None


def test_parse_node_ref():
    parsed = c.parse_ref(" 3F2B8C1E-9D4A-4E5B-8C7D-1A2B3C4D5E6F ")
    assert parsed.kind == "node" and parsed.node_id == "3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f"


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("src/a.py", "neither form"),
        ("src/a.py:", "neither form"),
        ("src/a.py:x-y", "neither form"),
        ("src/a.py:0-3", "numbered from 1"),
        ("src/a.py:20-10", "ends (10) before it starts (20)"),
        (":12", "neither form"),
        ("", "is empty"),
        (12, "must be a string"),
        ("src/a\0.py:1", "NUL character"),
    ],
)
def test_malformed_refs_are_refused(ref, message):
    with pytest.raises(ValidationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        c.parse_ref(ref)


@given(
    path=st.text(st.characters(blacklist_characters="\n\r\x00#", blacklist_categories=("Cs",)), min_size=1, max_size=40)
    .map(str.strip)
    .filter(lambda p: p and not p.startswith("./") and p == p.strip()),
    start=st.integers(1, 10**6),
    width=st.integers(0, 10**4),
)
def test_span_refs_round_trip(path, start, width):
    parsed = c.parse_ref(f"{path}:{start}-{start + width}")
    assert (parsed.path, parsed.start_line, parsed.end_line) == (path, start, start + width)


@given(st.text(max_size=80))
def test_any_string_parses_or_is_a_validation_error(text):
    try:
        parsed = c.parse_ref(text)
    except ValidationError:
        return
    assert parsed.kind in ("file", "node", "session")
    if parsed.kind == "file":
        assert 1 <= parsed.start_line <= parsed.end_line


@given(st.text(max_size=200))
def test_key_terms_never_fail_and_hold_no_stop_words(text):
    terms = c.key_terms(text)
    assert len(terms) == len(set(terms))
    assert not set(terms) & CLAIM_STOP_WORDS


# ------------------------------------------------------------------------------ resolution and outcomes


def test_supported_unsupported_and_unresolved(project: Path):
    result = check(
        project,
        {"text": "fetch_with_retry retries with exponential backoff on a connection timeout", "refs": ["src/net.py:4-11"]},
        {"text": "fetch_with_retry caches responses in Redis", "refs": ["src/net.py:4-11"]},
        {"text": "retries use backoff", "refs": ["src/missing.py:1-2"]},
        {"text": "retries use backoff", "refs": []},
    )
    outcomes = [claim["outcome"] for claim in result["claims"]]
    assert outcomes == ["supported", "unsupported", "unresolved", "unresolved"]
    assert result["summary"] == {"total": 4, "supported": 1, "unsupported": 1, "unresolved": 2}
    first = result["claims"][0]["refs"][0]
    assert first["resolved"] and first["supports"] and first["path"] == "src/net.py"
    assert {"retri", "backoff", "timeout"} <= set(first["matched_terms"])
    second = result["claims"][1]["refs"][0]
    assert second["resolved"] and not second["supports"]
    assert "redi" in second["missing_terms"] or "redis" in second["missing_terms"]
    assert "missing:" in second["reason"]
    assert result["claims"][2]["refs"][0]["reason"] == "no such file in the project"
    assert result["claims"][3]["reason"] == "no evidence refs were given"
    assert "key terms" in result["rule"]


def test_one_supporting_ref_is_enough(project: Path):
    result = check(
        project,
        {"text": "exponential backoff between retries", "refs": ["src/nope.py:1", "src/net.py:1", "src/net.py:5-10"]},
    )
    claim = result["claims"][0]
    assert claim["outcome"] == "supported"
    assert [(r["resolved"], r["supports"]) for r in claim["refs"]] == [(False, False), (True, False), (True, True)]


def test_the_right_span_matters(project: Path):
    # The file says it, but the cited line does not.
    result = check(project, {"text": "exponential backoff between retries", "refs": ["src/net.py:1"]})
    assert result["claims"][0]["outcome"] == "unsupported"


def test_paths_outside_the_root_never_resolve(project: Path, tmp_path: Path):
    outside = tmp_path / "secret.py"
    outside.write_text("retry backoff timeout\n")
    os.symlink(outside, project / "src" / "link.py")
    refs = ["../secret.py:1", f"{outside}:1", "src/link.py:1", "/etc/passwd:1"]
    result = check(project, {"text": "retry backoff timeout", "refs": refs})
    claim = result["claims"][0]
    assert claim["outcome"] == "unresolved"
    assert [r["reason"] for r in claim["refs"]] == ["the path is outside the project root"] * 4


def test_absolute_path_inside_the_root_resolves(project: Path):
    ref = f"{project / 'src' / 'net.py'}:4-11"
    result = check(project, {"text": "retry with exponential backoff", "refs": [ref]})
    assert result["claims"][0]["outcome"] == "supported"
    assert result["claims"][0]["refs"][0]["path"] == "src/net.py"


def test_line_ranges_past_the_end_binary_files_and_folders(project: Path):
    result = check(project, {"text": "retry backoff", "refs": ["src/net.py:10-99", "src/blob.bin:1", "src:1"]})
    reasons = [r["reason"] for r in result["claims"][0]["refs"]]
    assert reasons == [
        "lines 10-99 go past the end of the file (11 lines)", "not a text file", "not a file",
    ]  # fmt: skip
    assert result["claims"][0]["outcome"] == "unresolved"


def test_unreadable_paths_are_unresolved_not_errors(project: Path):
    result = check(project, {"text": "retry backoff", "refs": [f"src/{'x' * 300}.py:1", "src/net.py/inner.py:1"]})
    reasons = [r["reason"] for r in result["claims"][0]["refs"]]
    assert reasons[0].startswith("cannot read the path") and "too long" in reasons[0]
    assert reasons[1] in ("no such file in the project", "not a file") or reasons[1].startswith("cannot read")
    assert result["claims"][0]["outcome"] == "unresolved"


def test_a_span_wider_than_the_limit_resolves_but_never_supports(project: Path):
    result = check(project, {"text": "retry with exponential backoff", "refs": ["src/net.py:1-11"]}, max_span_lines=5)
    ref = result["claims"][0]["refs"][0]
    assert ref["resolved"] and not ref["supports"] and "wider than 5" in ref["reason"]
    assert result["claims"][0]["outcome"] == "unsupported"


def test_a_claim_of_stop_words_is_never_supported(project: Path):
    result = check(project, {"text": "it is what it is", "refs": ["src/net.py:4-11"]})
    assert result["claims"][0]["outcome"] == "unsupported"
    assert "no key terms" in result["claims"][0]["reason"]


def test_node_refs(root: Path):
    autology = Autology.open(root)
    try:
        nid = autology.capture(
            "Retry HTTP calls with exponential backoff", "Timeouts are retried three times.", type="convention"
        ).id
        old = autology.capture("Retry forever", "We retried forever with backoff.", type="convention").id
        autology.update(old, status="superseded")
        missing = "3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f"
        result = c.check_claims(
            root,
            [
                {"text": "HTTP timeouts are retried with exponential backoff", "refs": [nid.upper()]},
                {"text": "we retry forever with backoff", "refs": [old]},
                {"text": "HTTP timeouts are retried", "refs": [missing, "00000000-0000-0000-0000-000000000000"]},
            ],
            store=autology.store,
            record=False,
        )
    finally:
        autology.close()
    first, second, third = result["claims"]
    assert first["outcome"] == "supported"
    assert first["refs"][0]["title"] == "Retry HTTP calls with exponential backoff"
    assert first["refs"][0]["path"] == f".autology/nodes/conventions/{nid}.md"
    assert second["outcome"] == "unsupported" and "superseded" in second["refs"][0]["reason"]
    assert third["outcome"] == "unresolved"
    assert third["refs"][0]["reason"] == f"Node not found: {missing}"
    assert "not a UUID v4" in third["refs"][1]["reason"]


def test_node_refs_open_the_store_when_none_is_given(root: Path):
    autology = Autology.open(root)
    nid = autology.capture("Retry with backoff", "Retries use exponential backoff.", type="convention").id
    autology.close()
    result = c.check_claims(root, [{"text": "retries use backoff", "refs": [nid]}], record=False)
    assert result["claims"][0]["outcome"] == "supported"


def test_node_refs_without_a_store(tmp_path: Path):
    result = c.check_claims(
        tmp_path, [{"text": "retries", "refs": ["3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f"]}], record=False
    )
    assert "no autology store" in result["claims"][0]["refs"][0]["reason"]


@pytest.mark.parametrize(
    ("claims", "message"),
    [
        ([], "Invalid claims: is empty"),
        ("text", "Invalid claims: must be a list"),
        ([{"text": "a"}] * (c.MAX_CLAIMS + 1), f"at most {c.MAX_CLAIMS}"),
        (["a claim"], r"Invalid claims\[0\]: must be an object"),
        ([{"text": "  ", "refs": []}], r"Invalid claims\[0\].text: must be a non-empty string"),
        ([{"text": "x" * (c.MAX_TEXT + 1)}], f"at most {c.MAX_TEXT}"),
        ([{"text": "ok", "refs": "src/a.py:1"}], r"claims\[0\].refs: must be a list"),
        ([{"text": "ok", "refs": ["src/a.py:1"] * (c.MAX_REFS + 1)}], f"at most {c.MAX_REFS} per claim"),
        ([{"text": "ok", "evidence": []}], "unknown field"),
    ],
)
def test_bad_requests_are_refused_before_anything_is_read(tmp_path: Path, claims, message):
    with pytest.raises(ValidationError, match=message):
        c.check_claims(tmp_path, claims)
    assert ledger.counters(tmp_path)["claims"] == 0


def test_each_check_is_counted_in_the_ledger(project: Path):
    (project / ".autology").mkdir()
    claims = [
        {"text": "retry with exponential backoff", "refs": ["src/net.py:4-11"]},
        {"text": "retry with exponential backoff", "refs": ["src/gone.py:1"]},
    ]
    c.check_claims(project, claims)
    c.check_claims(project, claims[:1])
    assert ledger.counters(project)["claim_outcomes"] == {"supported": 2, "unsupported": 0, "unresolved": 1}


def test_session_refs(project: Path, tmp_path: Path):
    import shutil

    from autology_mcp.sessions.ingest import ingest_transcript

    fixture = Path(__file__).resolve().parents[1] / "sessions" / "fixtures" / "basic.jsonl"
    transcript = tmp_path / "transcripts" / "basic.jsonl"
    transcript.parent.mkdir()
    shutil.copyfile(fixture, transcript)
    ingest_transcript(project, transcript)
    (project / "basic").write_text("one line\n")  # a file named like the session: the session wins
    result = check(
        project,
        {"text": "we decided on exponential backoff with full jitter", "refs": ["basic:handoff", "basic:0"]},
        {"text": "we decided on exponential backoff with full jitter", "refs": ["basic:1", "nosuch:handoff"]},
        {"text": "the payments API is rate limited by Redis sentinels", "refs": ["basic:0"]},
    )
    first, second, third = result["claims"]
    assert first["outcome"] == "supported"
    assert [(r["kind"], r["resolved"], r["supports"]) for r in first["refs"]] == [("session", True, True)] * 2
    assert first["refs"][0]["title"] == "Retry backoff for the HTTP client"
    assert first["refs"][0]["path"] == ".autology/sessions/basic.jsonl"
    assert second["outcome"] == "unresolved"
    assert second["refs"][0]["reason"].startswith("the session has 1 chunks")
    assert second["refs"][1]["reason"] == "no stored session nosuch in .autology/sessions/"
    assert third["outcome"] == "unsupported"


def test_a_check_in_a_folder_without_a_store_creates_nothing(project: Path):
    c.check_claims(project, [{"text": "retry with exponential backoff", "refs": ["src/net.py:4-11"]}])
    assert not (project / ".autology").exists()


def test_a_bad_ref_marks_its_claim_and_the_rest_of_the_batch_is_checked(tmp_path: Path):
    (tmp_path / "net.py").write_text("def fetch_with_retry():\n    backoff = 2 ** attempt  # exponential backoff\n")
    claims = [
        {"text": "fetch_with_retry uses exponential backoff", "refs": ["net.py:1-2"]},
        {"text": "something", "refs": ["x" * 1500]},  # over MAX_REF_LENGTH
        {"text": "something else", "refs": ["net.py", "net.py:9-2"]},
    ]
    result = c.check_claims(tmp_path, claims, record=False)
    assert [r["outcome"] for r in result["claims"]] == ["supported", "unresolved", "unresolved"]
    assert "longer than 1000 characters" in result["claims"][1]["refs"][0]["reason"]
    assert len(result["claims"][1]["refs"][0]["ref"]) == c.MAX_REF_LENGTH
    reasons = [r["reason"] for r in result["claims"][2]["refs"]]
    assert "is neither form" in reasons[0] and "before it starts" in reasons[1]


def test_files_under_dot_git_are_never_evidence(tmp_path: Path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[remote \"origin\"]\n    url = https://deploy:hunter2secret@git.example.com/x\n")
    result = c.check_claims(tmp_path, [{"text": "origin url deploy hunter2secret", "refs": [".git/config:1-2"]}], record=False)
    ref = result["claims"][0]["refs"][0]
    assert ref["resolved"] is False and ref["reason"] == "files under .git/ are not evidence"
    assert ref["matched_terms"] == [] and ref["missing_terms"] == []
