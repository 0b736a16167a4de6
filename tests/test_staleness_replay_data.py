"""The staleness replays' data (bench/data/staleness_replay/*.json) is well formed, so that a replay run
by the harness at a later stop cannot fail on its own data: every node is one the CLI captures (a
decision in the ADR sections), every label names a node of its window and a step of it, and each
window's scenario steps are among its steps. Git is not read; nothing is run on the replays."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autology_mcp.knowledge.adr import missing_adr_sections
from autology_mcp.knowledge.models import validate_tags

DATA = Path(__file__).resolve().parent.parent / "bench" / "data" / "staleness_replay"
REPLAYS = sorted(DATA.glob("*.json"))
TYPES = {"decision", "component", "convention", "concept", "pattern", "issue", "session"}


def test_there_are_replays() -> None:
    assert len(REPLAYS) >= 16


@pytest.mark.parametrize("path", REPLAYS, ids=lambda p: p.stem)
def test_a_replay_is_one_the_harness_can_run(path: Path) -> None:
    data = json.loads(path.read_text())
    assert {"repository", "mirror", "role", "windows"} <= data.keys()
    for window in data["windows"]:
        keys = [n["key"] for n in window["nodes"]]
        assert len(keys) == len(set(keys)), f"{window['name']}: a node key is used twice"
        for node in window["nodes"]:
            assert node["type"] in TYPES and node["references"], node["key"]
            assert 1 <= len(node["title"]) <= 100, node["key"]
            validate_tags(node.get("tags"))  # the CLI refuses a tag such as 'dynamicRef'
            if node["type"] == "decision":
                assert missing_adr_sections(node["content"]) == [], f"{node['key']}: the CLI refuses this decision"
        steps = [s[:8] for s in window["steps"]]
        for key, labels in window["labels"].items():
            assert key in keys, f"{window['name']}: a label for no node ({key})"
            for label in labels:
                assert isinstance(label["stale"], bool) and label["why"]
                assert label["step"][:8] in steps, f"{window['name']} {key}: a label for no step ({label['step']})"
        for step in window.get("scenarios_at", []):
            assert step[:8] in steps, f"{window['name']}: a scenario at no step ({step})"


SECOND = sorted((DATA / "second_labels").glob("*.json"))


@pytest.mark.parametrize("path", SECOND, ids=lambda p: p.stem)
def test_a_second_labelling_labels_the_cells_the_first_did(path: Path) -> None:
    """bench/label_agreement.py compares two labellers cell by cell: the second wrote one label for each cell
    the first did (same window, node and step), in the order of the steps; since tomlkit's, the second is given
    every step that touches a referenced path, also after the first labelled the node stale, and labels those
    too (a superset of the first's cells)."""
    first = json.loads((DATA / path.name).read_text())
    second = json.loads(path.read_text())
    assert set(second) == {w["name"] for w in first["windows"]}
    for window in first["windows"]:
        theirs = second[window["name"]]
        assert set(theirs) == set(window["labels"])
        for key, labels in window["labels"].items():
            order = [s[:8] for s in window["steps"]]
            steps = [e["step"][:8] for e in theirs[key]]
            assert steps == sorted(steps, key=order.index) and len(set(steps)) == len(steps), key
            assert {e["step"][:8] for e in labels} <= set(steps), key
            assert all(isinstance(e["stale"], bool) and e["why"] for e in theirs[key]), key
