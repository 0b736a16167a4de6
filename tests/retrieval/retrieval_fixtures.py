"""A small real project for the unified-retrieval tests: a git repository with code and docs, its
repository index built, and knowledge nodes captured through the service (decisions with
references, a supersession chain, two same-named concepts in different areas).

(A uniquely named module, not conftest.py: import the fixture with
``from retrieval_fixtures import project  # noqa: F401``.)"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from autology_mcp.knowledge.service import Autology

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent-home-for-tests",
}

WEBSOCKET = '''"""WebSocket client with automatic reconnection."""

import time

MAX_RETRIES = 5


class WebSocketClient:
    """Keeps a websocket open."""

    def __init__(self, url):
        self.url = url
        self.attempts = 0

    def reconnect_after_timeout(self):
        """Reconnect the websocket after a timeout, with exponential backoff."""
        while self.attempts < MAX_RETRIES:
            time.sleep(min(2 ** self.attempts, 60))
            self.attempts += 1
'''

INVOICE = '''"""Invoices and payments."""


def compute_invoice_total(lines, tax_rate):
    """Total of an invoice in integer cents, tax included."""
    subtotal = sum(line.amount_cents for line in lines)
    return round(subtotal * (1 + tax_rate))


def refund_payment(payment):
    payment.refunded = True
    return payment
'''

GUIDE = '''# Operations guide

Intro text.

## Reconnection policy

The client retries five times with exponential backoff, then gives up and reports the outage.

## Deployments

Deploy with the blue-green script.
'''


def ADR(context: str, decision: str) -> str:  # noqa: N802 (reads like the template it fills)
    return (f"## Context\n{context}\n\n## Decision\n{decision}\n\n## Alternatives\nOthers were considered.\n\n"
            "## Consequences\nWe live with it.")


@dataclass
class Project:
    root: Path
    autology: Autology
    ids: dict[str, str]


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, env={**os.environ, **GIT_ENV}, capture_output=True, check=True)


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def make_project(root: Path, with_index: bool = True) -> Project:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    write(root, "src/net/websocket.py", WEBSOCKET)
    write(root, "src/billing/invoice.py", INVOICE)
    write(root, "docs/operations.md", GUIDE)
    write(root, ".gitignore", ".autology/cache/\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    service = Autology.open(root)
    ids: dict[str, str] = {}
    ids["reconnect"] = service.capture(
        "Reconnect websockets with exponential backoff",
        ADR("Connections drop during deploys.", "The websocket client reconnects with exponential backoff, "
            "five attempts at most."),
        type="decision", tags=["networking"], references=["src/net/websocket.py#reconnect_after_timeout"],
    ).id
    ids["cents"] = service.capture(
        "Money amounts are integer cents",
        "Every money amount is stored and computed as integer cents, never floats.",
        type="convention", tags=["billing"], references=["src/billing"],
    ).id
    ids["billing_service"] = service.capture(
        "Billing service", "Computes invoice totals and refunds payments.", type="component", tags=["billing"],
    ).id
    service.relate(ids["billing_service"], ids["cents"], "implements", confidence=0.9)
    ids["redis"] = service.capture(
        "Store user sessions in Redis",
        ADR("User sessions need a shared store.", "Keep user sessions in Redis."),
        type="decision", tags=["sessions-store"],
    ).id
    ids["postgres"] = service.capture(
        "Keep login state in PostgreSQL",
        ADR("Redis was one more system to run.", "Keep login state in the PostgreSQL database we already run."),
        type="decision", tags=["sessions-store"],
    ).id
    service.relate(ids["postgres"], ids["redis"], "supersedes")
    service.update(ids["redis"], status="superseded")
    ids["browser_cache"] = service.capture(
        "Cache eviction in the browser",
        "The browser cache evicts the least recently used entries when the quota is reached.",
        type="concept", tags=["frontend"],
    ).id
    ids["database_cache"] = service.capture(
        "Cache eviction in the database",
        "The database cache evicts the least recently used entries when the memory limit is reached.",
        type="concept", tags=["database"],
    ).id
    if with_index:
        from autology_mcp.code.service import build_index

        build_index(root)
    return Project(root, service, ids)


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Project:
    proj = make_project(tmp_path_factory.mktemp("retrieval") / "proj")
    yield proj
    proj.autology.close()
