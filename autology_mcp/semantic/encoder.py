"""Text to vectors, through the optional extra ``autology-mcp[semantic]`` (fastembed: ONNX Runtime, no
torch; decision in ``.autology/``, measurement in docs/benchmarks.md).

A model is a folder on this machine, in one of fastembed's two formats:

- a transformer exported to ONNX (``model.onnx``, ``tokenizer.json``, ``tokenizer_config.json``,
  ``special_tokens_map.json``, ``config.json``): mean pooled, unit length;
- a static model in model2vec's format (``model.safetensors`` with an ``embeddings`` tensor,
  ``tokenizer.json``): token vectors averaged.

:func:`fetch` brings a model of fastembed's own registry into fastembed's cache (the one step that uses
the network, run only by ``autology semantic enable NAME``). Loading never downloads. The library is
imported only here, and only when semantic recall is on.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from autology_mcp.common.errors import ValidationError

EXTRA = "pip install 'autology-mcp[semantic]'"
STATIC, ONNX = "static", "onnx"
# fastembed loads a local folder under a name of its registry with the same kind of model; these two
# stand for "a static model" and "a mean-pooled transformer" (the folder's own files are what is read).
_STATIC_NAME = "minishlab/potion-base-8M"
BATCH = 32


def available() -> bool:
    """Whether the extra is installed (without importing it)."""
    from importlib.util import find_spec

    return find_spec("fastembed") is not None


def folder_kind(folder: Path) -> str:
    """Which of the two formats a model folder holds; ValidationError when neither."""
    folder = Path(folder)
    if (folder / "model.onnx").is_file() and (folder / "tokenizer.json").is_file():
        return ONNX
    if (folder / "model.safetensors").is_file() and (folder / "tokenizer.json").is_file():
        return STATIC
    raise ValidationError(str(folder), "not a model folder: it needs model.onnx (a transformer exported to ONNX) "
                                       "or model.safetensors (a static model2vec model), beside tokenizer.json")


class Encoder:
    """One loaded model: ``encode(texts)`` gives unit-length float32 rows."""

    def __init__(self, folder: Path, threads: int | None = None):
        if not available():
            raise ValidationError("semantic recall", f"the optional extra is not installed: {EXTRA}")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a folder is read as it is: never a download
        from fastembed import TextEmbedding

        self.folder = Path(folder)
        self.kind = folder_kind(self.folder)
        name = _STATIC_NAME if self.kind == STATIC else _onnx_name(self.folder)
        self.model = TextEmbedding(model_name=name, specific_model_path=str(self.folder), threads=threads)
        self.dimension = int(self.encode(["dimension"]).shape[1])

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, getattr(self, "dimension", 0)), dtype=np.float32)
        # fastembed pads each batch to its longest text: longest first, then put back in order
        order = np.argsort([-len(t) for t in texts], kind="stable")
        rows = np.stack(list(self.model.embed([texts[i] for i in order], batch_size=BATCH))).astype(np.float32)
        out = np.empty_like(rows)
        out[order] = rows
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)


def _onnx_name(folder: Path) -> str:
    """A name fastembed's registry knows for a mean-pooled ONNX transformer of this folder's dimension
    (registered once per dimension: the files read are the folder's)."""
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType

    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        dimension = int(config.get("hidden_size") or config.get("dim") or 0)
    except (OSError, ValueError, TypeError):
        dimension = 0
    name = f"autology-local/mean-pooled-{dimension or 'any'}"
    if name not in {m["model"] for m in TextEmbedding.list_supported_models()}:
        TextEmbedding.add_custom_model(model=name, pooling=PoolingType.MEAN, normalization=True,
                                       sources=ModelSource(hf=name), dim=dimension or 384, model_file="model.onnx")
    return name


_loaded: dict[str, Encoder] = {}


def loaded(folder: str) -> Encoder | None:
    """The model of ``folder`` if this process loaded it already."""
    return _loaded.get(folder)


def load(folder: str) -> Encoder:
    """The model of ``folder``, loaded once per process (a server keeps it warm)."""
    if folder not in _loaded:
        _loaded[folder] = Encoder(Path(folder))
    return _loaded[folder]


def registry() -> dict[str, dict]:
    """fastembed's own models by name: dimension, size in GB, and a description (empty without the extra)."""
    if not available():
        return {}
    from fastembed import TextEmbedding

    return {m["model"]: m for m in TextEmbedding.list_supported_models()}


def fetch(name: str, cache_dir: Path) -> Path:
    """Download a model of fastembed's registry into ``cache_dir`` (fastembed's own download, from its
    sources), and return the folder it is in."""
    if not available():
        raise ValidationError("semantic recall", f"the optional extra is not installed: {EXTRA}")
    from fastembed import TextEmbedding

    if name not in registry():
        raise ValidationError("model", f"{name!r} is not one of fastembed's models (autology semantic models lists "
                                       "them), nor a folder")
    try:
        model = TextEmbedding(model_name=name, cache_dir=str(cache_dir))
    except Exception as exc:  # noqa: BLE001 - fastembed raises ValueError, OSError, requests' errors...
        from autology_mcp.common.errors import StorageError

        raise StorageError(str(cache_dir), f"could not download {name} ({exc}); check the network, or put the "
                                           "model's files in a folder and run autology semantic enable --path DIR") from exc
    folder = getattr(model.model, "_model_dir", None)
    if folder is None:
        raise ValidationError("model", f"fastembed did not say where it put {name}")
    return Path(folder)
