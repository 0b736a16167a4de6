"""Tiny models for the semantic recall tests, written in the formats the optional extra reads (no network,
no torch): a static model in model2vec's layout (``model.safetensors`` with an ``embeddings`` tensor,
``tokenizer.json``), with random vectors over a small vocabulary, except for groups of words given the
same direction, so that paraphrases are near and everything else is not."""

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
