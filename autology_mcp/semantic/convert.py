"""A transformer's safetensors weights made into the ONNX model the extra runs, without torch (issue 40).

What ``pip`` weight packages and ``huggingface-cli download`` give is a sentence-transformers or
HuggingFace folder: ``model.safetensors``, ``config.json``, ``tokenizer.json`` (and the tokenizer's other
files, ``1_Pooling/config.json``...). fastembed runs ONNX, so such a folder is converted once, at
``autology semantic enable --path DIR``: the weights are read with numpy (the safetensors format is a
JSON header and the raw tensors), a BERT encoder's graph is written around them with the ``onnx`` package
(part of the extra), and the result goes to a folder of its own in the models cache beside the
tokenizer's and sentence-transformers' files, keyed by the digest of the weights and config, so enabling
the same folder again converts nothing. Texts are cut where sentence-transformers cuts them (its
``max_seq_length``, when the folder has ``sentence_bert_config.json``).

Only BERT's architecture (``model_type`` ``bert``: MiniLM, bge, e5, gte, arctic-embed...) is built; any
other gets one sentence saying what was found and what would do (an ONNX export, or a name fastembed
fetches). The graph is BertModel's forward: embeddings (word + position + token type, LayerNorm), then
per layer self-attention (masked by ``attention_mask``) and the feed-forward block, each with its residual
and LayerNorm; its output is ``last_hidden_state``, pooled by the encoder as the folder says.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import struct
from collections.abc import Callable
from pathlib import Path

import numpy as np

from autology_mcp.common.errors import ValidationError

Progress = Callable[[int, int], None]  # (layers written, layers in all)
VERSION = "1"  # of what a conversion writes: a new one converts again rather than reuse an older one's
# The files of a model folder the converted one keeps beside its model.onnx (what fastembed and the
# encoder read: the tokenizer, the pooling and the prompts).
KEPT = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "config.json", "vocab.txt",
        "config_sentence_transformers.json", "sentence_bert_config.json", "modules.json", "1_Pooling/config.json")
_DTYPES = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "BF16": "<u2"}
_ACTIVATIONS = ("gelu", "gelu_new", "gelu_pytorch_tanh", "gelu_fast", "relu")


def header(path: Path) -> dict:
    """The JSON header of a safetensors file: each tensor's dtype, shape and byte offsets."""
    try:
        with open(path, "rb") as handle:
            size = struct.unpack("<Q", handle.read(8))[0]
            if size > 100 * 2**20:
                raise ValueError("header too large")
            data = json.loads(handle.read(size))
    except (OSError, ValueError, struct.error) as exc:
        raise ValidationError(str(path), f"not a safetensors file that can be read ({exc})") from exc
    if not isinstance(data, dict):
        raise ValidationError(str(path), "not a safetensors file that can be read")
    return {k: v for k, v in data.items() if k != "__metadata__"}


def read_tensors(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of a safetensors file as float32 (F32, F16, BF16 and F64 are read)."""
    tensors = header(path)
    with open(path, "rb") as handle:
        start = 8 + struct.unpack("<Q", handle.read(8))[0]
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    out = {}
    for name, spec in tensors.items():
        dtype = _DTYPES.get(spec.get("dtype"))
        if dtype is None:
            continue  # integer buffers (position_ids): not weights
        begin, end = spec["data_offsets"]
        array = np.frombuffer(raw[start + begin : start + end].tobytes(), dtype=dtype)
        if spec["dtype"] == "BF16":
            array = (array.astype(np.uint32) << 16).view(np.float32)
        out[name] = array.astype(np.float32).reshape(spec["shape"])
    return out


def describe(folder: Path) -> str:
    """What a folder holds, in a few words, for a message."""
    names = sorted(p.name + ("/" if p.is_dir() else "") for p in Path(folder).iterdir()) if Path(folder).is_dir() else []
    return ", ".join(names[:12]) + (f" and {len(names) - 12} more" if len(names) > 12 else "") if names else "nothing"


def is_static(folder: Path) -> bool:
    """A model2vec static model: its safetensors hold one ``embeddings`` tensor (a transformer's hold layers)."""
    return "embeddings" in header(Path(folder) / "model.safetensors")


def check_convertible(folder: Path) -> dict:
    """The folder's config.json when its weights can be converted here; ValidationError, in one sentence
    of what was found and what is needed, when not."""
    folder = Path(folder)
    config_path = folder / "config.json"
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise ValidationError(str(folder), f"found transformer weights (model.safetensors) but no readable config.json "
                                           f"beside them ({describe(folder)}): a HuggingFace model folder has one") from None
    kind = str(config.get("model_type") or "?")
    if kind != "bert":
        raise ValidationError(str(folder), f"found the safetensors weights of a {kind!r} transformer; autology converts "
                                           "BERT models only (MiniLM, bge, e5, gte...): give a folder with its ONNX export "
                                           "(model.onnx beside tokenizer.json), or a name from autology semantic models")
    act = str(config.get("hidden_act", "gelu"))
    if act not in _ACTIVATIONS:
        raise ValidationError(str(folder), f"found a BERT model whose activation is {act!r}; autology converts "
                                           f"{', '.join(_ACTIVATIONS)}: give a folder with its ONNX export instead")
    from importlib.util import find_spec

    if find_spec("onnx") is None:
        raise ValidationError(str(folder), "found a BERT model's safetensors weights; converting them to ONNX needs the "
                                           "onnx package: pip install 'autology-mcp[semantic]' (or pip install onnx)")
    return config


def converted_folder(folder: Path, cache_dir: Path) -> Path:
    """Where the conversion of ``folder`` goes: named after it and the digest of its weights and configs
    and of :data:`VERSION` (other weights in the same folder, or a newer converter, convert again)."""
    digest = hashlib.sha256(VERSION.encode())
    for name in ("model.safetensors", "config.json", "sentence_bert_config.json"):
        path = Path(folder) / name
        if path.is_file():
            with open(path, "rb") as handle:
                while chunk := handle.read(2**22):
                    digest.update(chunk)
    digest = digest.hexdigest()[:16]
    return Path(cache_dir) / f"{Path(folder).resolve().name}-{digest}"


def convert(folder: Path, cache_dir: Path, progress: Progress | None = None) -> Path:
    """The ONNX folder of the transformer in ``folder`` (its safetensors weights), converted now or found
    converted already in ``cache_dir``."""
    folder = Path(folder)
    config = check_convertible(folder)
    target = converted_folder(folder, cache_dir)
    if (target / "model.onnx").is_file():
        return target
    tensors = read_tensors(folder / "model.safetensors")
    model = bert_graph(tensors, config, progress)
    import onnx

    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    for name in KEPT:
        if (folder / name).is_file():
            (partial / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(folder / name, partial / name)
    _limit_length(folder, partial)
    large = sum(t.nbytes for t in tensors.values()) > 1.8 * 2**30  # protobuf's 2 GB: the weights go beside it
    onnx.save_model(model, str(partial / "model.onnx"), save_as_external_data=large,
                    location="model.onnx.data" if large else None)
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)
    return target


def _limit_length(folder: Path, converted: Path) -> None:
    """Texts cut where sentence-transformers cuts them: its ``max_seq_length`` (256 for MiniLM, whose
    tokenizer says 512) becomes the converted folder's ``model_max_length``, the limit fastembed applies."""
    try:
        limit = int(json.loads((folder / "sentence_bert_config.json").read_text(encoding="utf-8"))["max_seq_length"])
        config = json.loads((converted / "tokenizer_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, TypeError):
        return
    given = config.get("model_max_length")
    if limit > 0 and not (isinstance(given, int) and 0 < given <= limit):
        config["model_max_length"] = limit
        (converted / "tokenizer_config.json").write_text(json.dumps(config, indent=1), encoding="utf-8")


def bert_graph(tensors: dict[str, np.ndarray], config: dict, progress: Progress | None = None):
    """BertModel's forward as an ONNX model (opset 17) around these weights: inputs ``input_ids``,
    ``attention_mask``, ``token_type_ids`` (int64, batch x sequence), output ``last_hidden_state``."""
    from onnx import TensorProto, helper, numpy_helper

    weights = {_plain(k): v for k, v in tensors.items()}
    hidden, heads = int(config["hidden_size"]), int(config["num_attention_heads"])
    layers, eps = int(config["num_hidden_layers"]), float(config.get("layer_norm_eps", 1e-12))
    act = str(config.get("hidden_act", "gelu"))
    head_dim = hidden // heads
    nodes, inits = [], []

    def weight(name: str, transpose: bool = False) -> str:
        for candidate in (name, name.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta")):
            if candidate in weights:
                array = weights[candidate]
                inits.append(numpy_helper.from_array(np.ascontiguousarray(array.T if transpose else array), name))
                return name
        raise ValidationError("model.safetensors", f"a BERT model's weights should hold {name!r}: not found "
                                                   "(is it a BERT checkpoint?)")

    constants = {"zero": np.array(0, dtype=np.int64), "one": np.array(1, dtype=np.int64),
                 "heads_shape": np.array([0, 0, heads, head_dim], dtype=np.int64),
                 "hidden_shape": np.array([0, 0, hidden], dtype=np.int64), "mask_axes": np.array([1, 2], dtype=np.int64),
                 "scale": np.array(1.0 / np.sqrt(head_dim), dtype=np.float32),
                 "masked": np.array(-1e9, dtype=np.float32), "one_f": np.array(1.0, dtype=np.float32),
                 "half": np.array(0.5, dtype=np.float32), "sqrt_half": np.array(1.0 / np.sqrt(2.0), dtype=np.float32),
                 "tanh_c": np.array(np.sqrt(2.0 / np.pi), dtype=np.float32),
                 "cube_c": np.array(0.044715, dtype=np.float32)}

    def node(op: str, inputs: list[str], output: str, **attrs) -> str:
        nodes.append(helper.make_node(op, inputs, [output], **attrs))
        return output

    def linear(x: str, prefix: str, out: str) -> str:
        return node("Add", [node("MatMul", [x, weight(f"{prefix}.weight", transpose=True)], f"{out}/mm"),
                            weight(f"{prefix}.bias")], out)

    def layer_norm(x: str, prefix: str, out: str) -> str:
        return node("LayerNormalization", [x, weight(f"{prefix}.weight"), weight(f"{prefix}.bias")], out,
                    axis=-1, epsilon=eps)

    # embeddings: word + position (0..S-1) + token type, then LayerNorm
    length = node("Gather", [node("Shape", ["input_ids"], "ids_shape"), "one"], "length", axis=0)
    positions = node("Range", ["zero", length, "one"], "positions")
    summed = node("Add", [node("Add", [
        node("Gather", [weight("embeddings.word_embeddings.weight"), "input_ids"], "words", axis=0),
        node("Gather", [weight("embeddings.position_embeddings.weight"), positions], "places", axis=0)], "wp"),
        node("Gather", [weight("embeddings.token_type_embeddings.weight"), "token_type_ids"], "types", axis=0)], "emb")
    x = layer_norm(summed, "embeddings.LayerNorm", "h0")
    # the attention mask as a bias on the scores: 0 where attended, -1e9 where padded, [B, 1, 1, S]
    keep = node("Cast", ["attention_mask"], "keep", to=TensorProto.FLOAT)
    bias = node("Unsqueeze", [node("Mul", [node("Sub", ["one_f", keep], "drop"), "masked"], "bias2"), "mask_axes"], "bias")

    for i in range(layers):
        p = f"encoder.layer.{i}"

        def split(name: str, perm: list[int], p=p, i=i) -> str:
            projected = linear(x, f"{p}.attention.self.{name}", f"l{i}/{name}")
            return node("Transpose", [node("Reshape", [projected, "heads_shape"], f"l{i}/{name}/r")], f"l{i}/{name}/t",
                        perm=perm)

        q, k, v = split("query", [0, 2, 1, 3]), split("key", [0, 2, 3, 1]), split("value", [0, 2, 1, 3])
        scores = node("Add", [node("Mul", [node("MatMul", [q, k], f"l{i}/qk"), "scale"], f"l{i}/scaled"), bias],
                      f"l{i}/scores")
        attended = node("MatMul", [node("Softmax", [scores], f"l{i}/p", axis=-1), v], f"l{i}/ctx")
        merged = node("Reshape", [node("Transpose", [attended], f"l{i}/ctx/t", perm=[0, 2, 1, 3]), "hidden_shape"],
                      f"l{i}/ctx/r")
        out = linear(merged, f"{p}.attention.output.dense", f"l{i}/ao")
        x = layer_norm(node("Add", [out, x], f"l{i}/res1"), f"{p}.attention.output.LayerNorm", f"l{i}/h1")
        inner = _activation(node, linear(x, f"{p}.intermediate.dense", f"l{i}/up"), act, f"l{i}/act")
        out = linear(inner, f"{p}.output.dense", f"l{i}/down")
        x = layer_norm(node("Add", [out, x], f"l{i}/res2"), f"{p}.output.LayerNorm",
                       "last_hidden_state" if i == layers - 1 else f"l{i}/h2")
        if progress:
            progress(i + 1, layers)
    if layers == 0:
        x = node("Identity", [x], "last_hidden_state")

    read = {name for n in nodes for name in n.input}  # the constants the graph uses (ONNX Runtime warns of others)
    inits += [numpy_helper.from_array(value, name) for name, value in constants.items() if name in read]
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"])
              for n in ("input_ids", "attention_mask", "token_type_ids")]
    output = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", hidden])
    graph = helper.make_graph(nodes, "bert", inputs, [output], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="autology-mcp")
    model.ir_version = 8
    return model


def _activation(node, x: str, act: str, out: str) -> str:
    if act == "relu":
        return node("Relu", [x], out)
    if act == "gelu":  # the exact one: x * (1 + erf(x / sqrt 2)) / 2
        erf = node("Erf", [node("Mul", [x, "sqrt_half"], f"{out}/s")], f"{out}/erf")
        return node("Mul", [node("Mul", [x, "half"], f"{out}/h"), node("Add", [erf, "one_f"], f"{out}/e1")], out)
    # the tanh approximation: x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))) / 2
    cube = node("Mul", [node("Mul", [node("Mul", [x, x], f"{out}/x2"), x], f"{out}/x3"), "cube_c"], f"{out}/c")
    inner = node("Mul", [node("Add", [x, cube], f"{out}/in"), "tanh_c"], f"{out}/in2")
    return node("Mul", [node("Mul", [x, "half"], f"{out}/h"),
                        node("Add", [node("Tanh", [inner], f"{out}/t"), "one_f"], f"{out}/t1")], out)


def _plain(name: str) -> str:
    """A weight's name as BertModel has it (a checkpoint of a model around it prefixes ``bert.``)."""
    return name[len("bert."):] if name.startswith("bert.") else name
