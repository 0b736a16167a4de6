"""The unified search on a real fixture project (git repository + its index + captured nodes)."""

from __future__ import annotations

import json
import subprocess

import pytest
from retrieval_fixtures import make_project, project  # noqa: F401

from autology_mcp.common.errors import ValidationError
from autology_mcp.retrieval.engine import search

HIT_KEYS = {"kind", "ref", "node_id", "node_type", "title", "path", "start_line", "end_line", "snippet", "score",
            "components", "channels", "via"}


def run(project, query, **kw):
    return search(project.root, query, store=project.autology.store, **kw)


def test_answer_contract(project):
    answer = run(project, "websocket reconnect backoff")
    assert set(answer) >= {"query", "intent", "verdict", "clarifying_question", "guidance", "hits", "cut", "trace"}
    assert answer["hits"]
    for hit in answer["hits"]:
        assert set(hit) >= HIT_KEYS
        assert hit["kind"] in ("node", "code", "doc", "session_chunk", "handoff", "commit")
        assert 0 <= hit["score"] <= 1
        assert {"priority", "similarity", "keyword", "rrf", "coverage", "title_coverage", "support"} <= set(hit["components"])
        assert set(hit["components"]) <= {"priority", "similarity", "keyword", "rrf", "coverage", "title_coverage", "history_prior",
                                          "support", "via_support", "node_score"}
        assert 0 <= hit["components"]["support"] <= 1
        assert hit["channels"]
        if hit["kind"] == "node":
            assert hit["node_id"] == hit["ref"] and hit["node_type"]
        else:
            assert hit["node_id"] is None and hit["node_type"] is None
    json.dumps(answer)  # JSON-ready


def test_grounded_with_proof_lines_from_every_source(project):
    answer = run(project, "websocket reconnect backoff")
    assert answer["verdict"] == "grounded"
    assert answer["clarifying_question"] is None and answer["guidance"] is None
    kinds = {h["kind"] for h in answer["hits"]}
    assert {"node", "code", "doc"} <= kinds
    code = next(h for h in answer["hits"] if h["kind"] == "code")
    assert code["path"] == "src/net/websocket.py"
    assert code["ref"] == f"src/net/websocket.py:{code['start_line']}-{code['end_line']}"
    # the proof span is the file's real lines and holds the query's words
    lines = (project.root / code["path"]).read_text().split("\n")[code["start_line"] - 1 : code["end_line"]]
    assert "\n".join(lines) == code["snippet"]
    assert "reconnect" in code["snippet"].lower()
    node = next(h for h in answer["hits"] if h["kind"] == "node")
    assert node["node_id"] == project.ids["reconnect"]
    file_lines = (project.root / node["path"]).read_text().split("\n")
    assert file_lines[node["start_line"] - 1 : node["end_line"]] == node["snippet"].split("\n")


def test_no_evidence_says_so_and_how_to_record_it(project):
    answer = run(project, "our quantum teleportation")
    assert answer["verdict"] == "no_evidence"
    assert answer["hits"] == []
    assert 'is recorded about "our quantum teleportation"' in answer["guidance"]
    assert "autology capture" in answer["guidance"] and "--type decision" in answer["guidance"]


def test_no_evidence_for_a_question_about_nothing_here_pushes_no_capture(project):
    """A question that is not about the project (no "we" or "our", no identifier or file, nothing in the
    code) is told the memory does not know it, not asked to become a decision."""
    answer = run(project, "quantum teleportation protocol")
    assert answer["verdict"] == "no_evidence"
    assert 'The project memory does not know about "quantum teleportation protocol"' in answer["guidance"]
    assert "capture" not in answer["guidance"]


def test_weak_when_only_part_of_the_query_is_found(project):
    answer = run(project, "quantum websocket")
    assert answer["verdict"] == "weak"
    assert answer["hits"]
    assert 'The project memory does not know about "quantum websocket"' in answer["guidance"]
    assert "it never mentions 'quantum'" in answer["guidance"]
    assert answer["trace"]["gate"]["unknown"] == ["quantum"]
    assert answer["trace"]["gate"]["confidence"] < answer["trace"]["gate"]["threshold"]


def test_only_common_words_is_weak_with_a_hint(project):
    answer = run(project, "the of and")
    assert answer["verdict"] in ("weak", "no_evidence")
    if answer["hits"]:
        assert "only very common words" in answer["guidance"]


def test_ambiguous_names_both_areas(project):
    answer = run(project, "cache eviction", scope=["nodes"])
    assert answer["verdict"] == "ambiguous"
    question = answer["clarifying_question"]
    assert "tag frontend" in question and "tag database" in question
    assert "Cache eviction in the browser" in question and "Cache eviction in the database" in question


def test_a_tagged_and_an_untagged_node_of_one_type_are_not_two_areas(tmp_path):
    """Decisions imported with and without tags: no tag tells them apart, so their type is their area
    (the question "tag archive or decisions?" would ask nothing the user can answer)."""
    from retrieval_fixtures import ADR

    from autology_mcp.knowledge.service import Autology

    service = Autology.open(tmp_path)
    try:
        service.capture("Replay outbox messages on duplicates", ADR("Outbox messages are lost.", "Replay outbox messages."),
                        type="decision")
        service.capture("Archive outbox messages in the sweeper", ADR("Outbox messages pile up.", "Archive outbox messages."),
                        type="decision", tags=["archive"])
        both = search(tmp_path, "outbox messages", scope=["nodes"], store=service.store)
        assert len(both["hits"]) == 2 and both["verdict"] == "grounded" and both["clarifying_question"] is None
        service.capture("Outbox messages", "The outbox stores messages until they are sent.", type="concept")
        answer = search(tmp_path, "outbox messages", scope=["nodes"], store=service.store)
        assert answer["verdict"] == "ambiguous" and "concepts" in answer["clarifying_question"]  # another type is
    finally:
        service.close()
    other = Autology.open(tmp_path / "other")  # a tagged decision against an untagged concept
    try:
        other.capture("Archive outbox messages in the sweeper", ADR("Outbox messages pile up.", "Archive outbox messages."),
                      type="decision", tags=["archive"])
        other.capture("Outbox messages", "The outbox stores messages until they are sent.", type="concept")
        answer = search(tmp_path / "other", "outbox messages", scope=["nodes"], store=other.store)
        question = answer["clarifying_question"]
        assert answer["verdict"] == "ambiguous" and "concepts" in question and "decisions" in question
        assert "tag archive" not in question  # they differ by type: named by it
    finally:
        other.close()


def test_a_clear_winner_is_not_ambiguous(project):
    answer = run(project, "browser cache eviction quota", scope=["nodes"])
    assert answer["verdict"] == "grounded"
    assert answer["hits"][0]["node_id"] == project.ids["browser_cache"]


def test_superseded_node_is_replaced_by_its_successor_with_the_chain(project):
    answer = run(project, "store user sessions redis", scope=["nodes"])
    ids = [h["node_id"] for h in answer["hits"]]
    assert project.ids["redis"] not in ids
    successor = next(h for h in answer["hits"] if h["node_id"] == project.ids["postgres"])
    assert successor["via"].startswith("supersedes chain: 'Store user sessions in Redis'")
    assert "Keep login state in PostgreSQL" in successor["via"]
    assert answer["trace"]["fusion"]["superseded_replaced"] == [
        {"superseded": project.ids["redis"], "replaced_by": project.ids["postgres"],
         "chain": [project.ids["redis"], project.ids["postgres"]]}
    ]


def test_neighbours_come_in_through_typed_relations(project):
    # "invoice totals refunds" is in the billing component only; the convention it implements is not
    answer = run(project, "invoice totals refunds", scope=["nodes"])
    assert answer["hits"][0]["node_id"] == project.ids["billing_service"]
    hit = next(h for h in answer["hits"] if h["node_id"] == project.ids["cents"])
    assert hit["channels"] == ["graph"]
    assert hit["via"].startswith("neighbour of 'Billing service'") and "—[implements]→" in hit["via"]


def test_a_node_found_by_a_channel_is_not_re_ranked_by_the_graph(project):
    answer = run(project, "billing", scope=["nodes"], max_tokens=20000)
    for hit in answer["hits"]:
        assert hit["via"] is None  # both billing nodes are found directly: no graph credit
    assert answer["trace"]["fusion"]["inputs"].get("graph", []) == []


def test_code_hit_brings_the_nodes_referencing_it(project):
    answer = run(project, "tax_rate subtotal", scope=["nodes", "code"])  # words of the code only
    cents = next(h for h in answer["hits"] if h["node_id"] == project.ids["cents"])
    assert cents["via"] == "references src/billing/invoice.py"
    assert cents["channels"] == ["graph"]


def test_scope_limits_the_sources_and_the_trace_says_so(project):
    answer = run(project, "websocket reconnect backoff", scope=["code"])
    assert {h["kind"] for h in answer["hits"]} == {"code"}
    status = {c["name"]: c["status"] for c in answer["trace"]["channels"]}
    assert status["node_bm25"] == "out_of_scope" and status["sessions"] == "out_of_scope"
    docs = run(project, "reconnection policy retries", scope=["docs"])
    assert docs["hits"] and {h["kind"] for h in docs["hits"]} == {"doc"}


def test_trace_has_channels_fusion_timings_and_freshness(project):
    trace = run(project, "websocket reconnect backoff", max_tokens=20000)["trace"]
    names = [c["name"] for c in trace["channels"]]
    assert names == ["node_bm25", "node_title_tags", "code_bm25", "symbols", "paths", "vectors", "sessions", "history",
                     "graph"]
    assert all("candidates" in c and "status" in c for c in trace["channels"])
    assert trace["fusion"]["k"] == 60 and trace["fusion"]["inputs"]["code_bm25"]
    assert set(trace["timings_ms"]) >= {"channels", "fusion", "expand", "score", "mmr", "spans", "total"}
    fresh = trace["freshness"]
    assert fresh["code_index"]["exists"] is True and fresh["code_index"]["checked"] in ("refreshed", "recent")
    assert fresh["nodes"]["nodes"] == 7


def test_deterministic(project):
    a = run(project, "websocket reconnect backoff invoice cents", max_tokens=600)
    b = run(project, "websocket reconnect backoff invoice cents", max_tokens=600)
    for x in (a, b):
        x.pop("trace")
        x["cut"].pop("used_tokens")
    assert a == b


def test_without_an_index_the_other_channels_still_answer(tmp_path):
    proj = make_project(tmp_path / "noindex", with_index=False)
    try:
        answer = search(proj.root, "websocket reconnect backoff", store=proj.autology.store)
    finally:
        proj.autology.close()
    assert answer["verdict"] == "grounded"
    assert "node" in {h["kind"] for h in answer["hits"]} <= {"node", "commit"}
    assert answer["trace"]["freshness"]["code_index"]["exists"] is False
    assert {c["status"] for c in answer["trace"]["channels"] if c["name"] in ("code_bm25", "paths")} == {"no_index"}
    assert "autology index build" in answer["guidance"]


def test_a_file_changed_after_the_build_is_found_after_the_refresh(project, monkeypatch):
    from autology_mcp.retrieval import channels

    path = project.root / "src/net/heartbeat.py"
    path.write_text('def send_heartbeat_ping():\n    """Keep the zeppelin link alive."""\n')
    subprocess.run(["git", "add", "-N", "src/net/heartbeat.py"], cwd=project.root, check=True)  # the index covers tracked files
    try:
        channels._refreshed.clear()  # the refresh interval starts again
        answer = run(project, "zeppelin heartbeat", scope=["code"])
        assert answer["hits"][0]["path"] == "src/net/heartbeat.py"
        assert answer["trace"]["freshness"]["code_index"]["checked"] == "refreshed"
    finally:
        subprocess.run(["git", "rm", "-q", "--cached", "--ignore-unmatch", "src/net/heartbeat.py"], cwd=project.root, check=True)
        path.unlink()
        channels._refreshed.clear()


def test_later_refreshes_run_in_the_background(project):
    import time

    from autology_mcp.retrieval import channels

    cfg_file = project.root / ".autology" / "config.toml"
    cfg_file.write_text("[retrieval]\nrefresh_interval_s = 0\n")
    path = project.root / "src/net/keepalive.py"
    try:
        channels._refreshed.clear()
        first = run(project, "websocket", scope=["code"])
        assert first["trace"]["freshness"]["code_index"]["checked"] == "refreshed"  # inline, first of the process
        path.write_text('def blimp_keepalive():\n    """Keep the blimp link alive."""\n')
        subprocess.run(["git", "add", "-N", "src/net/keepalive.py"], cwd=project.root, check=True)
        second = run(project, "blimp keepalive", scope=["code"])
        assert second["trace"]["freshness"]["code_index"]["checked"] in ("background", "in_progress")
        deadline = time.monotonic() + 30
        while channels._refreshing and time.monotonic() < deadline:
            time.sleep(0.02)
        third = run(project, "blimp keepalive", scope=["code"])
        assert third["hits"] and third["hits"][0]["path"] == "src/net/keepalive.py"
    finally:
        cfg_file.unlink()
        subprocess.run(["git", "rm", "-q", "--cached", "--ignore-unmatch", "src/net/keepalive.py"], cwd=project.root,
                       check=True)
        path.unlink()
        channels._refreshed.clear()
        run(project, "websocket", scope=["code"])  # the index forgets the file again (inline refresh)


@pytest.mark.parametrize(
    "kw, field",
    [
        ({"query": ""}, "query"),
        ({"query": "x" * 3000}, "query"),
        ({"scope": ["code", "wiki"]}, "scope"),
        ({"scope": "code"}, "scope"),
        ({"scope": []}, "scope"),
        ({"limit": 0}, "limit"),
        ({"limit": 51}, "limit"),
        ({"max_tokens": 100}, "max_tokens"),
        ({"detail": "verbose"}, "detail"),
    ],
)
def test_bad_input_is_a_validation_error(project, kw, field):
    args = {"query": "websocket", **kw}
    with pytest.raises(ValidationError) as err:
        search(project.root, args.pop("query"), store=project.autology.store, **args)
    assert err.value.field == field


def test_opens_the_store_itself_without_one(project):
    answer = search(project.root, "integer cents")
    assert answer["hits"][0]["node_id"] == project.ids["cents"]


def test_config_weights_and_floor(project):
    assert run(project, "websocket reconnect backoff")["verdict"] == "grounded"
    cfg_file = project.root / ".autology" / "config.toml"
    cfg_file.write_text("[retrieval]\nsimilarity_floor = 0.99\ngate_threshold = 1.0\n"
                        "channel_weights = { code_bm25 = 0.0, vectors = 0.0 }\n")
    try:
        answer = run(project, "websocket reconnect backoff", max_tokens=20000)
        assert answer["trace"]["floor"] == 0.99
        assert answer["trace"]["gate"]["threshold"] == 1.0
        assert answer["trace"]["fusion"]["weights"]["code_bm25"] == 0.0
        assert answer["verdict"] == "weak"  # the operating point moved: the same hits no longer ground it
    finally:
        cfg_file.unlink()
    cfg_file.write_text("[retrieval]\nblend_priority = 0.9\n")
    try:
        with pytest.raises(ValidationError):
            run(project, "websocket")
    finally:
        cfg_file.unlink()
