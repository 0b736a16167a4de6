"""A node that describes a defect or a limitation, and the change that may fix it (:mod:`.staleness`,
issue 38).

An ``issue`` node says that the code it references behaves badly; a node whose title says that the code
"cannot" do something, "can't", has "no way" to, or is "unable" to ("LRASolver cannot retract a single
bound") is about what the code lacks (:func:`describes_defect`). The title, not the body: a decision's
context or alternatives say what some option cannot do, and that is not what the node is about. A fix of either often
adds a check, a call or a method and takes away nothing the node names, so the rules that look for what
the node names see nothing. For such a node, the referenced ``#symbol`` (or the whole Python file, for a
file reference) now calling a function or a method that it did not call, or testing a condition that it
did not test, while it still calls and tests everything it did, is a flag (:func:`fix_added`): what the
node says may no longer hold. Formatting, comments, docstrings, typing, imports, string values and a
linter's equivalent rewrites (:mod:`.equivalents`) add no call and no condition; a rewrite that drops a
call or a condition for another (a helper replaced by a loop, a Python 2 idiom by its modern form) is
read by the other rules, not this one."""

from __future__ import annotations

import ast
import re

from autology_mcp.knowledge.trust.code_compare import (
    bound_names,
    changed_units,
    dump,
    extracted,
    find_symbol,
    method_names,
    parse_python,
)
from autology_mcp.knowledge.trust.equivalents import about_translation, canonical
from autology_mcp.knowledge.trust.mentions import _QUOTED, _TICKS, Said

_LIMIT = re.compile(r"\b(?:cannot|can't|can\u2019t|no way|unable)\b", re.IGNORECASE)


def describes_defect(said: Said) -> bool:
    """Whether the node describes a defect (an ``issue`` node) or something the code cannot do (its title,
    the first line of the text the rule reads, outside what it quotes and the code it gives in backticks:
    "LRASolver cannot retract a single bound", not "Errors read as 'cannot open'")."""
    if said.kind == "issue":
        return True
    title = said.text.split("\n", 1)[0]
    return _LIMIT.search(_QUOTED.sub(" ", _TICKS.sub(" ", title))) is not None


def fix_added(old: ast.AST, new_text: str, symbol: str, said: Said) -> str | None:
    """Why the code of ``symbol`` (``""``: the whole module) may fix what a node that describes a defect
    says (:func:`describes_defect` is the caller's): it calls functions or methods it did not call and
    still calls all it did, or it tests conditions it did not test (its own variables aside) and still
    tests all it did. Statements moved into a function it now calls in their place add nothing
    (:func:`extracted`). None when not so."""
    tree = parse_python(new_text)
    new = (find_symbol(tree, symbol) if symbol else tree) if tree is not None else None
    if new is None:
        return None
    translated = not about_translation(said.text)
    old, new = canonical(old, translated), canonical(new, translated)
    if dump(old, False) == dump(new, False):
        return None
    gone, came = extracted(*changed_units(old, new), tree)
    if not gone and not came:
        return None
    calls_then, calls_now = _called(old), _called(new)
    if calls_now - calls_then and not calls_then - calls_now:
        gained = sorted(method_names(new) - method_names(old))  # a class's new methods, named first
        calls = gained or sorted(calls_now - calls_then)
        shown = ", ".join(f"`{c}`" for c in calls[:3]) + (f" and {len(calls) - 3} more" if len(calls) > 3 else "")
        return f"{'it gained ' + shown if gained else 'it now calls ' + shown}, which may fix what the node describes"
    own = bound_names(old) | bound_names(new)
    tests_then, tests_now = _tested(old, own), _tested(new, own)
    if tests_now - tests_then and not tests_then - tests_now:
        return "it tests a new condition, which may fix what the node describes"
    return None


def _called(node: ast.AST) -> set[str]:
    """The names of the functions and methods the code calls (``f(x)``, ``obj.m(x)``: ``f``, ``m``)."""
    return {n.func.id if isinstance(n.func, ast.Name) else n.func.attr for n in ast.walk(node)
            if isinstance(n, ast.Call) and isinstance(n.func, (ast.Name, ast.Attribute))}


_NAME = re.compile(r"Name\(id='([A-Za-z_][A-Za-z0-9_]*)'")


def _tested(node: ast.AST, own: set[str]) -> set[str]:
    """The conditions the code tests (an ``if``'s, a ``while``'s, a conditional expression's, an
    ``assert``'s), each as its code with the variables of its own as one placeholder: a local renamed
    in a test tests nothing new."""
    found = set()
    for n in ast.walk(node):
        if isinstance(n, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            found.add(_NAME.sub(lambda m: "Name(id='_'" if m.group(1) in own else m.group(0), dump(n.test, False)))
    return found
