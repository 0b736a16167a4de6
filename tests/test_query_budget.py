"""autology_query's output budget: a huge node comes back cut, with a marker naming how to read the
rest; small nodes come back whole; many large hits fit the budget together; the resource and
`autology show` still give the whole node."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from autology_mcp.cli.main import main
from autology_mcp.knowledge.service import QUERY_MAX_CHARS, Autology, fit_contents

HUGE = "\n".join(f"Line {i}: the websocket reconnect policy, explained at great length." for i in range(2200))


def capture(autology: Autology, title: str, content: str) -> str:
    return autology.capture(title, content, type="concept").id


def test_a_huge_node_is_cut_with_a_marker_and_small_ones_stay_whole(autology: Autology) -> None:
    assert len(HUGE) > 149_000
    big = capture(autology, "Websocket reconnect essay", HUGE)
    small = capture(autology, "Websocket reconnect summary", "Reconnect the websocket with backoff.")
    hits = {h.node.id: h.node.content for h in autology.query("websocket reconnect")}
    assert hits[small] == "Reconnect the websocket with backoff."
    cut = hits[big]
    assert len(cut) <= QUERY_MAX_CHARS
    assert cut.startswith("Line 0: the websocket") and cut.endswith(
        f"read the whole node with the MCP resource autology://node/{big} or `autology show {big}`]"
    )
    kept = cut[: cut.index("\n\n…[cut:")]
    rest = int(cut.split("…[cut: ")[1].split(" more")[0].replace(",", ""))
    assert HUGE.startswith(kept) and len(kept) + rest == len(HUGE)
    assert autology.get(big).content == HUGE  # the node itself is untouched


def test_ten_large_hits_fit_the_budget_together(autology: Autology) -> None:
    for i in range(10):
        capture(autology, f"Websocket reconnect chapter {i}", HUGE[: 20_000 + i * 1000])
    hits = autology.query("websocket reconnect", limit=10)
    assert len(hits) == 10
    assert sum(len(h.node.content) for h in hits) <= QUERY_MAX_CHARS
    assert all("…[cut:" in h.node.content for h in hits)
    assert sum(len(h.node.content) for h in autology.query("websocket reconnect", limit=10, max_chars=100_000)) <= 100_000


def test_fitting_shares_what_is_left_equally() -> None:
    contents = [("a", "x" * 100), ("b", "y" * 5000), ("c", "z" * 9000)]
    fitted = fit_contents(contents, 3000)
    assert fitted[0] == "x" * 100  # within its share: whole
    assert len(fitted[1]) == len(fitted[2]) == 1450  # the rest, shared equally, markers included
    assert fit_contents(contents, 20_000) == [c for _, c in contents]


@pytest.mark.parametrize("bad", [999, 0, -1, True, "many", 1.5])
def test_bad_budgets_are_refused(autology: Autology, bad) -> None:
    from autology_mcp.common.errors import ValidationError

    with pytest.raises(ValidationError, match="max_chars"):
        autology.query("x", max_chars=bad)


async def test_over_mcp_the_answer_is_cut_validates_and_the_resource_is_whole(autology: Autology, connect) -> None:
    big = capture(autology, "Websocket reconnect essay", HUGE)
    async with connect() as client:
        tool = {t.name: t for t in (await client.list_tools()).tools}["autology_query"]
        result = await client.call_tool("autology_query", {"query": "websocket reconnect"})
        assert not result.is_error
        text = result.content[0].text
        assert len(text) < 30_000  # was ~153,000 characters
        jsonschema.validate(result.structured_content, tool.output_schema)
        assert json.loads(text)[0]["node"]["content"].endswith(f"autology show {big}`]")
        resource = await client.read_resource(f"autology://node/{big}")
        assert "Line 2199:" in resource.contents[0].text
        bigger = await client.call_tool("autology_query", {"query": "websocket reconnect", "max_chars": 200_000})
        assert "Line 2199:" in bigger.content[0].text


def test_the_cli_cuts_the_same_and_show_prints_the_whole_node(autology: Autology, root: Path, capsys) -> None:
    big = capture(autology, "Websocket reconnect essay", HUGE)
    assert main(["--root", str(root), "query", "websocket", "reconnect", "--json"]) == 0
    [hit] = json.loads(capsys.readouterr().out)
    assert hit["node"]["content"].endswith(f"autology show {big}`]")
    assert main(["--root", str(root), "show", big]) == 0
    assert "Line 2199:" in capsys.readouterr().out
