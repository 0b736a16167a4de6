"""``autology semantic``: semantic recall, an optional extra (issue 31).

    autology semantic enable [MODEL | --path DIR] [--yes]   # a model from fastembed's registry, or a local folder
    autology semantic status                                # which model, how much of the memory has vectors
    autology semantic sync                                  # embed what has no vector yet
    autology semantic disable                               # off, and the vectors removed
    autology semantic models                                # the models fastembed can fetch, with their sizes

Enabling with a name downloads the model (after showing its size and asking) through fastembed into
``~/.cache/autology/models``, and says at once when the host cannot be reached; with a folder nothing is
downloaded (a BERT's safetensors weights are converted to ONNX once, into the same cache). Long steps
show their progress on stderr. Nothing is ever downloaded at search
time or in a hook. The choice is this machine's (``.autology/local/semantic.json``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from autology_mcp.cli.common import command_group, confirm

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


def _cache_dir() -> Path:
    import os

    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "autology" / "models"


def cmd_enable(args: argparse.Namespace, root: Path) -> int:
    from autology_mcp.common.errors import ValidationError
    from autology_mcp.semantic.encoder import EXTRA, WEIGHTS, available, check_download, fetch, folder_kind, registry
    from autology_mcp.semantic.runtime import enable

    if not available():
        raise ValidationError("semantic recall", f"the optional extra is not installed: {EXTRA}")
    import os
    import warnings

    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # the download's progress is ours (one line)
    warnings.filterwarnings("ignore", message="Cannot enable progress bars")
    given = args.path or (args.model if args.model and Path(args.model).expanduser().is_dir() else None)
    folder = Path(given).expanduser() if given else None
    name = None  # a folder: named after itself
    if folder is None:
        name = args.model or DEFAULT_MODEL
        model = registry().get(name)
        if model is None:
            raise ValidationError("model", f"{name!r} is neither a folder nor one of fastembed's models "
                                           "(autology semantic models lists them)")
        size = model.get("size_in_GB", 0) * 1024
        print(f"{name}: {model.get('dim')} dimensions, about {size:.0f} MB, downloaded by fastembed into {_cache_dir()}.")
        check_download(name, _cache_dir())  # offline: said now, not after the question and fastembed's retries
        if not confirm(args.yes, "Download it?", "Nothing done: run again with --yes."):
            return 1
        folder = _fetch_showing_progress(name, size, _cache_dir(), fetch)
    if name is None and folder_kind(folder) == WEIGHTS:  # a transformer's safetensors: to ONNX, once
        name = folder.resolve().name
        folder = _convert_showing_progress(folder, _cache_dir() / "converted")
    state, encoder = enable(root, folder, name)  # loads it: a folder that does not load is never enabled
    print(f"✓ semantic recall on with {state.model} ({state.dimension} dimensions, {encoder.kind} model in {state.path})")
    return cmd_sync(args, root)


def _convert_showing_progress(folder: Path, cache_dir: Path) -> Path:
    """The transformer's weights in ``folder`` converted to ONNX in ``cache_dir`` (or found converted)."""
    from autology_mcp.semantic.convert import check_convertible, converted_folder, convert

    check_convertible(folder)  # what cannot be converted is said before anything starts
    if (converted_folder(folder, cache_dir) / "model.onnx").is_file():
        return convert(folder, cache_dir)
    line = Progress(f"converting {folder.name}'s safetensors weights to ONNX")
    outcome = "failed"
    try:
        converted = convert(folder, cache_dir, progress=lambda n, total: line.show(f"layer {n} of {total}"))
        outcome = f"done, in {converted}"
    finally:
        line.end(outcome)
    return converted


def _fetch_showing_progress(name: str, size_mb: float, cache_dir: Path, fetch) -> Path:
    """fastembed's download, with the MBs in its folder so far on the progress line (fastembed's own bars
    are off: they would draw one per file, beside this one)."""
    import threading

    from autology_mcp.semantic.encoder import download_folder

    line = Progress(f"downloading {name}")
    folder, done = download_folder(name, cache_dir), threading.Event()

    def watch() -> None:
        while not done.wait(0.25):
            if folder is not None and folder.is_dir():
                got = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())
                line.show(f"{got / 2**20:.0f} of about {size_mb:.0f} MB")

    watcher = threading.Thread(target=watch, name="autology-download-progress", daemon=True)
    watcher.start()
    outcome = "failed"
    try:
        fetched = fetch(name, cache_dir)
        outcome = "done"
    finally:
        done.set()
        watcher.join()
        line.end(outcome)
    return fetched


def cmd_sync(args: argparse.Namespace, root: Path) -> int:
    from autology_mcp.sessions.semantic import sync_turn_vectors

    line = Progress("embedding session memory's turns that have no vector yet")
    done = sync_turn_vectors(root, progress=lambda n, total: line.show(f"{n:,} of {total:,} turns"))
    if done is None:
        line.end("stopped")
        print("semantic recall is off here (autology semantic enable), or its model does not load.", file=sys.stderr)
        return 1
    line.end(f"{done:,} turn(s)")
    print(f"✓ {done} turn(s) embedded")
    return _sync_nodes(root)


def _sync_nodes(root: Path) -> int:
    """The knowledge nodes' pieces that have no vector yet (semantic/nodes.py), when there is a store."""
    from autology_mcp.common.paths import ProjectPaths
    from autology_mcp.knowledge.store import NodeStore
    from autology_mcp.semantic.nodes import sync_node_vectors

    if not ProjectPaths(root).nodes.is_dir():
        return 0
    store = NodeStore(root)
    try:
        store.refresh()  # a fresh clone has node files and no index yet: read them first
        if not sum(store.index.counts_by("type").values()):
            done = sync_node_vectors(root, store.index)  # no node: nothing to show (the vectors of deleted ones go)
        else:
            line = Progress("embedding the knowledge nodes' pieces that have no vector yet")
            done = sync_node_vectors(root, store.index, progress=lambda n, total: line.show(f"{n:,} of {total:,} pieces"))
            line.end(f"{done or 0:,} piece(s)")
    finally:
        store.close()
    print(f"✓ {done or 0} node piece(s) embedded")
    return 0


class Progress:
    """A long step on stderr, in the CLI's way (the index build's bar): at a terminal one line updated in
    place, at most ten times a second, with the time so far; elsewhere (a log, a pipe) only a line when the
    step starts and one when it ends."""

    clock = staticmethod(time.monotonic)

    def __init__(self, label: str, stream=None):
        self.label, self.stream = label, stream or sys.stderr
        self.tty = self.stream.isatty()
        self.started = self.last = self.clock()
        self.stream.write(f"{label} …" + ("" if self.tty else "\n"))
        self.stream.flush()

    def show(self, text: str) -> None:
        now = self.clock()
        if not self.tty or now - self.last < 0.1:
            return
        self.last = now
        self.stream.write(f"\r{self.label}: {text} ({now - self.started:.0f} s)\x1b[K")
        self.stream.flush()

    def end(self, text: str) -> None:
        text = f"{self.label}: {text}, {self.clock() - self.started:.1f} s"
        self.stream.write(f"\r{text}\x1b[K\n" if self.tty else f"{text}\n")
        self.stream.flush()


def cmd_disable(args: argparse.Namespace, root: Path) -> int:
    from autology_mcp.semantic.state import clear_state, load_state
    from autology_mcp.semantic.vectors import VectorCache

    state = load_state(root)
    was_on = clear_state(root)
    VectorCache(root, "", 0).clear()  # the project's cache file, whichever model made it
    print(f"✓ semantic recall off{f' (was {state.model})' if state else ''}; vectors removed" if was_on
          else "semantic recall was not on here; nothing to do")
    return 0


def status_lines(root: Path) -> list[str]:
    """What ``status`` and ``doctor`` say about semantic recall: on or off, whether the model's files are
    there and load, how much of the memory has vectors, and whether the hooks use them now
    (:func:`~autology_mcp.sessions.semantic.coverage`)."""
    from autology_mcp.semantic.encoder import EXTRA, available
    from autology_mcp.semantic.state import load_state
    from autology_mcp.sessions.semantic import coverage

    found = coverage(root)
    if not found["enabled"]:
        return ["semantic recall: off (lexical ranking; `autology semantic enable` turns it on"
                + ("" if available() else f", after {EXTRA}") + ")"]
    if not found["extra_installed"]:
        return [f"semantic recall: enabled with {found['model']}, but the extra is not installed ({EXTRA}): lexical ranking"]
    state = load_state(root)
    kept = found["session_turns_with_vectors"]
    from autology_mcp.semantic.encoder import registry

    fix = (f"  to fix: put its files back in {state.path}, or `autology semantic enable --path DIR` with a model "
           "folder" + (f", or `autology semantic enable {state.model}` to fetch it again" if state.model in registry()
                       else "") + "; or `autology semantic disable`")
    problem = found.get("model_missing") or _load_problem(state, found["hooks"])
    if problem:
        return [f"semantic recall: enabled with {found['model']}, but {problem}: searches rank by words", fix,
                f"  the {kept} vector(s) made are kept for when the model is back"]
    hooks = found["hooks"]
    if hooks.get("use_vectors"):
        used = (f"  hooks: use the vectors (a question embedded in {hooks['query_ms']} ms here, the median of the "
                f"last {hooks['samples']}; their budget is {hooks['budget_ms']:.0f} ms)")
    else:
        used = f"  hooks: rank by words: {hooks.get('why', 'no reason given')}"
    return [f"semantic recall: on with {found['model']} ({found['dimension']} dimensions, {state.path})",
            f"  session turns with a vector: {kept} of {found['session_turns']}",
            f"  knowledge nodes with vectors: {found['nodes_with_vectors']}", used]


def _load_problem(state, hooks: dict) -> str | None:
    """Why the model does not load here, in a sentence; None when it loads (or a running server has it
    loaded and measures it, which says as much without loading it again)."""
    if hooks.get("samples"):
        return None
    from autology_mcp.semantic import encoder

    try:
        encoder.load(state.path, state.model)
    except Exception as exc:  # noqa: BLE001 - whatever the library raises, status says it in a line
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return f"its model does not load ({first[:200]})"
    return None


def cmd_status(args: argparse.Namespace, root: Path) -> int:
    print("\n".join(status_lines(root)))
    return 0


def cmd_models(args: argparse.Namespace, root: Path) -> int:
    from autology_mcp.semantic.encoder import EXTRA, registry

    models = registry()
    if not models:
        print(f"the optional extra is not installed: {EXTRA}", file=sys.stderr)
        return 1
    for name, model in sorted(models.items()):
        print(f"{name:<55} {model.get('dim', '?'):>5}d {model.get('size_in_GB', 0) * 1024:>7.0f} MB")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    leaf = command_group(sub, "semantic", "semantic recall, an optional extra: dense vectors fused with the lexical ranking",
                         __doc__.split("\n\n", 1)[0])
    p = leaf("enable", "turn semantic recall on with a model (a name fastembed can fetch, or a local folder)", cmd_enable)
    p.add_argument("model", nargs="?", help=f"a fastembed model name (default {DEFAULT_MODEL}) or a model folder")
    p.add_argument("--path", help="a local model folder: an ONNX export (model.onnx), a sentence-transformers/HuggingFace "
                                  "BERT (model.safetensors, config.json; converted once), or a model2vec static model")
    p.add_argument("--yes", "-y", action="store_true", help="download without asking")
    leaf("status", "which model, and how much of the memory has vectors", cmd_status)
    leaf("sync", "embed what has no vector yet", cmd_sync)
    leaf("disable", "turn semantic recall off and remove the vectors", cmd_disable)
    leaf("models", "the models fastembed can fetch, with their dimensions and sizes", cmd_models)
