"""The Python outline (no ast) gives the chunks and symbols the ast walk it replaced gave, on random
modules built from tricky pieces, and outlines what this Python's ast cannot parse."""

from __future__ import annotations

import ast

from hypothesis import given, settings
from hypothesis import strategies as st

from autology_mcp.code import chunking
from autology_mcp.code.chunking import Region, Symbol, _fill, _signature, chunk_file
from autology_mcp.code.config import IndexConfig
from autology_mcp.code.python_outline import ROUTE_ATTRIBUTES, outline

CFG = IndexConfig(code_max_lines=12, code_overlap_lines=3)  # small, so classes are split into methods too


def _ast_definition(lines: list[str], text: str, cfg: IndexConfig):
    """chunking._python as it was written with ``ast`` (format 6): the reference."""
    tree = ast.parse(text)

    def route(node):
        for dec in node.decorator_list:
            target = dec.func if isinstance(dec, ast.Call) else dec
            if isinstance(target, ast.Attribute) and target.attr in ROUTE_ATTRIBUTES:
                return True
        return False

    def start(node):
        return min([node.lineno] + [d.lineno for d in node.decorator_list])

    regions, symbols = [], []
    defs = (ast.FunctionDef, ast.AsyncFunctionDef)
    for node in tree.body:
        if isinstance(node, defs):
            kind = "route" if route(node) else "function"
            symbols.append(Symbol(node.name, kind, start(node), node.end_lineno, _signature(lines[node.lineno - 1])))
            regions.append(Region(start(node), node.end_lineno, node.name, kind, "symbol"))
        elif isinstance(node, ast.ClassDef):
            s, e = start(node), node.end_lineno
            symbols.append(Symbol(node.name, "class", s, e, _signature(lines[node.lineno - 1])))
            methods = [n for n in node.body if isinstance(n, defs)]
            for m in methods:
                symbols.append(Symbol(f"{node.name}.{m.name}", "route" if route(m) else "method", start(m),
                                      m.end_lineno, _signature(lines[m.lineno - 1])))
            if e - s + 1 <= cfg.code_max_lines or not methods:
                regions.append(Region(s, e, node.name, "class", "symbol"))
                continue
            inner = [Region(start(m), m.end_lineno, f"{node.name}.{m.name}", "route" if route(m) else "method",
                            "symbol") for m in methods]
            regions.extend(_fill(lines, inner, s, e, node.name, "class", "symbol", "symbol"))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(t, ast.Name) and t.id.isupper() and len(t.id) > 1:
                    symbols.append(Symbol(t.id, "constant", node.lineno, node.end_lineno,
                                          _signature(lines[node.lineno - 1])))
    return regions, symbols


# Statements for a body (indented by the caller), each valid on its own.
BODY = st.sampled_from([
    "return 1",
    "x = (\n    1,\n    2,\n)",
    "y = [a\n     for a in range(3)]",
    's = """\ndef not_a_function():\nclass NotAClass:\n"""',
    "t = '''it's\n# not a comment\n'''",
    's = "(" + \'[\' + "{"',
    "u = 'quote \\' and \"double\" # no comment'",
    "v = r'\\\\' + b\"\\\\\"",
    "w = f\"{x!r:>{width}} {{braces}}\"",
    "z = 1 + \\\n    2",
    "# a comment (with an open bracket",
    "pass  # trailing )",
    '"""A docstring.\n\nWith lines.\n"""',
    "if x:\n    pass\nelse:\n    y = {\n        'k': [1, 2],\n    }",
    "def inner():\n    return 2",
    "class Inner:\n    def deep(self):\n        pass",
    "@decorator\ndef decorated_inner():\n    pass",
    "lambda: (yield)",
    "assert a, (\n    'message'\n)",
    "with open(p) as f:  # (\n    data = f.read()",
])


def _indent(block: str, by: str) -> str:
    return "\n".join(by + line if line else line for line in block.split("\n"))


@st.composite
def body(draw, indent: str = "    ") -> str:
    parts = [_indent(p, indent) for p in ["pass", *draw(st.lists(BODY, max_size=4))]]
    if draw(st.booleans()):  # comment lines at column 0 and blank lines do not end a block
        parts.insert(1, "# column zero\n")
    return "\n".join(parts)


DECORATORS = st.sampled_from([
    "@app.route('/health')", "@router.get(\n    '/items',\n    status_code=200,\n)", "@app.post", "@staticmethod",
    "@pytest.mark.parametrize('a', [1, 2])", "@functools.lru_cache(maxsize=None)", "@api.options(S)  # (",
    "@a.b(1).delete", "@property", "@x.setter",
])
NAMES = st.sampled_from(["f", "handler", "_private", "parseHTTP", "ünïcode", "fn2"])


@st.composite
def function(draw, indent: str = "") -> str:
    decorators = draw(st.lists(DECORATORS, max_size=2))
    head = "async def" if draw(st.booleans()) else "def"
    name = draw(NAMES)
    params = draw(st.sampled_from(["()", "(self)", "(self,\n        a=(1, 2),\n        b='(')", "(*a, **k) -> 'T'"]))
    if draw(st.integers(0, 5)) == 0:
        text = "\n".join([*decorators, f"{head} {name}{params}: return 1"])
    else:
        text = "\n".join([*decorators, f"{head} {name}{params}:", draw(body())])
    return _indent(text, indent)


@st.composite
def klass(draw) -> str:
    decorators = draw(st.lists(DECORATORS, max_size=1))
    bases = draw(st.sampled_from(["", "(Base)", "(\n    Base,\n)"]))
    head = f"class {draw(st.sampled_from(['K', 'Handler', 'Ωmega']))}{bases}:"
    if draw(st.integers(0, 6)) == 0:
        return "\n".join([*decorators, head + " pass"])
    members = draw(st.lists(st.one_of(function(indent="    "), body()), min_size=1, max_size=4))
    return "\n".join([*decorators, head, *members])


TOP = st.one_of(
    function(), klass(),
    st.sampled_from([
        "import os", "MAX_RETRIES = 3", "A = B = (\n    1,\n)", "TIMEOUT: float = 1.5", "NAME: str", "lower = 1",
        "X = Y == Z", "A, B = 1, 2", "X += 1", "Q.attr = 1", "if TYPE_CHECKING:\n    HIDDEN = 1\n    def hidden(): pass",
        "try:\n    import json\nexcept ImportError:  # (\n    json = None", "CONFIG = {\n    'a': '''\nb = 1\n''',\n}",
        "# a comment\n", "", "print('''\nclass Fake:\n''')",
    ]),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(TOP, min_size=1, max_size=8), st.booleans())
def test_outline_equals_the_ast_walk(pieces: list[str], final_newline: bool):
    text = "\n".join(pieces) + ("\n" if final_newline else "")
    ast.parse(text)  # the pieces are valid Python
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if not lines:
        return
    assert chunking._python(lines, text, CFG) == _ast_definition(lines, text, CFG)


def test_tabs_and_form_feeds_in_indentation():
    for text in ["class K:\n\tdef m(self):\n\t\treturn 1\n\n\tdef n(self):\n\t    return 2\n",
                 "class K:\n\f    def m(self):\n        return 1\n\n    def n(self):\n        return 2\n"]:
        lines = text.rstrip("\n").split("\n")
        assert chunking._python(lines, text, CFG) == _ast_definition(lines, text, CFG)
        assert [d.name for d in outline(text)[0].methods] == ["m", "n"]


def test_newer_python_syntax_is_outlined():
    # PEP 695 (Python 3.12): this interpreter's ast may reject it; the outline does not need to parse it
    text = ("type Vector = list[float]\n\nclass Box[T]:\n    def get[U](self) -> T:\n        return self.x\n\n"
            "def first[T](xs: list[T]) -> T:\n    return xs[0]\n\nLIMIT = 3\n")
    _, symbols = chunk_file("new.py", text, CFG)
    assert [(s.name, s.kind, s.start_line, s.end_line) for s in symbols] == [
        ("Box", "class", 3, 5), ("Box.get", "method", 4, 5), ("first", "function", 7, 8), ("LIMIT", "constant", 10, 10)]


def test_a_string_that_never_closes_falls_back_to_the_heuristics():
    text = "def ok():\n    return 'fine'\n\ndef broken():\n    return 'never closed\n\nclass K:\n    pass\n"
    assert outline(text) is None
    _, symbols = chunk_file("bad.py", text, CFG)
    assert [s.name for s in symbols] == ["ok", "broken", "K"]  # the regex heuristics


def test_a_bracket_that_never_closes_or_closes_twice_falls_back():
    assert outline("x = (1,\n\ndef f():\n    pass\n") is None
    assert outline("x = 1)\n") is None
