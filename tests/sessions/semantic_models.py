"""Tiny models for the semantic recall tests, written in the formats the optional extra reads (no network,
no torch):

- a static model in model2vec's layout (``model.safetensors`` with an ``embeddings`` tensor,
  ``tokenizer.json``), with random vectors over a small vocabulary, except for groups of words given the
  same direction, so that paraphrases are near and everything else is not;
- a BERT-shaped transformer exported to ONNX (``model.onnx`` and the tokenizer files), random weights: a
  real graph (token and type embeddings, tanh, a projection) that ONNX Runtime runs, written with the
  ``onnx`` package (a test dependency);
- a tiny BERT checkpoint in sentence-transformers' layout (``model.safetensors`` with BertModel's weight
  names, ``config.json``, the tokenizer's files, ``1_Pooling``), random weights.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np


def write_safetensors(path: Path, tensors: dict[str, np.ndarray]) -> None:
    """The safetensors format: an 8-byte header size, a JSON header (dtype, shape, byte offsets), the data."""
    header, data, offset = {}, b"", 0
    for name, array in tensors.items():
        raw = np.ascontiguousarray(array, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape), "data_offsets": [offset, offset + len(raw)]}
        data += raw
        offset += len(raw)
    text = json.dumps(header).encode("utf-8")
    text += b" " * (-len(text) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text + data)


def write_tiny_static_model(folder: Path, words: list[str], synonyms: list[list[str]] = (), dim: int = 32,
                            seed: int = 0, other_norm: float = 0.2) -> Path:
    """A static model whose vocabulary is ``words`` (lower case): random vectors of length ``other_norm``,
    except that the words of each group in ``synonyms`` share one direction, at length 1 (so a text's
    vector points where its synonym-group words point, as a real model's content words dominate)."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    vocab_words = sorted({w.lower() for w in words} | {w.lower() for group in synonyms for w in group})
    vocab = {token: i for i, token in enumerate(["[PAD]", "[UNK]", *vocab_words])}
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((len(vocab), dim)).astype(np.float32)
    for group in synonyms:
        shared = rng.standard_normal(dim).astype(np.float32)
        for word in group:
            vectors[vocab[word.lower()]] = shared
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
    grouped = {vocab[w.lower()] for group in synonyms for w in group}
    for i in range(len(vocab)):
        if i not in grouped:
            vectors[i] *= other_norm
    vectors[vocab["[PAD]"]] = 0
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.save(str(folder / "tokenizer.json"))
    write_safetensors(folder / "model.safetensors", {"embeddings": vectors})
    (folder / "config.json").write_text(json.dumps({"model_type": "model2vec", "hidden_dim": dim, "normalize": True}))
    return folder


ONNX_WORDS = ("the a and of to in is it was i you he she we they session search recall memory code test bug fix "
              "query passage python function class file error import run build deploy database index vector model "
              "nike shoe deal basketball endorsement john caroline support group painting camping").split()


def write_tiny_onnx_model(folder: Path, dim: int = 16, seed: int = 0, model_file: str = "model.onnx") -> Path:
    """A tiny transformer in the layout of an ONNX export (BERT's inputs ``input_ids``, ``attention_mask``,
    ``token_type_ids``; output ``last_hidden_state`` = tanh(token + type embedding) @ W), with a WordPiece
    tokenizer.json that wraps each text in [CLS] ... [SEP]."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    vocab = write_wordpiece_tokenizer(folder)
    (folder / "config.json").write_text(json.dumps({"model_type": "bert", "hidden_size": dim, "pad_token_id": 0}))

    rng = np.random.default_rng(seed)
    weights = {"emb": rng.standard_normal((len(vocab), dim)), "typ": rng.standard_normal((2, dim)) * 0.1,
               "w": rng.standard_normal((dim, dim)) / np.sqrt(dim)}
    inputs = [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "seq"])
              for name in ("input_ids", "attention_mask", "token_type_ids")]
    output = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "seq", dim])
    nodes = [helper.make_node("Gather", ["emb", "input_ids"], ["tok"], axis=0),
             helper.make_node("Gather", ["typ", "token_type_ids"], ["tt"], axis=0),
             helper.make_node("Add", ["tok", "tt"], ["h0"]),
             helper.make_node("Tanh", ["h0"], ["h1"]),
             helper.make_node("MatMul", ["h1", "w"], ["last_hidden_state"])]
    graph = helper.make_graph(nodes, "tiny_bert", inputs, [output], initializer=[
        numpy_helper.from_array(array.astype(np.float32), name) for name, array in weights.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="autology-tests")
    model.ir_version = 8  # what ONNX Runtime reads
    onnx.checker.check_model(model)
    (folder / model_file).parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(folder / model_file))
    return folder


def write_wordpiece_tokenizer(folder: Path) -> dict[str, int]:
    """BERT's tokenizer files over :data:`ONNX_WORDS` (a WordPiece tokenizer.json wrapping each text in
    [CLS] ... [SEP], tokenizer_config.json, special_tokens_map.json); returns the vocabulary."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    pieces = sorted(set(ONNX_WORDS)) + [f"##{c}" for c in "abcdefghijklmnopqrstuvwxyz0123456789"]
    tokens = special + pieces + list("abcdefghijklmnopqrstuvwxyz0123456789.,!?'-:")
    vocab = {token: i for i, token in enumerate(dict.fromkeys(tokens))}  # "a" and "i" are words and letters
    tokenizer = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=100))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])])
    tokenizer.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(json.dumps(
        {"model_max_length": 64, "pad_token": "[PAD]", "tokenizer_class": "BertTokenizer", "do_lower_case": True}))
    (folder / "special_tokens_map.json").write_text(json.dumps(
        {"pad_token": "[PAD]", "unk_token": "[UNK]", "cls_token": "[CLS]", "sep_token": "[SEP]", "mask_token": "[MASK]"}))
    return vocab


def write_tiny_bert_checkpoint(folder: Path, hidden: int = 16, heads: int = 2, layers: int = 2, intermediate: int = 32,
                               seed: int = 0, prefix: str = "", hidden_act: str = "gelu") -> Path:
    """A tiny BERT in the layout sentence-transformers and ``huggingface-cli download`` give: random weights
    in ``model.safetensors`` named as BertModel names them (``prefix`` before each: ``bert.`` for a model
    around it), ``config.json``, the tokenizer's files, ``modules.json`` and mean pooling in
    ``1_Pooling/config.json``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    vocab = write_wordpiece_tokenizer(folder)
    rng = np.random.default_rng(seed)

    def normal(*shape: int, scale: float = 0.2) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    tensors = {"embeddings.word_embeddings.weight": normal(len(vocab), hidden, scale=1.0),
               "embeddings.position_embeddings.weight": normal(64, hidden),
               "embeddings.token_type_embeddings.weight": normal(2, hidden),
               "embeddings.LayerNorm.weight": 1 + normal(hidden, scale=0.1), "embeddings.LayerNorm.bias": normal(hidden)}
    for i in range(layers):
        p = f"encoder.layer.{i}"
        for name in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
            tensors[f"{p}.{name}.weight"], tensors[f"{p}.{name}.bias"] = normal(hidden, hidden, scale=0.5), normal(hidden)
        tensors[f"{p}.intermediate.dense.weight"] = normal(intermediate, hidden, scale=0.5)
        tensors[f"{p}.intermediate.dense.bias"] = normal(intermediate)
        tensors[f"{p}.output.dense.weight"] = normal(hidden, intermediate, scale=0.3)
        tensors[f"{p}.output.dense.bias"] = normal(hidden)
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            tensors[f"{p}.{norm}.weight"], tensors[f"{p}.{norm}.bias"] = 1 + normal(hidden, scale=0.1), normal(hidden)
    tensors["pooler.dense.weight"], tensors["pooler.dense.bias"] = normal(hidden, hidden), normal(hidden)
    write_safetensors(folder / "model.safetensors", {prefix + k: v for k, v in tensors.items()})
    (folder / "config.json").write_text(json.dumps({
        "architectures": ["BertModel"], "model_type": "bert", "hidden_size": hidden, "num_attention_heads": heads,
        "num_hidden_layers": layers, "intermediate_size": intermediate, "hidden_act": hidden_act,
        "layer_norm_eps": 1e-12, "max_position_embeddings": 64, "type_vocab_size": 2, "vocab_size": len(vocab),
        "pad_token_id": 0}))
    (folder / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]))
    (folder / "1_Pooling").mkdir(exist_ok=True)
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(
        {"word_embedding_dimension": hidden, "pooling_mode_cls_token": False, "pooling_mode_mean_tokens": True}))
    return folder
