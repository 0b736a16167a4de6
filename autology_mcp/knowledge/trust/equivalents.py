"""Rewrites a formatter or a linter makes that keep what the code does (issue 38), undone before two
versions of a symbol are compared, so that they are not read as changes to what a node says:

- ``assert False, msg`` is ``raise AssertionError(msg)`` (ruff's B011; ``assert False`` alone is
  ``raise AssertionError``);
- ``not (a is b)`` is ``a is not b``, ``not (a in b)`` is ``a not in b`` (and back: E714, E713);
- a mutable default moved into the body: ``def f(x={})`` is ``def f(x=None): y = x or {}`` (or ``if x is
  None: x = {}``) when the body reads the parameter nowhere else (B006's fix);
- a string marked for translation that keeps its text: ``_("(dynamic)")`` is ``"(dynamic)"`` (``_``,
  ``gettext``, ``gettext_lazy``, ``ugettext``, ``N_``, ``gettext_noop`` called with one string). A node that
  speaks of translation (gettext, i18n, "translat", "locali[sz]") is about that call, so for it the
  wrapping stays a change (:func:`about_translation`).

:func:`canonical` returns a copy with these read the first way; the tree given is not changed.
"""

from __future__ import annotations

import ast
import copy
import re

_TRANSLATORS = frozenset({"_", "gettext", "gettext_lazy", "ugettext", "ugettext_lazy", "N_", "gettext_noop"})
_TRANSLATION = re.compile(r"gettext|\bi18n\b|\bl10n\b|translat|locali[sz]", re.IGNORECASE)
_NEGATED = {ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In}


def about_translation(text: str) -> bool:
    """Whether a node's text speaks of translating strings: then a string newly marked for translation
    is a change of what it says."""
    return _TRANSLATION.search(text) is not None


def canonical(node: ast.AST, translated: bool = True) -> ast.AST:
    """A copy of ``node`` with the equivalent rewrites of this module read one way; ``translated``:
    a string marked for translation reads as the string."""
    out = _Canonical(translated).visit(copy.deepcopy(node))
    for n in ast.walk(out):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _default_back(n)
    return out


class _Canonical(ast.NodeTransformer):
    def __init__(self, translated: bool):
        self.translated = translated

    def visit_Assert(self, node: ast.Assert) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.test, ast.Constant) and node.test.value is False:
            exc = ast.Name("AssertionError", ast.Load())
            if node.msg is not None:
                exc = ast.Call(exc, [node.msg], [])
            return ast.copy_location(ast.Raise(exc=exc, cause=None), node)
        return node

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        test = node.operand
        if isinstance(node.op, ast.Not) and isinstance(test, ast.Compare) and len(test.ops) == 1 \
                and type(test.ops[0]) in _NEGATED:
            flipped = ast.Compare(test.left, [_NEGATED[type(test.ops[0])]()], test.comparators)
            return ast.copy_location(flipped, node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
        if self.translated and name in _TRANSLATORS and len(node.args) == 1 and not node.keywords \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            return node.args[0]
        return node


def _empty(node: ast.AST | None) -> bool:
    """``{}``, ``[]``, ``set()``, ``dict()``, ``list()``: a mutable default's usual values."""
    if isinstance(node, ast.Dict) and not node.keys or isinstance(node, ast.List) and not node.elts:
        return True
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("set", "dict", "list") \
        and not node.args and not node.keywords


def _defaulted(statement: ast.stmt, parameter: str) -> tuple[str, ast.AST] | None:
    """``y = p or {}`` or ``if p is None: p = {}`` (no ``else``): the variable that holds the value, and the
    empty default; else None."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
        v = statement.value
        if isinstance(v, ast.BoolOp) and isinstance(v.op, ast.Or) and len(v.values) == 2 \
                and isinstance(v.values[0], ast.Name) and v.values[0].id == parameter and _empty(v.values[1]):
            return statement.targets[0].id, v.values[1]
    if isinstance(statement, ast.If) and not statement.orelse and len(statement.body) == 1:
        t, (inner,) = statement.test, statement.body
        if isinstance(t, ast.Compare) and isinstance(t.left, ast.Name) and t.left.id == parameter \
                and len(t.ops) == 1 and isinstance(t.ops[0], ast.Is) and isinstance(t.comparators[0], ast.Constant) \
                and t.comparators[0].value is None and isinstance(inner, ast.Assign) and len(inner.targets) == 1 \
                and isinstance(inner.targets[0], ast.Name) and inner.targets[0].id == parameter and _empty(inner.value):
            return parameter, inner.value
    return None


def _default_back(function: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
    """A parameter defaulting to None whose function first sets an empty container in its place, and
    reads the parameter nowhere else, gets the container back as its default (in place)."""
    a = function.args
    pairs = list(zip(a.posonlyargs + a.args, [None] * (len(a.posonlyargs + a.args) - len(a.defaults)) + a.defaults))
    pairs += list(zip(a.kwonlyargs, a.kw_defaults))
    start = 1 if ast.get_docstring(function, clean=False) is not None else 0
    for arg, default in pairs:
        if not (isinstance(default, ast.Constant) and default.value is None):
            continue
        for i, statement in enumerate(function.body[start:start + 3], start):
            found = _defaulted(statement, arg.arg)
            if found is None:
                continue
            holder, empty = found
            rest = function.body[:i] + function.body[i + 1:]
            reads = [n for s in rest for n in ast.walk(s) if isinstance(n, ast.Name) and n.id == arg.arg]
            bound = [n for s in rest for n in ast.walk(s) if isinstance(n, ast.Name) and n.id == holder
                     and not isinstance(n.ctx, ast.Load)]
            if holder != arg.arg and (reads or bound):
                break
            _set_default(a, arg, empty)
            function.body = rest or [ast.Pass()]
            if holder != arg.arg:
                for s in function.body:
                    for n in ast.walk(s):
                        if isinstance(n, ast.Name) and n.id == holder:
                            n.id = arg.arg
            break


def _set_default(a: ast.arguments, arg: ast.arg, value: ast.AST) -> None:
    if arg in a.kwonlyargs:
        a.kw_defaults[a.kwonlyargs.index(arg)] = value
        return
    positional = a.posonlyargs + a.args
    a.defaults[positional.index(arg) - (len(positional) - len(a.defaults))] = value
