"""Semantic recall, the optional extra (issue 31), on a tiny model the tests write in the format the extra
reads (random vectors over a small vocabulary, synonyms sharing a direction: tests/semantic_models.py):
the real loading and embedding code runs, and nothing is downloaded. Off (the default), nothing changes
and the extra is never imported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from semantic_models import write_tiny_static_model
from sessions_helpers import assistant_line, user_line

from autology_mcp.cli.main import main
from autology_mcp.knowledge.store import NodeStore
from autology_mcp.semantic.encoder import available
from autology_mcp.sessions.ingest import ingest_transcript
from autology_mcp.sessions.search import search_sessions

needs_extra = pytest.mark.skipif(not available(), reason="the optional extra is not installed (autology-mcp[semantic])")

WORDS = """we i you the a to of and for with is it was on in this that what which has have been deal deals john
    signed up shoe basketball gear offered weather rain tomorrow forecast cold painted picture lake sunset
    caroline joined support group last week""".split()
SYNONYMS = [["nike", "endorsement", "sponsorship"], ["painted", "painting", "artwork"]]
SESSIONS = {
    "s-deal": [("user", "John signed up Nike for a basketball shoe and gear deal"), ("assistant", "That is great")],
    "s-weather": [("user", "What is the weather forecast for tomorrow"), ("assistant", "Rain and cold")],
    "s-art": [("user", "Caroline painted a picture of the lake at sunset"), ("assistant", "Lovely")],
}
PARAPHRASE = "Which sponsorship was offered"  # no word of any session; "sponsorship" is near "nike"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    NodeStore(root).init()
    folder = tmp_path / "transcripts"
    folder.mkdir()
    for sid, turns in SESSIONS.items():
        lines = [(user_line if role == "user" else assistant_line)(sid, text, f"2026-11-0{i + 1}T10:00:00Z", f"u{sid}{i}")
                 for i, (role, text) in enumerate(turns)]
        (folder / f"{sid}.jsonl").write_text("\n".join(lines) + "\n")
        ingest_transcript(root, folder / f"{sid}.jsonl")
    return root


@pytest.fixture
def model(tmp_path: Path) -> Path:
    return write_tiny_static_model(tmp_path / "tiny-model", WORDS, SYNONYMS)


def autology(root: Path, *args: str) -> int:
    return main(["--root", str(root), *args])


def test_off_by_default_nothing_changes_and_the_extra_is_not_imported(project: Path) -> None:
    code = (f"import sys, json; from autology_mcp.sessions.search import search_sessions as s;"
            f"hits = s({str(project)!r}, {PARAPHRASE!r}, 5);"
            "print(json.dumps([h.doc_id for h in hits])); print('fastembed' in sys.modules, 'numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[1] == "False False"  # neither the extra nor numpy is loaded by a lexical search
    assert json.loads(out[0]) == [h.doc_id for h in search_sessions(project, PARAPHRASE, 5)]


@needs_extra
def test_enable_finds_a_paraphrase_lexical_search_ranks_below(
        project: Path, model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lexical = [h.session_id for h in search_sessions(project, PARAPHRASE, 5)]
    assert autology(project, "semantic", "enable", "--path", str(model)) == 0
    out = capsys.readouterr().out
    assert "semantic recall on with tiny-model (32 dimensions, static model" in out and "6 turn(s) embedded" in out
    semantic = search_sessions(project, PARAPHRASE, 5)
    assert semantic[0].session_id == "s-deal"  # the turn about the Nike deal, found through "endorsement"
    assert "s-deal" not in lexical  # no word in common: lexical search cannot find it
    assert all(0.0 <= h.score <= 1.0 for h in semantic)
    # what must not come back first: a query about the weather still finds the weather
    assert search_sessions(project, "weather forecast tomorrow", 5)[0].session_id == "s-weather"
    assert search_sessions(project, "painting of a lake", 5)[0].session_id == "s-art"
    assert autology(project, "semantic", "status") == 0
    assert "session turns with a vector: 6 of 6" in capsys.readouterr().out


@needs_extra
def test_vectors_are_synced_incrementally_and_removed_on_disable(
        project: Path, model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert autology(project, "semantic", "enable", "--path", str(model)) == 0
    assert autology(project, "semantic", "sync") == 0
    assert "✓ 0 turn(s) embedded" in capsys.readouterr().out  # nothing new: nothing embedded again
    extra = tmp_path / "transcripts" / "s-new.jsonl"
    extra.write_text(user_line("s-new", "John painted the gear", "2026-11-09T10:00:00Z", "n1") + "\n")
    ingest_transcript(project, extra)
    assert autology(project, "semantic", "sync") == 0
    assert "✓ 1 turn(s) embedded" in capsys.readouterr().out
    cache = project / ".autology" / "cache" / "semantic.sqlite"
    assert cache.exists()
    assert autology(project, "semantic", "disable") == 0
    assert not cache.exists() and not (project / ".autology" / "local" / "semantic.json").exists()
    assert search_sessions(project, PARAPHRASE, 5) == []  # lexical again: no word in common, nothing found


@needs_extra
def test_a_folder_that_is_not_a_model_is_refused(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    assert autology(project, "semantic", "enable", "--path", str(tmp_path / "empty")) == 1
    assert "not a model folder" in capsys.readouterr().err
    assert not (project / ".autology" / "local" / "semantic.json").exists()


@needs_extra
def test_a_hook_process_never_loads_the_model(project: Path, model: Path) -> None:
    """A hook run in-process has no time to load a model: it ranks lexically; the server's hooks use it."""
    assert autology(project, "semantic", "enable", "--path", str(model)) == 0
    payload = json.dumps({"session_id": "h1", "cwd": str(project), "hook_event_name": "UserPromptSubmit",
                          "prompt": PARAPHRASE})
    code = ("import sys, runpy; sys.argv = ['x', 'user-prompt-submit'];"
            "sys.stdin = __import__('io').StringIO(sys.argv_payload) if False else sys.stdin;"
            "from autology_mcp.hooks.__main__ import main; main(['user-prompt-submit']);"
            "print('fastembed' in sys.modules, file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], input=payload, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "False"


@needs_extra
def test_a_model_change_starts_the_vectors_again(project: Path, tmp_path: Path, capsys) -> None:
    first = write_tiny_static_model(tmp_path / "m1", WORDS, SYNONYMS, dim=16)
    second = write_tiny_static_model(tmp_path / "m2", WORDS, SYNONYMS, dim=24, seed=3)
    assert autology(project, "semantic", "enable", "--path", str(first)) == 0
    assert autology(project, "semantic", "enable", "--path", str(second)) == 0
    out = capsys.readouterr().out
    assert out.count("6 turn(s) embedded") == 2  # the 16-d vectors are not mixed with the 24-d ones
    assert search_sessions(project, PARAPHRASE, 5)[0].session_id == "s-deal"


@needs_extra
def test_a_server_keeps_the_vectors_up_to_date_in_the_background(
        project: Path, model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading
    import time

    from autology_mcp.semantic.state import SemanticState, save_state
    from autology_mcp.semantic.vectors import VectorCache
    from autology_mcp.server import startup

    save_state(project, SemanticState("tiny-model", str(model), 32, "fastembed"))  # enabled, nothing embedded yet
    monkeypatch.setattr(startup, "VECTOR_CHECK_S", 0.1)
    stopping = threading.Event()
    store = NodeStore(project)
    startup._keep_vectors_up_to_date(store, stopping)
    cache = VectorCache(project, "tiny-model", 32)
    try:
        deadline = time.monotonic() + 30
        while cache.counts().get("session_turn", 0) < 6 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert cache.counts().get("session_turn") == 6
        extra = tmp_path / "transcripts" / "s-late.jsonl"
        extra.write_text(user_line("s-late", "a late sponsorship turn", "2026-11-10T10:00:00Z", "l1") + "\n")
        ingest_transcript(project, extra)
        while cache.counts().get("session_turn", 0) < 7 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert cache.counts().get("session_turn") == 7  # the new session's turn, without anybody asking
        from autology_mcp.knowledge.service import Autology

        writer = Autology.open(project)  # another process's write, as the CLI makes one
        try:
            writer.capture("Sponsorship deals", "John's Nike deal is a basketball shoe endorsement.", type="concept")
        finally:
            writer.close()
        while cache.counts().get("node_piece", 0) < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert cache.counts().get("node_piece") == 1  # the new node's one piece, embedded by the same thread
    finally:
        stopping.set()
        time.sleep(0.3)
        store.close()


@needs_extra
def test_status_and_doctor_say_which_model_and_how_much_has_vectors(
        project: Path, model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert autology(project, "status", "--json") == 0
    assert json.loads(capsys.readouterr().out)["retrieval"]["semantic"] == {"enabled": False}
    assert autology(project, "semantic", "enable", "--path", str(model)) == 0
    capsys.readouterr()
    assert autology(project, "status", "--json") == 0
    semantic = json.loads(capsys.readouterr().out)["retrieval"]["semantic"]
    hooks = semantic.pop("hooks")
    assert semantic == {"enabled": True, "model": "tiny-model", "dimension": 32, "extra_installed": True,
                        "session_turns": 6, "session_turns_with_vectors": 6, "nodes_with_vectors": 0}
    assert hooks["use_vectors"] is False and hooks["why"].startswith("no server is running")
    assert autology(project, "doctor") == 0
    out = capsys.readouterr().out
    assert "semantic recall: on with tiny-model (32 dimensions" in out and "session turns with a vector: 6 of 6" in out
    assert "hooks: rank by words: no server is running" in out


def test_without_the_extra_enable_says_how_to_install_it(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from autology_mcp.semantic import encoder

    monkeypatch.setattr(encoder, "available", lambda: False)
    assert autology(project, "semantic", "enable", "--path", str(tmp_path)) == 1
    assert "pip install 'autology-mcp[semantic]'" in capsys.readouterr().err
    assert autology(project, "semantic", "status") == 0
    assert "semantic recall: off" in capsys.readouterr().out
    assert not (project / ".autology" / "local" / "semantic.json").exists()


@needs_extra
def test_a_failed_download_says_what_to_do_and_enables_nothing(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import fastembed

    from autology_mcp.semantic import encoder

    monkeypatch.setattr(encoder, "unreachable", lambda url: None)  # the host answers; the download then fails

    class Offline:
        list_supported_models = staticmethod(fastembed.TextEmbedding.list_supported_models)

        def __init__(self, *args, **kwargs):
            raise ValueError("Could not load model from any source.")

    monkeypatch.setattr(fastembed, "TextEmbedding", Offline)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert autology(project, "semantic", "enable", "sentence-transformers/all-MiniLM-L6-v2", "--yes") == 1
    err = capsys.readouterr().err
    assert "could not download sentence-transformers/all-MiniLM-L6-v2" in err and "--path DIR" in err
    assert not (project / ".autology" / "local" / "semantic.json").exists()


@given(sims=st.lists(st.integers(-20, 90).map(lambda n: n / 100), min_size=6, max_size=30),
       shift=st.integers(5, 50).map(lambda n: n / 100))
@settings(max_examples=60, deadline=None)
def test_chunk_scores_do_not_move_when_every_similarity_moves_together(sims: list[float], shift: float) -> None:
    """A model whose unrelated texts sit at cosine 0.5 scores chunks as one whose sit near 0 does: each
    similarity is counted above the memory's mean, so adding the same amount to every turn's changes nothing.
    (One-turn chunks over unit rows: a turn's similarity is the query's value at its row, as is its chunk's
    mean.)"""
    import numpy as np

    from autology_mcp.sessions.semantic import WEIGHTS, DenseScores

    keys = [f"s:{n}" for n in range(len(sims))]
    chunks = {n: ("s", n, n) for n in range(len(sims))}
    rows = np.eye(len(sims), dtype=np.float64)
    before, scale = DenseScores(keys, rows, np.array(sims)).fused(chunks)
    after, _ = DenseScores(keys, rows, np.array(sims) + shift).fused(chunks)
    assert scale == pytest.approx(1.0 + sum(WEIGHTS))
    assert before.keys() == after.keys() == chunks.keys()
    assert all(abs(before[r] - after[r]) < 1e-6 for r in chunks)
    assert all(0.0 <= v <= sum(WEIGHTS) + 1e-9 for v in before.values())
    top = max(chunks, key=lambda r: sims[r])
    if max(sims) > min(sims):
        assert before[top] == pytest.approx(sum(WEIGHTS))  # the best gets both weights


@needs_extra
def test_a_hook_uses_the_vectors_only_with_a_model_fast_enough_for_its_budget(
        project: Path, model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server answers hooks within their latency budget: a model that embeds questions slower than
    HOOK_QUERY_MS serves the tools, and a hook's search ranks lexically (here: finds no paraphrase)."""
    from autology_mcp.semantic import encoder, runtime, speed

    monkeypatch.setattr(speed, "PROBE_EVERY_S", 3600.0)  # no probe: the measure stays as set here
    ticks = iter(range(10**6))
    monkeypatch.setattr(encoder.Encoder, "clock", staticmethod(lambda: next(ticks) * 0.004))  # 4 ms an embedding,
    assert autology(project, "semantic", "enable", "--path", str(model)) == 0  # whatever this machine's load
    loaded = encoder.load(str(model.resolve()), model.name)
    assert loaded.query_ms == pytest.approx(4.0)  # as a small model measures here
    with runtime.answering_a_hook():
        assert search_sessions(project, PARAPHRASE, 5)[0].session_id == "s-deal"
    for _ in range(speed.WINDOW):
        loaded.speed.record(runtime.HOOK_QUERY_MS + 1)  # as a large model measures here
    with runtime.answering_a_hook():
        assert search_sessions(project, PARAPHRASE, 5) == []  # lexical: no word in common
    assert search_sessions(project, PARAPHRASE, 5)[0].session_id == "s-deal"  # a tool call still uses it


def test_the_server_answers_a_hook_inside_the_hook_budget(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import autology_mcp.hooks as hooks
    from autology_mcp.hooks.service import HookService
    from autology_mcp.semantic import runtime

    seen = []
    monkeypatch.setattr(hooks, "run", lambda event, stdin, root: seen.append(runtime._answering_a_hook.get()) or "")
    payload = json.dumps({"session_id": "h1", "cwd": str(project), "prompt": "anything"})
    assert HookService(project).answer("user-prompt-submit", payload, str(project)) == {"served": True, "output": ""}
    assert seen == [True] and runtime._answering_a_hook.get() is False


@pytest.fixture
def silent_host():
    """A host that takes connections and never answers (a listening socket nobody reads)."""
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    yield f"http://127.0.0.1:{server.getsockname()[1]}"
    server.close()


def blocked_env(monkeypatch: pytest.MonkeyPatch, blocked: str, silent_host: str) -> None:
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY",
                 "no_proxy", "HF_ENDPOINT", "HF_HUB_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    if blocked == "a proxy that refuses":
        monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    else:
        monkeypatch.setenv("HF_ENDPOINT", silent_host)


@needs_extra
@pytest.mark.parametrize("blocked", ["a proxy that refuses", "a host that never answers"])
def test_offline_enable_by_name_fails_at_once_with_the_path_advice(
        project: Path, tmp_path: Path, blocked: str, silent_host: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """`autology semantic enable NAME` with the network blocked: not fastembed's ~40 s of retries (3, 9,
    27 s sleeps), but one short attempt (2.5 s at most), and the advice to use --path."""
    import time

    blocked_env(monkeypatch, blocked, silent_host)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    start = time.monotonic()
    assert autology(project, "semantic", "enable", "sentence-transformers/all-MiniLM-L6-v2", "--yes") == 1
    elapsed = time.monotonic() - start
    err = capsys.readouterr().err
    assert elapsed < 5, elapsed
    assert "could not download sentence-transformers/all-MiniLM-L6-v2: cannot reach" in err
    assert "autology semantic enable --path DIR" in err and "Traceback" not in err
    assert ("through the proxy 127.0.0.1:9 (Connection refused)" in err) == (blocked == "a proxy that refuses")
    assert ("(no answer within 2.5 s)" in err) == (blocked == "a host that never answers")
    assert not (project / ".autology" / "local" / "semantic.json").exists()
    assert not (tmp_path / "cache" / "autology" / "models").exists()  # nothing downloaded, nothing begun


@needs_extra
def test_offline_enable_by_name_in_a_process_of_its_own_skips_fastembed_s_retries(
        project: Path, tmp_path: Path, silent_host: str) -> None:
    """The same through the installed command, as a user runs it: the process ends long before fastembed's
    retries would (3 + 9 + 27 s), whatever the machine's load does to the interpreter's start."""
    import os
    import time

    env = {k: v for k, v in os.environ.items() if k.upper() not in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY",
                                                                     "NO_PROXY", "HF_ENDPOINT", "HF_HUB_OFFLINE")}
    env.update(HF_ENDPOINT=silent_host, XDG_CACHE_HOME=str(tmp_path / "cache"), PYTHONPATH=os.pathsep.join(sys.path))
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "autology_mcp", "--root", str(project), "semantic", "enable",
                           "sentence-transformers/all-MiniLM-L6-v2", "--yes"], capture_output=True, text=True,
                          env=env, timeout=60)
    assert done.returncode == 1 and time.monotonic() - start < 20, done.stderr
    assert "cannot reach 127.0.0.1 (no answer within 2.5 s)" in done.stderr and "--path DIR" in done.stderr


def test_the_proxy_the_environment_names_is_asked_unless_no_proxy_covers_the_host(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from autology_mcp.semantic.reach import target

    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy",
                 "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    assert target("https://huggingface.co") == ("huggingface.co", 443, None)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    assert target("https://huggingface.co") == ("proxy.example", 3128, "http://proxy.example:3128")
    assert target("https://hub.example:8443") == ("proxy.example", 3128, "http://proxy.example:3128")
    monkeypatch.setenv("NO_PROXY", "localhost,.huggingface.co,huggingface.co")
    assert target("https://huggingface.co") == ("huggingface.co", 443, None)  # what must not go through it
    assert target("https://hub.example:8443")[0] == "proxy.example"  # and what still must


def test_a_host_that_answers_is_reachable_directly_and_through_a_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The other side of the offline check: a host that answers (an error status too) is not called offline."""
    import http.server
    import threading

    from autology_mcp.semantic.reach import unreachable

    class Answer(http.server.BaseHTTPRequestHandler):
        def do_HEAD(self) -> None:  # noqa: N802 - http.server's name
            self.send_response(404 if self.path.endswith("missing") else 200)
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    address = f"http://127.0.0.1:{server.server_port}"
    try:
        for name in ("HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"):
            monkeypatch.delenv(name, raising=False)
        assert unreachable(address) is None and unreachable(address + "/missing") is None
        monkeypatch.setenv("HTTP_PROXY", address)  # the same server, as the proxy of another host
        assert unreachable("http://models.example") is None
        monkeypatch.setenv("HTTP_PROXY", "http://someone:s3cret@127.0.0.1:9")
        said = unreachable("http://models.example")
        assert "through the proxy 127.0.0.1:9" in said and "s3cret" not in said  # never the proxy's password
    finally:
        server.shutdown()
