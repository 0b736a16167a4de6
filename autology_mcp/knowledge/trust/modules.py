"""The project's own modules a node names by their dotted path (issue 38): "children are created
through `uvicorn.subprocess.get_subprocess`", "the constant it imports from uvicorn.logging". The
name at the end may live on (``get_subprocess`` in ``uvicorn/_subprocess.py``) while the path the node
gives to it is gone: the module was renamed or removed, and the code it describes imports from
elsewhere. That is a name the node gives gone, as a function's is.

A dotted path counts as a module of the project when a file of the repository was that module
(``uvicorn/subprocess.py``, ``uvicorn/subprocess/__init__.py``, the same under ``src/``) at some
commit of the history; it is gone when the code the node saw held the path, the code now does not,
and no file of the work tree is that module any more.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from autology_mcp.knowledge.trust.code_compare import parse_as_written
from autology_mcp.knowledge.trust.mentions import dotted_paths

Git = Callable[..., "str | None"]


def module_files(module: str) -> list[str]:
    """The files that would be ``module`` (``a.b``): ``a/b.py``, ``a/b/__init__.py``, and both under ``src/``."""
    stem = module.replace(".", "/")
    return [f"{root}{stem}{end}" for root in ("", "src/") for end in (".py", "/__init__.py")]


def holds_path(code: str, module: str) -> bool:
    """Whether ``code`` writes the dotted path ``module`` whole (``from a.b import c``, ``a.b.c``), not as
    the tail of a longer one (``x.a.b``) or the head of a longer word (``a.bc``)."""
    return module in code and re.search(rf"(?<![\w.]){re.escape(module)}(?!\w)", code) is not None


def modules_gone(git: Git, exists: Callable[[str], bool], text: str, held_then: Callable[[list[str]], set[str]],
                 held_now: Callable[[list[str]], set[str]]) -> list[str]:
    """The dotted paths ``text`` gives that the code the node saw held (``held_then`` of the candidates) and
    the code now does not (``held_now``), that some commit of HEAD's history had as a module of the project
    and the work tree has no more (``exists``: a path of the work tree is a file). A path whose longer form
    is gone too is not repeated."""
    candidates = sorted(dotted_paths(text))
    then = held_then(candidates) if candidates else set()
    lost = sorted(then - held_now(sorted(then)), key=lambda m: (-m.count("."), m)) if then else []
    gone: list[str] = []
    for module in lost:
        files = module_files(module)
        if any(g.startswith(module + ".") for g in gone) or any(exists(f) for f in files):
            continue
        if git("log", "-1", "--format=%H", "HEAD", "--", *files):
            gone.append(module)
    return sorted(gone)


def in_code(code: str) -> Callable[[list[str]], set[str]]:
    """Which of the dotted paths one piece of code holds (:func:`holds_path`)."""
    return lambda modules: {m for m in modules if holds_path(code, m)}


_IMPORT = re.compile(r"\bfrom\s+([A-Za-z_][\w.]*)\s+import\s+([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)")


def imports_bound(text: str, under: str, read: Callable[[str], "str | None"]) -> set[str]:
    """The imports ``text`` writes (``from httpie.plugins import plugin_manager``) from a module of the project
    that is the file ``under`` or lies under that folder, which work in the code ``read`` gives (path -> text):
    the module binds the name, or forwards any name it is asked for (a module ``__getattr__``, a star import)."""
    out = set()
    for match in _IMPORT.finditer(text):
        module = match.group(1)
        for file in module_files(module):
            if not (file == under or file.startswith(under.rstrip("/") + "/")):
                continue
            code = read(file)
            bound = _bound(code) if code is not None else set()
            out.update(f"from {module} import {name}" for name in (n.strip() for n in match.group(2).split(","))
                       if name in bound or {"__getattr__", "*"} & bound)
            break
    return out


def imports_gone(text: str, under: str, read_then: Callable[[str], "str | None"],
                 read_now: Callable[[str], "str | None"], then: list[str] | None = None) -> list[str]:
    """The imports :func:`imports_bound` finds working in the code then (or ``then``, those a fingerprint
    recorded) and not in the code now: the registry moved to ``httpie/plugins/registry.py``, and the node's
    import of it from the package no longer works."""
    worked = set(then) if then is not None else imports_bound(text, under, read_then)
    return sorted(worked - imports_bound(text, under, read_now)) if worked else []


def _bound(code: str) -> set[str]:
    """The names a module binds at its top level (in its ``if`` and ``try`` blocks too): its functions,
    classes, variables and imports (``*`` for a star import, which may bind any)."""
    tree = parse_as_written(code)  # (kept per text: the same file is read then, now and at each commit between)
    if tree is None:
        return set()
    found: set[str] = set()
    todo = list(tree.body)
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(stmt.name)
            continue
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            found.update((a.asname or a.name).split(".")[0] for a in stmt.names)
            continue
        for name, value in ast.iter_fields(stmt):
            if name in ("body", "orelse", "finalbody", "handlers") and isinstance(value, list):
                todo += [v for v in value if isinstance(v, ast.stmt)] + \
                    [s for h in value if isinstance(h, ast.ExceptHandler) for s in h.body]
        found.update(n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
                     and not isinstance(stmt, (ast.If, ast.Try)))
    return found
