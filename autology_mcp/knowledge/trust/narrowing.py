"""The checks a type checker asks for (issue 38), read away before two versions of a function are compared.
Turning on mypy adds them by the dozen ("can't really happen, but we must please mypy"), and none changes what a
node says of the code when the value is there:

- ``if x is None: raise RuntimeError(...)`` (a test of a name or an attribute chain, ``or``-ed tests too, and a
  body that only raises) and ``assert x is not None``: the value is taken to be there, as it was before;
- ``if x is None: v = "<unknown>" else: v = f(x)`` (or the test the other way, ``is not None``, with the
  branches swapped) and ``v = "<unknown>" if x is None else f(x)``: ``v = f(x)``, the fallback a constant; such
  a ``v`` read once afterwards is read as its value there (``f"Starting call to '{fn_name}'"`` is the
  ``f"Starting call to '{get_callback_name(fn)}'"`` it was);
- a local bound once to a name or an attribute chain (``fut = retry_state.outcome``) and never bound again is
  that chain wherever it is read (``fut.failed`` is ``retry_state.outcome.failed``), unless the function hands
  work to a new helper (:func:`aliases_read`).

A node that speaks of ``None`` is about such a check, so for it they stay (:func:`about_none`); so does a guard
whose exception the node names (:func:`guards_raise`: "an unknown name raises ValueError").

The other way round, a value tested for its truth that is now tested against None (``sent and str(sent) or '-'``
now ``sent is not None and ...``), or back, changes what happens to zero and empty values: for a node that speaks
of them (:func:`about_falsy`) that is a change of what it says (:func:`none_told_apart`).
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Callable

from autology_mcp.knowledge.trust.code_compare import dotted

_NONE = re.compile(r"\bNone\b")


def about_none(text: str) -> bool:
    """Whether a node's text speaks of ``None``: then a check for it is a change of what it says."""
    return _NONE.search(text) is not None


_FALSY = re.compile(r"\b(?:zero|empty|falsy|falsey)\b|(?<![\w.])0(?![\w.])", re.IGNORECASE)


def about_falsy(text: str) -> bool:
    """Whether a node's text speaks of a false value that is not None: zero, an empty one ("a zero-length response
    logs '-', not 0"). A test of a value's truth made a test against None (or the other way) changes what happens to
    it, whatever else stays."""
    return _FALSY.search(text) is not None


def none_told_apart(old: list[ast.AST], new: list[ast.AST]) -> str | None:
    """A value ``old`` tested for its truth that ``new`` tests against None, or the other way
    (``getattr(resp, 'sent', None) and str(resp.sent) or '-'`` now ``getattr(resp, 'sent', None) is not None and
    ...``): zero and empty values now go the other way. None when no test changed so."""
    bare_then, none_then = _truth_tests(old)
    bare_now, none_now = _truth_tests(new)
    told = (bare_then & none_now) - none_then
    merged = (none_then & bare_now) - bare_then
    if told:
        return f"a test of `{_short(min(told))}` now tells None from other false values (zero, empty)"
    if merged:
        return f"a test of `{_short(min(merged))}` no longer tells None from other false values (zero, empty)"
    return None


def _short(source: str) -> str:
    return source if len(source) <= 60 else source[:57] + "..."


def _truth_tests(nodes: list[ast.AST]) -> tuple[set[str], set[str]]:
    """The values ``nodes`` test for their truth (``if x``, ``x and y``, ``not x``), and those they test against
    None (``x is None``, ``x is not None``), each as its source."""
    bare, against_none = set(), set()

    def test(e: ast.AST) -> None:
        if isinstance(e, ast.BoolOp):
            for v in e.values:
                test(v)
        elif isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
            test(e.operand)
        elif _compared_to_none(e, (ast.Is, ast.IsNot)):
            against_none.add(ast.unparse(e.left))
        elif not isinstance(e, (ast.Compare, ast.Constant)):
            bare.add(ast.unparse(e))

    for root in nodes:
        for n in ast.walk(root):
            if isinstance(n, (ast.If, ast.While, ast.IfExp, ast.Assert)):
                test(n.test)
            elif isinstance(n, ast.BoolOp):
                test(n)
            elif isinstance(n, ast.comprehension):
                for cond in n.ifs:
                    test(cond)
    return bare, against_none


def read_unnarrowed(function: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
    """``function`` with the checks of this module read away, in place (the aliases aside: :func:`aliases_read`)."""
    _statements(function.body)


def aliases_read(node: ast.AST) -> ast.AST:
    """A copy of ``node`` with each function's locals bound once to an attribute chain read as the chain: to tell
    whether two versions are the same code, and to compare them when the symbol hands none of its work to a new
    helper (a helper extracted from it takes the local as a parameter, and must find the statements it took as they
    were written)."""
    out = copy.deepcopy(node)
    for n in [n for n in ast.walk(out) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
        _read_aliases(n)
    return out


def _none_test(test: ast.AST, op: type) -> bool:
    """``x is None`` (``op`` ``ast.Is``) or ``x is not None`` (``ast.IsNot``) of a name or an attribute chain;
    for ``is None``, also several joined by ``or`` (for ``is not None``, by ``and``)."""
    joined = ast.Or if op is ast.Is else ast.And
    if isinstance(test, ast.BoolOp) and isinstance(test.op, joined):
        return all(_none_test(v, op) for v in test.values)
    return _compared_to_none(test, op) and dotted(test.left) is not None


def _compared_to_none(test: ast.AST, op: type | tuple[type, ...]) -> bool:
    """``x is None`` or ``x is not None`` (as ``op`` allows), whatever ``x`` is."""
    return (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], op)
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None)


def guards_raise(node: ast.AST) -> set[str]:
    """The exceptions the ``if x is None: raise ...`` guards of ``node`` raise (``ValueError`` of ``raise
    ValueError(f"Unsupported locale '{name}'")``): a node that names one speaks of what the guard does, so the
    guard is behaviour it describes, not a check for a type checker."""
    found = set()
    for n in ast.walk(node):
        if isinstance(n, ast.If) and _guard(n):
            for r in n.body:
                error = r.exc.func if isinstance(r.exc, ast.Call) else r.exc
                name = dotted(error) if error is not None else None
                if name:
                    found.add(name.rsplit(".", 1)[-1])
    return found


def _guard(statement: ast.stmt) -> bool:
    """``if x is None: raise ...`` with no ``else``, or ``assert x is not None``."""
    if isinstance(statement, ast.Assert):
        return statement.msg is None and _none_test(statement.test, ast.IsNot)
    return (isinstance(statement, ast.If) and not statement.orelse and _none_test(statement.test, ast.Is)
            and all(isinstance(s, ast.Raise) for s in statement.body))


def _assigned(body: list[ast.stmt]) -> tuple[str, ast.expr] | None:
    """The name and value of a body that is one ``name = value``."""
    if len(body) == 1 and isinstance(body[0], ast.Assign) and len(body[0].targets) == 1 \
            and isinstance(body[0].targets[0], ast.Name):
        return body[0].targets[0].id, body[0].value
    return None


def _defaulted(statement: ast.stmt) -> ast.Assign | None:
    """``v = E`` for a statement that sets ``v`` to ``E`` when a value is there and to a constant when it is
    None: the ``if``/``else`` form or the conditional expression's."""
    if isinstance(statement, ast.If) and statement.orelse:
        first, second = _assigned(statement.body), _assigned(statement.orelse)
        if first and second and first[0] == second[0]:
            for op, fallback, value in ((ast.Is, first[1], second[1]), (ast.IsNot, second[1], first[1])):
                if _none_test(statement.test, op) and isinstance(fallback, ast.Constant):
                    return ast.copy_location(ast.Assign([ast.Name(first[0], ast.Store())], value), statement)
    if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.IfExp):
        test, body, orelse = statement.value.test, statement.value.body, statement.value.orelse
        for op, fallback, value in ((ast.Is, body, orelse), (ast.IsNot, orelse, body)):
            if _none_test(test, op) and isinstance(fallback, ast.Constant):
                return ast.copy_location(ast.Assign(statement.targets, value), statement)
    return None


def _statements(body: list[ast.stmt]) -> None:
    """A body (and the bodies inside it, functions aside) with the guards taken out and the defaults read as
    their value; a value so read that the statements after it read once is put in its place."""
    kept: list[ast.stmt] = []
    defaulted: list[int] = []
    for statement in body:
        if _guard(statement):
            continue
        plain = _defaulted(statement)
        if plain is not None:
            defaulted.append(len(kept))
            statement = plain
        kept.append(statement)
    for at in reversed(defaulted):
        assign = kept[at]
        name = assign.targets[0].id if isinstance(assign.targets[0], ast.Name) else None
        rest = kept[at + 1:]
        loads = [n for s in rest for n in ast.walk(s) if isinstance(n, ast.Name) and n.id == name]
        if name and len(loads) == 1 and isinstance(loads[0].ctx, ast.Load):
            _replace(rest, lambda n, load=loads[0], value=assign.value: value if n is load else None)
            del kept[at]
    body[:] = kept or body
    for statement in body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(statement, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                _statements(inner)
        for handler in getattr(statement, "handlers", ()):
            _statements(handler.body)


def _replace(statements: list[ast.AST], instead: Callable[[ast.AST], ast.AST | None]) -> None:
    """Each node under ``statements`` for which ``instead`` gives a node put in its place (a fresh copy each time)."""
    for statement in statements:
        for parent in ast.walk(statement):
            for field, value in ast.iter_fields(parent):
                if isinstance(value, ast.AST) and (other := instead(value)) is not None:
                    setattr(parent, field, copy.deepcopy(other))
                elif isinstance(value, list):
                    for i, item in enumerate(value):
                        if isinstance(item, ast.AST) and (other := instead(item)) is not None:
                            value[i] = copy.deepcopy(other)


def _read_aliases(function: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
    """Each local bound once, at the function's own level, to a name or an attribute chain and never bound
    again (nor deleted, nor a parameter, nor ``global``/``nonlocal``), read as that chain."""
    own = [n for n in ast.walk(function) if n is not function]
    bound: dict[str, int] = {}
    for n in own:
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            bound[n.id] = bound.get(n.id, 0) + 1
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            for name in n.names:
                bound[name] = 2
    parameters = {a.arg for a in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs,
                                  *filter(None, (function.args.vararg, function.args.kwarg)))}
    aliases = {}
    for statement in function.body:
        found = _assigned([statement])
        if found and bound.get(found[0]) == 1 and found[0] not in parameters and dotted(found[1]) is not None \
                and not (isinstance(found[1], ast.Name) and found[1].id == found[0]):
            aliases[found[0]] = (statement, found[1])
    if not aliases:
        return
    function.body[:] = [s for s in function.body if not any(s is a for a, _ in aliases.values())] or function.body
    _replace([function], lambda n: aliases[n.id][1] if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
             and n.id in aliases else None)
