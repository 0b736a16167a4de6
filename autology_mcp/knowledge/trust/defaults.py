"""A function read at the defaults of the parameters it gained (issue 38): what a caller who passes nothing new
gets. An option added beside the code a node describes keeps what the node says when, left at its default, the
code does what it did:

- ``strip_trailing_zero: bool = True`` added, and the stripping the node describes now under
  ``if strip_trailing_zero:``: at the default the stripping runs, as before;
- ``installed: Optional[bool] = None`` added, and ``if installed and item.is_prerelease: item = parse(...)``:
  at the default the new branch never runs.

Only a test that the defaults decide is read, of a parameter the function never binds again (the name, ``not``, ``and``/``or``, ``is None``/``is not None``,
``==``/``!=`` a constant); any other test, or a default that is not a constant, leaves the code as it is. A
parameter the node names is what the node is about, so its code is never read away (``names``).
"""

from __future__ import annotations

import ast
import copy

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_UNKNOWN = object()


def read_at_defaults(old: ast.AST, new: ast.AST, names: set[str] = frozenset()) -> ast.AST:
    """``new`` with each ``if`` on parameters its functions gained (not in ``old``'s function of the same name, not
    named by the node) replaced by the branch their defaults take. ``new`` itself when no test is decided."""
    olds = {f.name: f for f in _functions(old)}
    plan = []
    for function in _functions(new):
        then = olds.get(function.name)
        if then is None:
            continue
        gained = _constant_defaults(function) - _names(then) - set(names) - _rebound(function)
        values = {k: v for k, v in _default_values(function).items() if k in gained}
        if values and _decides_any(function, values):
            plan.append((function.name, values))
    if not plan:
        return new
    new = copy.deepcopy(new)
    for function in _functions(new):
        for name, values in plan:
            if function.name == name:
                function.body = _resolved(function.body, values) or [ast.Pass()]
    return new


def _functions(node: ast.AST) -> list[ast.AST]:
    """The function itself, or the methods a class defines directly."""
    if isinstance(node, _FUNCTIONS):
        return [node]
    if isinstance(node, ast.ClassDef):
        return [n for n in node.body if isinstance(n, _FUNCTIONS)]
    return []


def _names(function: ast.AST) -> set[str]:
    a = function.args
    every = [*a.posonlyargs, *a.args, *a.kwonlyargs, *([a.vararg] if a.vararg else []), *([a.kwarg] if a.kwarg else [])]
    return {p.arg for p in every}


def _default_values(function: ast.AST) -> dict[str, object]:
    a = function.args
    positional = [*a.posonlyargs, *a.args]
    pairs = list(zip(positional[len(positional) - len(a.defaults):], a.defaults))
    pairs += [(p, d) for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
    return {p.arg: d.value for p, d in pairs if isinstance(d, ast.Constant)}


def _constant_defaults(function: ast.AST) -> set[str]:
    return set(_default_values(function))


def _rebound(function: ast.AST) -> set[str]:
    """The names the function's own code binds (``prereleases = self.prereleases`` when it was None): a parameter
    bound again no longer holds its default where it is tested."""
    bound = set()
    for node in _own_nodes(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
    return bound


def _value(test: ast.AST, values: dict[str, object]) -> object:
    """What ``test`` is at the defaults, or _UNKNOWN."""
    if isinstance(test, ast.Name):
        return values.get(test.id, _UNKNOWN)
    if isinstance(test, ast.Constant):
        return test.value
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        v = _value(test.operand, values)
        return _UNKNOWN if v is _UNKNOWN else not v
    if isinstance(test, ast.BoolOp):
        known = [_value(v, values) for v in test.values]
        deciding = False if isinstance(test.op, ast.And) else True
        if any(v is not _UNKNOWN and bool(v) is deciding for v in known):
            return deciding
        return _UNKNOWN if any(v is _UNKNOWN for v in known) else (not deciding)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, right = _value(test.left, values), _value(test.comparators[0], values)
        if left is _UNKNOWN or right is _UNKNOWN or not isinstance(test.left, ast.Name):
            return _UNKNOWN
        op = test.ops[0]
        if isinstance(op, ast.Is):
            return left is right
        if isinstance(op, ast.IsNot):
            return left is not right
        if isinstance(op, ast.Eq):
            return left == right
        if isinstance(op, ast.NotEq):
            return left != right
    return _UNKNOWN


def _decided(test: ast.AST, values: dict[str, object]) -> bool:
    """Whether the defaults decide ``test`` and it reads one of the gained parameters."""
    if not any(isinstance(n, ast.Name) and n.id in values for n in ast.walk(test)):
        return False
    return _value(test, values) is not _UNKNOWN


def _decides_any(function: ast.AST, values: dict[str, object]) -> bool:
    return any(isinstance(n, ast.If) and _decided(n.test, values) for n in _own_nodes(function))


def _own_nodes(function: ast.AST):
    """The nodes of ``function``'s body, not those of the functions or classes it defines."""
    stack = list(function.body)
    while stack:
        node = stack.pop()
        yield node
        stack.extend(c for c in ast.iter_child_nodes(node) if not isinstance(c, (*_FUNCTIONS, ast.ClassDef)))


def _resolved(body: list[ast.stmt], values: dict[str, object]) -> list[ast.stmt]:
    """The statements of ``body``, each decided ``if`` replaced by the branch the defaults take, in nested blocks
    too (not inside functions or classes defined there)."""
    out: list[ast.stmt] = []
    for statement in body:
        if isinstance(statement, ast.If) and _decided(statement.test, values):
            taken = statement.body if _value(statement.test, values) else statement.orelse
            out.extend(_resolved(taken, values))
            continue
        for field in ("body", "orelse", "finalbody"):
            block = getattr(statement, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt) \
                    and not isinstance(statement, (*_FUNCTIONS, ast.ClassDef)):
                setattr(statement, field, _resolved(block, values) or [ast.Pass()])
        if isinstance(statement, ast.Try):
            for handler in statement.handlers:
                handler.body = _resolved(handler.body, values) or [ast.Pass()]
        out.append(statement)
    return out
