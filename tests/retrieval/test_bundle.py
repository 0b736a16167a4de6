"""The autology_bundle_v1 context bundle: real bundles validate against the schema published in docs/."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from retrieval_fixtures import project  # noqa: F401

from autology_mcp.common.errors import ValidationError
from autology_mcp.retrieval.budget import compact_json
from autology_mcp.retrieval.bundle import context

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "autology_bundle_v1.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def test_the_schema_is_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize(
    "task, hint",
    [
        ("change the websocket reconnect backoff", "src/net"),
        ("round invoice totals to integer cents", "billing"),
        ("cache eviction", None),
        ("quantum teleportation protocol", None),
        ("store user sessions redis", None),
    ],
)
def test_real_bundles_validate(project, task, hint):
    bundle = context(project.root, task, module_hint=hint, store=project.autology.store)
    VALIDATOR.validate(bundle)
    assert bundle["task"] == task and bundle["module_hint"] == hint and bundle["ok"] is True


def test_bundle_groups_memory_and_spans(project):
    bundle = context(project.root, "invoice totals integer cents billing", store=project.autology.store)
    assert [m["id"] for m in bundle["structured_memory"]["conventions"]] == [project.ids["cents"]]
    assert project.ids["billing_service"] in [m["id"] for m in bundle["structured_memory"]["components"]]
    assert any(s["path"] == "src/billing/invoice.py" for s in bundle["task_retrieval"])


def test_module_hint_favours_its_module(project):
    with_hint = context(project.root, "retries and totals", module_hint="src/billing", store=project.autology.store)
    assert with_hint["task_retrieval"][0]["path"].startswith("src/billing/")


def test_minimal_trace_bundles_validate_too(project):
    bundle = context(project.root, "websocket invoice cache sessions redis cents", max_tokens=256, store=project.autology.store)
    VALIDATOR.validate(bundle)
    assert len(compact_json(bundle)) <= 256 * 4


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(budget=st.integers(min_value=256, max_value=3000))
def test_bundle_never_exceeds_its_budget(project, budget):
    bundle = context(project.root, "websocket reconnect invoice cents cache eviction sessions", max_tokens=budget,
                     store=project.autology.store)
    assert len(compact_json(bundle)) <= budget * 4
    assert bundle["cut"]["used_tokens"] <= budget
    VALIDATOR.validate(bundle)


def test_bad_task(project):
    with pytest.raises(ValidationError):
        context(project.root, "   ", store=project.autology.store)
    with pytest.raises(ValidationError):
        context(project.root, "x", module_hint=3, store=project.autology.store)


def test_structured_memory_is_graph_expanded(project):
    bundle = context(project.root, "invoice totals refunds", store=project.autology.store)
    components = [m["id"] for m in bundle["structured_memory"]["components"]]
    assert components[0] == project.ids["billing_service"]
    cents = next(m for m in bundle["structured_memory"]["conventions"] if m["id"] == project.ids["cents"])
    # no channel finds it; it comes in through the component's relation and the code it references
    assert cents["via"] in ("references src/billing/invoice.py",) or cents["via"].startswith("neighbour of 'Billing service'")
    VALIDATOR.validate(bundle)
