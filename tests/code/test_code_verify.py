import json
from pathlib import Path

import pytest
from code_fixtures import git, write

from autology_mcp.code import service
from autology_mcp.code.build import build
from autology_mcp.code.config import IndexConfig
from autology_mcp.code.layout import IndexLocation


def loc(root: Path) -> IndexLocation:
    return IndexLocation.of(root, IndexConfig())


def test_fresh_index_verifies_clean(repo: Path):
    build(repo)
    r = service.verify_index(repo, strict=True)
    assert r["ok"] and r["status"] == "ok" and r["integrity"]["errors"] == []
    assert not r["drift"]


def test_missing_index(repo: Path):
    r = service.verify_index(repo)
    assert not r["ok"] and r["status"] == "missing"


def test_source_drift_changed_missing_added(repo: Path):
    build(repo)
    write(repo, "src/app/billing.py", "def other():\n    pass\n")
    (repo / "docs/api.rst").unlink()
    write(repo, "src/app/brand_new.py", "X = 1\n")
    git(repo, "add", "-N", "src/app/brand_new.py")  # tracked: the index covers tracked files
    r = service.verify_index(repo)
    sd = r["source_drift"]
    assert sd["changed"] == ["src/app/billing.py"]
    assert sd["missing"] == ["docs/api.rst"]
    assert sd["added"] == ["src/app/brand_new.py"]
    assert r["ok"] and r["status"] == "drift"  # drift is a warning...
    assert not service.verify_index(repo, strict=True)["ok"]  # ...and a failure with --strict
    build(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "change")
    r = service.verify_index(repo, strict=True)
    assert r["git_drift"]["drifted"] and not r["source_drift"]["drifted"] and not r["ok"]
    build(repo)
    assert service.verify_index(repo, strict=True)["ok"]


def test_git_drift_from_a_dirty_tree(repo: Path):
    build(repo)
    write(repo, "README.md", "# new\n")
    r = service.verify_index(repo)
    assert r["git_drift"]["drifted"] and r["git_drift"]["current"]["dirty"] is True


def test_config_drift(repo: Path):
    build(repo)
    (repo / ".autology" / "config.toml").write_text("[index]\ndimension = 256\n")
    r = service.verify_index(repo, strict=True)
    assert r["config_drift"] == {"drifted": True, "reason": "engine changed"} and not r["ok"]


def _flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


def test_flipping_a_byte_of_chunk_text_fails_verify(repo: Path):
    build(repo)
    db = loc(repo).db
    offset = db.read_bytes().index(b"exponential backoff")
    _flip(db, offset)
    r = service.verify_index(repo)
    assert not r["ok"] and r["status"] == "corrupt"
    errors = "\n".join(r["integrity"]["errors"])
    assert "database changed since the last build" in errors
    assert "chunk text hash mismatch: src/app/websocket.py" in errors


@pytest.mark.parametrize("where", [0.25, 0.5, 0.9])
def test_flipping_any_byte_of_the_database_fails_verify(repo: Path, where: float):
    build(repo)
    db = loc(repo).db
    _flip(db, int(db.stat().st_size * where))
    r = service.verify_index(repo)
    assert not r["ok"] and r["status"] == "corrupt"


def test_tampered_manifest_and_missing_artifacts_fail_verify(repo: Path):
    build(repo)
    m = loc(repo).manifest
    data = json.loads(m.read_text())
    data["stats"]["chunks"] += 1
    m.write_text(json.dumps(data))
    r = service.verify_index(repo)
    assert not r["ok"] and any("manifest stats" in e for e in r["integrity"]["errors"])
    build(repo, rebuild=True)
    assert service.verify_index(repo)["ok"]
    loc(repo).build_record.unlink()
    assert not service.verify_index(repo)["ok"]


def test_query_strict_fresh_refuses_a_stale_index(repo: Path):
    build(repo)
    assert service.code_search(repo, "invoice total", refresh=False, strict_fresh=True)["hits"]
    write(repo, "src/app/billing.py", "def changed():\n    pass\n")
    with pytest.raises(service.StaleIndexError, match="1 changed"):
        service.code_search(repo, "invoice total", refresh=False, strict_fresh=True)
    # the refreshing search (the MCP tool's default) re-indexes first, so it is never stale
    r = service.code_search(repo, "changed", refresh=True, strict_fresh=True)
    assert r["trace"]["refresh"]["rebuilt"] == 1
    assert r["hits"][0]["path"] == "src/app/billing.py"


def test_a_quick_refresh_leaves_the_database_digest_for_the_next_build(repo: Path):
    """A search's refresh after an edit must not read the whole database file to digest it (~1 s a
    GB); verify says so, and the next build records the digest again."""
    service.build_index(repo)
    record = IndexLocation.of(repo, IndexConfig()).build_record
    assert json.loads(record.read_text())["db_sha256"]
    write(repo, "src/app/billing.py", "def issue_credit_note(invoice):\n    return invoice\n")
    assert service.code_search(repo, "credit note")["trace"]["refresh"]["rebuilt"] == 1
    assert json.loads(record.read_text())["db_sha256"] is None
    report = service.verify_index(repo)
    assert report["integrity"]["ok"] and "not recorded" in report["integrity"]["notes"][0]
    assert service.build_index(repo)["rebuilt"] == 0
    assert json.loads(record.read_text())["db_sha256"]
    report = service.verify_index(repo)
    assert report["integrity"]["ok"] and report["integrity"]["notes"] == []
