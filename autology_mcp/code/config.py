"""Settings of the repository index, read from ``[tool.autology.index]`` with good defaults.

Only the settings that change what is indexed (scan, chunking, engine) enter the config hash;
query weights and priors can be tuned without a rebuild.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from autology_mcp.common.config import section
from autology_mcp.common.errors import ValidationError

INDEX_FORMAT_VERSION = 7  # 2: stricter generated-file markers; 3: one normalisation (text.fts_text); 4: neighbours in the FTS body; 5: code chunks only; 6: JS/TS control flow is not a method; 7: Python outlined without ast
ENGINE_ID = "deterministic-hash-tf"
ENGINE_VERSION = 1

DEFAULT_EXTENSIONS = [
    # code
    ".py", ".pyi", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".go", ".rs", ".java", ".kt", ".kts",
    ".scala", ".swift", ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".cs", ".rb", ".php", ".lua",
    ".sh", ".bash", ".zsh", ".sql", ".vue", ".svelte", ".ex", ".exs", ".erl", ".hs", ".ml", ".r", ".jl",
    ".dart", ".m", ".proto", ".graphql",
    # docs and text
    ".md", ".markdown", ".rst", ".txt", ".adoc",
    # config
    ".toml", ".yaml", ".yml", ".json", ".cfg", ".ini", ".html", ".css", ".scss",
]
DEFAULT_FILENAMES = ["Makefile", "Dockerfile", "Justfile", "README", "LICENSE", "CHANGES", "AUTHORS"]
DEFAULT_PRUNE = [
    ".git", ".hg", ".svn", ".autology", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".nox",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis", "dist", "build", "target", "vendor",
    "third_party", "_vendor", ".next", ".cache", "coverage", "htmlcov", ".eggs", "site-packages",
]
DEFAULT_EXCLUDE = [
    "**/*.min.js", "**/*.min.css", "**/*.map", "**/*_pb2.py", "**/*_pb2_grpc.py", "**/*.pb.go",
    "**/package-lock.json", "**/yarn.lock", "**/pnpm-lock.yaml", "**/poetry.lock", "**/uv.lock",
    "**/Cargo.lock", "**/go.sum", "**/*.egg-info/**",
]
DEFAULT_WEIGHTS = {"bm25": 1.0, "symbol": 0.35, "path": 0.25, "vector": 0.5, "exact": 1.0, "recency": 0.0}
DEFAULT_AREA_WEIGHTS = {
    # tests, by the conventions of Python, Go, JavaScript/TypeScript and Ruby
    "**/tests/**": 0.6, "**/test/**": 0.6, "tests/**": 0.6, "test/**": 0.6, "**/test_*.py": 0.6,
    "**/*_test.py": 0.6, "**/conftest.py": 0.6, "**/*_test.go": 0.6, "**/testdata/**": 0.6,
    "**/*.test.*": 0.6, "**/*.spec.*": 0.6, "**/__tests__/**": 0.6, "**/spec/**": 0.6, "**/*_spec.rb": 0.6,
    "**/bench/**": 0.6, "**/benches/**": 0.6, "**/benchmarks/**": 0.6, "**/benchmark/**": 0.6,  # benchmarks
    "docs/**": 0.7, "doc/**": 0.7, "docs_src/**": 0.7, "examples/**": 0.7, "**/CHANGES*": 0.5, "**/CHANGELOG*": 0.5,
    "**/HISTORY*": 0.5, ".github/**": 0.75, "**/*.yaml": 0.85, "**/*.yml": 0.85, "**/*.toml": 0.85,
    "**/*.cfg": 0.85, "**/*.ini": 0.85,
}
ISOLATION_MODES = ("branch-worktree", "none")


@dataclass(frozen=True)
class IndexConfig:
    """Every setting of ``[tool.autology.index]``; see docs/repo-index.md."""

    # scan
    include_roots: list[str] = field(default_factory=lambda: ["."])
    exclude_globs: list[str] = field(default_factory=lambda: list(DEFAULT_EXCLUDE))
    prune_dirs: list[str] = field(default_factory=lambda: list(DEFAULT_PRUNE))
    extensions: list[str] = field(default_factory=lambda: list(DEFAULT_EXTENSIONS))
    filenames: list[str] = field(default_factory=lambda: list(DEFAULT_FILENAMES))
    max_file_bytes: int = 1_000_000
    skip_generated: bool = True
    use_git: bool = True
    include_untracked: bool = False  # in a git work tree: true adds the files git does not track and .gitignore does not exclude
    # chunking
    code_max_lines: int = 80
    code_overlap_lines: int = 10
    doc_max_lines: int = 60
    doc_overlap_lines: int = 8
    text_max_lines: int = 50
    text_overlap_lines: int = 8
    # engine
    dimension: int = 384
    max_bigrams: int = 256
    # storage
    isolation: str = "branch-worktree"
    worktree_hash_length: int = 8
    workers: int = 0  # 0 = one per CPU (at most 4); 1 = no worker processes
    auto_build: bool = True  # a server builds a git work tree's missing index in the background when it starts
    # query
    weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    area_weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_AREA_WEIGHTS))
    max_hits_per_file: int = 2
    candidates: int = 300
    lexical_budget: int = 5000  # above this many matching chunks, the BM25 pass drops very common words
    common_word_ratio: float = 0.2  # "very common": found in more than this share of all chunks

    def build_hash(self) -> str:
        """Hash of the settings that decide what a file's chunks, symbols and vectors are (rule 2 of
        incremental reuse: when it changes, every file is processed again). The settings that only
        choose which files are indexed (SCAN_SETTINGS) are not in it: changing them adds and removes
        files in an incremental build, and the files kept are reused."""
        keep = {k: v for k, v in asdict(self).items() if k not in RUNTIME_SETTINGS | SCAN_SETTINGS}
        keep["format_version"] = INDEX_FORMAT_VERSION
        return _digest(keep)

    def settings_hash(self) -> str:
        """Hash of every setting a build reads (the content settings and the file selection)."""
        return _digest({k: v for k, v in asdict(self).items() if k not in RUNTIME_SETTINGS} | {"format": INDEX_FORMAT_VERSION})


# how a build or a query runs (workers, weights, ...), not what the index stores
RUNTIME_SETTINGS = frozenset({"weights", "area_weights", "max_hits_per_file", "candidates", "common_word_ratio",
                            "lexical_budget", "workers", "isolation", "worktree_hash_length", "auto_build"})
# which files are indexed, not what a file's chunks are
SCAN_SETTINGS = frozenset({"include_roots", "exclude_globs", "prune_dirs", "extensions", "filenames", "max_file_bytes",
                           "use_git", "include_untracked"})


def _digest(settings: dict) -> str:
    return hashlib.sha256(json.dumps(settings, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


_INT_MIN = {
    "max_file_bytes": 1, "code_max_lines": 5, "code_overlap_lines": 0, "doc_max_lines": 5,
    "doc_overlap_lines": 0, "text_max_lines": 5, "text_overlap_lines": 0, "dimension": 16,
    "max_bigrams": 0, "worktree_hash_length": 4, "workers": 0, "max_hits_per_file": 1, "candidates": 10, "lexical_budget": 1,
}


def config_from_dict(raw: dict[str, Any]) -> IndexConfig:
    """Validate a ``[tool.autology.index]`` table into an :class:`IndexConfig`."""
    defaults = IndexConfig()
    known = {f.name for f in fields(IndexConfig)}
    values: dict[str, Any] = {}
    for key, value in raw.items():
        name = key.replace("-", "_")
        if name not in known:
            raise ValidationError(f"[tool.autology.index] {key}", "unknown setting", sorted(known))
        default = getattr(defaults, name)
        where = f"[tool.autology.index] {key}"
        if isinstance(default, bool):
            if not isinstance(value, bool):
                raise ValidationError(where, "must be true or false")
        elif isinstance(default, int):
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValidationError(where, "must be an integer")
            if value < _INT_MIN[name]:
                raise ValidationError(where, f"must be at least {_INT_MIN[name]}")
        elif isinstance(default, list):
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ValidationError(where, "must be a list of strings")
        elif isinstance(default, dict):
            if not isinstance(value, dict) or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in value.values()
            ):
                raise ValidationError(where, "must be a table of numbers")
            if name == "weights":
                unknown = set(value) - set(DEFAULT_WEIGHTS)
                if unknown:
                    raise ValidationError(where, f"unknown weight {sorted(unknown)[0]!r}", sorted(DEFAULT_WEIGHTS))
                value = {**DEFAULT_WEIGHTS, **{k: float(v) for k, v in value.items()}}
            else:
                value = {k: float(v) for k, v in value.items()}
        elif isinstance(default, float):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
                raise ValidationError(where, "must be a number in (0, 1]")
            value = float(value)
        elif isinstance(default, str):
            if name == "isolation" and value not in ISOLATION_MODES:
                raise ValidationError(where, f"unknown mode {value!r}", ISOLATION_MODES)
        values[name] = value
    cfg = IndexConfig(**values)
    for kind in ("code", "doc", "text"):
        if getattr(cfg, f"{kind}_overlap_lines") >= getattr(cfg, f"{kind}_max_lines"):
            raise ValidationError(f"[tool.autology.index] {kind}_overlap_lines", f"must be less than {kind}_max_lines")
    return cfg


def load_index_config(root: str | Path) -> IndexConfig:
    """The index settings of the project at ``root``."""
    return config_from_dict(section(root, "index"))
