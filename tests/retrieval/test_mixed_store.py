"""Knowledge beside code: a decision or convention about a topic stays at the top of unified search
even when the project's code and docs mention the topic everywhere (issue 12; the real-data
measurement is bench/mixed_store_eval.py)."""

from __future__ import annotations

from pathlib import Path

from retrieval_fixtures import git, write

from autology_mcp.code import service as code_index
from autology_mcp.knowledge.service import Autology
from autology_mcp.retrieval.engine import search, shortlist

HTTP2_MODULE = '''"""HTTP/2 connection handling for the {name} transport."""


def http2_handshake_{name}(conn):
    """Negotiate HTTP/2 (h2) over ALPN for {name}."""
    return conn.alpn == "h2"


def http2_stream_{name}(conn, stream_id):
    """Open an HTTP/2 stream on {name}."""
    return conn.streams.open(stream_id)
'''


def flooded_project(root: Path) -> dict[str, str]:
    """40 modules and a guide all about http2, and two nodes that say how the project handles it."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    for i in range(40):
        write(root, f"src/transports/http2_{i:02d}.py", HTTP2_MODULE.format(name=f"t{i:02d}"))
    write(root, "docs/http2.md", "# HTTP/2\n\nHTTP/2 streams, HTTP/2 frames and http2 settings for every transport.\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "http2 transports")
    code_index.build_index(root)
    autology = Autology.open(root)
    try:
        return {
            "convention": autology.capture(
                "HTTP/2 is opt-in", "HTTP/2 is off by default; clients enable it with http2=True (needs the h2 package).",
                type="convention", tags=["http2"],
            ).id,
            "component": autology.capture(
                "HTTP/2 transport", "The HTTP/2 connection handling lives in the transports package.",
                type="component", tags=["http2", "transport"], references=["src/transports"],
            ).id,
        }
    finally:
        autology.close()


def test_nodes_about_a_topic_the_code_floods_stay_in_the_top_three(tmp_path: Path) -> None:
    root = tmp_path / "p"
    ids = flooded_project(root)
    for query in ("where is HTTP/2 handled", "http2", "how do we enable HTTP/2"):
        answer = search(root, query, limit=10)
        top3 = [h.get("node_id") for h in answer["hits"][:3]]
        assert ids["convention"] in top3 or ids["component"] in top3, (query, answer["hits"][:3])
        assert answer["verdict"] in ("grounded", "ambiguous")
    assert sum(h["kind"] == "node" for h in search(root, "where is HTTP/2 handled")["hits"][:10]) == 2


def test_the_shortlist_keeps_the_best_of_every_family() -> None:
    from autology_mcp.retrieval.candidates import Candidate
    from autology_mcp.retrieval.channels import Pool

    pool = Pool()
    keys = []
    for i in range(50):
        keys.append(pool.add(Candidate(key=f"chunk:{i}", kind="code", ref=f"c{i}", title="c")).key)
    for i in range(5):
        keys.append(pool.add(Candidate(key=f"node:{i}", kind="node", ref=f"n{i}", title="n")).key)
    chosen = shortlist(keys, pool, size=30, per_family=3)
    assert chosen[:30] == keys[:30]  # the fused order first
    assert chosen[30:] == ["node:0", "node:1", "node:2"]  # then the best nodes below the cut, up to the floor
    assert shortlist(keys[:20], pool, size=30, per_family=3) == keys[:20]


def test_a_file_named_by_the_query_is_evidence_and_fills_the_list(tmp_path: Path) -> None:
    """Issue 15: "Fix typo in wsgi.py" is about .../wsgi.py even when its text never says "wsgi":
    a code chunk whose path holds a query term may fill the list (below the floor), so unified search
    returns as many files as the index matched, up to the limit."""
    root = tmp_path / "p"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for i in range(14):
        write(root, f"src/handlers/h{i:02d}.py", f"def step_{i}(value):\n    return value + {i}\n")
    write(root, "src/transports/wsgi.py", "def serve(app, environ):\n    return app(environ)\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "modules")
    code_index.build_index(root)
    answer = search(root, "fix typo in wsgi.py", scope=["code"], limit=10)
    paths = [h["path"] for h in answer["hits"]]
    assert paths[0] == "src/transports/wsgi.py"
    assert len(paths) == 10 and len(set(paths)) == 10  # every file matched "py" in its path
