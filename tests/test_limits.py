"""The limits of docs/limits.md: the page states what the code enforces, each hard limit is accepted at the
limit and refused one past it (a ValidationError naming the field and the limit, nothing written), and
`autology doctor` notes a store above the node-count guidance without calling it a problem."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from core_helpers import snapshot

from autology_mcp.cli.main import main
from autology_mcp.common import text
from autology_mcp.common.errors import ValidationError
from autology_mcp.knowledge import models, service

DOC = (Path(__file__).resolve().parent.parent / "docs" / "limits.md").read_text(encoding="utf-8")


def test_the_page_states_the_limits_the_code_enforces():
    row = {m.group(1): m.group(2) for m in re.finditer(r"^\| `?([\w` ]+?)`? \| ([^|]+) \|", DOC, re.M)}
    assert row["title"].strip() == f"1–{models.TITLE_MAX} characters"
    assert row["content"].strip() == f"{models.CONTENT_MAX:,} characters"
    assert row["tags"].strip() == f"at most {models.TAGS_MAX} tags, each at most {models.TAG_MAX_LEN} characters"
    assert row["references"].strip() == f"at most {models.REFERENCES_MAX}, each at most 500 characters"
    assert row["relation `description"].strip() == f"{models.RELATION_DESCRIPTION_MAX} characters"
    assert row["session"].strip() == "128 characters"
    assert row["autology_query` `limit"].strip() == f"1–{service.QUERY_LIMIT_MAX} (default {service.QUERY_LIMIT_DEFAULT})"
    assert f"first {text.NODE_QUERY_TERMS_MAX} distinct" in DOC
    assert f"**Up to {models.NODE_COUNT_GUIDANCE:,} nodes**" in DOC


LIMITS = [
    # (field, call at the limit, call one past it, words of the error)
    ("title", lambda a: a.capture("t" * models.TITLE_MAX, "c", type="concept"),
     lambda a: a.capture("t" * (models.TITLE_MAX + 1), "c", type="concept"), f"the limit is {models.TITLE_MAX}"),
    ("content", lambda a: a.capture("t", "c" * models.CONTENT_MAX, type="concept"),
     lambda a: a.capture("t", "c" * (models.CONTENT_MAX + 1), type="concept"), f"the limit is {models.CONTENT_MAX}"),
    ("tags", lambda a: a.capture("t", "c", type="concept", tags=[f"t{i}" for i in range(models.TAGS_MAX)]),
     lambda a: a.capture("t", "c", type="concept", tags=[f"t{i}" for i in range(models.TAGS_MAX + 1)]), f"the limit is {models.TAGS_MAX}"),
    ("tags", lambda a: a.capture("t", "c", type="concept", tags=["a" * models.TAG_MAX_LEN]),
     lambda a: a.capture("t", "c", type="concept", tags=["a" * (models.TAG_MAX_LEN + 1)]), f"max {models.TAG_MAX_LEN}"),
    ("references", lambda a: a.capture("t", "c", type="concept", references=[f"f{i}.py" for i in range(models.REFERENCES_MAX)]),
     lambda a: a.capture("t", "c", type="concept", references=[f"f{i}.py" for i in range(models.REFERENCES_MAX + 1)]), f"the limit is {models.REFERENCES_MAX}"),
    ("references", lambda a: a.capture("t", "c", type="concept", references=["a" * 497 + ".py"]),
     lambda a: a.capture("t", "c", type="concept", references=["a" * 498 + ".py"]), "is not a file path"),
    ("session", lambda a: a.capture("t", "c", type="concept", session="s" * 128),
     lambda a: a.capture("t", "c", type="concept", session="s" * 129), "max 128"),
    ("limit", lambda a: a.query(limit=service.QUERY_LIMIT_MAX), lambda a: a.query(limit=service.QUERY_LIMIT_MAX + 1), f"1 to {service.QUERY_LIMIT_MAX}"),
]  # fmt: skip


@pytest.mark.parametrize(("field", "at", "past", "words"), LIMITS, ids=[f"{f}-{i}" for i, (f, *_) in enumerate(LIMITS)])
def test_each_limit_is_accepted_at_the_limit_and_refused_past_it(autology, root, field, at, past, words):
    at(autology)
    before = snapshot(root)
    with pytest.raises(ValidationError) as info:
        past(autology)
    assert info.value.field == field and words in str(info.value), str(info.value)
    assert snapshot(root) == before


def test_relation_description_limit(autology, root, capture):
    a, b = capture("A"), capture("B")
    autology.relate(a, b, "uses", description="d" * models.RELATION_DESCRIPTION_MAX)
    before = snapshot(root)
    with pytest.raises(ValidationError, match=f"the limit is {models.RELATION_DESCRIPTION_MAX}"):
        autology.relate(a, b, "affects", description="d" * (models.RELATION_DESCRIPTION_MAX + 1))
    assert snapshot(root) == before


def test_doctor_notes_a_store_above_the_node_count_guidance(autology, root, capture, monkeypatch, capsys):
    for i in range(3):
        capture(f"N{i}")
    assert main(["--root", str(root), "doctor"]) == 0
    assert "!" not in capsys.readouterr().out
    monkeypatch.setattr(models, "NODE_COUNT_GUIDANCE", 2)
    assert main(["--root", str(root), "doctor"]) == 0  # a note, not a problem
    out = capsys.readouterr().out
    assert "✓ no problems found" in out
    assert "! 3 nodes is above the 2 the benchmarks cover" in out and "docs/limits.md" in out
    assert main(["--root", str(root), "doctor", "--json"]) == 0
    import json

    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is True and len(data["notes"]) == 1
