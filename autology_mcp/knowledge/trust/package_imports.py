"""An import from the file's own package, written absolute or relative (issue 38): in
``src/markupsafe/__init__.py``, ``from markupsafe._speedups import escape`` and ``from ._speedups import
escape`` import the same thing, and a style commit that turns one into the other (ruff's TID252, or its
reverse) changes nothing a node says. :func:`read_relative` reads the absolute form as the relative one.

The file's package is read from its path: its folders, after a first ``src``, ``lib`` or ``python`` folder
(the usual layouts). An absolute import is of the own package only when it starts with the top folder of
that path (``markupsafe``): a ``pkg/json/x.py`` importing ``json`` imports the standard library's, not its
own folder.
"""

from __future__ import annotations

import ast

_ROOTS = frozenset({"src", "lib", "python"})


def package_of(path: str) -> tuple[str, ...]:
    """The dotted package ``path`` (a Python file) belongs to, as its parts: ``src/markupsafe/_native.py``
    gives ``("markupsafe",)``; a file at the top gives ``()``."""
    folders = path.replace("\\", "/").split("/")[:-1]
    if folders and folders[0] in _ROOTS:
        folders = folders[1:]
    return tuple(folders)


def imports_own_package(tree: ast.AST, path: str) -> bool:
    """Whether ``tree`` (the file at ``path``) imports from its own package by the absolute name."""
    package = package_of(path)
    return bool(package) and any(isinstance(n, ast.ImportFrom) and n.level == 0 and n.module
                                 and n.module.split(".")[0] == package[0] for n in ast.walk(tree))


def read_relative(node: ast.AST, path: str) -> ast.AST:
    """``node`` (a copy the caller owns: changed in place) with each ``from <own package>... import``
    read as the relative import of the same module."""
    package = package_of(path)
    if not package:
        return node
    for n in ast.walk(node):
        if isinstance(n, ast.ImportFrom) and n.level == 0 and n.module:
            relative = _relative(n.module.split("."), package)
            if relative is not None:
                n.level, n.module = relative
    return node


def _relative(parts: list[str], package: tuple[str, ...]) -> tuple[int, str | None] | None:
    if parts[0] != package[0]:
        return None
    shared = 0
    while shared < min(len(parts), len(package)) and parts[shared] == package[shared]:
        shared += 1
    rest = parts[shared:]
    return len(package) - shared + 1, ".".join(rest) or None
