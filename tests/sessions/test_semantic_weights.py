"""The weights people have (issue 40): ``autology semantic enable --path`` on a sentence-transformers /
HuggingFace folder (``model.safetensors``, ``config.json``, ``tokenizer.json``...) converts a BERT to ONNX
once, without torch, and its vectors are BertModel's: checked against a forward pass written here in numpy
from the same weights (embeddings, masked self-attention, feed-forward, LayerNorms; mean pooling), text by
text, unpadded, while the extra embeds them in padded batches. A folder that cannot be used gets one
sentence, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from semantic_models import write_tiny_bert_checkpoint, write_tiny_static_model
from sessions_helpers import project_with_one_session

from autology_mcp.cli.main import main
from autology_mcp.semantic.encoder import available

pytestmark = pytest.mark.skipif(not available(), reason="the optional extra is not installed (autology-mcp[semantic])")
pytest.importorskip("onnx")

TEXTS = ["John signed a Nike shoe deal", "the basketball endorsement", "fix the import error in the test",
         "a much longer text about the session search and the memory of the code index, padded against the rest"]


def bert_by_hand(folder: Path, text: str, max_length: int | None = None) -> np.ndarray:
    """BertModel's last hidden state for one text, mean-pooled and unit length, in numpy from the checkpoint
    (the text cut at ``max_length`` tokens, as sentence-transformers cuts it)."""
    from tokenizers import Tokenizer

    from autology_mcp.semantic.convert import read_tensors

    config = json.loads((folder / "config.json").read_text())
    w = {k.removeprefix("bert."): v.astype(np.float64) for k, v in read_tensors(folder / "model.safetensors").items()}
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    if max_length:
        tokenizer.enable_truncation(max_length)
    ids = tokenizer.encode(text).ids
    heads, eps = config["num_attention_heads"], config["layer_norm_eps"]

    def norm(x, p):
        mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + eps) * w[f"{p}.weight"] + w[f"{p}.bias"]

    def dense(x, p):
        return x @ w[f"{p}.weight"].T + w[f"{p}.bias"]

    def gelu(x):
        if config["hidden_act"] == "gelu":
            from math import erf

            return 0.5 * x * (1 + np.vectorize(erf)(x / np.sqrt(2)))
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))

    x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][: len(ids)]
         + w["embeddings.token_type_embeddings.weight"][0])
    x = norm(x, "embeddings.LayerNorm")
    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}"
        q, k, v = (dense(x, f"{p}.attention.self.{n}").reshape(len(ids), heads, -1).transpose(1, 0, 2)
                   for n in ("query", "key", "value"))
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1])
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        context = (probs @ v).transpose(1, 0, 2).reshape(len(ids), -1)
        x = norm(dense(context, f"{p}.attention.output.dense") + x, f"{p}.attention.output.LayerNorm")
        x = norm(dense(gelu(dense(x, f"{p}.intermediate.dense")), f"{p}.output.dense") + x, f"{p}.output.LayerNorm")
    pooled = x.mean(axis=0)
    return (pooled / np.linalg.norm(pooled)).astype(np.float32)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return project_with_one_session(tmp_path)


def enable(root: Path, folder: Path) -> int:
    return main(["--root", str(root), "semantic", "enable", "--path", str(folder)])


@pytest.mark.parametrize("prefix,act", [("", "gelu"), ("bert.", "gelu_new")])
def test_a_sentence_transformers_folder_is_converted_and_gives_bert_s_vectors(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], prefix: str, act: str) -> None:
    from autology_mcp.semantic import encoder

    folder = write_tiny_bert_checkpoint(tmp_path / "tiny-bert", prefix=prefix, hidden_act=act)
    assert enable(project, folder) == 0
    captured = capsys.readouterr()
    assert "converting tiny-bert's safetensors weights to ONNX …" in captured.err
    assert "semantic recall on with tiny-bert (16 dimensions, onnx model in" in captured.out
    assert "1 turn(s) embedded" in captured.out
    state = json.loads((project / ".autology" / "local" / "semantic.json").read_text())
    converted = Path(state["path"])
    assert state["model"] == "tiny-bert" and converted.parent == tmp_path / "cache" / "autology" / "models" / "converted"
    assert {"model.onnx", "tokenizer.json", "config.json", "1_Pooling"} <= {p.name for p in converted.iterdir()}
    model = encoder.load(str(converted), "tiny-bert")
    expected = np.stack([bert_by_hand(folder, t) for t in TEXTS])
    assert np.allclose(model.encode(TEXTS), expected, atol=1e-4)  # a padded batch, masked as BertModel masks
    assert np.allclose(model.encode_query(TEXTS[1]), expected[1], atol=1e-4)
    assert not np.allclose(expected[0], expected[1], atol=0.05)  # the texts differ: the check has teeth


def test_texts_are_cut_where_sentence_transformers_cuts_them(project: Path, tmp_path: Path) -> None:
    from autology_mcp.semantic import encoder

    folder = write_tiny_bert_checkpoint(tmp_path / "short-bert")
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 8, "do_lower_case": False}))
    assert enable(project, folder) == 0
    converted = Path(json.loads((project / ".autology" / "local" / "semantic.json").read_text())["path"])
    assert json.loads((converted / "tokenizer_config.json").read_text())["model_max_length"] == 8  # it said 64
    vector = encoder.load(str(converted), "short-bert").encode([TEXTS[3]])[0]
    assert np.allclose(vector, bert_by_hand(folder, TEXTS[3], max_length=8), atol=1e-4)
    assert not np.allclose(vector, bert_by_hand(folder, TEXTS[3]), atol=1e-2)  # the whole text differs


def test_status_after_the_converted_model_is_gone_points_to_the_weights_not_to_a_download(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    folder = write_tiny_bert_checkpoint(tmp_path / "tiny-bert")
    assert enable(project, folder) == 0
    shutil.rmtree(json.loads((project / ".autology" / "local" / "semantic.json").read_text())["path"])
    capsys.readouterr()
    assert main(["--root", str(project), "semantic", "status"]) == 0
    out = capsys.readouterr().out
    assert "but its model folder" in out and "is missing" in out and "--path DIR" in out
    assert "autology semantic enable tiny-bert" not in out  # not a name anything can fetch


def test_enabling_the_same_folder_again_converts_nothing(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_tiny_bert_checkpoint(tmp_path / "tiny-bert")
    assert enable(project, folder) == 0
    first = json.loads((project / ".autology" / "local" / "semantic.json").read_text())["path"]
    onnx_file = Path(first) / "model.onnx"
    stamp = onnx_file.stat().st_mtime_ns
    capsys.readouterr()
    assert enable(project, folder) == 0
    assert "converting" not in capsys.readouterr().err
    assert json.loads((project / ".autology" / "local" / "semantic.json").read_text())["path"] == first
    assert onnx_file.stat().st_mtime_ns == stamp
    write_tiny_bert_checkpoint(folder, seed=7)  # other weights in the same folder: converted again
    assert enable(project, folder) == 0
    assert json.loads((project / ".autology" / "local" / "semantic.json").read_text())["path"] != first


def test_a_static_model_is_still_read_as_one(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_tiny_static_model(tmp_path / "static", ["john", "nike", "deal"])
    assert enable(project, folder) == 0
    assert "static model in" in capsys.readouterr().out


def one_sentence(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "Traceback" not in err[0], err
    return err[0]


def test_a_folder_that_cannot_be_used_gets_one_sentence(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = write_tiny_bert_checkpoint(tmp_path / "nomic")
    config = json.loads((other / "config.json").read_text())
    (other / "config.json").write_text(json.dumps({**config, "model_type": "nomic_bert"}))
    assert enable(project, other) == 1
    said = one_sentence(capsys)
    assert "found the safetensors weights of a 'nomic_bert' transformer; autology converts BERT models only" in said
    assert "model.onnx" in said

    no_tokenizer = write_tiny_bert_checkpoint(tmp_path / "no-tokenizer")
    (no_tokenizer / "tokenizer.json").unlink()
    assert enable(project, no_tokenizer) == 1
    assert "found model.safetensors but no tokenizer.json beside it" in one_sentence(capsys)

    torch_only = tmp_path / "torch-only"
    torch_only.mkdir()
    (torch_only / "pytorch_model.bin").write_bytes(b"\0" * 64)
    (torch_only / "config.json").write_text("{}")
    assert enable(project, torch_only) == 1
    assert "found PyTorch weights (pytorch_model.bin), which only torch reads" in one_sentence(capsys)

    broken = write_tiny_bert_checkpoint(tmp_path / "broken")
    (broken / "model.safetensors").write_bytes(b"\xff" * 16)
    assert enable(project, broken) == 1
    assert "not a safetensors file that can be read" in one_sentence(capsys)

    from semantic_models import write_safetensors

    from autology_mcp.semantic.convert import read_tensors

    truncated = write_tiny_bert_checkpoint(tmp_path / "truncated", layers=1)  # a layer's weights missing
    kept = {k: v for k, v in read_tensors(truncated / "model.safetensors").items() if "layer.0.output" not in k}
    write_safetensors(truncated / "model.safetensors", kept)
    assert enable(project, truncated) == 1
    err = capsys.readouterr().err.strip().splitlines()  # the conversion's start and end lines, then the sentence
    assert ": failed, " in err[1]
    assert len(err) == 3 and "Traceback" not in "".join(err)
    assert err[2].startswith("error: ") and "should hold 'encoder.layer.0.output.dense.weight': not found" in err[2]
    assert not (project / ".autology" / "local" / "semantic.json").exists()
