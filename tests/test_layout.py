"""The package's imports run one way: edges -> retrieval -> (knowledge, code, sessions) -> common.

Every ``import`` in every module counts, the ones inside functions too (a lazy import is still a
dependency). docs/architecture.md draws the same layers.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "autology_mcp"

# What each part may import besides itself. A part missing here fails the test: place it first.
ALLOWED: dict[str, set[str]] = {
    "common": set(),
    "knowledge": {"common"},
    "code": {"common"},
    "semantic": {"common", "knowledge"},  # the optional extra's vectors (issue 31)
    "sessions": {"common", "knowledge", "semantic"},
    "history": {"common", "code"},  # the commits (issue 41); code: the branch namespace its index lives in
    "retrieval": {"common", "knowledge", "code", "sessions", "semantic", "history"},
    "hooks": {"common", "knowledge", "code", "sessions", "retrieval", "semantic", "history"},
    "server": {"common", "knowledge", "code", "sessions", "retrieval", "hooks", "semantic", "history"},  # hosts the hook service
    "setup": {"common", "knowledge"},  # an agent's configuration files (autology setup)
    "cli": {"common", "knowledge", "code", "sessions", "retrieval", "hooks", "server", "setup", "semantic", "history"},
}
CORE = ("common", "knowledge", "code", "semantic", "sessions", "history", "retrieval")
TOP_LEVEL = {"autology_mcp": None, "autology_mcp.__main__": "cli"}  # the version string; `python -m autology_mcp`


def _modules(package: Path = PACKAGE) -> dict[str, Path]:
    mods = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = path
    return mods


def _imports(name: str, path: Path, modules: dict[str, Path] | None = None) -> set[str]:
    """Every module name ``name`` imports (absolute, resolved from relative imports). With ``modules``,
    ``from pkg import a, b`` names only ``pkg.a`` and ``pkg.b`` when both are modules (not ``pkg`` too)."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name if is_package else name.rpartition(".")[0]
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            subs = {f"{module}.{alias.name}" for alias in node.names}
            if modules is None or not subs <= modules.keys():
                found.add(module)
            found.update(subs)
    return found


def _graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (a ``from pkg import name`` of a non-module resolves to pkg)."""
    mods = _modules(package)

    def resolve(target: str) -> str | None:
        while target and target not in mods:
            target = target.rpartition(".")[0]
        return target or None

    graph = {}
    for name, path in mods.items():
        targets = {resolve(t) for t in _imports(name, path, mods) if t.startswith("autology_mcp")}
        graph[name] = {t for t in targets if t and t != name}
    return graph


def _part(module: str) -> str | None:
    if module in TOP_LEVEL:
        return TOP_LEVEL[module]
    return module.split(".")[1]


def test_every_module_belongs_to_a_known_part() -> None:
    unknown = sorted(m for m in _graph() if m not in TOP_LEVEL and _part(m) not in ALLOWED)
    assert not unknown, f"modules outside the layout (add the part to ALLOWED and docs/architecture.md): {unknown}"


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    wrong = []
    for module, targets in sorted(graph.items()):
        part = _part(module)
        for target in sorted(targets):
            target_part = _part(target)
            if target_part is None or target_part == part:
                continue  # the version string, or a module of the same part
            if part is None or target_part not in ALLOWED.get(part, set()):
                wrong.append(f"{module} -> {target}")
    return wrong


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return circles


def test_imports_run_one_way() -> None:
    wrong = upward_imports(_graph())
    assert not wrong, "imports against the layers:\n" + "\n".join(wrong)


def test_no_import_circles() -> None:
    circles = import_circles(_graph())
    assert not circles, "import circles: " + "; ".join(" <-> ".join(c) for c in circles)


def test_core_parts_and_hooks_never_import_mcp() -> None:
    offenders = []
    for name, path in sorted(_modules().items()):
        if _part(name) in (*CORE, "hooks"):
            sdk = {t for t in _imports(name, path) if t.split(".")[0] in ("mcp", "mcp_types")}
            if sdk:
                offenders.append(f"{name}: {sorted(sdk)}")
    assert not offenders, "the MCP SDK belongs to server/ only:\n" + "\n".join(offenders)


def test_the_checks_catch_an_upward_import_and_a_circle(tmp_path: Path) -> None:
    package = tmp_path / "autology_mcp"
    files = {
        "__init__.py": "",
        "common/__init__.py": "",
        "common/paths.py": "def f():\n    from autology_mcp.knowledge import store  # upward, and lazy\n",
        "knowledge/__init__.py": "",
        "knowledge/store.py": "from autology_mcp.knowledge.search import x\n",
        "knowledge/search.py": "from . import store\n",  # a circle, through a relative import
    }
    for rel, text in files.items():
        (package / rel).parent.mkdir(parents=True, exist_ok=True)
        (package / rel).write_text(text)
    graph = _graph(package)
    assert upward_imports(graph) == ["autology_mcp.common.paths -> autology_mcp.knowledge.store"]
    assert import_circles(graph) == [["autology_mcp.knowledge.search", "autology_mcp.knowledge.store"]]
    assert upward_imports(_graph()) == [] and "autology_mcp.server.app" in _graph()["autology_mcp.cli.store"]


def test_architecture_doc_names_every_part_and_module() -> None:
    """docs/architecture.md matches the tree: each part in the tree picture and the rules table, and
    each module named (in backticks) in its part's paragraph."""
    doc = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    missing = []
    for part in ALLOWED:
        if f"├── {part}/" not in doc and f"└── {part}/" not in doc:
            missing.append(f"{part}/ in the tree")
        start = doc.find(f"**{part}/**")
        if start < 0:
            missing.append(f"the paragraph **{part}/**")
            continue
        end = doc.find("\n\n", start)
        paragraph = doc[start : end if end > 0 else len(doc)]
        for path in sorted((PACKAGE / part).glob("*.py")):
            if path.stem not in ("__init__", "__main__") and f"`{path.stem}`" not in paragraph:
                missing.append(f"{part}/{path.name} in its paragraph")
    dirs = sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert dirs == sorted(ALLOWED), f"parts on disk {dirs} differ from the layout {sorted(ALLOWED)}"
    assert not missing, "docs/architecture.md does not name: " + ", ".join(missing)
