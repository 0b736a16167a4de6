"""A name renamed the same way everywhere a symbol uses it (issue 38): ``_init_converter_pat`` now
``_INIT_CONVERTER_PAT`` (a linter's naming rule, an editor's rename), the code otherwise the same.

The symbol does what it did when each new name stands for what the old one stood for:
- a variable of the symbol's own (bound in it, not a parameter: a parameter is its signature's, judged
  by the parameter rules);
- or a function, class or constant of the module that the module defines before and after, with the same
  definition under the same renaming (a constant renamed and given another value is a change).

- or a module the module imports under another name (``from importlib import metadata`` now ``... import
  metadata as importlib_metadata``): the same modules, bound to the new name on every branch.

A name defined elsewhere (an import of another module, a builtin, a method of another object) renamed is
another thing called, not a rename, and is not read here. Whether the node names the old name is the
caller's to ask: a rename of a name the node gives is a change of what it says, but for a module's alias
(:func:`same_module`), where what the node names is the module.
"""

from __future__ import annotations

import ast
import copy
import itertools

from autology_mcp.knowledge.trust.code_compare import branch_statements, dump, parameters

_MOST = 3  # names renamed at once: more is a rewrite, not a rename
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def renamed(old: ast.AST, new: ast.AST, old_tree: ast.AST | None, new_tree: ast.AST | None) -> dict[str, str] | None:
    """The renaming (old name: new name) that makes ``old``'s code ``new``'s, each name its own variable or
    a name the module defines the same way before and after; None when there is none."""
    gone, came = sorted(_names(old) - _names(new)), sorted(_names(new) - _names(old))
    if not gone or len(gone) != len(came) or len(gone) > _MOST:
        return None
    want = dump(new, False)
    for order in itertools.permutations(came):
        mapping = dict(zip(gone, order))
        if dump(_renaming(old, mapping), False) == want and all(
                _same_thing(a, b, mapping, old, new, old_tree, new_tree) for a, b in mapping.items()):
            return mapping
    return None


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _renaming(node: ast.AST, mapping: dict[str, str]) -> ast.AST:
    out = copy.deepcopy(node)
    for n in ast.walk(out):
        if isinstance(n, ast.Name) and n.id in mapping:
            n.id = mapping[n.id]
    return out


def _bound(node: ast.AST, name: str) -> bool:
    """Whether ``node`` binds ``name`` (assigns it, loops over it, imports or defines it inside)."""
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, (ast.Store, ast.Del)):
            return True
        if n is not node and isinstance(n, _DEFS) and n.name == name:
            return True
    return False


def _parameters(node: ast.AST) -> set[str]:
    return {name for _, name, _ in parameters(node)}


def _definition(tree: ast.AST | None, name: str) -> ast.AST | None:
    """The module-level statement that defines ``name`` (``def``, ``class``, or a plain ``name = ...``), when
    there is exactly one."""
    if tree is None:
        return None
    found = [s for s in getattr(tree, "body", []) if isinstance(s, _DEFS) and s.name == name
             or isinstance(s, (ast.Assign, ast.AnnAssign)) and any(
                 isinstance(t, ast.Name) and t.id == name for t in (s.targets if isinstance(s, ast.Assign) else [s.target]))]
    return found[0] if len(found) == 1 else None


def _same_thing(a: str, b: str, mapping: dict[str, str], old: ast.AST, new: ast.AST, old_tree: ast.AST | None,
                new_tree: ast.AST | None) -> bool:
    if _bound(old, a) and _bound(new, b) and a not in _parameters(old) and b not in _parameters(new):
        return True
    if same_module(a, b, old_tree, new_tree):
        return True
    then, now = _definition(old_tree, a), _definition(new_tree, b)
    if then is None or now is None or _definition(new_tree, a) is not None:
        return False
    then = _renaming(then, mapping)
    if isinstance(then, _DEFS):
        then.name = mapping.get(then.name, then.name)
    return dump(then, False) == dump(now, False)


def same_module(a: str, b: str, old_tree: ast.AST | None, new_tree: ast.AST | None) -> bool:
    """Whether ``a`` of the old module and ``b`` of the new one are the same modules imported under two names
    (``import importlib_metadata as metadata`` now ``import importlib_metadata``, each branch of a version
    check), ``a`` imported no more."""
    then = _modules_bound(old_tree, a)
    return bool(then) and then == _modules_bound(new_tree, b) and not _modules_bound(new_tree, a)


def _modules_bound(tree: ast.AST | None, name: str) -> frozenset[str]:
    """The modules the module's imports bind to ``name`` (at its top level or under an ``if`` or ``try``):
    ``import a.b as name``, ``from a import b as name`` (``a.b``: a module or a name of it, either way the
    same thing before and after), ``import name``."""
    found = set()
    for node, _ in branch_statements(getattr(tree, "body", [])):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if (alias.asname or alias.name.split(".")[0]) == name}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found |= {f"{node.module}.{alias.name}" for alias in node.names if (alias.asname or alias.name) == name}
    return frozenset(found)
