"""Progress on the long steps of ``autology semantic`` (issue 40): the download of a model and the
embedding of session memory. At a terminal one line on stderr, updated in place; elsewhere only a line
when a step starts and one when it ends (a log stays short)."""

from __future__ import annotations

import io
import shutil
import time
from pathlib import Path

import pytest
from semantic_models import write_tiny_onnx_model
from test_semantic import SYNONYMS, WORDS, autology, project  # noqa: F401 - the fixture
from semantic_models import write_tiny_static_model

from autology_mcp.semantic.encoder import available

pytestmark = pytest.mark.skipif(not available(), reason="the optional extra is not installed (autology-mcp[semantic])")


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def model(tmp_path: Path) -> Path:
    return write_tiny_static_model(tmp_path / "tiny-model", WORDS, SYNONYMS)


def test_off_a_terminal_embedding_says_only_when_it_starts_and_ends(
        project: Path, model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert autology(project, "semantic", "enable", "--path", str(model)) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "embedding session memory's turns that have no vector yet …"
    assert err[1].startswith("embedding session memory's turns that have no vector yet: 6 turn(s), ")
    assert len(err) == 2 and "\r" not in "".join(err)


def test_at_a_terminal_embedding_shows_how_far_it_is_on_one_line(
        project: Path, model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import autology_mcp.cli.semantic as cli
    from autology_mcp.semantic import vectors

    monkeypatch.setattr(vectors, "BATCH", 2)  # three batches of the six turns
    terminal = Terminal()
    monkeypatch.setattr(cli.sys, "stderr", terminal)
    clock = iter(range(0, 10_000))
    monkeypatch.setattr(cli.Progress, "clock", staticmethod(lambda: next(clock) * 0.5))  # each reading: 0.5 s on
    assert autology(project, "semantic", "enable", "--path", str(model)) == 0
    shown = terminal.getvalue()
    for step in ("0 of 6 turns", "2 of 6 turns", "4 of 6 turns", "6 of 6 turns"):
        assert f"\rembedding session memory's turns that have no vector yet: {step} (" in shown
    # readings at 0 (start), 0.5, 1, 1.5, 2 (the four shown) and 2.5 (the end)
    assert shown.endswith(": 6 turn(s), 2.5 s\x1b[K\n") and shown.count("\n") == 1  # one line, ended once


def test_a_download_shows_the_megabytes_so_far(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """fastembed's download stood in for by one that writes the hub's layout in two steps (the download
    itself needs the network); the line shows what is in the folder as it grows."""
    import autology_mcp.cli.semantic as cli
    from autology_mcp.knowledge.store import NodeStore
    from autology_mcp.semantic import encoder

    source = write_tiny_onnx_model(tmp_path / "source", model_file="model_optimized.onnx")
    name = "BAAI/bge-small-en-v1.5"

    def fetch(wanted: str, cache_dir: Path) -> Path:
        folder = encoder.download_folder(wanted, cache_dir)
        (folder / "blobs").mkdir(parents=True)
        (folder / "blobs" / "a.incomplete").write_bytes(b"\0" * 3 * 2**20)
        time.sleep(0.6)  # the progress line looks every 0.25 s
        snapshot = folder / "snapshots" / "rev"
        shutil.copytree(source, snapshot)
        return snapshot

    monkeypatch.setattr(encoder, "fetch", fetch)
    monkeypatch.setattr(encoder, "unreachable", lambda url: None)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    terminal = Terminal()
    monkeypatch.setattr(cli.sys, "stderr", terminal)
    root = tmp_path / "project"
    root.mkdir()
    NodeStore(root).init()
    assert autology(root, "semantic", "enable", name, "--yes") == 0
    shown = terminal.getvalue()
    assert f"\rdownloading {name}: 3 of about 69 MB (" in shown
    assert f"\rdownloading {name}: done, " in shown
    assert "semantic recall on with BAAI/bge-small-en-v1.5" in capsys.readouterr().out
