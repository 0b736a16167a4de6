"""Staleness (issue 38): readings that came from the errors of the markupsafe replay, once it joined the tuning
side, each with real git and files on both sides (no flag, and a flag). Python 2's support dropped (six's names read
as Python 3's, a call through the base read as one through ``super()``); an import of the file's own package written
relative; statements after a ``return``; a lambda bound to a name made a ``def``; ``__slots__`` added; imports of
several names split one per line; and a defect of a C span fixed by a new test."""

from __future__ import annotations

import ast
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from test_staleness import commit, edit, git, one_file_repo, only
from test_staleness_sympy import capture

from autology_mcp.knowledge.trust.code_compare import dump, same_code
from autology_mcp.knowledge.trust.package_imports import package_of, read_relative
from autology_mcp.knowledge.trust.python2 import read_as_python3

PY2 = '''from ._compat import text_type
from ._compat import string_types
from ._compat import unichr


class Markup(text_type):
    __slots__ = ()

    def __new__(cls, base=u"", encoding=None, errors="strict"):
        if hasattr(base, "__html__"):
            base = base.__html__()
        if encoding is None:
            return text_type.__new__(cls, base)
        return text_type.__new__(cls, base, encoding, errors)

    def __mod__(self, arg):
        if isinstance(arg, tuple):
            arg = tuple(_Helper(x, self.escape) for x in arg)
        else:
            arg = _Helper(arg, self.escape)
        return self.__class__(text_type.__mod__(self, arg))

    def split(self, *args, **kwargs):
        return list(map(self.__class__, text_type.split(self, *args, **kwargs)))

    def unescape(self):
        from pkg._constants import HTML_ENTITIES

        def handle_match(m):
            name = m.group(1)
            if name in HTML_ENTITIES:
                return unichr(HTML_ENTITIES[name])
            return m.group()

        return _entity_re.sub(handle_match, text_type(self))

    def __add__(self, other):
        if isinstance(other, string_types) or hasattr(other, "__html__"):
            return self.__class__(super(Markup, self).__add__(self.escape(other)))
        return NotImplemented
'''

PY3 = '''class Markup(str):
    __slots__ = ()

    def __new__(cls, base="", encoding=None, errors="strict"):
        if hasattr(base, "__html__"):
            base = base.__html__()
        if encoding is None:
            return super().__new__(cls, base)
        return super().__new__(cls, base, encoding, errors)

    def __mod__(self, arg):
        if isinstance(arg, tuple):
            arg = tuple(_Helper(x, self.escape) for x in arg)
        else:
            arg = _Helper(arg, self.escape)
        return self.__class__(super().__mod__(arg))

    def split(self, *args, **kwargs):
        return list(map(self.__class__, super().split(*args, **kwargs)))

    def unescape(self):
        from ._constants import HTML_ENTITIES

        def handle_match(m):
            name = m.group(1)
            if name in HTML_ENTITIES:
                return chr(HTML_ENTITIES[name])
            return m.group()

        return _entity_re.sub(handle_match, str(self))

    def __add__(self, other):
        if isinstance(other, str) or hasattr(other, "__html__"):
            return self.__class__(super().__add__(self.escape(other)))
        return NotImplemented
'''

SPLIT = ("`Markup.split(*args, **kwargs)` passes any arguments unchanged to `str.split` (the separator is not "
         "escaped) and returns a list with every part converted to `self.__class__`.")
UNESCAPE = ("`Markup.unescape()` turns markup back into plain text (a `str`, not Markup): a name found in "
            "`HTML_ENTITIES`, imported inside the method from `pkg._constants`, becomes that code point's character.")
MOD = ("`Markup.__mod__(arg)` wraps each element of a tuple in `_Helper`; any other argument is wrapped as a single "
       "helper, so `Markup('<em></em>') % 'foo'` silently ignores the argument instead of raising `TypeError`.")


def _py2_repo(tmp_path: Path) -> Path:
    return one_file_repo(tmp_path / "r", "src/pkg/__init__.py", PY2, "markup")


def test_python_2_dropped_keeps_what_the_nodes_say(tmp_path: Path) -> None:
    root = _py2_repo(tmp_path)
    split = capture(root, ["src/pkg/__init__.py#Markup.split"], SPLIT, "Markup.split passes arguments through",
                    type="pattern")
    unescape = capture(root, ["src/pkg/__init__.py#Markup.unescape"], UNESCAPE, "Markup.unescape decodes entities",
                       type="component")
    mod = capture(root, ["src/pkg/__init__.py#Markup.__mod__"], MOD, "Markup % value ignores a missing placeholder")
    commit(root, "record")
    (root / "src/pkg/__init__.py").write_text(PY3)
    commit(root, "Drop Python 2")
    for node in (split, unescape, mod):  # text_type is str; text_type.split(self, ...) is super().split(...)
        assert only(root, node).stale is False, node


def test_a_changed_call_through_super_is_still_a_flag(tmp_path: Path) -> None:
    root = _py2_repo(tmp_path)
    split = capture(root, ["src/pkg/__init__.py#Markup.split"], SPLIT, "Markup.split passes arguments through",
                    type="pattern")
    mod = capture(root, ["src/pkg/__init__.py#Markup.__mod__"], MOD, "Markup % value ignores a missing placeholder")
    commit(root, "record")
    text = PY3.replace("super().split(*args, **kwargs)", "super().rsplit(*args, **kwargs)")
    text = text.replace('''        else:
            arg = _Helper(arg, self.escape)''', '''        elif isinstance(arg, dict):
            arg = _Helper(arg, self.escape)
        else:
            arg = (_Helper(arg, self.escape),)''')
    (root / "src/pkg/__init__.py").write_text(text)
    commit(root, "Drop Python 2, and split from the right; a single value is a one-element tuple")
    assert only(root, split).stale is True
    finding = only(root, mod)
    assert finding.stale is True and "may fix what the node describes" in finding.why


def test_six_names_are_read_only_when_imported() -> None:
    """A name the module binds itself is its own: ``text_type = MyText`` is not six's."""
    own = ast.parse("text_type = MyText\n\ndef f(x):\n    return text_type(x)\n")
    imported = ast.parse("from six import text_type\n\ndef f(x):\n    return text_type(x)\n")
    plain = ast.parse("def f(x):\n    return str(x)\n").body[0]
    assert dump(read_as_python3(own.body[1], own, "f"), False) != dump(plain, False)
    assert dump(read_as_python3(imported.body[1], imported, "f"), False) == dump(plain, False)
    whole = ast.parse("import six\n\ndef f(d):\n    if six.PY2:\n        return 1\n    for k, v in six.iteritems(d):\n"
                      "        g(k, v)\n")
    read = dump(read_as_python3(whole.body[1], whole, "f"), False)
    assert "six" not in read and "items" in read and "Constant(value=1)" not in read


IMPORTS = '''class Markup(str):
    __html__ = lambda s: s


# we have to import it down here: the speedups import Markup
try:
    from pkg._speedups import escape, escape_silent, soft_unicode
except ImportError:
    from pkg._native import escape, escape_silent, soft_unicode
'''

FALLBACK = ("## Context\nThe C extension is optional.\n\n## Decision\nAt the bottom of `__init__.py` a `try` imports "
            "`escape`, `escape_silent` and `soft_unicode` from `pkg._speedups`; on `ImportError` the same names are "
            "imported from `pkg._native`.\n\n## Alternatives\nA setting.\n\n## Consequences\nBoth must behave the same.")


def test_an_import_of_the_own_package_made_relative_or_split_is_no_flag(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "src/pkg/__init__.py", IMPORTS, "imports")
    node = capture(root, ["src/pkg/__init__.py#L5-L9"], FALLBACK, "C speedups first, a Python fallback",
                   type="decision")
    commit(root, "record")
    edit(root, "from pkg._", "from ._", path="src/pkg/__init__.py")
    # the statement right before the span, a lambda made a def, still bounds it
    edit(root, "    __html__ = lambda s: s\n", "    def __html__(self):\n        return self\n", path="src/pkg/__init__.py")
    commit(root, "relative imports; def, not lambda")
    assert only(root, node).stale is False
    edit(root, "escape_silent, soft_unicode\nexcept", "escape_silent, soft_str, soft_unicode\nexcept",
         path="src/pkg/__init__.py")
    commit(root, "soft_str, a name the node does not mention, imported too")
    assert only(root, node).stale is False
    text = (root / "src/pkg/__init__.py").read_text().replace(
        "    from ._native import escape, escape_silent, soft_unicode",
        "    from ._native import escape as escape\n    from ._native import escape_silent as escape_silent\n"
        "    from ._native import soft_unicode as soft_unicode")
    (root / "src/pkg/__init__.py").write_text(text)
    commit(root, "one import per line, an explicit re-export")
    assert only(root, node).stale is False


def test_an_import_from_another_module_is_a_flag(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "src/pkg/__init__.py", IMPORTS, "imports")
    node = capture(root, ["src/pkg/__init__.py#L5-L9"], FALLBACK, "C speedups first, a Python fallback",
                   type="decision")
    commit(root, "record")
    edit(root, "from pkg._native import", "from pkg._pure import", path="src/pkg/__init__.py")
    commit(root, "the fallback from another module")
    assert only(root, node).stale is True


def test_units_read_an_import_of_the_own_package_as_relative() -> None:
    relative = IMPORTS.replace("from pkg._", "from ._")
    assert same_code(IMPORTS, relative, "src/pkg/__init__.py")
    assert same_code(IMPORTS, relative, "pkg/__init__.py")
    assert not same_code(IMPORTS, relative, "src/other/__init__.py")  # another package's pkg is not this one


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["pkg", "sub", "json", "other", "x"]), min_size=1, max_size=4),
       st.sampled_from(["src/pkg/a.py", "src/pkg/sub/b.py", "pkg/json/c.py", "lib/pkg/__init__.py", "top.py"]))
def test_an_absolute_import_read_relative_names_the_same_module(parts: list, path: str) -> None:
    """The relative import it is read as resolves, from the file's package, to the module the absolute one names;
    a module outside the package is left absolute."""
    tree = ast.parse(f"from {'.'.join(parts)} import name\n")
    node = read_relative(tree, path).body[0]
    package = package_of(path)
    if node.level == 0:
        assert not package or parts[0] != package[0]
        return
    assert package and parts[0] == package[0]
    base = package[:len(package) - node.level + 1]
    assert ".".join([*base, *(node.module.split(".") if node.module else [])]) == ".".join(parts)


HELPER = '''class _Helper:
    def __init__(self, obj, escape):
        self.obj = obj
        self.escape = escape

    __getitem__ = lambda s, x: _Helper(s.obj[x], s.escape)
    __unicode__ = __str__ = lambda s: str(s.escape(s.obj))
    __int__ = lambda s: int(s.obj)
'''

HELPER_DEFS = '''class _Helper:
    __slots__ = ("obj", "escape")

    def __init__(self, obj, escape):
        self.obj = obj
        self.escape = escape

    def __getitem__(self, item):
        return _Helper(self.obj[item], self.escape)

    def __str__(self):
        return str(self.escape(self.obj))

    __unicode__ = __str__

    def __int__(self):
        return int(self.obj)
'''

ESCAPING = ("`_Helper(obj, escape)` is what `Markup.__mod__` hands to `str.__mod__`: `str()` of it is `escape(obj)` "
            "as text, `int()` gives the plain number, and indexing returns a new helper around `obj[key]`.")


def test_lambdas_made_defs_and_slots_added_are_no_flag(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "pkg/markup.py", HELPER, "helper")
    node = capture(root, ["pkg/markup.py#_Helper"], ESCAPING, "_Helper: an argument that escapes itself",
                   type="component")
    commit(root, "record")
    (root / "pkg/markup.py").write_text(HELPER_DEFS)
    commit(root, "def instead of lambda (E731); __slots__")
    assert only(root, node).stale is False


def test_a_def_that_does_another_thing_or_slots_the_node_speaks_of_is_a_flag(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "pkg/markup.py", HELPER, "helper")
    node = capture(root, ["pkg/markup.py#_Helper"], ESCAPING, "_Helper: an argument that escapes itself",
                   type="component")
    slots = capture(root, ["pkg/markup.py#_Helper"], ESCAPING + " It has no `__slots__`: a caller may add attributes.",
                    "_Helper takes any attribute", type="component")
    commit(root, "record")
    (root / "pkg/markup.py").write_text(HELPER_DEFS.replace("return int(self.obj)", "return int(self.escape(self.obj))"))
    commit(root, "escape before int()")
    assert only(root, node).stale is True
    assert only(root, slots).stale is True


FORMAT = '''class Markup(str):
    def format(*args, **kwargs):
        self, args = args[0], args[1:]
        formatter = EscapeFormatter(self.escape)
        return self.__class__(formatter.vformat(self, args, kwargs))

        def __html_format__(self, format_spec):
            if format_spec:
                raise ValueError("Unsupported format specification for Markup.")
            return self
'''

FORMATS = ("`Markup.format` is declared `format(*args, **kwargs)` and takes `self, args = args[0], args[1:]`, so a "
           "format field named `self` can be given as a keyword. It builds `EscapeFormatter(self.escape)`.")


def test_code_after_a_return_never_ran_and_its_removal_is_no_flag(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "pkg/markup.py", FORMAT, "format")
    node = capture(root, ["pkg/markup.py#Markup.format"], FORMATS, "Markup.format takes self from *args",
                   type="pattern")
    commit(root, "record")
    text = FORMAT.replace('''        return self.__class__(formatter.vformat(self, args, kwargs))

        def __html_format__''', '''        return self.__class__(formatter.vformat(self, args, kwargs))

    def __html_format__''').replace("            if format_spec:\n                raise", "        if format_spec:\n"
                                     "            raise").replace("            return self\n", "        return self\n")
    (root / "pkg/markup.py").write_text(text)
    commit(root, "the unreachable __html_format__ becomes a method")
    assert only(root, node).stale is False
    edit(root, "self, args = args[0], args[1:]", "self, *args = args", path="pkg/markup.py")
    commit(root, "unpack self")  # a snippet the node gives, gone from the code that runs
    assert only(root, node).stale is True


SPEEDUPS = '''static PyObject*
escape(PyObject *self, PyObject *text)
{
\thtml = PyObject_GetAttr(text, id_html);
\tif (html) {
\t\ts = PyObject_CallObject(html, NULL);
\t\tPy_DECREF(html);
\t\trv = PyObject_CallFunctionObjArgs(markup, (PyObject*)s, NULL);
\t\tPy_DECREF(s);
\t\treturn rv;
\t}
\treturn escape_unicode(text);
}
'''

CRASH = ("In the C `escape()` the `__html__` branch calls `PyObject_CallObject(html, NULL)` and uses the result `s` "
         "without checking it: when `__html__` raises, `Py_DECREF(s)` dereferences NULL and the interpreter can crash.")


def test_a_c_defect_fixed_by_a_new_test_is_a_flag(tmp_path: Path) -> None:
    root = one_file_repo(tmp_path / "r", "src/_speedups.c", SPEEDUPS, "speedups")
    node = capture(root, ["src/_speedups.c#L4-L11"], CRASH, "C escape() crashes when __html__ raises")
    commit(root, "record")
    edit(root, "\t\tPy_DECREF(html);\n", "\t\tPy_DECREF(html);\n\t\t/* the object's own markup */\n",
         path="src/_speedups.c")
    commit(root, "a comment")
    assert only(root, node).stale is False
    edit(root, "\t\tPy_DECREF(html);\n", "\t\tPy_DECREF(html);\n\t\tif (s == NULL) {\n\t\t\treturn NULL;\n\t\t}\n",
         path="src/_speedups.c")
    commit(root, "propagate the exception of __html__")
    sha = git(root, "rev-parse", "--short=9", "HEAD").strip()
    finding = only(root, node)
    assert finding.stale is True and sha in finding.why


def test_slots_are_read_away_only_when_they_list_every_attribute_the_class_sets() -> None:
    """``__slots__`` naming each attribute the methods set (by their first parameter, tuple targets too) only saves
    memory; one that leaves an attribute out changes what the class accepts, and stays."""
    from autology_mcp.knowledge.trust.equivalents import canonical

    def slotted(source: str) -> bool:
        return "__slots__" in dump(canonical(ast.parse(source).body[0]), False)

    assert not slotted('class H:\n    __slots__ = ("a", "b")\n\n    def __init__(me, a, b):\n        me.a, me.b = a, b\n')
    assert slotted('class H:\n    __slots__ = ("a",)\n\n    def __init__(self, a, b):\n        self.a, self.b = a, b\n')
    assert not slotted('class H:\n    __slots__ = ("a",)\n\n    def __init__(self, a):\n        self.a = a\n')
    assert "__slots__" in dump(canonical(ast.parse('class H:\n    __slots__ = ()\n').body[0], slots=True), False)
