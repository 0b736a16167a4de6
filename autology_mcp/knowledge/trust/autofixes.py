"""The fixes a linter makes on its own that keep what the code does (issue 38), read one way before two
versions of a symbol are compared (:func:`.equivalents.canonical` calls :func:`read_fixed`). They are
ruff's safe autofixes of the pyupgrade (UP), comprehension (C4), simplification (SIM), return (RET),
raise (RSE) and import-order (I) families, which a ``pre-commit autoupdate`` or a first ``ruff --fix`` applies across a codebase:

- ``class A(object)`` is ``class A`` (UP004); ``super(A, self)`` (or ``cls``) is ``super()`` (UP008);
- ``IOError``, ``EnvironmentError``, ``WindowsError``, ``socket.error``, ``select.error`` are ``OSError``
  (UP024), ``socket.timeout`` and ``asyncio.TimeoutError`` are ``TimeoutError`` (UP041): aliases; an
  ``except`` tuple that names one class twice names it once (``except (IOError, OSError)`` is ``except
  OSError``);
- ``str("x")``, ``str()``, ``int(1)``, ``float(1.5)``, ``bool(True)``, ``bytes(b"")`` are the literal (UP018);
- ``sorted(list(x))``, ``set(tuple(x))``, ``list(list(x))`` are ``sorted(x)``, ``set(x)``, ``list(x)`` (C414);
- the names of one ``import`` or ``from ... import`` in any order are the same import (isort's I001);
- ``open(p, "r")`` is ``open(p)`` (UP015); ``s.encode("utf-8")`` is ``s.encode()`` (UP012);
- ``@lru_cache()`` is ``@lru_cache`` (UP011), ``@lru_cache(maxsize=None)`` is ``@cache`` (UP033);
- ``dict()``, ``list()``, ``tuple()`` are ``{}``, ``[]``, ``()``, and ``dict(a=1)`` is ``{"a": 1}`` (C408);
  ``set([a, b])`` is ``{a, b}``, ``list([a])`` is ``[a]``, ``tuple([a])`` is ``(a,)`` (C405, C409, C410);
  ``list(x for x in y)`` is ``[x for x in y]``, ``set(...)`` of a generator or a list comprehension is the
  set comprehension, ``dict((k, v) for ...)`` the dict comprehension (C400-C403); ``any([...])`` and
  ``all([...])`` of a list comprehension are of the generator (C419);
- ``k in d.keys()`` is ``k in d``, and ``for k in d.keys()`` is ``for k in d`` (SIM118);
- ``if a:`` holding only ``if b:`` (neither with an ``else``) is ``if a and b:`` (SIM102); ``with a:``
  holding only ``with b:`` is ``with a, b:`` (SIM117);
- ``x = value`` right before ``return x``, ``x`` a variable of the function's own used nowhere else, is
  ``return value`` (RET504);
- ``raise Error()`` is ``raise Error`` (RSE102: raising a class makes the instance with no arguments);
- a function's last statement ``return None`` (or a bare ``return``) is its end: falling off it returns None
  too (RET501, RET502's forms).

Each is read only where the two forms do the same: a name rebound in the module (``open = ...``) is not
looked for; the forms are those of the builtins and standard modules as the code calls them.
"""

from __future__ import annotations

import ast

_OS_ERRORS = frozenset({"IOError", "EnvironmentError", "WindowsError"})
_ALIASES = {("socket", "error"): "OSError", ("select", "error"): "OSError", ("socket", "timeout"): "TimeoutError",
            ("asyncio", "TimeoutError"): "TimeoutError"}
_UTF8 = frozenset({"utf-8", "utf8", "UTF-8", "UTF8"})
_EMPTY = {"dict": lambda: ast.Dict([], []), "list": lambda: ast.List([], ast.Load()),
          "tuple": lambda: ast.Tuple([], ast.Load())}
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_LITERALS = {"str": (str, ""), "bytes": (bytes, b""), "int": (int, 0), "float": (float, 0.0), "bool": (bool, False)}
_COPIES = frozenset({"list", "tuple"})  # an inner call whose result the outer one only iterates
_ITERATING = frozenset({"sorted", "set", "list", "tuple"})


def read_fixed(node: ast.AST) -> ast.AST:
    """``node`` (a copy the caller owns: it is changed in place) with the fixes of this module read one way."""
    node = _Fixed().visit(node)
    for n in ast.walk(node):
        if isinstance(n, _FUNCTIONS):
            _returned_directly(n)
            _none_at_the_end(n)
    return node


def _none_at_the_end(function: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
    """A last ``return None`` or bare ``return`` of the function's body left out (in place)."""
    last = function.body[-1] if function.body else None
    if isinstance(last, ast.Return) and (last.value is None or isinstance(last.value, ast.Constant)
                                         and last.value.value is None):
        function.body = function.body[:-1] or [ast.copy_location(ast.Pass(), last)]


def _name(node: ast.AST) -> str | None:
    """``f`` of ``f(...)``, ``functools.lru_cache`` as ``lru_cache``."""
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None


class _Fixed(ast.NodeTransformer):
    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        self.generic_visit(node)
        node.bases = [b for b in node.bases if not (isinstance(b, ast.Name) and b.id == "object")]
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in _OS_ERRORS and isinstance(node.ctx, ast.Load):
            return ast.copy_location(ast.Name("OSError", ast.Load()), node)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.value, ast.Name) and (node.value.id, node.attr) in _ALIASES and isinstance(node.ctx, ast.Load):
            return ast.copy_location(ast.Name(_ALIASES[(node.value.id, node.attr)], ast.Load()), node)
        return node

    def _decorators(self, node: ast.AST) -> None:
        fixed = []
        for d in node.decorator_list:
            if isinstance(d, ast.Call) and _name(d.func) == "lru_cache" and not d.args:
                if not d.keywords:
                    d = d.func
                elif len(d.keywords) == 1 and d.keywords[0].arg == "maxsize" \
                        and isinstance(d.keywords[0].value, ast.Constant) and d.keywords[0].value.value is None:
                    d = ast.Attribute(d.func.value, "cache", ast.Load()) if isinstance(d.func, ast.Attribute) \
                        else ast.Name("cache", ast.Load())
            fixed.append(d)
        node.decorator_list = fixed

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        self.generic_visit(node)
        self._decorators(node)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        f, name = node.func, _name(node.func)
        if isinstance(f, ast.Name) and name == "super" and len(node.args) == 2 and not node.keywords \
                and isinstance(node.args[0], ast.Name) and isinstance(node.args[1], ast.Name) \
                and node.args[1].id in ("self", "cls"):
            node.args = []
        if isinstance(f, ast.Name) and name == "open":
            if len(node.args) == 2 and _constant(node.args[1]) in ("r", "rt"):
                node.args = node.args[:1]
            node.keywords = [k for k in node.keywords if not (k.arg == "mode" and _constant(k.value) in ("r", "rt"))]
        if isinstance(f, ast.Attribute) and name == "encode" and len(node.args) == 1 and not node.keywords \
                and _constant(node.args[0]) in _UTF8:
            node.args = []
        if not isinstance(f, ast.Name):
            return node
        if name in _LITERALS and not node.keywords and len(node.args) <= 1:
            kind, empty = _LITERALS[name]
            if not node.args and name != "bool":
                return ast.copy_location(ast.Constant(empty), node)
            if node.args and isinstance(node.args[0], ast.Constant) and type(node.args[0].value) is kind:
                return node.args[0]
        if name in _ITERATING and node.args and isinstance(node.args[0], ast.Call) \
                and isinstance(node.args[0].func, ast.Name) and node.args[0].func.id in _COPIES \
                and len(node.args[0].args) == 1 and not node.args[0].keywords:
            node.args = [node.args[0].args[0], *node.args[1:]]
        if name in _EMPTY and not node.args and not node.keywords:
            return ast.copy_location(_EMPTY[name](), node)
        if name == "dict" and not node.args and node.keywords and all(k.arg for k in node.keywords):
            return ast.copy_location(ast.Dict([ast.Constant(k.arg) for k in node.keywords],
                                              [k.value for k in node.keywords]), node)
        if len(node.args) != 1 or node.keywords:
            return node
        arg = node.args[0]
        if name == "set" and isinstance(arg, (ast.List, ast.Tuple)) and arg.elts:
            return ast.copy_location(ast.Set(arg.elts), node)
        if name == "list" and isinstance(arg, ast.List):
            return arg
        if name == "tuple" and isinstance(arg, (ast.List, ast.Tuple)):
            return ast.copy_location(ast.Tuple(arg.elts, ast.Load()), node)
        if name == "list" and isinstance(arg, ast.GeneratorExp):
            return ast.copy_location(ast.ListComp(arg.elt, arg.generators), node)
        if name == "set" and isinstance(arg, (ast.GeneratorExp, ast.ListComp)):
            return ast.copy_location(ast.SetComp(arg.elt, arg.generators), node)
        if name == "dict" and isinstance(arg, (ast.GeneratorExp, ast.ListComp)) and isinstance(arg.elt, ast.Tuple) \
                and len(arg.elt.elts) == 2:
            return ast.copy_location(ast.DictComp(arg.elt.elts[0], arg.elt.elts[1], arg.generators), node)
        if name in ("any", "all") and isinstance(arg, ast.ListComp):
            node.args = [ast.copy_location(ast.GeneratorExp(arg.elt, arg.generators), arg)]
        return node

    def visit_Raise(self, node: ast.Raise) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.exc, ast.Call) and not node.exc.args and not node.exc.keywords \
                and isinstance(node.exc.func, (ast.Name, ast.Attribute)):
            node.exc = node.exc.func
        return node

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.type, ast.Tuple):
            seen, kept = set(), []
            for e in node.type.elts:
                if ast.dump(e) not in seen:
                    seen.add(ast.dump(e))
                    kept.append(e)
            node.type = kept[0] if len(kept) == 1 else ast.copy_location(ast.Tuple(kept, ast.Load()), node.type)
        return node

    def visit_Import(self, node: ast.Import) -> ast.AST:
        node.names = sorted(node.names, key=lambda a: (a.name, a.asname or ""))
        return node

    visit_ImportFrom = visit_Import

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        if len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
            node.comparators = [_without_keys(node.comparators[0])]
        return node

    def visit_For(self, node: ast.For) -> ast.AST:
        self.generic_visit(node)
        node.iter = _without_keys(node.iter)
        return node

    visit_AsyncFor = visit_For

    def visit_If(self, node: ast.If) -> ast.AST:
        self.generic_visit(node)
        if not node.orelse and len(node.body) == 1 and isinstance(node.body[0], ast.If) and not node.body[0].orelse:
            inner = node.body[0]
            tests = [t for test in (node.test, inner.test)
                     for t in (test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test])]
            node.test, node.body = ast.BoolOp(ast.And(), tests), inner.body
        return node

    def visit_With(self, node: ast.With) -> ast.AST:
        self.generic_visit(node)
        if len(node.body) == 1 and type(node.body[0]) is type(node):
            node.items, node.body = node.items + node.body[0].items, node.body[0].body
        return node

    visit_AsyncWith = visit_With


def _constant(node: ast.AST) -> object:
    return node.value if isinstance(node, ast.Constant) else None


def _without_keys(node: ast.AST) -> ast.AST:
    """``d.keys()`` as ``d``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "keys" \
            and not node.args and not node.keywords:
        return node.func.value
    return node


def _returned_directly(function: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
    """``x = value`` then ``return x`` as ``return value``, in every block of the function's own, when ``x`` is
    a plain name that nothing else in the function uses (in place; again until none is left, so that reading
    the result again changes nothing)."""
    for _ in range(50):
        if not _return_one(function):
            return


def _return_one(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    uses: dict[str, int] = {}
    for n in ast.walk(function):
        if isinstance(n, ast.Name):
            uses[n.id] = uses.get(n.id, 0) + 1
    declared = {name for n in ast.walk(function) if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names}

    def fix(body: list[ast.stmt]) -> list[ast.stmt] | None:
        for i in range(len(body) - 1):
            first, then = body[i], body[i + 1]
            if isinstance(first, ast.Assign) and len(first.targets) == 1 and isinstance(first.targets[0], ast.Name) \
                    and isinstance(then, ast.Return) and isinstance(then.value, ast.Name) \
                    and then.value.id == first.targets[0].id and uses.get(then.value.id) == 2 \
                    and then.value.id not in declared:
                return body[:i] + [ast.copy_location(ast.Return(first.value), first)] + body[i + 2:]
        return None

    for n in ast.walk(function):
        if n is not function and isinstance(n, (*_FUNCTIONS, ast.ClassDef, ast.Lambda)) or not isinstance(
                n, (ast.stmt, ast.excepthandler)):
            continue
        for block in ("body", "orelse", "finalbody"):
            statements = getattr(n, block, None)
            if isinstance(statements, list) and statements and isinstance(statements[0], ast.stmt):
                fixed = fix(statements)
                if fixed is not None:
                    setattr(n, block, fixed)
                    return True
    return False
