"""On means on (issue 40): whether the hooks a server answers use the vectors is decided by a running
measure of real query embeddings, not one timing at load; a slow start is not sticky, and status says
which way it is and why. The model's time is simulated with a clock the encoder is timed by (no sleeps);
everything else is real: the tiny model, the search, the server's start-up, the status commands."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_semantic import PARAPHRASE, SYNONYMS, WORDS, autology, project  # noqa: F401 - the fixture
from semantic_models import write_tiny_static_model

from autology_mcp.semantic.encoder import available
from autology_mcp.sessions.search import search_sessions

pytestmark = pytest.mark.skipif(not available(), reason="the optional extra is not installed (autology-mcp[semantic])")


@pytest.fixture
def model(tmp_path: Path) -> Path:
    return write_tiny_static_model(tmp_path / "tiny-model", WORDS, SYNONYMS)


@pytest.fixture
def slow(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The milliseconds every query embedding takes from now on (set ``slow[0]``): the encoder's clock
    moves that much per reading. Probes run at once and as often as asked."""
    from autology_mcp.semantic import encoder, runtime, speed

    cost, now = [80.0], [0.0]

    def clock() -> float:
        now[0] += cost[0] / 1000  # read at the start and at the end of each embedding
        return now[0]

    monkeypatch.setattr(encoder.Encoder, "clock", staticmethod(clock))
    monkeypatch.setattr(speed, "PROBE_DELAY_S", 0.0)
    monkeypatch.setattr(speed, "PROBE_EVERY_S", 0.0)
    monkeypatch.setattr(runtime, "_serving", None)
    return cost


def hook_search(project: Path, loaded) -> list[str]:
    """A search made for a hook, then its probe (if it started one) waited for."""
    from autology_mcp.semantic import runtime

    with runtime.answering_a_hook():
        hits = [h.session_id for h in search_sessions(project, PARAPHRASE, 5)]
    if loaded.speed.probing is not None:
        loaded.speed.probing.join(10)
    return hits


def status(project: Path, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert autology(project, "semantic", "status") == 0
    return capsys.readouterr().out


def test_a_slow_start_is_not_sticky_the_hooks_switch_to_vectors_once_within_budget(
        project: Path, model: Path, slow: list[float], capsys: pytest.CaptureFixture[str]) -> None:
    from autology_mcp.semantic import encoder, runtime

    assert autology(project, "semantic", "enable", "--path", str(model)) == 0  # loaded on a busy machine: 80 ms
    loaded = encoder.loaded(str(model.resolve()), model.name)
    runtime.serve_hooks(project, "/nowhere/hooks.sock")  # this process answers the hooks, as `autology serve`
    assert loaded.query_ms == pytest.approx(80.0)
    assert hook_search(project, loaded) == []  # over budget: the hook ranks by words (no word in common)
    out = status(project, capsys)
    assert "hooks: rank by words: the model embeds a question in 80 ms here" in out and "30 ms budget" in out
    assert search_sessions(project, PARAPHRASE, 5)[0].session_id == "s-deal"  # a tool's search has the vectors

    slow[0] = 4.0  # the machine is quiet again: the probes of the next hooks measure it
    lexical = 0
    while not (hits := hook_search(project, loaded)):
        lexical += 1
        assert lexical < 10, "the hooks never went back to the vectors"
    assert hits[0] == "s-deal" and lexical <= 3  # the median of the last 5 is within budget after 3 fast ones
    out = status(project, capsys)
    assert "hooks: use the vectors (a question embedded in 4.0 ms here, the median of the last 5" in out
    published = json.loads(next((project / ".autology" / "cache").glob("semantic-hooks-*.json")).read_text())
    assert published["use_vectors"] is True and published["pid"] == os.getpid()  # written at the switch

    slow[0] = 120.0  # busy again: the hooks' own embeddings show it, and they go back to words
    used = 0
    while hook_search(project, loaded):
        used += 1
        assert used < 10
    assert used == 3 and "hooks: rank by words: the model embeds a question in 120 ms" in status(project, capsys)
    runtime.stop_serving_hooks(project)
    assert not list((project / ".autology" / "cache").glob("semantic-hooks-*.json"))


def test_status_in_another_process_reads_what_the_running_server_says(
        project: Path, model: Path, slow: list[float], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A real server start-up (watcher lease, hook service, the vectors thread loading the model) in this
    process; `autology semantic status` run as a process of its own reads what it published, both ways."""
    from autology_mcp.semantic import encoder, runtime
    from autology_mcp.semantic.state import SemanticState, save_state
    from autology_mcp.server import startup

    monkeypatch.setattr(startup, "VECTOR_CHECK_S", 0.1)
    monkeypatch.setattr(runtime, "PUBLISH_EVERY_S", 0.0)
    save_state(project, SemanticState(model.name, str(model.resolve()), 32, "fastembed"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}

    def status_elsewhere() -> str:
        done = subprocess.run([sys.executable, "-m", "autology_mcp", "--root", str(project), "semantic",
                               "status"], capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    server = startup.begin(project)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (
                (loaded := encoder.loaded(str(model.resolve()), model.name)) and loaded.speed.listener):
            time.sleep(0.05)
        assert server.service is not None and server.service.path is not None
        assert "hooks: rank by words: the model embeds a question in 80 ms here" in status_elsewhere()
        slow[0] = 5.0
        while not hook_search(project, loaded):
            assert time.monotonic() < deadline
        assert "hooks: use the vectors (a question embedded in 5.0 ms here" in status_elsewhere()
    finally:
        startup.finish(server)
    assert "hooks: rank by words: no server is running" in status_elsewhere()


def test_status_says_the_model_folder_is_gone_and_what_to_do(
        project: Path, model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert autology(project, "semantic", "enable", "--path", str(model)) == 0
    assert "session turns with a vector: 6 of 6" in status(project, capsys)
    shutil.rmtree(model)
    out = status(project, capsys)
    assert f"semantic recall: enabled with tiny-model, but its model folder {model.resolve()} is missing: " \
           "searches rank by words" in out
    assert "autology semantic enable --path DIR" in out and "autology semantic disable" in out
    assert "on with" not in out and "6 of 6" not in out
    capsys.readouterr()
    assert autology(project, "status", "--json") == 0
    semantic = json.loads(capsys.readouterr().out)["retrieval"]["semantic"]
    assert semantic["model_missing"] == f"its model folder {model.resolve()} is missing"


def test_status_says_when_the_model_is_there_but_does_not_load(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    folder = write_tiny_static_model(tmp_path / "broken-model", WORDS, SYNONYMS)
    assert autology(project, "semantic", "enable", "--path", str(folder)) == 0
    (folder / "model.safetensors").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{}      ")  # no tensor left
    from autology_mcp.semantic import encoder

    monkeypatch.setattr(encoder, "_loaded", {})  # as a new process: nothing loaded yet
    out = status(project, capsys)
    assert "semantic recall: enabled with broken-model, but its model does not load (" in out
    assert "Traceback" not in out and len(out.splitlines()) == 3


def test_a_hook_never_waits_for_the_model_to_load_it_is_loaded_for_the_next_ones(
        project: Path, model: Path, slow: list[float], monkeypatch: pytest.MonkeyPatch) -> None:
    """A server whose model is not loaded yet (its start-up still running, or enabled after it started):
    the hook ranks by words at once, and the model is loaded in the background for the hooks after it."""
    from autology_mcp.semantic import encoder, runtime

    slow[0] = 4.0  # within budget, whatever this machine's load
    assert autology(project, "semantic", "enable", "--path", str(model)) == 0  # the turns embedded
    monkeypatch.setattr(encoder, "_loaded", {})  # as a server just started: no model loaded
    monkeypatch.setattr(runtime, "_loading", {})
    monkeypatch.delenv("AUTOLOGY_SEMANTIC_LOAD", raising=False)
    with runtime.answering_a_hook():
        assert search_sessions(project, PARAPHRASE, 5) == []  # by words: nothing loaded, nothing waited for
    runtime._loading[str(model.resolve())][1].join(60)
    assert encoder.loaded(str(model.resolve()), model.name) is not None
    with runtime.answering_a_hook():
        assert search_sessions(project, PARAPHRASE, 5)[0].session_id == "s-deal"

    monkeypatch.setattr(encoder, "_loaded", {})
    monkeypatch.setattr(runtime, "_loading", {})
    monkeypatch.setenv("AUTOLOGY_SEMANTIC_LOAD", "never")  # a hook in a process of its own: never loads one
    with runtime.answering_a_hook():
        assert search_sessions(project, PARAPHRASE, 5) == []
    assert runtime._loading == {} and encoder.loaded(str(model.resolve()), model.name) is None


def test_a_server_whose_model_does_not_load_says_so(
        project: Path, model: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Not "has not loaded it yet" for ever: the loader's own reason, in the server and to other processes."""
    from autology_mcp.semantic import encoder, runtime

    assert autology(project, "semantic", "enable", "--path", str(model)) == 0
    monkeypatch.setattr(encoder, "_loaded", {})
    monkeypatch.setattr(runtime, "_serving", None)
    monkeypatch.setattr(runtime, "load_errors", {})
    (model / "model.safetensors").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{}      ")  # no tensor
    runtime.serve_hooks(project, "/nowhere/hooks.sock")
    try:
        assert runtime.encoder(runtime.active(project), may_load=True) is None
        said = runtime.hooks_status(project)
        assert said["use_vectors"] is False and said["why"].startswith("the model does not load: ")
        published = json.loads(next((project / ".autology" / "cache").glob("semantic-hooks-*.json")).read_text())
        assert published["why"] == said["why"]
        assert "semantic recall: enabled with tiny-model, but its model does not load (" in status(project, capsys)
    finally:
        runtime.stop_serving_hooks(project)
