"""Semantic recall with a transformer exported to ONNX (the kind of every model fastembed fetches but the
static ones): a tiny BERT-shaped model the tests write (tests/sessions/semantic_models.py), run by the
extra's real loading code, and checked against ONNX Runtime run by hand on the same inputs. How a folder's
token vectors become one vector (mean, CLS), a model's query prompt, and a model fetched by name read as
fastembed describes it (its own file name and pooling), end to end through ``autology semantic enable``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from semantic_models import write_tiny_onnx_model
from sessions_helpers import project_with_one_session

from autology_mcp.cli.main import main
from autology_mcp.common.errors import ValidationError
from autology_mcp.semantic.encoder import Encoder, available, folder_kind, pooling
from autology_mcp.sessions.search import search_sessions

pytestmark = pytest.mark.skipif(not available(), reason="the optional extra is not installed (autology-mcp[semantic])")
onnx = pytest.importorskip("onnx")

TEXTS = ["John signed a Nike shoe deal", "the basketball endorsement", "fix the import error in the test"]


def by_hand(folder: Path, texts: list[str], how: str) -> np.ndarray:
    """The model's vectors computed without the extra: ONNX Runtime on the tokenizer's ids, then pooled."""
    import onnxruntime
    from tokenizers import Tokenizer

    session = onnxruntime.InferenceSession(str(next(folder.rglob("*.onnx"))), providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    rows = []
    for text in texts:
        ids = np.array([tokenizer.encode(text).ids], dtype=np.int64)
        hidden = session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids),
                                    "token_type_ids": np.zeros_like(ids)})[0][0]
        row = hidden[0] if how == "cls" else hidden.mean(axis=0)
        rows.append(row / np.linalg.norm(row))
    return np.array(rows, dtype=np.float32)


def with_pooling(folder: Path, how: str) -> Path:
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(
        {"word_embedding_dimension": 16, "pooling_mode_cls_token": how == "cls", "pooling_mode_mean_tokens": how == "mean"}))
    return folder


def test_an_onnx_folder_is_mean_pooled_unless_it_says_otherwise(tmp_path: Path) -> None:
    plain = write_tiny_onnx_model(tmp_path / "plain")
    cls = with_pooling(write_tiny_onnx_model(tmp_path / "cls"), "cls")  # the same weights (same seed)
    assert (pooling(plain), pooling(cls)) == ("mean", "cls")
    mean_vectors, cls_vectors = Encoder(plain).encode(TEXTS), Encoder(cls).encode(TEXTS)
    assert np.allclose(mean_vectors, by_hand(plain, TEXTS, "mean"), atol=1e-5)
    assert np.allclose(cls_vectors, by_hand(cls, TEXTS, "cls"), atol=1e-5)
    assert not np.allclose(mean_vectors, cls_vectors, atol=1e-2)  # pooling matters: read from the folder


def test_a_query_prompt_of_the_folder_is_put_before_queries_only(tmp_path: Path) -> None:
    folder = write_tiny_onnx_model(tmp_path / "prompted")
    (folder / "config_sentence_transformers.json").write_text(json.dumps({"prompts": {"query": "query: ", "document": ""}}))
    model = Encoder(folder)
    assert model.prompts == {"query": "query: "}
    assert np.allclose(model.encode_query("code search"), by_hand(folder, ["query: code search"], "mean")[0], atol=1e-5)
    assert np.allclose(model.encode(["code search"]), by_hand(folder, ["code search"], "mean"), atol=1e-5)


def test_a_model_fetched_by_name_is_read_as_fastembed_describes_it(tmp_path: Path) -> None:
    """fastembed keeps BAAI/bge-small-en-v1.5 as model_optimized.onnx and pools it by its CLS token: read by
    the name it was fetched under, the folder loads, and is pooled so; as a bare folder it is not a model."""
    folder = write_tiny_onnx_model(tmp_path / "bge", model_file="model_optimized.onnx")
    with pytest.raises(ValidationError, match="not a model folder"):
        folder_kind(folder)
    model = Encoder(folder, "BAAI/bge-small-en-v1.5")
    assert model.kind == "onnx"
    assert np.allclose(model.encode(TEXTS), by_hand(folder, TEXTS, "cls"), atol=1e-5)


def test_a_model_fetched_by_name_gets_the_prompts_its_card_asks_for(tmp_path: Path) -> None:
    """nomic-embed-text-v1.5 is trained with "search_query: " and "search_document: " before its texts, and
    fastembed adds neither (its folder keeps the model as onnx/model.onnx, mean pooled)."""
    folder = write_tiny_onnx_model(tmp_path / "nomic", model_file="onnx/model.onnx")
    model = Encoder(folder, "nomic-ai/nomic-embed-text-v1.5")
    assert np.allclose(model.encode_query("fix the bug"), by_hand(folder, ["search_query: fix the bug"], "mean")[0], atol=1e-5)
    assert np.allclose(model.encode(["fix the bug"]), by_hand(folder, ["search_document: fix the bug"], "mean"), atol=1e-5)
    quantised = write_tiny_onnx_model(tmp_path / "nomic-q", model_file="onnx/model_quantized.onnx")
    assert Encoder(quantised, "nomic-ai/nomic-embed-text-v1.5-Q").prompts == model.prompts


def test_enable_by_name_then_search_with_the_fetched_model(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """`autology semantic enable NAME` with fastembed's download stood in for by a copy of the tiny model into
    the cache (the download itself needs the network): enabled under that name, and used by a search."""
    from autology_mcp.semantic import encoder

    source = write_tiny_onnx_model(tmp_path / "source", model_file="model_optimized.onnx")

    def fetch(name: str, cache_dir: Path) -> Path:
        return Path(shutil.copytree(source, cache_dir / name.replace("/", "--")))

    monkeypatch.setattr(encoder, "fetch", fetch)
    monkeypatch.setattr(encoder, "unreachable", lambda url: None)  # the host answers (it is not asked)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = project_with_one_session(tmp_path)
    assert main(["--root", str(root), "semantic", "enable", "BAAI/bge-small-en-v1.5", "--yes"]) == 0
    out = capsys.readouterr().out
    assert "semantic recall on with BAAI/bge-small-en-v1.5 (16 dimensions, onnx model in" in out
    assert "1 turn(s) embedded" in out
    state = json.loads((root / ".autology" / "local" / "semantic.json").read_text())
    assert state["model"] == "BAAI/bge-small-en-v1.5" and state["path"].endswith("BAAI--bge-small-en-v1.5")
    assert [h.session_id for h in search_sessions(root, "Nike deal", 5)] == ["s1"]
    shutil.rmtree(state["path"])  # the cache cleared: status says how to fetch it again
    assert main(["--root", str(root), "semantic", "status"]) == 0
    assert "`autology semantic enable BAAI/bge-small-en-v1.5` to fetch it again" in capsys.readouterr().out
