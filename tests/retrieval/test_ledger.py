"""The verdict/claim ledger: counts, rates, validation, concurrency across processes, a deleted cache."""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from autology_mcp.common.errors import ValidationError
from autology_mcp.retrieval import ledger


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with an autology store (the ledger counts only there)."""
    (tmp_path / ".autology").mkdir()
    return tmp_path


def test_a_folder_without_a_store_is_left_alone(project: Path):
    plain = project / "plain"
    plain.mkdir()
    ledger.record_verdict(plain, "grounded")
    ledger.record_claims(plain, ["supported"])
    assert list(plain.iterdir()) == []
    assert ledger.counters(plain)["searches"] == 0


def test_empty_project_reads_zeros_without_creating_anything(project: Path):
    data = ledger.counters(project)
    assert data["searches"] == 0 and data["claims"] == 0
    assert data["verdicts"] == {"grounded": 0, "weak": 0, "ambiguous": 0, "no_evidence": 0}
    assert data["claim_outcomes"] == {"supported": 0, "unsupported": 0, "unresolved": 0}
    assert all(rate is None for rate in data["verdict_rates"].values())
    assert data["since"] is None and data["last"] is None
    assert list((project / ".autology").iterdir()) == []


def test_counts_and_rates(project: Path):
    for verdict in ["grounded", "grounded", "grounded", "weak", "ambiguous", "no_evidence", "no_evidence", "grounded"]:
        ledger.record_verdict(project, verdict)
    ledger.record_claims(project, ["supported", "unresolved", "supported"])
    ledger.record_claims(project, {"unsupported": 2, "supported": 0})
    data = ledger.counters(project)
    assert data["searches"] == 8
    assert data["verdicts"] == {"grounded": 4, "weak": 1, "ambiguous": 1, "no_evidence": 2}
    assert data["verdict_rates"] == {
        "grounded_rate": 0.5, "weak_rate": 0.125, "ambiguous_rate": 0.125, "no_evidence_rate": 0.25,
    }  # fmt: skip
    assert data["claims"] == 5
    assert data["claim_outcomes"] == {"supported": 2, "unsupported": 2, "unresolved": 1}
    assert data["claim_rates"]["supported_rate"] == 0.4
    assert data["since"] <= data["last"]
    assert ledger.ledger_path(project).is_file()


def test_unknown_names_are_refused_and_nothing_is_recorded(project: Path):
    with pytest.raises(ValidationError, match="allowed: grounded, weak, ambiguous, no_evidence"):
        ledger.record_verdict(project, "clarify")
    with pytest.raises(ValidationError, match="unknown claim outcome"):
        ledger.record_claims(project, ["supported", "maybe"])
    with pytest.raises(ValidationError, match="whole number"):
        ledger.record_claims(project, {"supported": -1})
    data = ledger.counters(project)
    assert data["searches"] == 0 and data["claims"] == 0


def test_deleting_the_cache_restarts_the_counters(project: Path):
    ledger.record_verdict(project, "weak")
    shutil.rmtree(project / ".autology" / "cache")
    assert ledger.counters(project)["searches"] == 0
    ledger.record_verdict(project, "grounded")
    assert ledger.counters(project)["verdicts"] == {"grounded": 1, "weak": 0, "ambiguous": 0, "no_evidence": 0}


def test_an_unwritable_ledger_never_fails_the_caller(project: Path, caplog):
    # A file where the cache directory should be: the ledger cannot be created (root ignores chmod).
    (project / ".autology" / "cache").write_text("not a directory")
    ledger.record_verdict(project, "grounded")
    ledger.record_claims(project, ["supported"])
    assert "could not record" in caplog.text
    assert ledger.counters(project)["searches"] == 0


def test_threads_of_one_process_lose_nothing(project: Path):
    def work():
        for _ in range(200):
            ledger.record_verdict(project, "grounded")

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert ledger.counters(project)["verdicts"]["grounded"] == 800


_WORKER = """
import sys
from pathlib import Path
from autology_mcp.retrieval import ledger
root, n = Path(sys.argv[1]), int(sys.argv[2])
print("ready", flush=True)
sys.stdin.readline()  # start together
for i in range(n):
    ledger.record_verdict(root, "grounded" if i % 2 else "no_evidence")
    ledger.record_claims(root, ["supported", "unresolved"])
"""


def test_two_processes_recording_concurrently_lose_nothing(project: Path):
    n = 400
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(project), str(n)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        for _ in range(2)
    ]
    for p in procs:
        assert p.stdout.readline().strip() == "ready"
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert "could not record" not in err
    data = ledger.counters(project)
    assert data["verdicts"] == {"grounded": n, "weak": 0, "ambiguous": 0, "no_evidence": n}
    assert data["claim_outcomes"] == {"supported": 2 * n, "unsupported": 0, "unresolved": 2 * n}
