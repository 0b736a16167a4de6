"""What changed in a piece of code, formatting, comments and whitespace aside (issue 38), for the
staleness rule (:mod:`autology_mcp.knowledge.trust.staleness`).

Code is read as a sequence of **units**: in Python, its statements (a compound statement's header
apart from its body; parsed with :mod:`ast`, so a black-style reflow, a moved comment, quotes, parentheses
and a trailing comma change nothing, and a string built from pieces is one form whether written as an
f-string, with ``.format()`` or with ``%``: :func:`formatted`; what only a type checker reads is left
out, so a typing-only rewrite changes nothing: :func:`without_typing`); in any other language, its
non-blank lines with whitespace collapsed. Each unit has two keys: ``text`` (string values
whitespace-collapsed) and ``shape`` (string values masked), so a change can be told to be in string
literals only (a message, a docstring, a version string) or in the code.

The literal values a piece of code holds (:func:`literals`): its string values, docstrings aside,
and its numbers, so a string or a number a node states can be told to be gone from the code.

A line span's units and the units that took their place (:func:`span_region`), and the statements that
changed between two lists of units (:func:`units_changed`; imports and docstrings aside, and for a class turned into a
dataclass with the same fields, or back, the statements that declare them aside: :func:`same_fields`),
so a span is judged as a symbol is.

Also here: a function's parameters compared (an added optional parameter keeps the old calls), a
name's deprecation found (``@deprecated``, ``warnings.warn(..., DeprecationWarning)`` in it or naming
it, "deprecated" in its docstring; a warning raised only when a parameter is given deprecates the
parameter, not the function: :func:`deprecated_parameters`; a module ``__getattr__`` that warns
deprecates the old names it tests for; a message counts for the names in its sentence that says
"deprecat", not for what to use instead: :func:`named_deprecated`), a run of statements found again
elsewhere with its variables renamed (:func:`moved_units`), and the code's words with Python comments
left out (and a symbol's lines with its docstrings blanked: :func:`without_docstrings`).
"""

from __future__ import annotations

import ast
import copy
import difflib
import hashlib
import re
import string
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from functools import cached_property

from autology_mcp.knowledge.trust.package_imports import imports_own_package, package_of, read_relative

_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")
_MARK = re.compile(r"@deprecated|\bdeprecated:|#\[deprecated|\[Obsolete|\bDEPRECATED\b", re.IGNORECASE)
_CODE = frozenset("js jsx ts tsx mjs cjs go rs java kt kts scala rb php cs swift c h cc cpp hpp cxx m mm dart lua ex exs "
                  "clj erl hs ml fs vue svelte sh".split())
_IDENTS = re.compile(r"\b(?:id|attr|arg|name|module)='([A-Za-z_][A-Za-z0-9_]*)'")
_DEPRECATION = re.compile(r"deprecat|FutureWarning", re.IGNORECASE)
_QUOTED_NAME = re.compile(r"""['"`]+([A-Za-z_][\w.]*(?:\(\))?)['"`]+""")  # 'name', ``name``, "name()"


@dataclass(frozen=True)
class Unit:
    text: str  # the unit, normalised; string values whitespace-collapsed
    shape: str  # the same with string values masked
    start: int  # 1-based, inclusive
    end: int
    strings: tuple[str, ...] = ()  # the string values it holds (whitespace-collapsed)
    node: ast.AST | None = field(default=None, compare=False, repr=False)  # the statement (Python)

    def constants(self) -> set[str]:
        """The values other than strings it holds (``None``, ``True``, numbers); a bare ``return`` returns None."""
        found = set()
        for n in self.parts():
            if isinstance(n, ast.Constant) and not isinstance(n.value, (str, bytes)):
                found.add(repr(n.value))
            elif isinstance(n, ast.Return) and n.value is None:
                found.add("None")
        return found

    def values_given(self) -> set[str]:
        """:meth:`constants`, but for a ``None`` the statement only tests a name against by identity (``key is not
        None``, ``key = key if key is not None else ...``): that asks whether a value was given, it gives none."""
        found = self.constants()
        if "None" in found:
            parts = self.parts()
            nones = [n for n in parts if isinstance(n, ast.Constant) and n.value is None]
            tested = [c for n in parts if isinstance(n, ast.Compare) and all(isinstance(o, (ast.Is, ast.IsNot)) for o in n.ops)
                      for c in [n.left, *n.comparators] if isinstance(c, ast.Constant) and c.value is None]
            returned = any(isinstance(n, ast.Return) and n.value is None for n in parts)
            if len(tested) == len(nones) and not returned:  # (a bare ``return``'s None is no Constant)
                found.discard("None")
        return found

    def parts(self) -> list[ast.AST]:
        """The nodes of the statement, the blocks it heads (an ``if``'s body) aside; none outside Python."""
        found: list[ast.AST] = []
        todo = [self.node] if self.node is not None else []
        while todo:
            n = todo.pop()
            found.append(n)
            todo += [c for name, c in ast.iter_fields(n) if isinstance(c, ast.AST) and not (n is self.node and name in _BLOCKS)]
            todo += [c for name, v in ast.iter_fields(n) if isinstance(v, list) and not (n is self.node and name in _BLOCKS)
                     for c in v if isinstance(c, ast.AST)]
        return found

    def identifiers(self) -> list[str]:
        """The names the unit uses, each time: variables, attributes, parameters, keyword arguments, imports."""
        return _IDENTS.findall(self.text)


_QUOTED_VALUE = re.compile(r'"((?:[^"\\\n])*)"|(?<!\w)\'((?:[^\'\\\n])*)\'(?!\w)')  # not an apostrophe: "user's"


def held_strings(unit: Unit) -> tuple[str, ...]:
    """The string values a unit holds: a Python statement's, or those a line of another language quotes (``"click",``
    in a TOML list; ``dependencies = ["attrs>=21.3", "click>8"]``)."""
    if unit.node is not None or unit.strings:
        return unit.strings
    return tuple(a or b for a, b in _QUOTED_VALUE.findall(unit.text))


_cache: OrderedDict[tuple[str, str, tuple[str, ...]], list[Unit] | None] = OrderedDict()


def _key(text: str, python: bool) -> tuple[str, str]:
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=16).hexdigest(), "py" if python else ""


_memos: OrderedDict[tuple[str, str], object] = OrderedDict()


def _memo(kind: str, text: str, compute):
    """``compute(text)``, kept for the last few hundred texts: one file's text now is read for every
    node that references it."""
    key = (kind, hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=16).hexdigest())
    if key in _memos:
        _memos.move_to_end(key)
        return _memos[key]
    value = _memos[key] = compute(text)
    while len(_memos) > 512:
        _memos.popitem(last=False)
    return value


def parse_python(text: str) -> ast.Module | None:
    """The syntax tree with typing aside (:func:`without_typing`; kept: do not change it), or None when
    the text does not parse."""
    def parse(t: str) -> ast.Module | None:
        try:
            return without_typing(ast.parse(t))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None

    return _memo("ast", text, parse)


def parse_as_written(text: str) -> ast.Module | None:
    """The syntax tree with its annotations kept (not to be changed by its readers), or None when the text
    does not parse."""
    def parse(t: str) -> ast.Module | None:
        try:
            return ast.parse(t)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None

    return _memo("ast as written", text, parse)


# typing's names for builtins and collections (``t.List``, ``typing.Dict``): the builtin's
BUILTIN_GENERICS = {"List": "list", "Dict": "dict", "Set": "set", "FrozenSet": "frozenset", "Tuple": "tuple",
                     "Type": "type", "Text": "str", "DefaultDict": "defaultdict", "Deque": "deque"}
_TYPING_MODULES = frozenset({"typing", "typing_extensions", "collections.abc"})


def without_typing(tree: ast.Module) -> ast.Module:
    """The module with what only a type checker reads taken out (changed in place; the tree is fresh from
    :func:`ast.parse`), so that a typing-only rewrite (``from __future__ import annotations``,
    ``Optional[X]`` into ``X | None``, ``typing.Mapping`` into ``collections.abc.Mapping``) compares as no
    change: annotations of parameters, returns and variables left out (a variable's annotation is kept
    only as whether it says ``ClassVar``: a dataclass field is declared by it); ``typing.cast(T, x)``
    read as ``x`` (it returns ``x`` unchanged); and a name from ``typing``, ``typing_extensions`` or
    ``collections.abc`` (by the module's own imports: ``t.Mapping``, ``cabc.Mapping``, ``Mapping``) read
    as one name, typing's builtin aliases as the builtin (``t.List`` is ``list``), ``Optional[X]`` as
    ``X | None`` and ``Union[A, B]`` as ``A | B``. Other code is as parsed."""
    modules, names = _typing_imports(tree)
    _TypingAside(modules, names).visit(tree)
    return tree


def _typing_imports(tree: ast.Module) -> tuple[set[str], dict[str, str]]:
    """The module's local names for the typing modules (``t`` of ``import typing as t``, ``cabc``,
    ``collections.abc``) and for the names it imports from them (local name -> typing's name)."""
    modules: set[str] = set()
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in _TYPING_MODULES:
                    modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.ImportFrom) and not node.level:
            if node.module in _TYPING_MODULES:
                names.update((a.asname or a.name, a.name) for a in node.names if a.name != "*")
            elif node.module == "collections":
                modules.update(a.asname or a.name for a in node.names if a.name == "abc")
    return modules, names


def dotted(node: ast.AST) -> str | None:
    """A name or an attribute chain as written (``self.console.line``); None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = dotted(node.value)
        return f"{inner}.{node.attr}" if inner else None
    return None


_VERSION_NAME = re.compile(r"version", re.IGNORECASE)


def is_version_assignment(node: ast.AST | None) -> bool:
    """``version_info = (19, 7, 1)``, ``__version__ = "1.2"``, ``VERSION = (1, 2, 0, "final")``: a release number,
    which every release bumps. Its numbers are a version, as a version string is, not values of the code."""
    if isinstance(node, ast.Assign):
        targets, value = node.targets, node.value
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        targets, value = [node.target], node.value
    else:
        return False
    names = [dotted(t) for t in targets]
    if not names or any(n is None or not _VERSION_NAME.search(n.rsplit(".", 1)[-1]) for n in names):
        return False
    items = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]
    return all(isinstance(e, ast.Constant) and isinstance(e.value, (int, str)) and not isinstance(e.value, bool)
               for e in items)


def names_read(node: ast.AST) -> set[str]:
    """The names and attribute chains the code reads, and each chain's own prefixes (``self.console.is_terminal``,
    ``self.console``, ``self``)."""
    return {d for n in ast.walk(node) if isinstance(n, (ast.Name, ast.Attribute)) and (d := dotted(n))}


class _TypingAside(ast.NodeTransformer):
    """:func:`without_typing`'s walk."""

    def __init__(self, modules: set[str], names: dict[str, str]):
        self.modules, self.names = modules, names

    def typing_name(self, node: ast.AST) -> str | None:
        """typing's name for ``node`` when it refers to one (``t.Optional``, ``cabc.Mapping``, ``cast``)."""
        if isinstance(node, ast.Name):
            return self.names.get(node.id)
        if isinstance(node, ast.Attribute) and dotted(node.value) in self.modules:
            return node.attr
        return None

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.annotation = None
        return node

    def visit_FunctionDef(self, node):
        node.returns = None
        return self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        classvar = any(self.typing_name(n) == "ClassVar" or isinstance(n, ast.Name) and n.id == "ClassVar"
                       for n in ast.walk(node.annotation))
        node.annotation = ast.copy_location(ast.Name(id="ClassVar", ctx=ast.Load()) if classvar else
                                            ast.Constant(value=...), node.annotation)
        if node.value is not None:
            node.value = self.visit(node.value)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        if self.typing_name(node.func) == "cast" and len(node.args) == 2 and not node.keywords:
            return self.visit(node.args[1])
        return self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        kind = self.typing_name(node.value)
        if kind in ("Optional", "Union"):
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) and kind == "Union" else [node.slice]
            items = [self.visit(i) for i in items] + ([ast.Constant(value=None)] if kind == "Optional" else [])
            joined = items[0]
            for item in items[1:]:
                joined = ast.BinOp(left=joined, op=ast.BitOr(), right=item)
            return ast.copy_location(joined, node)
        return self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        name = self.names.get(node.id)
        if name is not None and name != node.id or name in BUILTIN_GENERICS:
            return ast.copy_location(ast.Name(id=BUILTIN_GENERICS.get(name, name), ctx=node.ctx), node)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        name = self.typing_name(node)
        if name is not None:
            return ast.copy_location(ast.Name(id=BUILTIN_GENERICS.get(name, name), ctx=node.ctx), node)
        return self.generic_visit(node)


def units(text: str, path: str) -> list[Unit]:
    """The units of ``text`` (a file at ``path``): Python statements when it parses, else lines."""
    python = path.endswith(".py")
    package = package_of(path) if python else ()
    key = (*_key(text, python), package)
    if key in _cache:
        _cache.move_to_end(key)
        found = _cache[key]
    else:
        found = _python_units(text, path) if python else None
        _cache[key] = found
        while len(_cache) > 256:
            _cache.popitem(last=False)
    return found if found is not None else _line_units(text)


def _line_units(text: str) -> list[Unit]:
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        words = " ".join(line.split())
        if words:
            out.append(Unit(words, words, number, number))
    return out


def _python_units(text: str, path: str = "") -> list[Unit] | None:
    """The statements of a Python file, an import of its own package read as the relative one
    (:mod:`.package_imports`)."""
    tree = parse_python(text)
    if tree is None:
        return None
    if imports_own_package(tree, path):
        tree = read_relative(copy.deepcopy(tree), path)
    out: list[Unit] = []
    _walk(tree.body, "body", 0, out, composed_strings(tree))
    return out


def composed_strings(tree: ast.AST) -> dict[ast.AST, str]:
    """The module's string constants built from others, each statement with the string it gives:
    ``JSON_ACCEPT = f'{JSON_CONTENT_TYPE}, */*'`` after ``JSON_CONTENT_TYPE = 'application/json'`` gives
    'application/json, */*', which a node quotes as the value; an f-string, ``.format`` or ``%`` of such names
    (no conversion but ``str``, no format spec), or a ``+`` of them and literals."""
    known: dict[str, str] = {}
    out: dict[ast.AST, str] = {}
    for stmt in getattr(tree, "body", []):
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else \
            stmt.target if isinstance(stmt, ast.AnnAssign) and stmt.value is not None else None
        if not isinstance(target, ast.Name):
            continue
        value = _string_value(stmt.value, known)
        if value is None:
            known.pop(target.id, None)
            continue
        known[target.id] = value
        if not (isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)):
            out[stmt] = " ".join(value.split())
    return out


def _string_value(node: ast.AST, known: dict[str, str]) -> str | None:
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.Name):
        return known.get(node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _string_value(node.left, known), _string_value(node.right, known)
        return left + right if left is not None and right is not None else None
    built = formatted(node)
    if built is None:
        return None
    pieces, fields = built
    values = [known.get(v.id) if isinstance(v, ast.Name) and c in (-1, ord("s")) and not spec else None
              for v, c, spec in fields]
    if any(v is None for v in values):
        return None
    return "".join(p + v for p, v in zip(pieces, values)) + pieces[-1]


def _children(node: ast.AST) -> list[tuple[str, list[ast.AST]]]:
    return [(name, value) for name in _BLOCKS
            if isinstance(value := getattr(node, name, None), list) and value and isinstance(value[0], ast.AST)]


def _walk(statements: list[ast.AST], field: str, depth: int, out: list[Unit],
          composed: dict[ast.AST, str] | None = None) -> None:
    """Each statement as a unit, and those of its blocks after it; ``composed``: the strings some of them give
    (:func:`composed_strings`), counted among their string values."""
    for node in _per_name(statements):
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]) if hasattr(node, "lineno") \
            else getattr(getattr(node, "pattern", None), "lineno", 0)
        blocks = _children(node)
        first_child = min((b[0].lineno for _, b in blocks if hasattr(b[0], "lineno")), default=None)
        end = (first_child - 1) if first_child is not None and blocks else (getattr(node, "end_lineno", None) or start)
        strings: list[str] = []
        prefix = f"{depth}:{field}:"
        text = prefix + dump(node, False, True, strings)
        if composed and node in composed:
            strings.append(composed[node])
        out.append(Unit(text, prefix + dump(node, True, True), start, max(start, end), tuple(strings), node))
        for name, block in blocks:
            _walk(block, name, depth + 1, out)


def _per_name(statements: list[ast.AST]) -> list[ast.AST]:
    """An import of several names as one import per name, each at the lines of the whole (``from x import a,
    b`` is ``from x import a`` and ``from x import b``, as isort's force-single-line writes it), and ``a as
    a`` as ``a`` (the explicit re-export a type checker asks for): the same names bound."""
    out: list[ast.AST] = []
    for node in statements:
        if isinstance(node, (ast.Import, ast.ImportFrom)) and (len(node.names) > 1 or
                                                               any(a.asname == a.name for a in node.names)):
            for alias in node.names:
                one = ast.alias(alias.name, None if alias.asname == alias.name else alias.asname)
                made = ast.ImportFrom(node.module, [one], node.level) if isinstance(node, ast.ImportFrom) \
                    else ast.Import([one])
                out.append(ast.copy_location(made, node))
        else:
            out.append(node)
    return out


def dump(node: object, mask: bool, header: bool = False, strings: list[str] | None = None) -> str:
    """``ast.dump`` without positions; string values whitespace-collapsed (or masked); ``header``: the
    node's own statement blocks left out (they are units of their own). A string built from pieces is
    one form whichever way it is written (:func:`formatted`): an f-string, ``"...".format(a)`` and
    ``"..." % (a,)`` that give the same text dump alike."""
    built = formatted(node)
    if built is not None:
        pieces, fields = built
        texts = [" ".join(p.split()) for p in pieces]
        if strings is not None:
            strings += [t for t in texts if t]
        shown = "…" if mask else repr(texts)
        values = ", ".join(f"{dump(v, mask, False, strings)}!{c}:{spec}" for v, c, spec in fields)
        return f"Fmt({shown}, [{values}])"
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
        value = node.value.decode("latin-1") if isinstance(node.value, bytes) else node.value
        value = " ".join(value.split())
        if strings is not None:
            strings.append(value)
        return "Str(…)" if mask else f"Str({value!r})"
    if isinstance(node, ast.AST):
        parts = []
        for name in node._fields:
            value = getattr(node, name, None)
            if header and name in _BLOCKS:
                continue
            if name in ("type_comment", "kind") or value is None or value == []:
                continue
            parts.append(f"{name}={dump(value, mask, False, strings)}")
        return f"{type(node).__name__}({', '.join(parts)})"
    if isinstance(node, list):
        return "[" + ", ".join(dump(v, mask, False, strings) for v in node) + "]"
    return repr(node)


_CONVERSIONS = {"": -1, "s": ord("s"), "r": ord("r"), "a": ord("a")}


def formatted(node: object) -> tuple[list[str], list[tuple[ast.AST, int, str]]] | None:
    """A string built from pieces as its literal pieces and its fields (value, conversion, format spec):
    an f-string; ``"...{}...".format(a, b)`` with automatic, numbered or named fields (``{0.name}``, an
    attribute of one, too); ``"...%s..." % (a, b)`` (or ``% {"k": a}`` with ``%(k)s``) with ``%s``, ``%r``
    and ``%a`` (``%s`` is ``str()``, as a bare f-string field; a width on them is not read), and a number's
    conversion as its format spec (``%05.2f`` as ``{x:05.2f}``, ``%x`` as ``{x:x}``; ``%d`` as ``{x:d}``, not
    as ``{x}``, which shows ``True`` as ``True``, not ``1``). None
    for anything else. A message rebuilt as an f-string ("Cannot uninstall {!r}".format(name) into
    f"Cannot uninstall {name!r}"; ruff's UP031 and UP032) is the same code."""
    if isinstance(node, ast.JoinedStr):
        pieces, fields, text = [], [], ""
        for part in node.values:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                text += part.value
            elif isinstance(part, ast.FormattedValue):
                spec = ""
                if part.format_spec is not None:
                    if not all(isinstance(v, ast.Constant) for v in getattr(part.format_spec, "values", [None])):
                        return None
                    spec = "".join(str(v.value) for v in part.format_spec.values)
                pieces.append(text)
                text = ""
                fields.append((part.value, part.conversion, spec))
            else:
                return None
        return pieces + [text], fields
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format" \
            and isinstance(node.func.value, ast.Constant) and isinstance(node.func.value.value, str) \
            and not any(k.arg is None for k in node.keywords) and not any(isinstance(a, ast.Starred) for a in node.args):
        try:
            parsed = list(string.Formatter().parse(node.func.value.value))
        except ValueError:
            return None
        named = {k.arg: k.value for k in node.keywords}
        pieces, fields, text, auto = [], [], "", 0
        for literal, name, spec, conversion in parsed:
            text += literal
            if name is None:
                continue
            head, *attributes = name.split(".")
            if head == "":
                head, auto = str(auto), auto + 1
            value = node.args[int(head)] if head.isdigit() and int(head) < len(node.args) else named.get(head)
            if value is None or "[" in name or not all(a.isidentifier() for a in attributes) \
                    or "{" in (spec or "") or (conversion or "") not in _CONVERSIONS:
                return None
            for attribute in attributes:  # "{0.name}".format(a) shows a.name
                value = ast.Attribute(value, attribute, ast.Load())
            pieces.append(text)
            text = ""
            fields.append((value, _CONVERSIONS[conversion or ""], spec or ""))
        return (pieces + [text], fields) if fields else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant) \
            and isinstance(node.left.value, str):
        named = {k.value: v for k, v in zip(node.right.keys, node.right.values) if isinstance(k, ast.Constant)} \
            if isinstance(node.right, ast.Dict) else None
        values = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
        parts = re.split(r"(%%|%(?:\(\w+\))?(?:[sra]|[-+ #0]*\d*(?:\.\d+)?[diuxXoeEfFgG]))", node.left.value)
        if "%" in "".join(parts[0::2]):  # (the odd parts are the matches)
            return None
        pieces, fields, text = [], [], ""
        for i, part in enumerate(parts):
            if part == "%%":
                text += "%"
            elif i % 2:
                key, conversion = part[2:].split(")", 1) if part.startswith("%(") else (None, part[1:])
                if (key is None) != (named is None) or key is None and len(fields) >= len(values) \
                        or key is not None and key not in named:
                    return None
                pieces.append(text)
                text = ""
                kind, spec = part[-1], _number_spec(conversion)
                value = named[key] if key is not None else values[len(fields)]
                fields.append((value, -1, spec) if spec else (value, _CONVERSIONS[kind if kind != "s" else ""], ""))
            else:
                text += part
        if named is None and len(fields) != len(values):
            return None
        return (pieces + [text], fields) if fields else None
    return None


def _number_spec(conversion: str) -> str:
    """The format spec that shows a number as a ``%`` conversion does (``%05.2f`` as ``05.2f``, ``%-4x`` as
    ``<4x``, ``%i`` as ``d``), or "" for ``%s``, ``%r`` and ``%a``. ``%d`` stays ``d``: ``"%d" % 3.5`` is ``3``,
    ``f"{3.5}"`` is ``3.5``, so it is not read as a bare field."""
    kind = conversion[-1]
    if kind in "sra":
        return ""
    flags = re.match(r"[-+ #0]*", conversion).group()
    rest = conversion[len(flags):-1]
    align = "<" if "-" in flags else ""
    sign = "+" if "+" in flags else " " if " " in flags else ""
    zero = "0" if "0" in flags and not align else ""
    return f"{align}{sign}{'#' if '#' in flags else ''}{zero}{rest}{'d' if kind in 'iu' else kind}"


def same_code(before: str, after: str, path: str) -> bool:
    """Whether the two texts hold the same code, formatting, comments and whitespace aside."""
    if before == after:
        return True
    return [u.text for u in units(before, path)] == [u.text for u in units(after, path)]


def plain(unit: Unit) -> str:
    """A unit's code without its place (depth and block): a statement moved into a new block (an ``if``
    put around it, a ``try`` taken away) is the same statement."""
    return unit.text.split(":", 2)[2] if unit.node is not None else unit.text


def rewritten_share(before: str, after: str, path: str) -> float:
    """The share of the units of ``before`` no longer in ``after`` (a multiset; moved units, and units
    moved into or out of a block, count as kept)."""
    old = Counter(plain(u) for u in units(before, path))
    total = sum(old.values())
    if not total:
        return 0.0
    new = Counter(plain(u) for u in units(after, path))
    return 1.0 - sum((old & new).values()) / total


def span_region(before: str, after: str, span: tuple[int, int], path: str) -> tuple[list[Unit], list[Unit]] | None:
    """The units of ``before`` in lines ``span``, and the units of ``after`` that took their place: those
    between the nearest units kept before the span and after it (by their code, their place aside). A
    unit next to the span that changed too is a bound when it is the same statement by what it defines
    (:func:`_defined`: ``__all__ = [...]`` gaining a name right after an import block that gained one):
    it is not the span's. None when the span holds no unit (comments, blank lines)."""
    a, b = span
    old, new = units(before, path), units(after, path)
    inside = [i for i, u in enumerate(old) if u.start <= b and a <= u.end]
    if not inside:
        return None
    lo, hi = inside[0], inside[-1]
    matched: dict[int, int] = {}
    matcher = difflib.SequenceMatcher(None, [plain(u) for u in old], [plain(u) for u in new], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            matched.update((i1 + k, j1 + k) for k in range(i2 - i1))
    start = max((j for i, j in matched.items() if i < lo), default=-1) + 1
    end = min((j for i, j in matched.items() if i > hi), default=len(new)) - 1
    # the same statement, changed, right before or after the span: a nearer bound
    # (by the names it binds: ``__float__ = lambda s: ...`` made ``def __float__(self): ...``, whose body is its own)
    then_before, then_after = _bound(old[lo - 1]) if lo > 0 else None, _bound(old[hi + 1]) if hi + 1 < len(old) else None
    for j in range(start, end + 1):
        key = _bound(new[j])
        if key is not None and key == then_before and j < end:
            start = j + 1
            while start <= end and _depth(new[start]) > _depth(new[j]):
                start += 1
        elif key is not None and key == then_after and j >= start:
            end = j - 1
            break
    # statements added right after (or before) the span, no deeper than its own, are not the span's: a new
    # ``add_argument(...)`` appended after the option the node describes (reworded, or not); only added ones
    if all(u.node is not None for u in old[lo:hi + 1]) and end >= start:
        depth = min(_depth(u) for u in old[lo:hi + 1])
        images = set(matched.values())  # the span's own statements, kept: never cut off
        if min((i for i in matched if i > hi), default=len(old)) == hi + 1:  # nothing of the old code between
            last = matched[hi] if hi in matched else _counterpart(old[hi], new, start, end, last=True)
            if last is not None and all(_depth(new[j]) <= depth and j not in images for j in range(last + 1, end + 1)):
                end = min(end, last)
        if max((i for i in matched if i < lo), default=-1) == lo - 1:
            first = matched[lo] if lo in matched else _counterpart(old[lo], new, start, end, last=False)
            if first is not None and all(_depth(new[j]) <= depth and j not in images for j in range(start, first)):
                start = max(start, first)
    return old[lo:hi + 1], new[start:end + 1]


def definitions_added(before: list[Unit], after: list[Unit]) -> set[str] | None:
    """The names ``after`` defines that ``before`` does not, when that is all that changed: every unit of
    ``before`` kept as it was and in its order, and each added unit a definition (:func:`_defined`: a
    ``def``, a ``class``, an assignment to names) as deep as theirs (two signals added between the four a
    span holds). None when anything else changed, or nothing was added."""
    if not before or any(u.node is None for u in (*before, *after)):
        return None
    depth = {_depth(u) for u in before}
    kept, at, added = [plain(u) for u in before], 0, []
    for u in after:  # ``before`` met again in its order; whatever comes between is added
        if at < len(kept) and plain(u) == kept[at]:
            at += 1
        else:
            added.append(u)
    if at < len(kept) or not added or any(_defined(u) is None or _depth(u) not in depth for u in added):
        return None
    return {name for u in added for name in _defined(u)[1:]}


SAME_STATEMENT = 0.6  # how alike a changed statement and its new form are (difflib's ratio of their code)


def _depth(unit: Unit) -> int:
    return int(unit.text.split(":", 1)[0])


def _counterpart(unit: Unit, new: list[Unit], start: int, end: int, last: bool) -> int | None:
    """The index in ``new[start:end + 1]`` of the statement most like ``unit`` (the span's last statement when
    ``last``, else its first), changed: where the span's new code ends (or starts). None when none is alike
    enough (:data:`SAME_STATEMENT`): the whole gap is then the span's."""
    if end < start:
        return None
    scores = [(difflib.SequenceMatcher(None, plain(unit), plain(new[j]), autojunk=False).ratio(), j)
              for j in range(start, end + 1)]
    best, at = max(scores, key=lambda s: (s[0], -s[1] if last else s[1]))
    return at if best >= SAME_STATEMENT else None


def _defined(unit: Unit) -> tuple[str, ...] | None:
    """What a top-level-like statement defines, by name: a ``def`` or a ``class`` by its name, an assignment by
    its targets, an import of one name by the name it binds; None for anything else."""
    node = unit.node
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return ("def", node.name)
    if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
        return ("=", *(t.id for t in node.targets))
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return ("=", node.target.id)
    if isinstance(node, (ast.Import, ast.ImportFrom)) and len(node.names) == 1 and node.names[0].name != "*":
        alias = node.names[0]
        return ("import", alias.asname or alias.name.split(".")[0])
    return None


def _bound(unit: Unit) -> tuple[str, ...] | None:
    """The names a statement binds (:func:`_defined` whatever the kind of statement), or None."""
    found = _defined(unit)
    return found[1:] if found is not None else None


_NAME_ID = re.compile(r"Name\(id='([A-Za-z_][A-Za-z0-9_]*)'")


def _renamed_key(found: list[Unit]) -> list[tuple[int, str, str]]:
    """Units as a run, each by its place relative to the first and its code with the variables it names
    (``Name`` nodes) numbered by first appearance in the run: two runs with the same key are the same
    code with their variables renamed consistently."""
    numbers: dict[str, str] = {}

    def number(m: re.Match) -> str:
        return f"Name(id='v{numbers.setdefault(m.group(1), str(len(numbers)))}'"

    first = int(found[0].text.split(":", 1)[0]) if found and found[0].node is not None else 0
    out = []
    for u in found:
        depth, field = u.text.split(":", 2)[:2] if u.node is not None else ("0", "")
        out.append((int(depth) - first, field, _NAME_ID.sub(number, plain(u))))
    return out


def moved_units(after: str, gone: list[Unit], path: str) -> list[list[Unit]]:
    """Where the run of units ``gone`` is in ``after``, elsewhere: each run of as many consecutive units
    that holds the same code, its variables perhaps renamed consistently (``extra`` now ``extra_items``),
    at the same places relative to one another (a block moved up a function that was split). Python
    only; at most a few runs."""
    if not gone or any(u.node is None for u in gone):
        return []
    new = units(after, path)
    want = _renamed_key(gone)
    head = want[0][2]
    found = []
    for i in range(len(new) - len(gone) + 1):
        if new[i].node is None or type(new[i].node) is not type(gone[0].node):
            continue
        window = new[i:i + len(gone)]
        if _renamed_key(window[:1])[0][2] == head and _renamed_key(window) == want:
            found.append(window)
            if len(found) >= 4:
                break
    return found


def extracted(gone: list[Unit], came: list[Unit], new_tree: ast.AST | None) -> tuple[list[Unit], list[Unit]]:
    """``gone`` and ``came`` (a symbol's changed statements) without the statements moved into a function
    that the symbol now calls in their place: a run of ``gone`` that is that function's body (the same
    code, its variables perhaps renamed consistently: ``node`` passed as ``parent``, at the same
    places relative to one another; a last ``return kwargs`` to a call assigned to ``kwargs`` aside:
    :func:`_hands_back`), and the statement that calls it. The same code, split out."""
    if new_tree is None or not gone or not came:
        return gone, came
    for call in list(came):
        if call.node is None:
            continue
        for name in sorted(_called_names(call.node)):
            helper = find_symbol(new_tree, name)
            if not isinstance(helper, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            body = [u for u in body_units(helper) if not is_doc(u)]
            if _hands_back(body, call.node):  # ``return kwargs`` to ``kwargs = helper(kwargs, app)``: the value handed back
                body = body[:-1]
            if not body or len(body) > len(gone):
                continue
            want = _renamed_key(body)
            for i in range(len(gone) - len(body) + 1):
                if gone[i].node is not None and _renamed_key(gone[i:i + len(body)]) == want and \
                        _passed_as(call.node, name, helper, gone[i:i + len(body)], body):
                    gone = gone[:i] + gone[i + len(body):]
                    came = [u for u in came if u is not call]
                    break
            else:
                continue
            break
    return gone, came


def _hands_back(body: list[Unit], statement: ast.AST) -> bool:
    """Whether the helper's ``body`` ends by returning the variable that ``statement`` assigns its call to
    (``return kwargs`` and ``kwargs = _dump_arg_defaults(kwargs, app)``): the statements before it worked on
    that variable where they were, and now do so in the helper."""
    last = body[-1].node if body else None
    return (isinstance(last, ast.Return) and isinstance(last.value, ast.Name) and isinstance(statement, ast.Assign)
            and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
            and statement.targets[0].id == last.value.id)


def _passed_as(statement: ast.AST, name: str, helper: ast.AST, run: list[Unit], body: list[Unit]) -> bool:
    """Whether a call of ``name`` in ``statement`` passes each variable of ``run`` that the helper's body
    reads as one of its parameters to that parameter (``node`` as ``parent``): the same code, called
    with the same values, not a look-alike fed others."""
    pairs = dict(zip((n for u in body for n in _NAME_ID.findall(plain(u))), (n for u in run for n in _NAME_ID.findall(plain(u)))))
    names = [a.arg for a in helper.args.posonlyargs + helper.args.args]
    for n in ast.walk(statement):
        if calls_name(n, name):
            given = dict(zip(names[1:] if isinstance(n.func, ast.Attribute) and names[:1] in (["self"], ["cls"]) else names,
                             n.args))
            given.update((k.arg, k.value) for k in n.keywords if k.arg)
            if all(isinstance(given.get(p), ast.Name) and given[p].id == pairs[p] for p in pairs if p in names and
                   p not in ("self", "cls")):
                return True
    return False


def calls_name(node: ast.AST, name: str) -> bool:
    """Whether ``node`` is a call of ``name`` (``name(...)``, ``x.name(...)``)."""
    return isinstance(node, ast.Call) and (isinstance(node.func, ast.Name) and node.func.id == name or
                                           isinstance(node.func, ast.Attribute) and node.func.attr == name)


def _called_names(statement: ast.AST) -> set[str]:
    """The functions a statement calls by name (``f(...)``, ``self.f(...)``), its blocks aside."""
    found = set()
    for part in [c for f, c in ast.iter_fields(statement) if f not in _BLOCKS]:
        for child in part if isinstance(part, list) else [part]:
            if isinstance(child, ast.AST):
                for n in ast.walk(child):
                    if isinstance(n, ast.Call):
                        f = n.func
                        if isinstance(f, ast.Name):
                            found.add(f.id)
                        elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in ("self", "cls"):
                            found.add(f.attr)
    return found


# ------------------------------------------------------------------------------ spans


@dataclass(frozen=True)
class SpanChange:
    span: tuple[int, int] | None  # where the span is now (None: it cannot be followed)
    changed: bool  # its code changed
    strings: frozenset[str] = frozenset()  # when only string values changed: the old and new ones that differ
    before: tuple[Unit, ...] = field(default=(), compare=False)  # then: the span's units, as they were
    after: tuple[Unit, ...] = field(default=(), compare=False)  # and as they are


def follow(before: str, after: str, span: tuple[int, int], path: str) -> SpanChange:
    """Lines ``span`` of ``before`` followed into ``after`` by their units: unchanged (lines added above
    or below move it, a reflow or a comment does not change it), changed in string values only, or
    changed. A span holding no unit (comments, blank lines) is compared by its lines."""
    a, b = span
    old, new = units(before, path), units(after, path)
    inside = [i for i, u in enumerate(old) if u.start <= b and a <= u.end]
    if not inside:
        old_lines = [" ".join(line.split()) for line in before.splitlines()]
        new_lines = [" ".join(line.split()) for line in after.splitlines()]
        moved = follow_items(old_lines, new_lines, (a - 1, b - 1))
        return SpanChange(None if moved is None else (moved[0] + 1, moved[1] + 1), moved is None)
    lo, hi = inside[0], inside[-1]
    mapped = follow_items([u.text for u in old], [u.text for u in new], (lo, hi))
    if mapped is not None:
        return SpanChange(_lines(old, new, lo, hi, mapped, span), False)
    mapped = follow_items([u.shape for u in old], [u.shape for u in new], (lo, hi))
    if mapped is None:
        return SpanChange(None, True)
    before_strings = Counter(s for u in old[lo:hi + 1] for s in u.strings)
    after_strings = Counter(s for u in new[mapped[0]:mapped[1] + 1] for s in u.strings)
    differ = frozenset(changed_strings(before_strings, after_strings))
    return SpanChange(_lines(old, new, lo, hi, mapped, span), True, differ, tuple(old[lo:hi + 1]),
                      tuple(new[mapped[0]:mapped[1] + 1]))


def _lines(old: list[Unit], new: list[Unit], lo: int, hi: int, mapped: tuple[int, int],
           span: tuple[int, int]) -> tuple[int, int]:
    """The lines of the followed span: its start and end kept at the same distance from its units'."""
    start = new[mapped[0]].start + max(0, span[0] - old[lo].start)
    end = new[mapped[1]].end - max(0, old[hi].end - span[1])
    return start, max(start, end)


def follow_items(before: list[str], after: list[str], span: tuple[int, int]) -> tuple[int, int] | None:
    """Where items ``span`` (0-based, inclusive) of ``before`` are in ``after``; None when one of them changed."""
    a, b = span
    shift = None
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if tag == "equal":
            if i1 <= a and b < i2:
                shift = j1 - i1
            continue
        if tag == "insert":
            if a < i1 <= b:
                return None
            continue
        if i1 <= b and a < i2:
            return None
    return None if shift is None else (a + shift, b + shift)


# ------------------------------------------------------------------------------ symbols


def find_symbol(tree: ast.AST, symbol: str, stubs: bool = False) -> ast.AST | None:
    """A function or class (``name`` or ``Class.method``) of a parsed module. A name defined more than
    once in one scope (a property's getter and setter) is all of them, as one module; its ``@overload``
    stubs are left out when it has a body of its own (what only a type checker reads: their removal
    changes nothing), unless ``stubs`` (a node that speaks of overloads is about them). A definition under an
    ``if``, ``try`` or ``with`` of its module or class is found as if it were not; of a name defined in several
    such branches, a stub for another platform is left out (``if sys.platform == "win32":`` a class whose
    methods only raise ``NotImplementedError``, ``else:`` the class: :func:`_stub`), and the others are all of it
    (a function defined per Python version: both versions)."""
    scopes: list[tuple[str, ast.AST]] = [("", tree)]
    while scopes:
        prefix, scope = scopes.pop()
        found, classes = [], {}
        for node, branched in branch_statements(getattr(scope, "body", [])):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + node.name
                if name == symbol or node.name == symbol:
                    found.append((node, branched))
                elif isinstance(node, ast.ClassDef):
                    classes.setdefault(name, []).append((node, branched))
        scopes += [(name + ".", c) for name, defined in classes.items() for c in _real(defined)]
        found = _real(found)
        found = found if stubs else [n for n in found if not _overload(n)] or found
        if len(found) == 1:
            return found[0]
        if found:
            return ast.Module(body=found, type_ignores=[])
    return None


def branch_statements(body: list[ast.AST], branched: bool = False) -> list[tuple[ast.AST, bool]]:
    """The statements of a block, those of its ``if``, ``try`` and ``with`` blocks in their place (each branch),
    each with whether it came from such a block."""
    out: list[tuple[ast.AST, bool]] = []
    for node in body:
        if isinstance(node, (ast.If, ast.Try, ast.With)):
            blocks = [node.body, getattr(node, "orelse", []), getattr(node, "finalbody", []),
                      *(h.body for h in getattr(node, "handlers", []))]
            out += [d for block in blocks for d in branch_statements(block, True)]
        else:
            out.append((node, branched))
    return out


def _real(defined: list[tuple[ast.AST, bool]]) -> list[ast.AST]:
    """One name's definitions, those made under a condition that are stubs (:func:`_stub`) left out when another
    is not one."""
    real = [n for n, branched in defined if not (branched and _stub(n))]
    return real or [n for n, _ in defined]


def _stub(node: ast.AST) -> bool:
    """A definition that does nothing of its own: its statements (and its methods') are docstrings, ``pass``,
    ``...`` or ``raise NotImplementedError``."""
    body = [s for s in getattr(node, "body", []) if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    for s in body:
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and isinstance(node, ast.ClassDef):
            if not _stub(s):
                return False
        elif not (isinstance(s, ast.Pass) or isinstance(s, ast.Raise) and "NotImplementedError" in (dotted(
                s.exc.func if isinstance(s.exc, ast.Call) else s.exc) or "")):
            return False
    return True


def imported_from(tree: ast.AST | None) -> dict[str, tuple[str, ...]]:
    """The names a module imports from another (``from openpyxl.styles import Font``: ``Font`` -> ``("openpyxl",
    "styles")``; under an ``as``, the name it is bound to), at its top level or under an ``if`` or ``try`` there."""
    found: dict[str, tuple[str, ...]] = {}
    for node, _ in branch_statements(getattr(tree, "body", [])):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                found[alias.asname or alias.name] = tuple(node.module.split("."))
    return found


def _overload(node: ast.AST) -> bool:
    """A ``@overload`` (``@typing.overload``, ``@t.overload``) stub."""
    return "overload" in decorator_names(node)


def decorator_names(node: ast.AST) -> set[str]:
    """The names of a definition's decorators by their last part (``@jinja2.environmentfilter``:
    ``environmentfilter``; ``@lru_cache(256)``: ``lru_cache``)."""
    found = set()
    for d in getattr(node, "decorator_list", ()):
        name = dotted(d.func if isinstance(d, ast.Call) else d)
        if name:
            found.add(name.rsplit(".", 1)[-1])
    return found


def self_attributes(node: ast.AST, owner: str = "self") -> set[str]:
    """The attributes the code sets on ``self`` (``self.sleep = sleep``, ``self.count += 1``), or on the
    name ``owner`` (a method's first parameter, whatever it is called)."""
    return {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)
            and isinstance(n.value, ast.Name) and n.value.id == owner}


def declared_attributes(text: str) -> set[int]:
    """The lines of the bare annotations in a class body (``sleep: Callable[[float], Awaitable]``, no value)
    that declare an attribute a method of the class sets (``self.sleep = sleep``): what only a type checker
    reads. Not a bare annotation no method sets: in a dataclass, a ``NamedTuple`` or a model it is a field."""
    tree = parse_python(text)
    found: set[int] = set()
    for cls in ast.walk(tree) if tree is not None else ():
        if not isinstance(cls, ast.ClassDef):
            continue
        set_here = set().union(*(self_attributes(f) for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))))
        found.update(s.lineno for s in cls.body if isinstance(s, ast.AnnAssign) and s.value is None
                     and isinstance(s.target, ast.Name) and s.target.id in set_here)
    return found


def lines_of(node: ast.AST) -> tuple[int, int]:
    """The lines of a definition (its decorators included), or of the definitions :func:`find_symbol` joined."""
    parts = node.body if isinstance(node, ast.Module) else [node]
    start = min(min([n.lineno] + [d.lineno for d in getattr(n, "decorator_list", [])]) for n in parts)
    return start, max(n.end_lineno or n.lineno for n in parts)


def parameters(node: ast.AST) -> list[tuple[str, str, str | None]]:
    """A function's parameters: (kind, name, its default as dumped or None)."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return []
    a = node.args
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    out = [("positional-only" if i < len(a.posonlyargs) else "positional", p.arg,
            None if d is None else dump(d, False)) for i, (p, d) in enumerate(zip(positional, defaults))]
    if a.vararg:
        out.append(("*", a.vararg.arg, None))
    out += [("keyword", p.arg, None if d is None else dump(d, False)) for p, d in zip(a.kwonlyargs, a.kw_defaults)]
    if a.kwarg:
        out.append(("**", a.kwarg.arg, None))
    return out


def parameters_kept(old: ast.AST, new: ast.AST, folded=frozenset(), private=frozenset()) -> str | None:
    """None when every parameter of ``old`` is in ``new`` as it was (kind, place among the positional
    ones, default), those in ``folded`` (:func:`folded_parameters`) and in ``private`` aside. Otherwise
    what changed. A new parameter is not a change of the old ones (a required one breaks callers, not
    what the node says about the others: a click command gains one for every new option)."""
    before, after = parameters(old), parameters(new)
    now = {name: (kind, default) for kind, name, default in after}
    for kind, name, default in before:
        if name in private or name not in now and name in folded:
            continue
        if name not in now:
            return f"parameter `{name}` removed"
        if now[name] != (kind, default) and not (now[name][0] == kind and sentinel_renamed(old, new, name) is not None):
            return f"parameter `{name}` changed"
    old_positional = [n for k, n, _ in before if k.startswith("positional") and n not in private]
    new_positional = [n for k, n, _ in after if k.startswith("positional") and n not in private]
    if new_positional[:len(old_positional)] != old_positional:
        return "parameters reordered"
    return None


def sentinel_renamed(old: ast.AST, new: ast.AST, parameter: str) -> tuple[str, str] | None:
    """The old and new name when ``parameter``'s default is a sentinel renamed: a module's name both before and after (``default=
    _marker`` now ``default=sentinel``), that the function tests the parameter against by identity only (``default
    is not _marker`` now ``default is not sentinel``), each time the other is tested: what the default is matters
    only as "no value was given", which both say. None when not so."""
    def tests_of(function: ast.AST, default: ast.Name) -> int | None:
        tests = uses = 0
        for n in ast.walk(function):
            if isinstance(n, ast.Name) and n.id == default.id and n is not default:
                uses += 1
            if isinstance(n, ast.Compare) and len(n.ops) == 1 and isinstance(n.ops[0], (ast.Is, ast.IsNot)):
                sides = {(type(x).__name__, getattr(x, "id", None)) for x in (n.left, n.comparators[0])}
                if sides == {("Name", parameter), ("Name", default.id)}:
                    tests += 1
        return tests if tests and tests == uses else None

    if not all(isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) for f in (old, new)):
        return None
    then, now = defaults(old).get(parameter), defaults(new).get(parameter)
    if not isinstance(then, ast.Name) or not isinstance(now, ast.Name) or then.id == now.id:
        return None  # (before any walk of the functions: most defaults are no renamed name)
    tested = tests_of(old, then)
    if tested is None or tests_of(new, now) != tested:
        return None
    return then.id, now.id


def defaults(function: ast.AST) -> dict[str, ast.AST]:
    """A function's parameters that have a default, each with its default's expression."""
    a = function.args
    positional = a.posonlyargs + a.args
    pairs = list(zip(positional[len(positional) - len(a.defaults):], a.defaults)) + list(zip(a.kwonlyargs, a.kw_defaults))
    return {p.arg: d for p, d in pairs if d is not None}


def folded_parameters(old: ast.AST, new: ast.AST) -> dict[str, str]:
    """The parameters ``old`` had that ``new`` reads from another of its parameters instead: removed,
    never a plain name in ``new``, and read there as that parameter's attribute of the same name
    (``preview`` now ``mode.preview``, ``mode`` a parameter ``new`` gained): the same value, passed in
    another object. Removed parameter -> the parameter that carries it now."""
    before = {name for _, name, _ in parameters(old)}
    after = {name for _, name, _ in parameters(new)}
    plain_names = {n.id for n in ast.walk(new) if isinstance(n, ast.Name)}
    carried = {(n.value.id, n.attr) for n in ast.walk(new)
               if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in after - before}
    out = {}
    for name in sorted(before - after - plain_names):
        carriers = sorted(q for q, attr in carried if attr == name)
        if carriers:
            out[name] = carriers[0]
    return out


def call_guards(function: ast.AST, name: str) -> set[str]:
    """The names tested by the conditions around every call of ``name`` in ``function`` (an ``if``'s or a
    ``while``'s test, a conditional expression's, an ``and``/``or`` operand before the call's):
    ``{"Preview", "remove_redundant_parens", "self", "mode"}`` for a call under ``if
    Preview.remove_redundant_parens in self.mode:``. Empty when it is not called."""
    found: list[set[str]] = []

    def names(test: ast.AST) -> set[str]:
        return {n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(test) if isinstance(n, (ast.Name, ast.Attribute))}

    def visit(node: ast.AST, tested: frozenset[str]) -> None:
        if calls_name(node, name):
            found.append(set(tested))
        if isinstance(node, (ast.If, ast.While, ast.IfExp)):
            visit(node.test, tested)
            inner = tested | names(node.test)
            for child in (node.body if isinstance(node.body, list) else [node.body]):
                visit(child, inner)
            for child in (node.orelse if isinstance(node.orelse, list) else [node.orelse]):
                visit(child, inner)
            return
        if isinstance(node, ast.BoolOp):
            seen = tested
            for value in node.values:
                visit(value, seen)
                seen = seen | names(value)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, tested)

    visit(function, frozenset())
    return set.intersection(*found) if found else set()


def read_through(node: ast.AST, folded: dict[str, str], aliases: dict[str, ast.AST] | None = None) -> ast.AST:
    """A copy of ``node`` reading each folded parameter through the parameter that carries it now
    (``preview`` as ``mode.preview``), and each parameter in ``aliases`` as its default
    (:func:`aliased_defaults`: ``_cell_len(text)`` as ``cached_cell_len(text)``): compared with the new
    code, a statement that only reads it the new way is the same statement."""
    if not folded and not aliases:
        return node
    aliases = aliases or {}

    class Through(ast.NodeTransformer):
        def visit_Name(self, n: ast.Name) -> ast.AST:
            if n.id in folded and isinstance(n.ctx, ast.Load):
                return ast.copy_location(ast.Attribute(value=ast.Name(id=folded[n.id], ctx=ast.Load()), attr=n.id,
                                                       ctx=ast.Load()), n)
            if n.id in aliases and isinstance(n.ctx, ast.Load):
                return ast.copy_location(copy.deepcopy(aliases[n.id]), n)
            return n

    return Through().visit(copy.deepcopy(node))


def aliased_defaults(old: ast.AST, new: ast.AST, names: set[str]) -> dict[str, ast.AST]:
    """Those of ``names``, parameters of ``old`` gone from ``new``, whose default is a name (``_cell_len=
    cached_cell_len``, a function bound as a default so that a call reads a local): in the body they were that
    name. Parameter -> its default."""
    if not isinstance(old, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return {}
    now = {name for _, name, _ in parameters(new)}
    return {p: d for p, d in defaults(old).items() if p in names and p not in now and isinstance(d, (ast.Name, ast.Attribute))}


def body_units(node: ast.AST) -> list[Unit]:
    """A symbol's statements (its own header aside)."""
    out: list[Unit] = []
    for name, block in _children(node):
        _walk(block, name, 1, out)
    return out


def changed_units(old: ast.AST, new: ast.AST) -> tuple[list[Unit], list[Unit]]:
    """The statements of ``old``'s body that are not in ``new``'s, and those of ``new`` not in ``old``
    (by their code, string values included), leaving out a statement that only gained keyword
    arguments in its calls (an option passed through, the call-site twin of an optional parameter),
    and the statements that declare a class's fields when the class was turned into a dataclass (or
    back) with the same fields (:func:`same_fields`)."""
    before, after = body_units(old), body_units(new)
    kept = same_fields(old, new)
    if kept is not None:
        before = [u for u in before if id(u.node) not in kept[0]]
        after = [u for u in after if id(u.node) not in kept[1]]
    return units_changed(before, after)


def _is_dataclass(node: ast.ClassDef) -> bool:
    for d in node.decorator_list:
        d = d.func if isinstance(d, ast.Call) else d
        if (d.id if isinstance(d, ast.Name) else d.attr if isinstance(d, ast.Attribute) else "") in ("dataclass", "define",
                                                                                                    "frozen", "attrs"):
            return True
    return False


def _self_attribute(target: ast.AST) -> str | None:
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
        return target.attr
    return None


def declared_fields(node: ast.AST) -> tuple[set[str], set[int]] | None:
    """The fields a class declares and the ids of the statements that declare them: a dataclass's
    annotated class attributes (``ClassVar`` aside); or a hand-written ``__init__`` that only stores
    values on ``self`` (its parameters, or defaults for them: ``if extra is None: extra = []``), with
    its docstring. None when the class has neither (an ``__init__`` that does more is behaviour)."""
    if not isinstance(node, ast.ClassDef):
        return None
    if _is_dataclass(node):
        found = [s for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
                 and "ClassVar" not in dump(s.annotation, True)]
        return {s.target.id for s in found}, {id(s) for s in found}
    init = next((s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
    if init is None:
        return None
    params = {a.arg for a in init.args.args[1:] + init.args.kwonlyargs + init.args.posonlyargs}
    fields: set[str] = set()

    def stores(stmt: ast.AST) -> bool:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AnnAssign) else None
        if targets is None or len(targets) != 1:
            return False
        name = _self_attribute(targets[0])
        if name is not None:
            fields.add(name)
            return True
        return isinstance(targets[0], ast.Name) and targets[0].id in params

    for stmt in init.body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
            continue
        if isinstance(stmt, ast.If) and not stmt.orelse and all(stores(s) for s in stmt.body):
            continue
        if not stores(stmt):
            return None
    return fields, {id(n) for n in ast.walk(init)}


def same_fields(old: ast.AST, new: ast.AST) -> tuple[set[int], set[int]] | None:
    """When a class was turned into a dataclass (or a dataclass into a hand-written class) and declares
    the same fields: the ids of the statements that declare them on each side (the hand-written
    ``__init__`` and its body, the annotated fields). None otherwise."""
    if not (isinstance(old, ast.ClassDef) and isinstance(new, ast.ClassDef)) or _is_dataclass(old) == _is_dataclass(new):
        return None
    before, after = declared_fields(old), declared_fields(new)
    if before is None or after is None or before[0] != after[0]:
        return None
    return before[1], after[1]


def units_changed(before: list[Unit], after: list[Unit]) -> tuple[list[Unit], list[Unit]]:
    """:func:`changed_units` of two lists of statements (a statement moved into a new block is changed:
    a loop put around it changes what it does). An import is no statement of what the code does: one
    moved into a function (imported when needed) or out of it is not a change; nor is a docstring (or
    another bare string): documentation of the code, not code."""
    before = [u for u in before if not isinstance(u.node, (ast.Import, ast.ImportFrom)) and not is_doc(u)]
    after = [u for u in after if not isinstance(u.node, (ast.Import, ast.ImportFrom)) and not is_doc(u)]
    out: list[tuple[Unit | None, Unit | None]] = []
    matcher = difflib.SequenceMatcher(None, [u.text for u in before], [u.text for u in after], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        gone, came = before[i1:i2], after[j1:j2]
        if tag == "replace" and len(gone) == len(came):
            out += [(g, c) for g, c in zip(gone, came) if not _only_added_keywords(g, c)]
        else:
            out += [(g, None) for g in gone] + [(None, c) for c in came]
    return [g for g, _ in out if g is not None], [c for _, c in out if c is not None]


def is_doc(unit: Unit) -> bool:
    """Whether the unit is a bare string: a docstring, or prose between statements."""
    return isinstance(unit.node, ast.Expr) and isinstance(unit.node.value, ast.Constant) and \
        isinstance(unit.node.value.value, str)


def _only_added_keywords(old: Unit, new: Unit) -> bool:
    if old.node is None or new.node is None or old.text.split(":", 2)[:2] != new.text.split(":", 2)[:2]:
        return False
    kept = {k.arg for n in ast.walk(old.node) if isinstance(n, ast.Call) for k in n.keywords}
    import copy

    trimmed = copy.deepcopy(new.node)
    added = False
    for n in ast.walk(trimmed):
        if isinstance(n, ast.Call):
            keep = [k for k in n.keywords if k.arg in kept]
            added |= len(keep) != len(n.keywords)
            n.keywords = keep
    return added and dump(trimmed, False, True) == dump(old.node, False, True)


def symbol_units(node: ast.AST) -> list[Unit]:
    """A symbol's statements, its own header (signature, defaults, decorators) included."""
    out: list[Unit] = []
    _walk(node.body if isinstance(node, ast.Module) else [node], "body", 0, out)
    return out


def constants_used(tree: ast.AST, node: ast.AST) -> list[Unit]:
    """The module's and its classes' assignments of a name ``node`` uses (``MAX_RETRIES = 3`` for a
    function that loops ``range(MAX_RETRIES)``): a value moved out of a function into a constant is
    still the function's."""
    used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | \
        {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
    if not used:
        return []
    scopes = [getattr(tree, "body", [])]
    scopes += [c.body for c in getattr(tree, "body", []) if isinstance(c, ast.ClassDef)]
    found = []
    for body in scopes:
        for stmt in body:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
            if any(isinstance(t, ast.Name) and t.id in used for t in targets):
                found.append(stmt)
    out: list[Unit] = []
    _walk(found, "body", 0, out, composed_strings(tree))
    return out


# a number as written: 5000, 3.0, 1.21.1 (not part of a word, utf8 or sha256, nor of a longer dotted one)
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)*(?![\w]|\.\d)")


def version_parts(token: str) -> list[str]:
    """The parts of a version (``1.21.1``: 1, 21, 1); none for a whole number or a fraction (``0.4``)."""
    return token.split(".") if "." in token and not token.startswith("0.") else []


def numbers_in(text: str) -> set[str]:
    """The numbers written in ``text``; a version also by its parts: ``>=1.21.1`` gives ``1.21.1``,
    ``1`` and ``21`` (a bound checked part by part, ``minor >= 21``, is the same version)."""
    found = set()
    for token in _NUMBER.findall(text):
        found.add(token)
        found.update(version_parts(token))
    return found


@dataclass(frozen=True)
class Literals:
    """The values a piece of code holds as written: its strings and its numbers."""

    strings: tuple[str, ...]  # string values, whitespace-collapsed (in other languages: each line)
    numbers: frozenset[str]
    python: bool  # strings are the code's string values, not its lines

    def holds_string(self, part: str) -> bool:
        """Whether one of its strings is ``part`` or, for a part of four characters or more, holds it
        (a message quoted up to an ellipsis), quotation marks aside: a node that writes a command or a
        message in its own quotes cannot show the quotes inside it (``"echo ${VERSION}"`` for the code's
        ``'echo "${VERSION}"'``). In other languages, a short part must be quoted in a line."""
        if len(part) < 4:
            if self.python:
                return part in self.strings
            return any(f'"{part}"' in line or f"'{part}'" in line for line in self.strings)
        if any(part in s for s in self.strings):
            return True
        bare = part.translate(_QUOTE_MARKS)
        return any(bare in s for s in self._unquoted) if bare != part or self._quoted else False

    def holds_whole(self, part: str) -> bool:
        """Whether one of its strings is ``part`` itself, not a longer string holding it (quotation marks and a
        final stop aside: a message that gains a period says the same)."""
        return part in self.strings or part.translate(_QUOTE_MARKS).rstrip(_STOPS) in self._whole

    @cached_property
    def _whole(self) -> frozenset[str]:
        return frozenset(s.rstrip(_STOPS) for s in self._unquoted)

    @cached_property
    def _quoted(self) -> bool:
        return any(q in s for s in self.strings for q in "'\"`")

    @cached_property
    def _unquoted(self) -> tuple[str, ...]:
        return tuple(s.translate(_QUOTE_MARKS) for s in self.strings)


_QUOTE_MARKS = str.maketrans("", "", "'\"`")
_STOPS = ".!?:;, "


def literals(found: list[Unit]) -> Literals:
    """The string values and the numbers of these units. In Python: its string constants (docstrings and
    other bare strings aside: prose about the code, not values it holds), its int and float constants,
    and the numbers written in its strings. In other languages: its lines (comments and all) and the
    numbers written in them."""
    strings: list[str] = []
    numbers: set[str] = set()
    python = any(u.node is not None for u in found)
    for u in found:
        if u.node is None:
            if not python:
                strings.append(u.text)
                numbers |= numbers_in(u.text)
            continue
        if isinstance(u.node, ast.Expr) and isinstance(u.node.value, ast.Constant) and isinstance(u.node.value.value, str):
            continue  # a docstring
        strings += u.strings
        numbers.update(v for v in u.constants() if _NUMBER.fullmatch(v))
        for s in u.strings:
            numbers |= numbers_in(s)
    return Literals(tuple(strings), frozenset(numbers), python)


def file_literals(text: str, path: str) -> Literals:
    """What :func:`literals` finds in a whole file, read in one pass (kept per text: one file is read for
    every node that references it). Python by its strings and comments scanned as :func:`code_words`
    does: adjacent strings joined (as Python joins them), a triple-quoted string that opens its line
    taken for a docstring, comments left out, and the numbers of the rest; with the strings the
    module's constants built from others give (:func:`composed_strings`, from the parse the judgement of
    the file has mostly made already). Other languages by their lines."""
    if not path.endswith(".py"):
        return _memo("literals", text, lambda t: literals(_line_units(t)))
    return _memo("literals:py", text, _python_literals)


def _python_literals(text: str) -> Literals:
    strings: list[str] = []
    numbers: set[str] = set()
    code: list[str] = []
    joined: list[str] = []  # the pieces of the string being read (adjacent literals)
    at = end = 0
    for m in _STRING_OR_COMMENT.finditer(text):
        between = text[end:m.start()]
        code.append(between)
        if joined and between.strip():  # code between: the string before is complete
            strings.append(" ".join("".join(joined).split()))
            joined = []
        at, end = m.start(), m.end()
        literal = m.group("s")
        if not literal:
            continue  # a comment: left out, and it does not end a string run
        body = literal.lstrip("rRbBuUfF")
        quote = 3 if body[:3] in ('"""', "'''") else 1
        line_start = text.rfind("\n", 0, at) + 1
        if quote == 3 and not text[line_start:at].strip() and not joined:
            continue  # a docstring or a bare string: prose about the code
        joined.append(body[quote:len(body) - quote])
    if joined:
        strings.append(" ".join("".join(joined).split()))
    code.append(text[end:])
    tree = parse_python(text)
    strings += composed_strings(tree).values() if tree is not None else ()  # a constant built from others
    for s in strings:
        numbers |= numbers_in(s)
    # a test of the interpreter's version is no value of the code: "on Python 3.8+" still holds when a shim's
    # ``if sys.version_info >= (3, 7):`` goes with the support of 3.6
    numbers |= {n.replace("_", "") for n in _CODE_NUMBER.findall(_VERSION_TEST.sub(" ", " ".join(code)))}
    return Literals(tuple(strings), frozenset(numbers), True)


_VERSION_TEST = re.compile(r"\bversion_info\b(?:\s*\[[^\]\n]*\])?\s*(?:[<>]=?|[=!]=)\s*\(\s*\d+(?:\s*,\s*\d+)*\s*,?\s*\)"
                           r"|\(\s*\d+(?:\s*,\s*\d+)*\s*,?\s*\)\s*(?:[<>]=?|[=!]=)\s*(?:\w+\.)?version_info\b")
_CODE_NUMBER = re.compile(r"(?<![\w.])\d[\d_]*(?:\.\d[\d_]*)*(?![\w]|\.\d)")  # 1_000_000 is 1000000


def changed_strings(before: Counter[str], after: Counter[str]) -> Counter[str]:
    """The string values that differ between two multisets of them, quotation marks aside (a command
    now quoting its variable, ``echo ${V}`` into ``echo "${V}"``, is the same text to a node that writes
    it in its own quotes: :meth:`Literals.holds_string`)."""
    bare_before = Counter(s.translate(_QUOTE_MARKS) for s in before.elements())
    bare_after = Counter(s.translate(_QUOTE_MARKS) for s in after.elements())
    return (bare_before - bare_after) + (bare_after - bare_before)


def strings_of(node: ast.AST) -> Counter[str]:
    found: list[str] = []
    dump(node, False, False, found)
    return Counter(found)


def method_names(node: ast.AST) -> set[str]:
    """The names of the methods a class defines in its body (``def``, ``async def``); none for anything else."""
    if not isinstance(node, ast.ClassDef):
        return set()
    return {s.name for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}


def bound_names(node: ast.AST) -> set[str]:
    """The variables a function binds (assigned, a loop's or a comprehension's target, ``as`` names);
    not its parameters, nor attributes."""
    found = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            found.add(n.id)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            found.add(n.name)
    return found


def built_strings(node: ast.AST) -> Counter[tuple[str, ...]]:
    """The strings built from pieces (:func:`formatted`: an f-string, ``"...{}".format(a)``, ``"...%s" % a``),
    each as its literal pieces, whitespace collapsed: ``f"(assert (implies d{enc} {pred}))"`` is
    ``("(assert (implies d", " ", "))")``."""
    found: Counter[tuple[str, ...]] = Counter()
    for n in ast.walk(node):
        built = formatted(n) if isinstance(n, (ast.JoinedStr, ast.Call, ast.BinOp)) else None
        if built is not None and built[1]:
            found[tuple(re.sub(r"\s+", " ", p) for p in built[0])] += 1
    return found


# ------------------------------------------------------------------------------ words and deprecation


def without_docstrings(text: str, node: ast.AST) -> str:
    """The lines of ``text`` that ``node`` spans, the docstrings of it and of the functions and classes in it
    blanked: the code, without the prose about it."""
    start, end = lines_of(node)
    blank = set()
    for n in ast.walk(node):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                and ast.get_docstring(n, clean=False) is not None:
            first = n.body[0]
            blank.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    lines = text.splitlines()[start - 1:end]
    return "\n".join("" if start + i in blank else line for i, line in enumerate(lines))


def code_words(text: str, path: str) -> str:
    """The text with Python comments left out (other languages as they are): a name only a comment gave
    is not the code's."""
    if not path.endswith(".py") or "#" not in text:
        return text
    return _memo("words", text, _without_comments)


# a Python string (kept as it is) or a comment (left out), scanned in one pass: strings first, so a "#" in
# a string is not a comment
_STRING_OR_COMMENT = re.compile(
    r"""(?P<s>(?:[rRbBuUfF]{1,2})?(?:\"\"\"(?:\\.|[^\\])*?\"\"\"|'\'\'(?:\\.|[^\\])*?'\'\'|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'))"""
    r"|(?P<c>#[^\n]*)", re.DOTALL)


def _without_comments(text: str) -> str:
    return _STRING_OR_COMMENT.sub(lambda m: m.group("s") or "", text)


def _is_warning_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if "warn" not in name.lower():
        return False
    return any(_DEPRECATION.search(dump(arg, True)) for arg in [*node.args[1:], *(k.value for k in node.keywords)]) \
        or "deprecat" in name.lower() or "deprecat" in _message(node).lower()


def _message(node: ast.Call) -> str:
    found: list[str] = []
    if node.args:
        dump(node.args[0], False, False, found)
    return " ".join(found)


def deprecated(text: str, path: str, names: set[str]) -> set[str]:
    """Which of ``names`` the code marks deprecated: a Python function or class with a ``deprecated``
    decorator, a deprecation warning raised in its body, or "deprecated" in its docstring; or a
    deprecation warning whose message names it (a module ``__getattr__`` for an old name), or any call
    whose message says it "is deprecated" (``print("Warning: --flag is deprecated")``, a log line). In other
    programming languages: a deprecation mark (``@deprecated``, ``Deprecated:``, ``#[deprecated``,
    ``[Obsolete``) on a line that names it or up to three lines above. Documents are not read so."""
    if not names:
        return set()
    lowered = text.lower()
    if "deprecat" not in lowered and "futurewarning" not in lowered and "obsolete" not in lowered:
        return set()
    if path.endswith(".py"):
        found = _deprecated_python(text, names)
        if found is not None:
            return found
    if path.rsplit(".", 1)[-1].lower() not in _CODE:  # a document that says "deprecated" is not the code's mark
        return set()
    found: set[str] = set()
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if _MARK.search(line):
            near = " ".join(lines[i:i + 4])
            found.update(n for n in names if re.search(rf"(?<![\w]){re.escape(n)}(?![\w])", near))
    return found


def _deprecated_python(text: str, names: set[str]) -> set[str] | None:
    marks = _memo("deprecated", text, _deprecation_marks)
    if marks is None:
        return None
    marked, messages = marks
    found = names & marked
    for message in messages:
        found |= named_deprecated(message, names)
    return found


_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")
_REPLACEMENT_BEFORE = re.compile(r"(?:\buse|\busing|\bcompatib\w*\s+with|\bin\s+favou?r\s+of|\breplaced\s+(?:by|with)|\brenamed\s+(?:to|as)"
                                 r"|\bmoved\s+to|\bswitch\s+to|\bprefer|\bcall|\bavailable\s+(?:in|from|as))"
                                 r"\s+(?:the\s+|an?\s+)?[`'\"]?\S*$", re.IGNORECASE)
_REMOVAL = re.compile(r"\b(?:remov\w*|no\s+longer|going\s+away|obsolete|dropped)\b", re.IGNORECASE)
_REPLACEMENT_AFTER = re.compile(r"^\S*?[`'\"]?\s+instead\b(?!\s+of)", re.IGNORECASE)


def named_deprecated(message: str, names: set[str]) -> set[str]:
    """Which of ``names`` a deprecation warning's message says is deprecated: named in a sentence that says
    "deprecat" (in the whole message when none does), but not as what to use instead ("'BaseCommand' is
    deprecated. Use 'Command' instead.", "'protected_args' is deprecated. 'args' will contain the rest.",
    "'parser.split' is deprecated, it will only be available in 'shell'": only the first is). A sentence that
    quotes names says by its quotes what is deprecated: its other words are prose ("The 'HTTP_STATUS_CODES'
    data is deprecated" deprecates no ``data``). A message that never says "deprecat" says it by the sentence
    that speaks of removal: "zip_equal will be removed in a future version of more-itertools. Use the builtin
    zip function with strict=True instead." deprecates ``zip_equal``, not ``zip``; and a word joined to the next
    by a hyphen is part of a longer name (``more`` in "more-itertools", the package); one joined to the next by a
    dot qualifies it, and what the code is made compatible with is no deprecated name: "For compatibility with
    the datetime.timestamp() method this property will be replaced" deprecates neither ``datetime`` nor
    ``timestamp`` (the property is deprecated by the warning in its body)."""
    sentences = _SENTENCE_END.split(message)
    saying = [s for s in sentences if "deprecat" in s.lower()] or \
        [s for s in sentences if _REMOVAL.search(s)] or sentences
    found = set()
    for sentence in saying:
        quoted = [m.span(1) for m in _QUOTED_NAME.finditer(sentence)]
        for n in names:
            for m in re.finditer(rf"(?<![\w]){re.escape(n)}(?![\w]|-[A-Za-z]|\.[A-Za-z_])", sentence):
                if quoted and not any(a <= m.start() and m.end() <= b for a, b in quoted):
                    continue
                if not _REPLACEMENT_BEFORE.search(sentence[:m.start()]) and \
                        not _REPLACEMENT_AFTER.match(sentence[m.end():]):
                    found.add(n)
                    break
    return found


def _deprecation_marks(text: str) -> tuple[set[str], list[str]] | None:
    """The functions and classes a Python module marks deprecated, and its deprecation warnings' messages."""
    tree = parse_python(text)
    if tree is None:
        return None
    marked: set[str] = set()
    warnings = _warning_calls(text)
    messages = [_message(node) for node in warnings]
    # what a call tells the user is deprecated, whatever tells it (a print, a log line, an error): its message
    messages += [m for node in ast.walk(tree) if isinstance(node, ast.Call) and not _is_warning_call(node)
                 and (m := _message(node)) and re.search(r"\bdeprecated\b", m, re.IGNORECASE)]
    marked |= _old_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if any("deprecat" in dump(d, False).lower() for d in node.decorator_list):
                marked.add(node.name)
                continue
            doc = ast.get_docstring(node) or ""
            if re.search(r"\bdeprecated\b", doc, re.IGNORECASE) and not _parameters_said(doc, node):
                marked.add(node.name)
                continue
            init = node if not isinstance(node, ast.ClassDef) else _init_of(node)
            if init is not None and _warns_in(init, warnings) and _guarded_warnings(init)[0]:
                marked.add(node.name)  # (a warning only when a parameter is given is the parameter's)
    return marked, messages


def _old_names(tree: ast.Module) -> set[str]:
    """The names a module ``__getattr__`` (PEP 562) warns about when asked for: ``if name == "BaseCommand":
    warnings.warn(...)`` (or ``name in ("A", "B")``) keeps an old name importable, deprecated."""
    found: set[str] = set()
    for node in tree.body:
        if not (isinstance(node, ast.FunctionDef) and node.name == "__getattr__" and node.args.args):
            continue
        asked = node.args.args[0].arg
        for test in ast.walk(node):
            if not (isinstance(test, ast.If) and isinstance(test.test, ast.Compare) and len(test.test.ops) == 1
                    and isinstance(test.test.left, ast.Name) and test.test.left.id == asked
                    and isinstance(test.test.ops[0], (ast.Eq, ast.In))):
                continue
            if not any(_is_warning_call(n) for stmt in test.body for n in ast.walk(stmt)):
                continue
            value = test.test.comparators[0]
            values = value.elts if isinstance(value, (ast.Tuple, ast.List, ast.Set)) else [value]
            found.update(v.value for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str))
    return found


def kwargs_keys(node: ast.AST) -> set[str]:
    """The keywords a function (a class: its ``__init__``) with ``**kwargs`` reads from them by name
    (``attrs.pop("cls", None)``, ``kwargs.get("encoding")``, ``attrs["cls"]``, of the mapping or a copy
    of it), and the variables it stores them in: keyword arguments its callers pass, as a parameter's."""
    function = _init_of(node) if isinstance(node, ast.ClassDef) else node
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or function.args.kwarg is None:
        return set()
    found: set[str] = set()
    for n in ast.walk(function):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) and \
                _read_key(n.value) is not None:
            found.add(n.targets[0].id)
        key = _read_key(n)
        if key is not None:
            found.add(key)
    return found


def _read_key(node: ast.AST) -> str | None:
    key = None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args and \
            node.func.attr in ("pop", "get", "setdefault"):
        key = node.args[0]
    elif isinstance(node, ast.Subscript):
        key = node.slice
    if isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value.isidentifier():
        return key.value
    return None


def _keywords(function: ast.AST | None) -> set[str]:
    """A function's parameters (``self`` and ``cls`` aside) and the keywords it reads from ``**kwargs``."""
    if function is None:
        return set()
    return ({name for _, name, _ in parameters(function)} - {"self", "cls"}) | kwargs_keys(function)


def _parameters_said(doc: str, node: ast.AST) -> bool:
    """Whether every sentence of a docstring that says "deprecated" names a parameter of the function (of
    a class: of its ``__init__``) before saying it: "``encoding`` is deprecated and will be removed in
    2.1." deprecates the parameter, not the function (:func:`deprecated_parameters` reads the warning);
    "Deprecated: call ``load(path)``." is the function's."""
    names = _keywords(_init_of(node) if isinstance(node, ast.ClassDef) else node)
    if not names:
        return False
    for sentence in re.split(r"(?<=[.!?])\s+|\n\s*\n", doc):
        said = re.search(r"\bdeprecated\b", sentence, re.IGNORECASE)
        if said and not any(re.search(rf"(?<!\w){re.escape(n)}(?!\w)", sentence[:said.start()]) for n in names):
            return False
    return True


def _warning_calls(text: str) -> list[ast.Call]:
    """The deprecation warnings a Python module raises (its parsed text, kept)."""
    tree = parse_python(text)
    return _memo("warnings", text, lambda _: [n for n in ast.walk(tree) if _is_warning_call(n)]) if tree else []


def _warns_in(function: ast.AST, warnings: list[ast.Call]) -> bool:
    end = function.end_lineno or function.lineno
    return any(function.lineno <= w.lineno <= end for w in warnings)


def _init_of(node: ast.ClassDef) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    return next((n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "__init__"),
                None)


def _given(test: ast.AST, names: set[str]) -> set[str]:
    """The parameters an ``if`` test asks to have been given: ``p``, ``p is not None``, ``p is not UNSET``
    (``!=`` alike: None or a sentinel name), or an ``and`` of those; not a test of a value (``name ==
    "old"``, ``name != "old"``: a module ``__getattr__`` for an old name)."""
    if isinstance(test, ast.Name) and test.id in names:
        return {test.id}
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.IsNot, ast.NotEq)) \
            and isinstance(test.left, ast.Name) and test.left.id in names and \
            (isinstance(test.comparators[0], (ast.Name, ast.Attribute)) or
             isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None):
        return {test.left.id}
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return set().union(*(_given(v, names) for v in test.values))
    return set()


def _guarded_warnings(function: ast.AST) -> tuple[bool, set[str]]:
    """(whether the function raises a deprecation warning whatever it is given, the parameters whose being
    given raises one): ``if proxies: warnings.warn("'proxies' is deprecated", DeprecationWarning)``
    deprecates the parameter, not the function."""
    names = _keywords(function)
    unguarded, given = False, set()

    def visit(stmts: list[ast.AST], guard: set[str]) -> None:
        nonlocal unguarded
        for stmt in stmts:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(stmt, ast.If):
                tested = _given(stmt.test, names)
                visit(stmt.body, guard | tested)
                visit(stmt.orelse, guard)
                continue
            own = [stmt] if not any(isinstance(getattr(stmt, b, None), list) for b in _BLOCKS) else \
                [c for f, c in ast.iter_fields(stmt) if f not in _BLOCKS and isinstance(c, ast.AST)]
            if any(_is_warning_call(n) for part in own for n in ast.walk(part)):
                if guard:
                    given.update(guard)
                else:
                    unguarded = True
            for block in _BLOCKS:
                for child in getattr(stmt, block, None) or []:
                    visit(child.body if isinstance(child, (ast.ExceptHandler, ast.match_case)) else [child], guard)
    visit(function.body, set())
    return unguarded, given


def deprecated_parameters(text: str, path: str) -> dict[str, tuple[tuple[str, ...], frozenset[str]]]:
    """The Python functions and classes (by qualified name, ``Client``, ``Client.__init__``, ``request``)
    with a parameter whose being given raises a deprecation warning: name -> (its parameters, the
    deprecated ones). A class's are its ``__init__``'s."""
    if not path.endswith(".py") or "deprecat" not in text.lower() and "futurewarning" not in text.lower():
        return {}
    return _memo("parameters", text, _parameter_marks) or {}


def _parameter_marks(text: str) -> dict[str, tuple[tuple[str, ...], frozenset[str]]] | None:
    tree = parse_python(text)
    if tree is None:
        return None
    out: dict[str, tuple[tuple[str, ...], frozenset[str]]] = {}
    warnings = _warning_calls(text)
    scopes: list[tuple[str, ast.AST]] = [("", tree)] if warnings else []
    while scopes:
        prefix, scope = scopes.pop()
        for node in getattr(scope, "body", []):
            if isinstance(node, ast.ClassDef):
                scopes.append((f"{prefix}{node.name}.", node))
                init = _init_of(node)
                if init is not None and _warns_in(init, warnings) and (found := _guarded_warnings(init)[1]):
                    out[prefix + node.name] = (_keywords_in_order(init), frozenset(found))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _warns_in(node, warnings):
                found = _guarded_warnings(node)[1]
                if found:
                    out[prefix + node.name] = (_keywords_in_order(node), frozenset(found))
    return out


def _keywords_in_order(function: ast.AST) -> tuple[str, ...]:
    """A function's parameters in order, then the keywords it reads from ``**kwargs``."""
    names = [n for _, n, _ in parameters(function)]
    return tuple(names) + tuple(sorted(kwargs_keys(function) - set(names)))
