"""Text to vectors, through the optional extra ``autology-mcp[semantic]`` (fastembed: ONNX Runtime, no
torch; decision in ``.autology/``, measurement in docs/benchmarks.md).

A model is a folder on this machine, read in one of two ways:

- a model of fastembed's registry, by its name (``autology semantic enable NAME`` fetched it): fastembed's
  own description of it says which file to load, how to pool and whether to normalise;
- any other folder, in one of fastembed's two formats: a transformer exported to ONNX (``model.onnx``,
  ``tokenizer.json``, ``tokenizer_config.json``, ``special_tokens_map.json``, ``config.json``), pooled as
  sentence-transformers' ``1_Pooling/config.json`` says (mean when it says nothing: CLS and last-token
  too), with the query and document prompts of ``config_sentence_transformers.json`` when it has them;
  or a static model in model2vec's format (``model.safetensors`` with an ``embeddings`` tensor,
  ``tokenizer.json``): token vectors averaged. Vectors are unit length.

:func:`fetch` brings a model of fastembed's own registry into fastembed's cache (the one step that uses
the network, run only by ``autology semantic enable NAME``), after checking that the host it comes from
answers (:mod:`~autology_mcp.semantic.reach`): offline, it says so at once rather than after fastembed's
retries. Loading never downloads. The library is
imported only here, and only when semantic recall is on.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import numpy as np

from autology_mcp.common.errors import ValidationError
from autology_mcp.common.fsutil import read_json_object
from autology_mcp.semantic.reach import model_host, unreachable
from autology_mcp.semantic.speed import QuerySpeed

EXTRA = "pip install 'autology-mcp[semantic]'"
STATIC, ONNX, WEIGHTS = "static", "onnx", "weights"  # WEIGHTS: a transformer's safetensors, to convert
# fastembed loads a local folder under a name of its registry with the same kind of model: this one stands
# for "a static model" (the folder's own files are what is read); transformers get names of their own.
_STATIC_NAME = "minishlab/potion-base-8M"
BATCH = 32
# The prompts some models of fastembed's registry are trained with (their model cards), put before queries
# and documents when the fetched folder does not name its own.
_SEARCH = "Represent this sentence for searching relevant passages: "
PROMPTS: dict[str, dict[str, str]] = {
    "nomic-ai/nomic-embed-text-v1": {"query": "search_query: ", "document": "search_document: "},
    "intfloat/multilingual-e5-": {"query": "query: ", "document": "passage: "},
    "BAAI/bge-small-en-v1.5": {"query": _SEARCH},
    "BAAI/bge-base-en-v1.5": {"query": _SEARCH},
    "BAAI/bge-large-en-v1.5": {"query": _SEARCH},
    "snowflake/snowflake-arctic-embed-": {"query": _SEARCH},
}


def available() -> bool:
    """Whether the extra is installed (without importing it)."""
    from importlib.util import find_spec

    return find_spec("fastembed") is not None


def folder_kind(folder: Path) -> str:
    """Which format a model folder holds: ONNX, a static model2vec model, or a transformer's safetensors
    weights (:data:`WEIGHTS`, converted to ONNX at enable: :mod:`~autology_mcp.semantic.convert`);
    ValidationError, one sentence of what was found and what is needed, when none."""
    from autology_mcp.semantic.convert import describe, is_static

    folder = Path(folder)
    if not folder.is_dir():
        raise ValidationError(str(folder), "not a model folder: there is no such folder")
    has_tokenizer = (folder / "tokenizer.json").is_file()
    if (folder / "model.onnx").is_file() and has_tokenizer:
        return ONNX
    if (folder / "model.safetensors").is_file():
        if not has_tokenizer:
            raise ValidationError(str(folder), f"found model.safetensors but no tokenizer.json beside it "
                                               f"({describe(folder)}): the model's tokenizer is needed too")
        return STATIC if is_static(folder) else WEIGHTS
    if (folder / "pytorch_model.bin").is_file():
        raise ValidationError(str(folder), "found PyTorch weights (pytorch_model.bin), which only torch reads: give the "
                                           "model's safetensors weights (model.safetensors) or its ONNX export (model.onnx)")
    raise ValidationError(str(folder), f"not a model folder (found {describe(folder)}): it needs model.onnx (a transformer "
                                       "exported to ONNX), or model.safetensors (a transformer's weights, or a static "
                                       "model2vec model), beside tokenizer.json")


class Encoder:
    """One loaded model: ``encode(texts)`` gives documents' unit-length float32 rows, ``encode_query(text)``
    a query's (the two differ only for a model with a query prompt)."""

    clock = staticmethod(time.perf_counter)  # what encode_query is timed with (a test gives its own)

    def __init__(self, folder: Path, name: str | None = None, threads: int | None = None):
        if not available():
            raise ValidationError("semantic recall", f"the optional extra is not installed: {EXTRA}")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a folder is read as it is: never a download
        from fastembed import TextEmbedding

        self.folder = Path(folder)
        known = registry().get(name) if name else None
        if known is not None:  # fetched by name: fastembed knows its file, pooling and normalisation
            self.kind = STATIC if str(known.get("model_file", "")).endswith(".safetensors") else ONNX
            model_name = name
        else:
            self.kind = folder_kind(self.folder)
            if self.kind == WEIGHTS:
                raise ValidationError(str(self.folder), "a transformer's safetensors weights: autology semantic enable "
                                                        "--path converts them to ONNX first")
            model_name = _STATIC_NAME if self.kind == STATIC else _onnx_name(self.folder)
        # fastembed adds no prompt of its own: the folder's, else the one its model card asks for
        card = next((p for prefix, p in PROMPTS.items() if (name or "").startswith(prefix)), {})
        self.prompts = _prompts(self.folder) or card
        self.model = TextEmbedding(model_name=model_name, specific_model_path=str(self.folder), threads=threads)
        self.dimension = int(self.encode(["dimension"]).shape[1])
        self.speed = QuerySpeed()  # every query embedding's time: whether a hook may embed (runtime.query_vector)
        self._first_timings()

    def _first_timings(self) -> None:
        """Three timings of a short question after a first (which warms up), so that the hooks have a
        measure from the start; the queries asked later add theirs (:class:`QuerySpeed`)."""
        question = "which decision explains why the session store writes each file atomically?"
        self._rows([question], self.model.query_embed)  # the first run warms up: not timed
        for _ in range(3):
            self.encode_query(question)

    @property
    def query_ms(self) -> float:
        """The median time of this model's last query embeddings here, in milliseconds."""
        return self.speed.median() or 0.0

    def encode(self, texts: list[str]) -> np.ndarray:
        """Documents' vectors (session turns)."""
        return self._rows([self.prompts.get("document", "") + t for t in texts], self.model.passage_embed)

    def encode_query(self, text: str) -> np.ndarray:
        """A query's vector; the time it took is recorded in :attr:`speed`."""
        start = self.clock()
        row = self._rows([self.prompts.get("query", "") + text], self.model.query_embed)[0]
        self.speed.record((self.clock() - start) * 1000)
        return row

    def _rows(self, texts: list[str], embed) -> np.ndarray:
        if not texts:
            return np.zeros((0, getattr(self, "dimension", 0)), dtype=np.float32)
        # fastembed pads each batch to its longest text: longest first, then put back in order
        order = np.argsort([-len(t) for t in texts], kind="stable")
        rows = np.stack(list(embed([texts[i] for i in order], batch_size=BATCH))).astype(np.float32)
        out = np.empty_like(rows)
        out[order] = rows
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)


def pooling(folder: Path) -> str:
    """How a transformer folder's token vectors become one: sentence-transformers' ``1_Pooling/config.json``
    (``cls``, ``lasttoken`` or ``mean``); mean when the folder does not say."""
    config = read_json_object(Path(folder) / "1_Pooling" / "config.json")
    if config.get("pooling_mode_cls_token"):
        return "cls"
    if config.get("pooling_mode_lasttoken"):
        return "lasttoken"
    return "mean"


def _prompts(folder: Path) -> dict[str, str]:
    """The query and document prompts sentence-transformers keeps for the folder's model (e5's "query: ",
    say); none when it has none."""
    given = read_json_object(Path(folder) / "config_sentence_transformers.json").get("prompts") or {}
    out = {}
    for role, keys in (("query", ("query",)), ("document", ("document", "passage", "corpus"))):
        prompt = next((given[k] for k in keys if isinstance(given.get(k), str)), "")
        if prompt:
            out[role] = prompt
    return out


def _onnx_name(folder: Path) -> str:
    """A name fastembed's registry knows for an ONNX transformer of this folder's pooling and dimension
    (registered once per pair: the files read are the folder's)."""
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType

    config = read_json_object(folder / "config.json")
    try:
        dimension = int(config.get("hidden_size") or config.get("dim") or 0)
    except (ValueError, TypeError):
        dimension = 0
    how = pooling(folder)
    name = f"autology-local/{how}-pooled-{dimension or 'any'}"
    if name not in registry():
        kind = {"cls": PoolingType.CLS, "lasttoken": PoolingType.LAST_TOKEN}.get(how, PoolingType.MEAN)
        TextEmbedding.add_custom_model(model=name, pooling=kind, normalization=True,
                                       sources=ModelSource(hf=name), dim=dimension or 384, model_file="model.onnx")
    return name


_loaded: dict[tuple[str, str | None], Encoder] = {}
_loading = threading.Lock()


def loaded(folder: str, name: str | None = None) -> Encoder | None:
    """The model of ``folder`` (read as ``name`` says) if this process loaded it already."""
    return _loaded.get((folder, name))


def load(folder: str, name: str | None = None) -> Encoder:
    """The model of ``folder``, loaded once per process (a server keeps it warm; two threads asking at
    once load it once)."""
    with _loading:
        if (folder, name) not in _loaded:
            _loaded[(folder, name)] = Encoder(Path(folder), name)
        return _loaded[(folder, name)]


def registry() -> dict[str, dict]:
    """fastembed's own models by name: dimension, size in GB, and a description (empty without the extra)."""
    if not available():
        return {}
    from fastembed import TextEmbedding

    return {m["model"]: m for m in TextEmbedding.list_supported_models()}


def cached(name: str, cache_dir: Path) -> Path | None:
    """The folder of a model of fastembed's registry when a download put it in ``cache_dir`` already
    (the hub's layout: ``models--OWNER--NAME/snapshots/REVISION/``, with the model's file)."""
    model = registry().get(name) or {}
    folder = download_folder(name, cache_dir)
    if folder is None or not model.get("model_file"):
        return None
    return next((s for s in sorted((folder / "snapshots").glob("*")) if (s / model["model_file"]).is_file()), None)


def download_folder(name: str, cache_dir: Path) -> Path | None:
    """Where the hub puts a model of fastembed's registry in ``cache_dir`` (it grows as the download goes)."""
    source = ((registry().get(name) or {}).get("sources") or {}).get("hf")
    return Path(cache_dir) / f"models--{source.replace('/', '--')}" if source else None


def check_download(name: str, cache_dir: Path) -> None:
    """StorageError, at once, when ``name`` is not in ``cache_dir`` yet and the host it is downloaded from
    cannot be reached (:mod:`~autology_mcp.semantic.reach`): the message points to ``--path``."""
    if cached(name, cache_dir) is not None:
        return
    problem = unreachable(model_host())
    if problem:
        from autology_mcp.common.errors import StorageError

        raise StorageError(str(cache_dir), f"could not download {name}: {problem}. Offline, put the model's "
                                           "files in a folder and run autology semantic enable --path DIR")


def fetch(name: str, cache_dir: Path) -> Path:
    """Download a model of fastembed's registry into ``cache_dir`` (fastembed's own download, from its
    sources), and return the folder it is in."""
    if not available():
        raise ValidationError("semantic recall", f"the optional extra is not installed: {EXTRA}")
    from fastembed import TextEmbedding

    if name not in registry():
        raise ValidationError("model", f"{name!r} is not one of fastembed's models (autology semantic models lists "
                                       "them), nor a folder")
    check_download(name, cache_dir)
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
