"""Whether semantic recall is on for this project on this machine, and with which model.

``autology semantic enable`` writes ``.autology/local/semantic.json`` (gitignored: the model lives on this
machine): the model's name, the folder its files are in, and its dimension. ``disable`` removes it and
the vectors. Nothing here imports the optional extra: reading the state costs one small file.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from autology_mcp.common.fsutil import atomic_write

STATE = Path(".autology") / "local" / "semantic.json"


@dataclass(frozen=True)
class SemanticState:
    model: str  # a name (the library's) or the folder's name
    path: str  # the folder holding the model's files
    dimension: int
    library: str  # which loader reads the folder

    def to_dict(self) -> dict:
        return asdict(self)


def enabled_here(root: Path) -> bool:
    """Whether semantic recall was turned on here: one stat, so a search or a server start pays nothing when off."""
    return (Path(root) / STATE).is_file()


def load_state(root: Path) -> SemanticState | None:
    """The enabled model, or None (off: the default)."""
    try:
        data = json.loads((Path(root) / STATE).read_text(encoding="utf-8"))
        return SemanticState(str(data["model"]), str(data["path"]), int(data["dimension"]), str(data["library"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def save_state(root: Path, state: SemanticState) -> None:
    from autology_mcp.knowledge.trust.untrusted import ensure_local_ignored

    path = Path(root) / STATE
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(state.to_dict(), indent=1, sort_keys=True) + "\n")
    ensure_local_ignored(Path(root) / ".autology")


def clear_state(root: Path) -> bool:
    path = Path(root) / STATE
    existed = path.exists()
    path.unlink(missing_ok=True)
    return existed


def missing(state: SemanticState) -> str | None:
    """What is missing of the enabled model's files, in a few words (``"the model folder ... is missing"``);
    None when its folder still holds a tokenizer and a model file (whether they load is another matter)."""
    folder = Path(state.path)
    if not folder.is_dir():
        return f"its model folder {folder} is missing"
    if not (folder / "tokenizer.json").is_file():
        return f"its model folder {folder} has no tokenizer.json"
    if not (folder / "model.safetensors").is_file() and not any(folder.glob("*.onnx")) \
            and not any(folder.glob("*/*.onnx")):
        return f"its model folder {folder} has no model file (model.onnx or model.safetensors)"
    return None
