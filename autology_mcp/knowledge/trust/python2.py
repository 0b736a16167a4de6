"""What dropping Python 2 rewrites without changing what the code does on Python 3 (issue 38), read one way
before two versions of a symbol are compared, so that a project's "Drop Python 2" commit is not read as a
change to what a node says (pallets/markupsafe's, which replaced every ``text_type`` with ``str``):

- the names of ``six``, and of the ``_compat`` modules projects wrote after it, imported by the module
  (``from ._compat import text_type``, ``from six import string_types``, or ``six.text_type`` with ``import
  six``), read as the value six gives them on Python 3: ``text_type`` is ``str``, ``binary_type`` ``bytes``,
  ``unichr`` ``chr``, ``xrange`` and ``range_type`` ``range``, ``izip``, ``imap``, ``ifilter`` ``zip``,
  ``map``, ``filter``; ``string_types``, ``integer_types`` (or ``int_types``) and ``class_types`` the
  one-element tuples ``(str,)``, ``(int,)``, ``(type,)``; ``iteritems(d)``, ``iterkeys(d)``,
  ``itervalues(d)`` ``iter(d.items())``, ``iter(d.keys())``, ``iter(d.values())``;
- ``PY2`` and ``PY3`` imported so are ``False`` and ``True``, and a branch on them is the branch Python 3
  takes (``if PY2: A else: B`` is ``B``);
- in the methods of a class with one base, a call of the base's method through the base, with the method's
  first parameter (``text_type.__mod__(self, arg)``, ``str.split(self, *args)``), is the call through
  ``super()`` (``super().__mod__(arg)``); ``__new__`` keeps its ``cls`` (``super().__new__(cls, base)``).

A name the module binds itself is not read (only imported ones are). :func:`read_as_python3` changes the copy
it is given; the one-element tuple in ``isinstance`` and the iteration over ``iter(x)`` that these readings
leave are read by :mod:`.equivalents`.
"""

from __future__ import annotations

import ast
import weakref

from autology_mcp.knowledge.trust.code_compare import find_symbol

# six's Python 3 values: a name, or a one-element tuple of a name
_NAMES = {"text_type": "str", "binary_type": "bytes", "unichr": "chr", "xrange": "range", "range_type": "range",
          "izip": "zip", "imap": "map", "ifilter": "filter"}
_TUPLES = {"string_types": "str", "integer_types": "int", "int_types": "int", "class_types": "type"}
_ITERATORS = {"iteritems": "items", "iterkeys": "keys", "itervalues": "values"}
_VERSIONS = {"PY2": False, "PY3": True}
_KNOWN = frozenset(_NAMES) | frozenset(_TUPLES) | frozenset(_ITERATORS) | frozenset(_VERSIONS)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


_read: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # module -> its six names (one walk per parse)


def compat_names(tree: ast.AST | None) -> tuple[dict[str, str], bool]:
    """The six names ``tree`` (a module) imports, each under the name it binds, and whether it imports
    ``six`` itself (so that ``six.text_type`` is read)."""
    if tree is None:
        return {}, False
    if tree not in _read:
        _read[tree] = _compat_names(tree)
    return _read[tree]


def _compat_names(tree: ast.AST) -> tuple[dict[str, str], bool]:
    found: dict[str, str] = {}
    bound: set[str] = set()
    whole = False
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found.update((a.asname or a.name, a.name) for a in node.names if a.name in _KNOWN)
        elif isinstance(node, ast.Import):
            whole = whole or any(a.name == "six" and a.asname is None for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bound.update(t.id for t in targets if isinstance(t, ast.Name))
    return {k: v for k, v in found.items() if k not in bound}, whole


def class_base(tree: ast.AST | None, symbol: str) -> str | None:
    """The one base of the class that holds the method ``symbol`` (``Markup.__mod__``: ``Markup``'s), as
    its name read as Python 3 (``text_type`` is ``str``); None when ``symbol`` is no method of a class of
    ``tree`` with a single base."""
    if tree is None or "." not in symbol:
        return None
    owner = find_symbol(tree, symbol.rsplit(".", 1)[0])
    if not isinstance(owner, ast.ClassDef):
        return None
    names, whole = compat_names(tree)
    return _Python3(names, whole, None).single_base(owner)


def read_as_python3(node: ast.AST, tree: ast.AST | None, symbol: str) -> ast.AST:
    """``node`` (a symbol ``symbol`` of the module ``tree``; a copy the caller owns) with the readings of
    this module. Nothing is read when the module imports no six name and the symbol's class has no base
    whose methods it calls through the base."""
    names, whole = compat_names(tree)
    reader = _Python3(names, whole, class_base(tree, symbol))
    return reader.read(node)


class _Python3(ast.NodeTransformer):
    def __init__(self, names: dict[str, str], whole: bool, base: str | None):
        self.names, self.whole = names, whole
        self.base, self.first = None, None  # the class's base and the method's first parameter, inside a method
        self.outer = base

    def read(self, node: ast.AST) -> ast.AST:
        if isinstance(node, _FUNCTIONS) and self.outer:
            return self._method(node, self.outer)
        return self.visit(node)

    def _six(self, node: ast.AST) -> str | None:
        """The six name ``node`` is (``text_type``, ``six.text_type``), or None."""
        if isinstance(node, ast.Name):
            return self.names.get(node.id)
        if self.whole and isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id == "six" and node.attr in _KNOWN:
            return node.attr
        return None

    def single_base(self, cls: ast.ClassDef) -> str | None:
        if len(cls.bases) != 1 or any(k.arg != "metaclass" for k in cls.keywords):
            return None
        base = cls.bases[0]
        six = self._six(base)
        if six in _NAMES:
            return _NAMES[six]
        return base.id if isinstance(base, ast.Name) else None

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return self._value(node) or node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        return self._value(node) or self.generic_visit(node)

    def _value(self, node: ast.AST) -> ast.AST | None:
        six = self._six(node)
        if six is None or not isinstance(getattr(node, "ctx", None), ast.Load):
            return None
        if six in _NAMES:
            out = ast.Name(_NAMES[six], ast.Load())
        elif six in _TUPLES:
            out = ast.Tuple([ast.Name(_TUPLES[six], ast.Load())], ast.Load())
        elif six in _VERSIONS:
            out = ast.Constant(_VERSIONS[six])
        else:
            return None  # iteritems and the like are read where they are called
        return ast.copy_location(out, node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        six = self._six(node.func)
        if six in _ITERATORS and len(node.args) == 1 and not node.keywords:
            items = ast.Call(ast.Attribute(self.visit(node.args[0]), _ITERATORS[six], ast.Load()), [], [])
            return ast.copy_location(ast.Call(ast.Name("iter", ast.Load()), [items], []), node)
        self.generic_visit(node)
        f = node.func
        if self.base and self.first and isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) \
                and f.value.id == self.base and node.args and isinstance(node.args[0], ast.Name) \
                and node.args[0].id == self.first:
            args = node.args if f.attr == "__new__" else node.args[1:]
            zero = ast.Call(ast.Name("super", ast.Load()), [], [])
            return ast.copy_location(ast.Call(ast.Attribute(zero, f.attr, ast.Load()), args, node.keywords), node)
        return node

    def visit_If(self, node: ast.If) -> ast.AST | list[ast.stmt]:
        value = self._version(node.test)
        self.generic_visit(node)
        if value is None:
            return node
        return node.body if value else node.orelse

    def _version(self, test: ast.AST) -> bool | None:
        """What a test of ``PY2`` or ``PY3`` (or ``not`` of one) is on Python 3; None for any other test."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            value = self._version(test.operand)
            return None if value is None else not value
        six = self._six(test)
        return _VERSIONS.get(six) if six else None

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        base = self.single_base(node)
        node.bases = [self.visit(b) for b in node.bases]
        node.keywords = [self.visit(k) for k in node.keywords]
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        saved = self.base, self.first
        self.base, self.first = None, None
        body = []
        for statement in node.body:
            out = self._method(statement, base) if isinstance(statement, _FUNCTIONS) and base else self.visit(statement)
            body += out if isinstance(out, list) else [out]
        node.body = body
        self.base, self.first = saved
        return node

    def _method(self, node: ast.AST, base: str) -> ast.AST:
        saved = self.base, self.first
        params = node.args.posonlyargs + node.args.args
        self.base, self.first = base, params[0].arg if params else None
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        node.args = self.visit(node.args)
        body = []
        for statement in node.body:
            out = self.visit(statement)
            body += out if isinstance(out, list) else [out]
        node.body = body
        self.base, self.first = saved
        return node

    def visit_FunctionDef(self, node: ast.AST) -> ast.AST:
        saved = self.base, self.first  # a function inside a method: its calls through the base are not the method's
        self.base, self.first = None, None
        self.generic_visit(node)
        self.base, self.first = saved
        return node

    visit_AsyncFunctionDef = visit_Lambda = visit_FunctionDef

