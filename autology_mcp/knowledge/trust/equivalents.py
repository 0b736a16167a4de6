"""Rewrites a formatter or a linter makes that keep what the code does (issue 38), undone before two
versions of a symbol are compared, so that they are not read as changes to what a node says:

- ``assert False, msg`` is ``raise AssertionError(msg)`` (ruff's B011; ``assert False`` alone is
  ``raise AssertionError``);
- ``not (a is b)`` is ``a is not b``, ``not (a in b)`` is ``a not in b``, ``not a == b`` is ``a != b`` (and
  back: E714, E713, SIM201, SIM202);
- ``if not x: A else: B`` is ``if x: B else: A`` (the branches of a negated test swapped, SIM's rewrite);
- a mutable default moved into the body: ``def f(x={})`` is ``def f(x=None): y = x or {}`` (or ``if x is
  None: x = {}``) when the body reads the parameter nowhere else (B006's fix);
- a string marked for translation that keeps its text: ``_("(dynamic)")`` is ``"(dynamic)"`` (``_``,
  ``gettext``, ``gettext_lazy``, ``ugettext``, ``N_``, ``gettext_noop`` called with one string). A node that
  speaks of translation (gettext, i18n, "translat", "locali[sz]") is about that call, so for it the
  wrapping stays a change (:func:`about_translation`);
- an exception passed with its own type (and traceback) before it, the form the ``traceback`` functions
  took before Python 3.10: ``format_exception_only(type(e), e)`` is ``format_exception_only(e)``,
  ``print_exception(type(e), e, e.__traceback__)`` is ``print_exception(e)`` (the type and the traceback
  are read from the exception; what the call is given is the same);
- a function that collects its results in a list and returns it, made a generator that yields them
  (:func:`_yielded`): ``out = []``, ``out = list(xs)``, ``out.extend(xs)``, ``out += xs`` and a last
  ``return out`` are ``yield from xs``; ``out.append(x)`` is ``yield x``. Only when the list is used in
  no other way: the same values, in the same order, from the same code;
- statements after a ``return``, ``raise``, ``continue`` or ``break`` of their block never run: they are
  left out (a ``def`` written after a method's ``return``, never defined);
- a name bound to a lambda is the function it names (E731's fix): ``__getitem__ = lambda s, x: s.obj[x]``
  is ``def __getitem__(s, x): return s.obj[x]``, and ``a = b = lambda ...`` is that ``def b`` and ``a = b``;
  the parameters of a special method (``__getitem__``, ``__str__``: Python passes them by position) are read
  by their place, not their names (``__init__``, ``__new__`` and ``__call__``, which callers may pass by
  keyword, aside);
- a class's ``__slots__`` that lists every attribute its methods set on ``self`` only saves memory: it is
  left out (not for a node that speaks of ``__slots__``: :func:`about_slots`);
- a loop over ``iter(x)`` is the loop over ``x``; ``isinstance(v, (str,))`` (and ``issubclass``) is
  ``isinstance(v, str)``.

:func:`canonical` returns a copy with these read the first way, and with the fixes a linter makes on its
own read one way too (:mod:`.autofixes`), and, when asked, the checks a type checker asks for read away
(:mod:`.narrowing`); the tree given is not changed.
"""

from __future__ import annotations

import ast
import copy
import re

from autology_mcp.knowledge.trust.autofixes import read_fixed
from autology_mcp.knowledge.trust.code_compare import self_attributes
from autology_mcp.knowledge.trust.narrowing import read_unnarrowed

_TRANSLATORS = frozenset({"_", "gettext", "gettext_lazy", "ugettext", "ugettext_lazy", "N_", "gettext_noop"})
_TRANSLATION = re.compile(r"gettext|\bi18n\b|\bl10n\b|translat|locali[sz]", re.IGNORECASE)
_NEGATED = {ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Eq: ast.NotEq,
            ast.NotEq: ast.Eq}


def about_slots(text: str) -> bool:
    """Whether a node's text speaks of ``__slots__``: then a class gaining or losing them is a change."""
    return "__slots__" in text


def about_translation(text: str) -> bool:
    """Whether a node's text speaks of translating strings: then a string newly marked for translation
    is a change of what it says."""
    return _TRANSLATION.search(text) is not None


def canonical(node: ast.AST, translated: bool = True, unnarrowed: bool = False, slots: bool = False) -> ast.AST:
    """A copy of ``node`` with the equivalent rewrites of this module read one way; ``translated``:
    a string marked for translation reads as the string; ``unnarrowed``: the checks a type checker asks
    for read away (:mod:`.narrowing`). Read again until nothing moves (at most three
    times): one rewrite can bring another within reach (``z = g(x); return z`` made ``return g(x)`` puts a
    ``if x is None: x = {}`` among the first statements the default rule reads)."""
    out = _once(copy.deepcopy(node), translated, unnarrowed, slots)
    for _ in range(2):
        again = _once(copy.deepcopy(out), translated, unnarrowed, slots)
        if ast.dump(again) == ast.dump(out):
            break
        out = again
    return out


def _once(node: ast.AST, translated: bool, unnarrowed: bool = False, slots: bool = False) -> ast.AST:
    out = _Canonical(translated).visit(node)
    if not slots:
        for n in ast.walk(out):
            if isinstance(n, ast.ClassDef):
                _slots_aside(n)
    for n in list(ast.walk(out)):
        for block in _BLOCK_FIELDS:
            statements = getattr(n, block, None)
            if isinstance(statements, list) and statements and isinstance(statements[0], ast.stmt):
                setattr(n, block, _reachable(_lambdas_named(statements)))
    for n in ast.walk(out):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and _special(n.name):
            _by_place(n)
    for n in ast.walk(out):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _default_back(n)
            _yielded(n)
    if unnarrowed:
        for n in [n for n in ast.walk(out) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
            read_unnarrowed(n)
    return read_fixed(out)  # after: ``y = x or {}; return y`` is read as a default moved first


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

    def visit_If(self, node: ast.If) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not) and node.orelse:
            node.test, node.body, node.orelse = node.test.operand, node.orelse, node.body
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
        if self.translated and name in _TRANSLATORS and len(node.args) == 1 and not node.keywords \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            return node.args[0]
        node.args = _exception_alone(node.args)
        if name in ("isinstance", "issubclass") and isinstance(f, ast.Name) and len(node.args) == 2 \
                and isinstance(node.args[1], ast.Tuple) and len(node.args[1].elts) == 1 \
                and not isinstance(node.args[1].elts[0], ast.Starred):
            node.args[1] = node.args[1].elts[0]
        return node

    def visit_For(self, node: ast.For) -> ast.AST:
        self.generic_visit(node)
        node.iter = _iterated(node.iter)
        return node

    visit_AsyncFor = visit_For

    def visit_comprehension(self, node: ast.comprehension) -> ast.AST:
        self.generic_visit(node)
        node.iter = _iterated(node.iter)
        return node


_BLOCK_FIELDS = ("body", "orelse", "finalbody")
_ENDS = (ast.Return, ast.Raise, ast.Continue, ast.Break)
_KEYWORD_CALLED = frozenset({"__init__", "__new__", "__call__", "__init_subclass__"})


def _reachable(statements: list[ast.stmt]) -> list[ast.stmt]:
    """The statements up to the first ``return``, ``raise``, ``continue`` or ``break``, which ends the block."""
    for i, statement in enumerate(statements):
        if isinstance(statement, _ENDS):
            return statements[:i + 1]
    return statements


def _lambdas_named(statements: list[ast.stmt]) -> list[ast.stmt]:
    """``name = lambda args: value`` as ``def name(args): return value`` (the last of several targets is the
    ``def``, the others are bound to it after)."""
    out: list[ast.stmt] = []
    for s in statements:
        if isinstance(s, ast.Assign) and isinstance(s.value, ast.Lambda) \
                and all(isinstance(t, ast.Name) for t in s.targets):
            *others, last = s.targets
            body = [ast.copy_location(ast.Return(s.value.body), s)]
            made = ast.FunctionDef(name=last.id, args=s.value.args, body=body, decorator_list=[], returns=None)
            out.append(ast.copy_location(made, s))
            out += [ast.copy_location(ast.Assign([t], ast.Name(last.id, ast.Load())), s) for t in others]
        else:
            out.append(s)
    return out


def _slots_aside(cls: ast.ClassDef) -> None:
    """``__slots__`` left out of a class (in place) when it names, as strings, every attribute the class's
    methods set on their first parameter."""
    slots = [s for s in cls.body if isinstance(s, ast.Assign) and len(s.targets) == 1
             and isinstance(s.targets[0], ast.Name) and s.targets[0].id == "__slots__"]
    if len(slots) != 1 or not isinstance(slots[0].value, (ast.Tuple, ast.List)):
        return
    named = {e.value for e in slots[0].value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    if len(named) != len(slots[0].value.elts):
        return
    set_ = set()
    for method in cls.body:
        params = method.args.posonlyargs + method.args.args if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) else []
        if params:
            set_ |= self_attributes(method, params[0].arg)
    if set_ <= named:
        cls.body = [s for s in cls.body if s is not slots[0]] or [ast.Pass()]


def _special(name: str) -> bool:
    return name.startswith("__") and name.endswith("__") and name not in _KEYWORD_CALLED


def _by_place(function: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
    """The positional parameters of a special method renamed by their place (``_0``, ``_1``), in its
    signature and its own body (in place); a name its body binds or a function in it reads is left as is."""
    a = function.args
    if a.vararg or a.kwarg or a.kwonlyargs:
        return
    own = _own(function)
    inner = [n for n in own if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda))]
    names = {p.arg: f"_{i}" for i, p in enumerate(a.posonlyargs + a.args)}
    if any(_reads(n, name) for n in inner for name in names) \
            or any(isinstance(n, ast.Name) and n.id in names.values() for n in own):
        return
    for p in a.posonlyargs + a.args:
        p.arg = names[p.arg]
    for n in own:
        if isinstance(n, ast.Name) and n.id in names:
            n.id = names[n.id]


def _exception_alone(args: list[ast.expr]) -> list[ast.expr]:
    """``type(e), e`` (and ``e.__traceback__`` after it) among a call's positional arguments, as ``e``."""
    for i in range(len(args) - 1):
        kind, value = args[i], args[i + 1]
        if isinstance(kind, ast.Call) and isinstance(kind.func, ast.Name) and kind.func.id == "type" \
                and len(kind.args) == 1 and not kind.keywords and ast.dump(kind.args[0]) == ast.dump(value):
            rest = args[i + 2:]
            if rest and isinstance(rest[0], ast.Attribute) and rest[0].attr == "__traceback__" \
                    and ast.dump(rest[0].value) == ast.dump(value):
                rest = rest[1:]
            return args[:i] + [value] + rest
    return args


def _iterated(node: ast.expr) -> ast.expr:
    """``x`` for ``iter(x)``: what a loop over it goes through."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "iter" \
            and len(node.args) == 1 and not node.keywords and not isinstance(node.args[0], ast.Starred):
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


def _own(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.AST]:
    """The nodes of a function's own body: not those of a function, lambda or class defined in it."""
    found, todo = [], list(function.body)
    while todo:
        n = todo.pop()
        found.append(n)
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            todo += list(ast.iter_child_nodes(n))
    return found


def _reads(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def _collecting(statement: ast.stmt, name: str) -> list[ast.stmt] | None:
    """The statements yielding what ``statement`` adds to the list ``name`` (none for ``name = []``), or
    None when it is not one of the collecting forms."""
    value, whole = None, True
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
            and isinstance(statement.targets[0], ast.Name) and statement.targets[0].id == name:
        value = statement.value
        if isinstance(value, ast.List) and not value.elts or _empty(value) and isinstance(value, ast.Call) \
                and value.func.id == "list":
            return []
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "list" \
                and len(value.args) == 1 and not value.keywords:
            value = value.args[0]
    elif isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name) \
            and statement.target.id == name and isinstance(statement.op, ast.Add):
        value = statement.value
    elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) \
            and isinstance(statement.value.func, ast.Attribute) and isinstance(statement.value.func.value, ast.Name) \
            and statement.value.func.value.id == name and statement.value.func.attr in ("extend", "append") \
            and len(statement.value.args) == 1 and not statement.value.keywords:
        value, whole = statement.value.args[0], statement.value.func.attr == "extend"
    if value is None or _reads(value, name) or isinstance(value, ast.Starred):
        return None
    made = ast.YieldFrom(value) if whole else ast.Yield(value)
    return [ast.copy_location(ast.Expr(ast.copy_location(made, statement)), statement)]


def _yielded(function: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
    """A function (not a generator) whose last statement returns a local list, which it sets up empty in
    its body and otherwise only sets and extends (:func:`_collecting`), read as the generator that
    yields the same values (in place)."""
    last = function.body[-1] if function.body else None
    if isinstance(function, ast.AsyncFunctionDef) or not (isinstance(last, ast.Return) and isinstance(last.value, ast.Name)):
        return  # (an async function cannot `yield from`)
    name = last.value.id
    a = function.args
    if name in {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if p is not None}:
        return
    own = _own(function)
    if any(isinstance(n, (ast.Yield, ast.YieldFrom)) or isinstance(n, ast.Return) and n is not last
           or isinstance(n, (ast.Global, ast.Nonlocal)) for n in own):
        return
    if not any(_collecting(s, name) == [] for s in function.body):
        return  # not a list it sets up empty
    collecting = [n for n in own if isinstance(n, ast.stmt) and _collecting(n, name) is not None]
    allowed = {id(last.value)} | {id(n) for s in collecting for n in ast.walk(s)}
    if any(isinstance(n, ast.Name) and n.id == name and id(n) not in allowed for n in own):
        return  # the list is read some other way
    inner = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
    if any(_reads(s, name) for s in own if isinstance(s, inner)):
        return  # or by a function defined in it
    replace = {id(s) for s in collecting}

    def rewrite(body: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for s in body:
            if id(s) in replace:
                out += _collecting(s, name) or []
                continue
            if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                for block in ("body", "orelse", "finalbody"):
                    if getattr(s, block, None):  # a block that was empty stays empty
                        setattr(s, block, rewrite(getattr(s, block)) or [ast.copy_location(ast.Pass(), s)])
                for h in getattr(s, "handlers", []) or []:
                    h.body = rewrite(h.body) or [ast.copy_location(ast.Pass(), h)]
                for c in getattr(s, "cases", []) or []:
                    c.body = rewrite(c.body) or [ast.copy_location(ast.Pass(), c)]
            out.append(s)
        return out

    function.body = rewrite(function.body[:-1]) or [ast.copy_location(ast.Pass(), last)]
