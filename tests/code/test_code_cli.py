import json
from pathlib import Path

from code_fixtures import write

from autology_mcp.cli.main import main


def run(capsys, root: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--root", str(root), "index", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_build_query_verify_status_export(repo: Path, capsys, tmp_path: Path):
    code, out, err = run(capsys, repo, "build")
    assert code == 0 and "full build" in out and "7 rebuilt" not in out and "9 rebuilt" in out
    assert err == ""  # no progress bar when stderr is not a terminal
    code, out, _ = run(capsys, repo, "build", "--json")
    summary = json.loads(out)
    assert code == 0 and summary["reused"] == 9 and summary["rebuilt"] == 0

    code, out, _ = run(capsys, repo, "query", "reconnect", "websocket", "--top", "2", "--json")
    hits = json.loads(out)["hits"]
    assert code == 0 and len(hits) == 2 and hits[0]["path"] == "src/app/websocket.py"
    code, out, _ = run(capsys, repo, "query", "invoice", "total")
    assert code == 0 and "src/app/billing.py:" in out and "compute_invoice_total (function)" in out

    code, out, _ = run(capsys, repo, "verify")
    assert code == 0 and ": ok" in out
    code, out, _ = run(capsys, repo, "status", "--json")
    st = json.loads(out)
    assert st["exists"] and st["stats"]["files"] == 7 and st["freshness"]["stale"] is False

    code, out, _ = run(capsys, repo, "export", "--out", str(tmp_path / "exp"), "--json")
    assert code == 0
    exp = tmp_path / "exp"
    chunks = [json.loads(line) for line in (exp / "chunks.jsonl").read_text().splitlines()]
    assert [c["vector_row"] for c in chunks] == list(range(len(chunks)))
    assert (exp / "vectors.f32").stat().st_size == len(chunks) * 384 * 4
    assert len((exp / "files.jsonl").read_text().splitlines()) == 9
    assert any(json.loads(s)["name"] == "WebSocketClient" for s in (exp / "symbols.jsonl").read_text().splitlines())
    manifest = json.loads((exp / "manifest.json").read_text())
    assert set(manifest["export_checksums"]) == {"files.jsonl", "chunks.jsonl", "symbols.jsonl", "vectors.f32"}


def test_drift_strict_and_strict_fresh(repo: Path, capsys):
    run(capsys, repo, "build")
    write(repo, "src/app/billing.py", "def changed():\n    pass\n")
    code, out, _ = run(capsys, repo, "verify")
    assert code == 0 and "drift" in out and "1 changed: src/app/billing.py" in out
    code, out, _ = run(capsys, repo, "verify", "--strict", "--json")
    assert code == 1 and json.loads(out)["status"] == "drift"
    code, out, err = run(capsys, repo, "query", "socket", "--strict-fresh")
    assert code == 1 and "Index is stale" in err
    code, out, err = run(capsys, repo, "query", "socket")
    assert code == 0 and "warning: index is stale" in err
    code, out, err = run(capsys, repo, "rebuild", "--json")
    assert code == 0 and json.loads(out)["mode"] == "full"
    code, out, err = run(capsys, repo, "query", "socket", "--strict-fresh")
    assert code == 0


def test_errors_are_reported_not_raised(tmp_path: Path, capsys):
    code, out, err = run(capsys, tmp_path, "query", "anything")
    assert code == 1 and "error: Index not found" in err
    code, out, err = run(capsys, tmp_path, "status")
    assert code == 0 and "none" in out
    code, out, err = run(capsys, tmp_path, "export")
    assert code == 1 and "error:" in err


def test_status_says_what_the_namespace_is(repo: Path, capsys):
    assert run(capsys, repo, "build")[0] == 0
    code, out, _ = run(capsys, repo, "status")
    assert code == 0 and "index br-main--wt-" in out
    assert f"the index of branch main in the work tree {repo.resolve()}" in out
    assert "each branch and each git worktree gets its own" in out
