"""The paths channel's vocabulary is saved beside the code index, so a new process loads it instead of
splitting every indexed path again, and it is made anew when the indexed files change."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from retrieval_fixtures import make_project, write

from autology_mcp.code import service as code_index
from autology_mcp.retrieval import channels
from autology_mcp.retrieval.engine import search


def saved_file(root: Path) -> Path:
    (found,) = (root / ".autology" / "cache" / "index").glob("*/path_vocabulary.json")
    return found


def test_the_vocabulary_is_saved_reused_and_renewed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = make_project(tmp_path / "p")
    first = search(project.root, "websocket reconnect", scope=["code"])
    saved = saved_file(project.root)
    channels._path_vocab.clear()  # as in a new process

    def no_splitting(text: str) -> frozenset[str]:
        raise AssertionError("the saved vocabulary should have been loaded")

    with monkeypatch.context() as patch:
        patch.setattr(channels, "name_words", no_splitting)
        again = search(project.root, "websocket reconnect", scope=["code"])
    assert [h["ref"] for h in again["hits"]] == [h["ref"] for h in first["hits"]]

    write(project.root, "src/net/reconnect_policy.py", "def policy():\n    return 'websocket reconnect'\n")
    subprocess.run(["git", "add", "src/net/reconnect_policy.py"], cwd=project.root, check=True)
    code_index.build_index(project.root)
    channels._path_vocab.clear()
    before = saved.read_text()
    answer = search(project.root, "reconnect policy", scope=["code"])
    assert saved.read_text() != before  # the file list changed: made anew
    assert any(h["path"] == "src/net/reconnect_policy.py" for h in answer["hits"])
