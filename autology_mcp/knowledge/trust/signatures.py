"""A signature the node writes (:mod:`.staleness`, issue 38): ``write(self, /, b: bytes | bytearray)``,
code as the node quotes it that a ``def`` of the referenced code had. What it says of each parameter it
lists (its name, its place among the others, how a caller may pass it: positional-only, by position or
keyword, keyword-only, ``*args``/``**kwargs``; its annotation and default when it gives them) may no
longer hold when no ``def`` of that name agrees with it any more. A parameter the node does not list (an
optional one added) says nothing: the callers the node describes still call it the same way; a ``*args``
or ``**kwargs`` gained does (the function now takes calls of another shape), and so does a parameter now
required when the node listed every one the function required (the calls it describes now fail). A
parameter list written without a name, ``(event: str, **kw: Any)``, is the signature of each function it agreed with."""

from __future__ import annotations

import ast
import re
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
        # a parameter list written without a name, "`debug`, `info` ... each take `(event: str, **kw: Any)`", is
        # the signature of every function of the code it agreed with
        names = [name] if name else sorted(n for n, ds in before.items() if any(_agrees(params, d) for d in ds))
        for each in names:
            then = [d for d in before.get(each, ()) if _agrees(params, d)]
            if then and now.get(each) and not any(_still_agrees(params, then, d) for d in now[each]):
                lost.append(text)
                break
    return lost


def _still_agrees(written: list[_Param], then: list[list[_Param]], now: list[_Param]) -> bool:
    """Whether a ``def`` of now agrees with the written signature as one of ``then`` did: the parameters the
    node lists (:func:`_agrees`), and no call of the shape it describes is refused (:func:`_variadic_gained`,
    :func:`_required_gained`)."""
    return _agrees(written, now) and not _variadic_gained(written, then, now) \
        and not _required_gained(written, then, now)


def _required_gained(written: list[_Param], then: list[list[_Param]], now: list[_Param]) -> bool:
    """Whether ``now`` requires a parameter (no default; ``self`` and ``cls`` aside) that neither the written
    signature nor a ``def`` it agreed with required: ``zip_equal(*iterables)`` now ``zip_equal(__iter1, __iter2,
    __iter3, *iterables)`` refuses the calls with fewer iterables the node's signature allows (an optional
    parameter added is only an option). Only when the node listed every parameter those ``def``s required: a
    signature written without some (``normalize(node, parens_after)`` of ``normalize(node, parens_after, *,
    preview)``) gives the call in part, and a keyword now required beside them (``*, mode, features``) says
    nothing of that part."""
    def required(params: list[_Param]) -> set[str]:
        return {name for name, kind, _, default in params
                if kind not in ("*args", "**kwargs") and default is None and name not in ("self", "cls")}

    listed = {name for name, _, _, _ in written}
    if any(required(d) - listed for d in then):
        return False
    return bool(required(now) - listed - set().union(*map(required, then)))


def _variadic_gained(written: list[_Param], then: list[list[_Param]], now: list[_Param]) -> bool:
    """Whether ``now`` takes a ``*args`` or a ``**kwargs`` that neither the written signature nor the ``def``s
    it agreed with had: ``meth(self, event, **kw)`` now ``meth(self, event, *args, **kw)`` takes positional
    arguments the node's signature says it does not (an optional named parameter added is only an option)."""
    def kinds(params: list[_Param]) -> set[str]:
        return {kind for _, kind, _, _ in params if kind in ("*args", "**kwargs")}

    return bool(kinds(now) - kinds(written) - set().union(*map(kinds, then)))


def signature_kept(before_code: str, now_code: str, written: str) -> bool:
    """Whether ``written`` (``residue(expr, x, x0)``) reads as a signature that a ``def`` of ``before_code``
    agreed with and one of ``now_code`` still agrees with: the ``def`` gained annotations, or a parameter
    the node does not list, and what the node says of its parameters still holds."""
    sig = _written(written)
    if sig is None:
        return False
    before, now = _defs(before_code), _defs(now_code)
    name, params = sig
    then = [d for d in (before or {}).get(name, ()) if _agrees(params, d)]
    return before is not None and now is not None and bool(then) \
        and any(_still_agrees(params, then, d) for d in now.get(name, ()))


def _written(text: str) -> tuple[str, list[_Param]] | None:
    """``name(params)`` as the node writes it, read as a ``def`` (None when it is not one, or lists no
    parameter: ``retry()`` names a function, it does not state its parameters). A parameter list alone,
    ``(event: str, **kw: Any)``, is read with the name ``""``: the functions it agreed with are its own."""
    text = text.strip()
    named = not text.startswith("(")
    try:
        tree = ast.parse(f"def {text if named else '_' + text}: pass")
    except (SyntaxError, ValueError):
        return None
    fn = tree.body[0] if len(tree.body) == 1 else None
    if not isinstance(fn, ast.FunctionDef):
        return None
    params = _params(fn.args)
    return (fn.name if named else "", params) if params else None


def _defs(code: str) -> dict[str, list[list[_Param]]] | None:
    try:
        tree = ast.parse(textwrap.dedent(code))
    except (SyntaxError, ValueError):
        return _headers(code)
    found: dict[str, list[list[_Param]]] = {}
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.setdefault(fn.name, []).append(_params(fn.args))
    return found


_DEF = re.compile(r"(?<![\w.])def\s+\w+\s*\(")


def _headers(code: str) -> dict[str, list[list[_Param]]] | None:
    """The ``def`` headers of code that does not parse as a whole (a protocol's methods whose only statement,
    a docstring, was blanked), each read alone: from ``def`` to the colon after its closing parenthesis."""
    found: dict[str, list[list[_Param]]] = {}
    for m in _DEF.finditer(code):
        depth, end = 0, None
        for i in range(m.end() - 1, len(code)):
            depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(code[i], 0)
            if depth == 0 and code[i] == ":":
                end = i
                break
        if end is None:
            continue
        try:
            fn = ast.parse(code[m.start():end + 1] + " ...").body[0]
        except (SyntaxError, ValueError, IndexError):
            continue
        if isinstance(fn, ast.FunctionDef):
            found.setdefault(fn.name, []).append(_params(fn.args))
    return found or None


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
