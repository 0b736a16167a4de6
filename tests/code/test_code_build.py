import json
import shutil
from pathlib import Path

from code_fixtures import git, write

from autology_mcp.code import service
from autology_mcp.code.build import build
from autology_mcp.code.config import IndexConfig, config_from_dict
from autology_mcp.code.layout import IndexLocation
from autology_mcp.code.store import IndexDB


def indexed_paths(root: Path, cfg: IndexConfig | None = None) -> dict:
    loc = IndexLocation.of(root, cfg or IndexConfig())
    with IndexDB(loc.db, create=False) as db:
        return {p: s for p, s in db.conn.execute("SELECT path, skipped FROM files")}


def manifest(root: Path, cfg: IndexConfig | None = None) -> dict:
    return json.loads(IndexLocation.of(root, cfg or IndexConfig()).manifest.read_text())


def test_full_build_scans_what_it_should(repo: Path):
    s = build(repo)
    assert s["mode"] == "full" and s["reason"] == "no previous index"
    files = indexed_paths(repo)
    assert set(files) == {"src/app/websocket.py", "src/app/billing.py", "web/client.ts", "server/main.go",
                          "docs/guide.md", "docs/api.rst", "notes.txt", "src/app/auto_gen.py", "data/blob.json"}
    assert files["src/app/auto_gen.py"] == "generated" and files["data/blob.json"] == "binary"
    # ignored by .gitignore, pruned (vendor/), excluded glob (*_pb2.py)
    assert "debug.log" not in files and "vendor/lib.js" not in files and "src/app/schema_pb2.py" not in files
    assert s["files"] == 7 and s["files_skipped"] == 2 and s["rebuilt"] == 9
    loc = IndexLocation.of(repo, IndexConfig())
    assert loc.namespace.startswith("br-main--wt-")
    assert loc.dir == repo / ".autology" / "cache" / "index" / loc.namespace
    m = manifest(repo)
    assert m["engine"] == {"id": "deterministic-hash-tf", "version": 1, "dimension": 384}
    assert m["git"]["head"] == git(repo, "rev-parse", "HEAD").strip() and m["git"]["dirty"] is False
    assert set(m["checksums"]) == {"files", "chunks", "symbols", "vectors"}
    assert "built_at" not in json.dumps(m)


def test_tracked_files_only_unless_untracked_included_and_walk_outside_git(repo: Path, plain_dir: Path):
    """In a git work tree the index covers what git tracks (staged counts, even ``git add -N``);
    ``include_untracked = true`` adds the untracked files .gitignore does not exclude."""
    write(repo, "src/app/new_module.py", "def fresh():\n    return 1\n")
    write(repo, "g.html", "<html><body>a stray export</body></html>\n")
    build(repo)
    files = indexed_paths(repo)
    assert "src/app/new_module.py" not in files and "g.html" not in files and "src/app/websocket.py" in files
    git(repo, "add", "-N", "src/app/new_module.py")
    build(repo)
    assert "src/app/new_module.py" in indexed_paths(repo) and "g.html" not in indexed_paths(repo)
    write(repo, "pyproject.toml", "[tool.autology.index]\ninclude_untracked = true\n")
    build(repo)
    files = indexed_paths(repo)
    assert "g.html" in files and "src/app/new_module.py" in files
    build(plain_dir)
    files = indexed_paths(plain_dir)
    assert IndexLocation.of(plain_dir, IndexConfig()).namespace == "default"
    assert "vendor/lib.js" not in files and "src/app/websocket.py" in files
    assert "debug.log" not in files  # .log is not an indexed extension


def test_index_status_names_the_untracked_files_it_leaves_out(repo: Path):
    build(repo)
    assert "untracked_left_out" not in service.index_status(repo)
    write(repo, "src/app/draft.py", "def draft():\n    return 0\n")
    write(repo, "notes.bin", "not a file the index takes\n")
    left_out = service.index_status(repo)["untracked_left_out"]
    assert left_out["count"] == 1 and left_out["first"] == ["src/app/draft.py"]
    assert "git add" in left_out["hint"] and "include_untracked = true" in left_out["hint"]
    git(repo, "add", "-N", "src/app/draft.py")
    assert "untracked_left_out" not in service.index_status(repo)


def test_index_status_says_when_a_build_is_running(repo: Path):
    """While a builder holds the namespace's lock (a server's first build, another `index build`),
    status says so instead of asking for a build that would only wait for it."""
    from autology_mcp.code.layout import build_lock

    loc = IndexLocation.of(repo, IndexConfig())
    assert service.index_status(repo)["hint"] == "no index yet; run `autology index build`"
    with build_lock(loc):
        status = service.index_status(repo)
        assert status["building"] is True and "being built" in status["hint"]
    assert "building" not in service.index_status(repo)
    build(repo)
    with build_lock(loc):
        assert service.index_status(repo)["building"] is True  # an update of an existing index
    assert "building" not in service.index_status(repo)


def test_scripts_without_an_extension_are_indexed_by_their_shebang(repo: Path):
    write(repo, "scripts/check", "#!/usr/bin/env bash\nset -e\nrun_linters() {\n  ruff check .\n}\n")
    write(repo, "scripts/serve", "#!/usr/bin/python3 -u\ndef serve_forever():\n    pass\n")
    write(repo, "scripts/NOTES", "plain words, no shebang\n")
    write(repo, "scripts/tool", "#!/usr/bin/perl\nprint 1;\n")  # a language we do not chunk
    git(repo, "add", "scripts")
    git(repo, "commit", "-qm", "scripts")
    build(repo)
    files = indexed_paths(repo)
    assert "scripts/check" in files and "scripts/serve" in files
    assert "scripts/NOTES" not in files and "scripts/tool" not in files
    hits = service.code_search(repo, "serve forever", top=3, refresh=False)["hits"]
    assert hits[0]["path"] == "scripts/serve" and hits[0]["symbol"] == "serve_forever"


def test_incremental_reuses_unchanged_and_handles_deletion(repo: Path):
    build(repo)
    s = build(repo)
    assert s["mode"] == "incremental" and s["rebuilt"] == 0 and s["reused"] == 9
    write(repo, "src/app/billing.py", "def compute_invoice_total(lines):\n    return 0\n")
    (repo / "notes.txt").unlink()
    write(repo, "src/app/extra.py", "def extra():\n    pass\n")
    git(repo, "add", "src/app/extra.py")
    s = build(repo)
    assert (s["rebuilt"], s["added"], s["deleted"], s["reused"]) == (2, 1, 1, 7)
    assert s["deleted_paths"] == ["notes.txt"]
    files = indexed_paths(repo)
    assert "notes.txt" not in files and "src/app/extra.py" in files
    loc = IndexLocation.of(repo, IndexConfig())
    with IndexDB(loc.db, create=False) as db:
        assert db.conn.execute("SELECT count(*) FROM chunks WHERE path='notes.txt'").fetchone()[0] == 0
        n = db.conn.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'note'").fetchone()[0]
        assert n == 0  # the FTS rows went with the file
        assert db.conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == \
            db.conn.execute("SELECT count(*) FROM chunks").fetchone()[0]


def test_a_deferred_update_changes_nothing_and_counts_what_waits(repo: Path):
    build(repo)
    loc = IndexLocation.of(repo, IndexConfig())
    before = (manifest(repo), loc.db.read_bytes())
    write(repo, "src/app/billing.py", "def compute_invoice_total(lines):\n    return 0\n")
    (repo / "notes.txt").unlink()
    s = build(repo, fast=True, defer_over=1)
    assert s["mode"] == "deferred" and s["pending"] == 2 and s["rebuilt"] == 0
    assert (manifest(repo), loc.db.read_bytes()) == before  # nothing written
    s = build(repo, fast=True, defer_over=2)  # not more than the bound: done now
    assert s["mode"] == "incremental" and (s["rebuilt"], s["deleted"]) == (1, 1)
    write(repo, "web/client.ts", "export const x = 1;\n")
    assert build(repo, rebuild=True, defer_over=0)["mode"] == "full"  # a full build is never deferred


def test_touch_without_content_change_is_reused(repo: Path):
    build(repo)
    p = repo / "src/app/billing.py"
    p.write_text(p.read_text())
    s = build(repo)
    assert s["rebuilt"] == 0
    s = build(repo, fast=True)
    assert s["rebuilt"] == 0
    from autology_mcp.code import service

    assert service.verify_index(repo, strict=True)["ok"]  # the new mtime was recorded consistently


def test_incremental_result_equals_a_fresh_build(repo: Path):
    build(repo)
    write(repo, "src/app/billing.py", "def compute_invoice_total(lines):\n    return 0\n")
    (repo / "docs/api.rst").unlink()
    build(repo)
    incremental = manifest(repo)
    s = build(repo, rebuild=True)
    assert s["mode"] == "full" and s["reason"] == "rebuild requested"
    assert manifest(repo) == incremental


def test_two_builds_give_identical_manifests(repo: Path, tmp_path: Path):
    cfg = config_from_dict({"isolation": "none"})
    build(repo, cfg)
    first = manifest(repo, cfg)
    shutil.rmtree(repo / ".autology")
    build(repo, cfg)
    assert manifest(repo, cfg) == first
    copy = tmp_path / "copy"
    shutil.copytree(repo, copy, ignore=shutil.ignore_patterns(".autology"))
    build(copy, cfg)
    assert manifest(copy, cfg) == first


def test_config_change_forces_full_rebuild(repo: Path):
    build(repo)
    (repo / ".autology" / "config.toml").write_text("[index]\ncode_max_lines = 30\n")
    s = build(repo)
    assert s["mode"] == "full" and s["reason"] == "config changed"
    (repo / ".autology" / "config.toml").write_text("[index.weights]\nbm25 = 2\n")
    build(repo)
    s = build(repo)
    assert s["mode"] == "incremental"


def test_worker_processes_give_the_same_index(tmp_path: Path):
    root = tmp_path / "many"
    for i in range(70):
        write(root, f"pkg/mod_{i:02d}.py", f"def handler_{i}(x):\n    return x + {i}\n\nCONST_{i} = {i}\n")
    serial = config_from_dict({"workers": 1, "use_git": False, "isolation": "none"})
    pooled = config_from_dict({"workers": 2, "use_git": False, "isolation": "none"})
    build(root, serial)
    a = manifest(root, serial)
    s = build(root, pooled, rebuild=True)
    assert s["rebuilt"] == 70
    assert manifest(root, pooled) == a


def test_branch_isolation_uses_separate_namespaces(repo: Path):
    build(repo)
    main_ns = IndexLocation.of(repo, IndexConfig()).namespace
    git(repo, "checkout", "-q", "-b", "feature/x")
    ns = IndexLocation.of(repo, IndexConfig()).namespace
    assert ns != main_ns and ns.startswith("br-feature-x--wt-")
    s = build(repo)
    # a new branch's first build starts from the main branch's index: nothing differs, nothing is re-read
    assert s["mode"] == "incremental" and s["namespace"] == ns and s["rebuilt"] == 0
    assert s["reason"] == f"content hashes, starting from the index of {main_ns}"
    assert IndexLocation(repo, main_ns).exists()  # the main branch keeps its own


def test_a_new_branch_reindexes_only_what_differs_and_finds_it(repo: Path):
    """Issue 17: switching to a branch that changed some files costs those files, not the tree."""
    build(repo)
    main_ns = IndexLocation.of(repo, IndexConfig()).namespace
    git(repo, "checkout", "-q", "-b", "topic")
    write(repo, "src/app/billing.py", "def compute_zeppelin_surcharge(order):\n    return 42\n")
    git(repo, "commit", "-qam", "surcharge")
    s = build(repo)
    assert s["mode"] == "incremental" and s["rebuilt"] == 1 and s["reused"] > 3
    hits = service.code_search(repo, "zeppelin surcharge", top=3, refresh=False)["hits"]
    assert hits[0]["path"] == "src/app/billing.py"
    loc = IndexLocation.of(repo, IndexConfig())
    seeded = json.loads(loc.manifest.read_text())["checksums"]
    build(repo, rebuild=True)
    assert json.loads(loc.manifest.read_text())["checksums"] == seeded  # the same index as a fresh build's
    git(repo, "checkout", "-q", "main")
    assert IndexLocation.of(repo, IndexConfig()).namespace == main_ns
    build(repo)
    hits = service.code_search(repo, "zeppelin surcharge", top=3, refresh=False)["hits"]
    assert all(h["symbol"] != "compute_zeppelin_surcharge" for h in hits)  # main's index never saw the branch


def test_changing_which_files_are_indexed_reuses_the_rest(repo: Path):
    """The file-selection settings are not in the config hash: changing them adds and removes files in
    an incremental build; a setting that changes what a file's chunks are still reprocesses every file."""
    first = build(repo)
    total = first["files_scanned"]
    write(repo, "g.html", "<html><body>a stray export</body></html>\n")
    write(repo, "pyproject.toml", "[tool.autology.index]\ninclude_untracked = true\n")
    s = build(repo)
    assert s["mode"] == "incremental" and s["added"] == 2 and s["reused"] == total  # g.html and pyproject.toml
    write(repo, "pyproject.toml", '[tool.autology.index]\ninclude_untracked = true\nexclude_globs = ["**/*.html"]\n')
    s = build(repo)
    assert s["mode"] == "incremental" and s["deleted"] == 1 and "g.html" not in indexed_paths(repo)
    write(repo, "pyproject.toml", "[tool.autology.index]\ncode_max_lines = 30\n")
    s = build(repo)
    assert s["mode"] == "full" and s["rebuilt"] == s["files_scanned"]
