"""A signature the node writes (:mod:`.staleness`, issue 38): ``write(self, /, b: bytes | bytearray)``,
code as the node quotes it that a ``def`` of the referenced code had. What it says of each parameter it
lists (its name, its place among the others, how a caller may pass it: positional-only, by position or
keyword, keyword-only, ``*args``/``**kwargs``; its annotation and default when it gives them) may no
longer hold when no ``def`` of that name agrees with it any more. A parameter the node does not list (an
optional one added) says nothing: the callers the node describes still call it the same way."""

from __future__ import annotations

import ast
import textwrap

_Param = tuple[str, str, str | None, str | None]  # name, kind, annotation, default (None: not given)


def signatures_lost(before_code: str, now_code: str, written: list[str]) -> list[str]:
    """The signatures in ``written`` that a ``def`` of ``before_code`` agreed with and none of
    ``now_code`` does (when the function is still there: a name gone is said by its own rule)."""
    wanted = {s: sig for s in written if (sig := _written(s)) is not None}
    if not wanted:
        return []
    before, now = _defs(before_code), _defs(now_code)
    if before is None or now is None:
        return []
    lost = []
    for text, (name, params) in wanted.items():
        if any(_agrees(params, d) for d in before.get(name, ())) and now.get(name) \
                and not any(_agrees(params, d) for d in now[name]):
            lost.append(text)
    return lost


def signature_kept(before_code: str, now_code: str, written: str) -> bool:
    """Whether ``written`` (``residue(expr, x, x0)``) reads as a signature that a ``def`` of ``before_code``
    agreed with and one of ``now_code`` still agrees with: the ``def`` gained annotations, or a parameter
    the node does not list, and what the node says of its parameters still holds."""
    sig = _written(written)
    if sig is None:
        return False
    before, now = _defs(before_code), _defs(now_code)
    name, params = sig
    return before is not None and now is not None and any(_agrees(params, d) for d in before.get(name, ())) \
        and any(_agrees(params, d) for d in now.get(name, ()))


def _written(text: str) -> tuple[str, list[_Param]] | None:
    """``name(params)`` as the node writes it, read as a ``def`` (None when it is not one, or lists no
    parameter: ``retry()`` names a function, it does not state its parameters)."""
    try:
        tree = ast.parse(f"def {text.strip()}: pass")
    except (SyntaxError, ValueError):
        return None
    fn = tree.body[0] if len(tree.body) == 1 else None
    if not isinstance(fn, ast.FunctionDef):
        return None
    params = _params(fn.args)
    return (fn.name, params) if params else None


def _defs(code: str) -> dict[str, list[list[_Param]]] | None:
    try:
        tree = ast.parse(textwrap.dedent(code))
    except (SyntaxError, ValueError):
        return None
    found: dict[str, list[list[_Param]]] = {}
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.setdefault(fn.name, []).append(_params(fn.args))
    return found


def _params(args: ast.arguments) -> list[_Param]:
    plain = args.posonlyargs + args.args
    defaults = [None] * (len(plain) - len(args.defaults)) + list(args.defaults)
    out = [(a.arg, "positional-only" if i < len(args.posonlyargs) else "positional-or-keyword",
            _text(a.annotation), _text(d)) for i, (a, d) in enumerate(zip(plain, defaults))]
    if args.vararg:
        out.append((args.vararg.arg, "*args", _text(args.vararg.annotation), None))
    out += [(a.arg, "keyword-only", _text(a.annotation), _text(d)) for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    if args.kwarg:
        out.append((args.kwarg.arg, "**kwargs", _text(args.kwarg.annotation), None))
    return out


def _text(node: ast.AST | None) -> str | None:
    return ast.unparse(node) if node is not None else None


def _agrees(written: list[_Param], actual: list[_Param]) -> bool:
    """Each parameter the node lists is there, in the same order and kind, with the annotation and the
    default the node gives (those it leaves out are not compared)."""
    by_name = {p[0]: (i, p) for i, p in enumerate(actual)}
    places = []
    for name, kind, annotation, default in written:
        if name not in by_name:
            return False
        i, (_, kind_now, annotation_now, default_now) = by_name[name]
        if kind != kind_now or annotation not in (None, annotation_now) or default not in (None, default_now):
            return False
        places.append(i)
    return places == sorted(places)
