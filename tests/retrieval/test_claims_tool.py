"""autology_check_claims through the MCP SDK's in-memory Client; `autology check-claims`; counters in the status."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from autology_mcp.cli.main import main

CODE = "def reconnect(sock):\n    # reconnect the websocket with a backoff after a timeout\n    return backoff_retry(sock)\n"


@pytest.fixture
def project(root: Path) -> Path:
    (root / "ws.py").write_text(CODE)
    return root


def ok(result):
    assert not result.is_error, result.content[0].text
    return result


def error_text(result):
    assert result.is_error
    return result.content[0].text


async def test_tool_is_listed_read_only_with_a_schema(connect):
    async with connect() as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    tool = tools["autology_check_claims"]
    assert tool.annotations.read_only_hint is True and tool.annotations.destructive_hint is False
    schema = tool.input_schema
    assert schema["required"] == ["claims"] and schema["additionalProperties"] is False
    assert schema["properties"]["claims"]["maxItems"] == 50
    assert "supported" in tool.description


async def test_tool_checks_claims_and_counts_them_in_the_status(connect, project, autology):
    nid = autology.capture("Websocket reconnect policy", "Reconnect the websocket with backoff.", type="convention").id
    claims = [
        {"text": "reconnect retries the websocket with a backoff after a timeout", "refs": ["ws.py:1-3"]},
        {"text": "the websocket reconnects with backoff", "refs": [nid]},
        {"text": "reconnect encrypts the payload with AES", "refs": ["ws.py:1-3"]},
        {"text": "reconnect uses a backoff", "refs": ["../outside.py:1", "ws.py:99"]},
    ]
    async with connect() as client:
        result = ok(await client.call_tool("autology_check_claims", {"claims": claims}))
        status = ok(await client.call_tool("autology_status", {})).structured_content
        resource = await client.read_resource("autology://status")
    data = result.structured_content
    assert [c["outcome"] for c in data["claims"]] == ["supported", "supported", "unsupported", "unresolved"]
    assert data["summary"] == {"total": 4, "supported": 2, "unsupported": 1, "unresolved": 1}
    assert json.loads(result.content[0].text)["summary"] == data["summary"]
    assert data["claims"][2]["refs"][0]["missing_terms"]
    assert data["claims"][3]["refs"][0]["reason"] == "the path is outside the project root"
    assert status["totalNodes"] == 1  # the seed's fields are all still there
    assert status["retrieval"]["claim_outcomes"] == {"supported": 2, "unsupported": 1, "unresolved": 1}
    assert status["retrieval"]["claim_rates"]["supported_rate"] == 0.5
    assert json.loads(resource.contents[0].text)["retrieval"]["claims"] == 4


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"claims": []}, "Invalid claims: is empty"),
        ({"claims": [{"text": "a", "refs": []}] * 51}, "at most 50 per check"),
        ({"claims": [{"text": " ", "refs": []}]}, "Invalid claims[0].text: must be a non-empty string"),
        ({"claims": [{"text": "a", "evidence": ["ws.py:1"]}]}, "evidence"),
        ({"claims": "ws.py:1"}, "claims"),
        ({"claim": []}, "claim"),
    ],
)
async def test_bad_input_is_a_clear_tool_error_and_counts_nothing(connect, project, arguments, message):
    async with connect() as client:
        text = error_text(await client.call_tool("autology_check_claims", arguments))
        status = ok(await client.call_tool("autology_status", {})).structured_content
    assert message in text
    assert status["retrieval"]["claims"] == 0


@pytest.fixture
def cli(project: Path, capsys):
    def run(*args: str):
        code = main(["--root", str(project), *args])
        out, err = capsys.readouterr()
        return code, out, err

    return run


def test_cli_check_claims_from_a_file_and_stdin(cli, project: Path, monkeypatch):
    assert cli("init")[0] == 0  # counts are kept in a project with a store
    claims = [{"text": "reconnect backs off after a timeout", "refs": ["ws.py:1-3"]}]
    (project / "claims.json").write_text(json.dumps(claims))
    code, out, _ = cli("check-claims", str(project / "claims.json"))
    assert code == 0
    assert out.splitlines()[0] == "✓ supported   reconnect backs off after a timeout"
    assert "1 claim: 1 supported, 0 unsupported, 0 unresolved" in out

    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps({"claims": claims + [{"text": "x y", "refs": []}]})))
    code, out, _ = cli("check-claims", "--json")
    assert code == 1  # not every claim is supported
    data = json.loads(out)
    assert [c["outcome"] for c in data["claims"]] == ["supported", "unresolved"]

    code, out, _ = cli("status")
    assert "3 claims checked: supported 2 (67%), unsupported 0 (0%), unresolved 1 (33%)" in out
    status = json.loads(cli("status", "--json")[1])
    assert status["retrieval"]["claims"] == 3 and status["totalNodes"] == 0


def test_cli_one_claim_inline(cli):
    code, out, _ = cli("check-claims", "--claim", "reconnect backs off after a timeout", "-r", "ws.py:1-3", "-r", "ws.py:9")
    assert code == 0
    assert "✓ ws.py:1-3: the span has" in out and "✗ ws.py:9: lines 9-9 go past the end of the file (3 lines)" in out
    code, _, err = cli("check-claims", "--ref", "ws.py:1")
    assert code == 1 and "--ref needs --claim" in err


def test_cli_check_claims_bad_input(cli, project: Path):
    (project / "bad.json").write_text("[{]")
    code, _, err = cli("check-claims", str(project / "bad.json"))
    assert code == 1 and "is not JSON" in err
    code, _, err = cli("check-claims", str(project / "missing.json"))
    assert code == 1 and "cannot read" in err
    (project / "empty.json").write_text("[]")
    code, _, err = cli("check-claims", str(project / "empty.json"))
    assert code == 1 and "Invalid claims: is empty" in err


async def test_searches_count_their_verdicts_in_the_status(connect, autology):
    autology.capture("Websocket reconnect policy", "Reconnect the websocket with exponential backoff.", type="convention")
    async with connect() as client:
        found = ok(await client.call_tool("autology_search", {"query": "websocket reconnect backoff", "scope": ["nodes"]}))
        missing = ok(await client.call_tool("autology_search", {"query": "kubernetes helm chart", "scope": ["nodes"]}))
        bad = await client.call_tool("autology_search", {"query": "x", "scope": ["nowhere"]})
        status = ok(await client.call_tool("autology_status", {})).structured_content["retrieval"]
    assert bad.is_error  # a refused search counts nothing
    verdicts = [found.structured_content["verdict"], missing.structured_content["verdict"]]
    assert verdicts[1] == "no_evidence"
    assert status["searches"] == 2
    assert sum(status["verdicts"].values()) == 2
    for verdict in set(verdicts):
        assert status["verdicts"][verdict] == verdicts.count(verdict)
    assert status["verdict_rates"]["no_evidence_rate"] == pytest.approx(verdicts.count("no_evidence") / 2)


def test_refs_from_unified_search_resolve_in_the_claim_check(project: Path):
    from autology_mcp.code import service
    from autology_mcp.retrieval.engine import search
    from autology_mcp.retrieval.claims import check_claims

    service.build_index(project)
    answer = search(project, "reconnect the websocket with a backoff", scope=["code"], limit=3)
    refs = [hit["ref"] for hit in answer["hits"] if hit["kind"] == "code"]
    assert refs and all(ref.startswith("ws.py:") for ref in refs)
    result = check_claims(project, [{"text": "reconnect backs off after a timeout", "refs": refs}], record=False)
    claim = result["claims"][0]
    assert all(ref["resolved"] for ref in claim["refs"])
    assert claim["outcome"] == "supported"
