"""A type the node names, changed in an annotation of its symbol (:mod:`.symbol_rules`).

Annotations are typing-only and the staleness rule reads code without them (:func:`.code_compare.without_typing`).
But a node that says what a function returns or takes ("the result is a `str`") states what its
annotation says: ``-> str`` now ``-> URL`` is what the node says changed, though no statement did.
So the names in each annotation of the symbol (its return, each of its parameters; the functions
defined inside it too) are compared before and after, typing's spellings read as one (``Optional[X]``
is ``X``, ``t.List`` is ``list``); a name gained or lost that the node gives is a flag. A changed
annotation that names nothing the node gives is not."""

from __future__ import annotations

import ast

from autology_mcp.knowledge.trust.code_compare import BUILTIN_GENERICS, find_symbol, parse_as_written

# the wrappers that say nothing of the type itself
_WRAPPERS = frozenset({"typing", "t", "typing_extensions", "Optional", "Union", "Annotated", "Final", "ClassVar"})


def _names(annotation: ast.AST | None) -> frozenset[str]:
    """The type names an annotation holds (a string annotation parsed as one), typing's spellings read as
    the builtin's and its wrappers left out."""
    found: set[str] = set()
    for n in ast.walk(annotation) if annotation is not None else ():
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            try:
                found |= _names(ast.parse(n.value, mode="eval").body)
            except (SyntaxError, ValueError, RecursionError):
                pass
        elif isinstance(n, ast.Name):
            found.add(n.id)
        elif isinstance(n, ast.Attribute):
            found.add(n.attr)
    return frozenset(BUILTIN_GENERICS.get(f, f) for f in found) - _WRAPPERS


def annotated(symbol: ast.AST) -> dict[tuple[str, str], frozenset[str]]:
    """(function, slot) -> the names of that annotation, for the symbol and every function inside it: the
    slot is "return" or a parameter's name."""
    out: dict[tuple[str, str], frozenset[str]] = {}
    for f in ast.walk(symbol):
        if not isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        a = f.args
        for p in [*a.posonlyargs, *a.args, *a.kwonlyargs, *(x for x in (a.vararg, a.kwarg) if x)]:
            if p.annotation is not None:
                out[(f.name, p.arg)] = _names(p.annotation)
        if f.returns is not None:
            out[(f.name, "return")] = _names(f.returns)
    return out


def retyped(old_text: str, new_text: str, symbol: str, names: set[str]) -> str | None:
    """Why the symbol's annotations changed what the node says, or None: the first annotation (of the
    same function and slot before and after) that gained or lost a name of ``names``."""
    old_tree, new_tree = parse_as_written(old_text), parse_as_written(new_text)
    old = find_symbol(old_tree, symbol) if old_tree is not None else None
    new = find_symbol(new_tree, symbol) if new_tree is not None else None
    if old is None or new is None:
        return None
    then, now = annotated(old), annotated(new)
    own = symbol.split(".")[-1]
    for key in sorted(then.keys() & now.keys()):
        if then[key] == now[key] or not (then[key] ^ now[key]) & names:
            continue
        function, slot = key
        where = "return" if slot == "return" else f"`{slot}`"
        inside = "" if function == own else f" of `{function}` in it"
        lost, gained = sorted(then[key] - now[key]), sorted(now[key] - then[key])
        shown = " → ".join(", ".join(f"`{n}`" for n in side) or "nothing" for side in (lost, gained))
        return f"the {where} annotation{inside} changed ({shown}), a type the node names"
    return None
