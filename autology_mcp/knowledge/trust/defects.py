"""A node that describes a defect or a limitation, and the change that may fix it (:mod:`.staleness`,
issue 38).

An ``issue`` node says that the code it references behaves badly; a node whose title says that the code
"cannot" do something, "can't", has "no way" to, or is "unable" to ("LRASolver cannot retract a single
bound") is about what the code lacks (:func:`describes_defect`). The title, not the body: a decision's
context or alternatives say what some option cannot do, and that is not what the node is about. A fix of either often
adds a check, a call or a method and takes away nothing the node names, so the rules that look for what
the node names see nothing. For such a node, the referenced ``#symbol`` (or the whole Python file, for a
file reference) now calling a function or a method that it did not call, testing a condition that it
did not test, or passing a keyword argument it did not pass (an option handed on to the function that does
the work), while it still calls, tests and passes everything it did, is a flag (:func:`fix_added`): what the
node says may no longer hold. Formatting, comments, docstrings, typing, imports, string values and a
linter's equivalent rewrites (:mod:`.equivalents`) add no call and no condition; a rewrite that drops a
call or a condition for another (a helper replaced by a loop, a Python 2 idiom by its modern form) is
read by the other rules, not this one."""

from __future__ import annotations

import ast
import re
from collections import Counter

from autology_mcp.knowledge.trust.code_compare import (
    Unit,
    bound_names,
    changed_units,
    dump,
    extracted,
    find_symbol,
    method_names,
    names_read,
    parse_python,
)
from autology_mcp.knowledge.trust.equivalents import about_translation, canonical
from autology_mcp.knowledge.trust.findings import _shown
from autology_mcp.knowledge.trust.mentions import _QUOTED, _TICKS, Said
from autology_mcp.knowledge.trust.python2 import read_as_python3

_LIMIT = re.compile(r"\b(?:cannot|can't|can\u2019t|no way|unable)\b", re.IGNORECASE)


def describes_defect(said: Said) -> bool:
    """Whether the node describes a defect (an ``issue`` node) or something the code cannot do (its title,
    the first line of the text the rule reads, outside what it quotes and the code it gives in backticks:
    "LRASolver cannot retract a single bound", not "Errors read as 'cannot open'")."""
    if said.kind == "issue":
        return True
    title = said.text.split("\n", 1)[0]
    return _LIMIT.search(_QUOTED.sub(" ", _TICKS.sub(" ", title))) is not None


def fix_added(old: ast.AST, new_text: str, symbol: str, said: Said, helpers: tuple[str, ...] = (),
              old_tree: ast.AST | None = None) -> str | None:
    """Why the code of ``symbol`` (``""``: the whole module) may fix what a node that describes a defect
    says (:func:`describes_defect` is the caller's): it calls functions or methods it did not call and
    still calls all it did, or it tests conditions it did not test (its own variables aside) and still
    tests all it did, or it passes keyword arguments it did not pass and still passes all it did.
    Statements moved into a function it now calls in their place add nothing (:func:`extracted`). The
    functions of the module named in ``helpers`` (those it now hands its work to) count as its code for
    what it calls and tests: ``cell_len`` that now calls a new ``_cell_len`` which tests for a joiner.
    ``old_tree``, the module ``old`` was part of, lets the two be read as Python 3 (:mod:`.python2`: a call
    through ``super()`` for one through the base is no new call). None when not so."""
    tree = parse_python(new_text)
    new = (find_symbol(tree, symbol, said.about_overloads) if symbol else tree) if tree is not None else None
    if new is None:
        return None
    handed_to = [h for name in helpers if (h := find_symbol(tree, name)) is not None]
    translated = not about_translation(said.text)
    old, new = canonical(old, translated), canonical(new, translated)
    if dump(old, False) == dump(new, False):
        return None
    old = canonical(read_as_python3(old, old_tree if old_tree is not None else old, symbol), translated)
    new = canonical(read_as_python3(new, tree, symbol), translated)
    if dump(old, False) == dump(new, False):
        return None
    # before the changed statements: one that only gained keyword arguments is not a changed statement
    passed_then, passed_now = _passed(old), _passed(new)
    read_then = names_read(old)
    handed = sorted(p for p in passed_now.keys() - passed_then.keys() if passed_now[p] - read_then)
    if handed and not passed_then.keys() - passed_now.keys():
        shown = ", ".join(f"`{k}` to `{f}`" for f, k in handed[:3])
        return f"it now passes {shown}, which may fix what the node describes"
    gone, came = extracted(*changed_units(old, new), tree)
    if not gone and not came:
        return None
    handed_to = [canonical(h, translated) for h in handed_to]
    calls_then, calls_now = _called(old), _called(new).union(*map(_called, handed_to))
    if calls_now - calls_then and not calls_then - calls_now:
        gained = sorted(method_names(new) - method_names(old))  # a class's new methods, named first
        shown = _shown(gained or sorted(calls_now - calls_then))
        return f"{'it gained ' + shown if gained else 'it now calls ' + shown}, which may fix what the node describes"
    own = bound_names(old) | bound_names(new)
    own = own.union(*map(bound_names, handed_to))
    tests_then, tests_now = _tested(old, own), sum((_tested(h, own) for h in handed_to), _tested(new, own))
    if tests_now - tests_then and not tests_then - tests_now:
        return "it tests a new condition, which may fix what the node describes"
    return None


def span_fix_added(gone: list[Unit], came: list[Unit]) -> str | None:
    """:func:`fix_added` for a line span of a node that describes a defect, whose statements ``gone`` were
    rewritten as ``came`` in a way that keeps every name and value the node gives (the caller's
    :func:`.symbol_rules.span_rewrite`): they call functions or methods they did not call and still call all
    they did (``Segment.apply_style(render(...))`` now applied to each line of
    ``Segment.split_lines_terminator(render(...))``), or, in lines of another language, test conditions they did
    not test and still test all they did (``if (s == NULL) { return NULL; }`` added in C). None when not so."""
    def called(units: list[Unit]) -> set[str]:
        return {c for u in units if u.node is not None for c in _called(u.node)}

    then, now = called(gone), called(came)
    if now - then and not then - now:
        return f"it now calls {_shown(sorted(now - then))}, which may fix what the node describes"
    if any(u.node is None for u in gone + came):  # another language's lines: the conditions they test
        tests_then, tests_now = _line_tests(gone), _line_tests(came)
        if tests_now - tests_then and not tests_then - tests_now:
            return "it tests a new condition, which may fix what the node describes"
    return None


# a condition in another language's line: ``if (s == NULL) {``, ``} else if (n > 0) {``, ``while (p) {``,
# ``if err != nil {`` (Go), ``elsif x`` (Ruby)
_LINE_TEST = re.compile(r"(?:^|[\s}])(?:if|elif|elsif|while|unless)\b\s*(.+?)\s*(?:\{|:|\bthen)?\s*$")


def _line_tests(units: list[Unit]) -> Counter[str]:
    """The conditions lines of code test, each whitespace aside, counted (a line that is no Python statement:
    C, Go, JavaScript...)."""
    found: Counter[str] = Counter()
    for u in units:
        m = _LINE_TEST.search(u.text) if u.node is None else None
        if m:
            found["".join(m.group(1).split())] += 1
    return found


def _called(node: ast.AST) -> set[str]:
    """The names of the functions and methods the code calls (``f(x)``, ``obj.m(x)``: ``f``, ``m``)."""
    return {name for n in ast.walk(node) if (name := _callee(n))}


def _callee(node: ast.AST) -> str | None:
    """``f`` of a call ``f(x)``, ``m`` of ``obj.m(x)``; None for anything else."""
    if isinstance(node, ast.Call):
        func = node.func
        return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    return None


def _passed(node: ast.AST) -> dict[tuple[str, str], set[str]]:
    """The keyword arguments the code passes, each with the function or method it passes it to, and the
    names its value reads (``Pretty(obj, max_depth=max_depth)``: ``("Pretty", "max_depth") -> {"max_depth"}``).
    One whose value reads a name the code did not read before is an option handed on (a parameter gained,
    ``self.locals_max_depth``); a constant (``strict=True``) is a call tuned, not an option handed on."""
    out: dict[tuple[str, str], set[str]] = {}
    for n in ast.walk(node):
        callee = _callee(n)
        for k in n.keywords if callee else ():
            if k.arg:
                out.setdefault((callee, k.arg), set()).update(names_read(k.value))
    return out


_NAME = re.compile(r"Name\(id='([A-Za-z_][A-Za-z0-9_]*)'")


def _tested(node: ast.AST, own: set[str]) -> Counter[str]:
    """The conditions the code tests (an ``if``'s, a ``while``'s, a conditional expression's, an
    ``assert``'s), each as its code with the variables of its own as one placeholder (a local renamed
    in a test tests nothing new), counted: a condition tested once more is a test added (``if buf: yield
    buf`` after a loop that tests ``pred(item) and buf``). The clauses of an ``and``/``or`` are conditions
    too, so a test widened by a clause (``" " in key_s`` now ``" " in key_s or "\\t" in key_s``) tests all
    it did and more."""
    found: Counter[str] = Counter()
    for n in ast.walk(node):
        if isinstance(n, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            for clause in [n.test, *(_clauses(n.test) if isinstance(n.test, ast.BoolOp) else ())]:
                code = _NAME.sub(lambda m: "Name(id='_'" if m.group(1) in own else m.group(0), dump(clause, False))
                found[code + repr(_blank_strings(clause))] += 1
    return found


def _blank_strings(node: ast.AST) -> list[str]:
    """The strings of only whitespace a condition tests (``" "``, ``"\\t"``), which :func:`dump` writes alike."""
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and n.value and not n.value.strip()]


def _clauses(test: ast.expr) -> list[ast.expr]:
    """The clauses of a condition: those of each operand of an ``and``/``or``, else the condition itself."""
    if isinstance(test, ast.BoolOp):
        return [c for v in test.values for c in _clauses(v)]
    return [test]
