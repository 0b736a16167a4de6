"""Staleness (issue 38): the readings written from sympy's replay, each with real git and files on both sides
(a flag, and no flag): a string built with fields that the node quotes with a word in each field, a code
snippet held fewer times, a signature the node writes kept under annotations, a member of a class in
another form or beside a method of that very name, a method the class gained that the node does not name,
a local variable renamed, and a recursive helper made a loop over an explicit stack."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from test_staleness import commit, edit, one_file_repo, only

from autology_mcp.knowledge.service import Autology
from autology_mcp.knowledge.trust.code_compare import built_strings, parse_python
from autology_mcp.knowledge.trust.mentions import Said


def capture(root: Path, refs: list[str], content: str, title: str, type: str = "issue") -> str:
    service = Autology.open(root)
    try:
        return service.capture(title, content, type=type, references=refs).id
    finally:
        service.close()


QUERY = '''def select(column, table):
    query = f"SELECT {column} FROM {table}"
    label = f"reading {table}"
    return run(query, label)
'''


def test_a_formatted_string_the_node_quotes_with_names_in_its_fields_is_a_flag_when_it_changes(tmp_path: Path) -> None:
    """The node writes the query as `SELECT name FROM users`, the code builds it with an f-string: the
    node quotes it with names in its fields. Another f-string reworded is not what it quotes."""
    root = one_file_repo(tmp_path / "query", "pkg/query.py", QUERY, "query")
    node = capture(root, ["pkg/query.py#select"], "`select` runs `SELECT name FROM users` for a column and a table.",
                   "select builds one query", type="component")
    commit(root, "record")
    edit(root, 'f"reading {table}"', 'f"now reading {table}"', path="pkg/query.py")
    commit(root, "label")
    assert only(root, node).stale is False
    edit(root, 'f"SELECT {column} FROM {table}"', 'f"SELECT DISTINCT {column} FROM {table}"', path="pkg/query.py")
    commit(root, "distinct")
    finding = only(root, node)
    assert finding.stale is True and "quotes" in finding.why


@given(pieces=st.lists(st.text(alphabet="ab (=)-", min_size=1, max_size=6), min_size=2, max_size=4),
       words=st.lists(st.from_regex(r"[a-zA-Z][a-zA-Z0-9_]{0,5}", fullmatch=True), min_size=3, max_size=3),
       marks=st.text(alphabet="(=)-", min_size=6, max_size=9))
def test_a_built_string_is_quoted_with_a_word_in_each_field(pieces: list[str], words: list[str], marks: str) -> None:
    """Whatever its pieces, an f-string is quoted by its text with a word in each field, and not by its
    words alone; one whose pieces hold fewer than six characters besides spaces is never quoted."""
    pieces = [pieces[0] + marks, *pieces[1:]]  # six characters or more
    source = "f" + repr("".join(p + "{x}" for p in pieces[:-1]) + pieces[-1])
    built = list(built_strings(parse_python(f"v = {source}\n")))
    assert len(built) == 1 and len(built[0]) == len(pieces)
    filled = "".join(p + w for p, w in zip(built[0][:-1], words)) + built[0][-1]
    assert Said(set(), set(), f"It runs `{filled}` here.").quotes_built(built[0])
    assert not Said(set(), set(), " ".join(words)).quotes_built(built[0])
    assert not Said(set(), set(), "It runs `(-)x=`.").quotes_built(("(-", "=", ""))


FRACTION = '''def split(terms, exact=False):
    top, bottom = [], []
    for base, power in terms:
        if power < 0:
            if exact:
                bottom.append(Pow(base, -power))
            else:
                bottom.append(Pow(base, -power))
        else:
            top.append(base)
    return top, bottom
'''


def test_a_snippet_the_node_gives_held_fewer_times_is_a_flag(tmp_path: Path) -> None:
    """The node gives `Pow(base, -power)`; one of the two statements that held it now passes a keyword
    (`evaluate=False`): an option passed through, but where the node's code was, other code is now. A
    statement that does not hold it gaining a keyword is still information."""
    root = one_file_repo(tmp_path / "fraction", "pkg/fraction.py", FRACTION, "fraction")
    node = capture(root, ["pkg/fraction.py#split"], "With `exact`, a negative power goes to the bottom as "
                   "`Pow(base, -power)`, evaluated.", "split evaluates negative powers", type="concept")
    commit(root, "record")
    edit(root, "            top.append(base)\n", "            top.append(base, checked=True)\n", path="pkg/fraction.py")
    commit(root, "a keyword elsewhere")
    assert only(root, node).stale is False
    edit(root, "            if exact:\n                bottom.append(Pow(base, -power))\n",
         "            if exact:\n                bottom.append(Pow(base, -power, evaluate=False))\n", path="pkg/fraction.py")
    commit(root, "unevaluated")
    finding = only(root, node)
    assert finding.stale is True and "`Pow(base, -power)`" in finding.why


RESIDUE = '''@timed("area")
def area(width, height):
    """Area."""
    value = width * height
    return value
'''


def test_a_signature_the_node_writes_is_kept_when_its_def_gains_annotations(tmp_path: Path) -> None:
    """The node gives `area(width, height)`, the code's own ``def``: annotations added (and a local renamed)
    keep it; a parameter renamed does not."""
    root = one_file_repo(tmp_path / "area", "pkg/area.py", RESIDUE, "area")
    node = capture(root, ["pkg/area.py#area"], "`area(width, height)` multiplies them; calls are timed as 'area'.",
                   "area is a product", type="concept")
    commit(root, "record")
    edit(root, "def area(width, height):\n", "def area(width: float, height: float) -> float:\n", path="pkg/area.py")
    edit(root, "    value = width * height\n    return value\n", "    _value = width * height\n    return _value\n",
         path="pkg/area.py")
    commit(root, "typed")
    assert only(root, node).stale is False
    edit(root, "def area(width: float, height: float)", "def area(width: float, depth: float)", path="pkg/area.py")
    edit(root, "    _value = width * height\n", "    _value = width * depth\n", path="pkg/area.py")
    commit(root, "depth")
    assert only(root, node).stale is True


JOINTS = '''class Joints:
    def __init__(self, frame, *joints):
        self.frame = frame
        self.joints = joints

    def form_equations(self, method=None):
        return (method or default)(self.frame, self.joints)
'''


def test_a_member_in_another_form_and_a_helper_beside_a_named_method_keep_a_class(tmp_path: Path) -> None:
    """`self.frame` made a read-only `frame` property, and `_form_equations` added beside the
    `form_equations` the node names (calling it): the class holds what it held. A method named by a word of
    the node that it did not hold (`reset`) is a flag."""
    root = one_file_repo(tmp_path / "joints", "pkg/joints.py", JOINTS, "joints")
    node = capture(root, ["pkg/joints.py#Joints"], "`Joints(frame, *joints)` keeps the frame it is given; "
                   "`form_equations(method=None)` hands them to a method. Nothing can reset it.",
                   "Joints hand their frame on", type="component")
    commit(root, "record")
    edit(root, "        self.frame = frame\n", "        self._frame = frame\n", path="pkg/joints.py")
    edit(root, "        return (method or default)(self.frame, self.joints)\n",
         "        return (method or default)(self._frame, self.joints)\n\n    def _form_equations(self):\n"
         "        return self.form_equations()\n\n    @property\n    def frame(self):\n        return self._frame\n",
         path="pkg/joints.py")
    commit(root, "a property and a helper")
    assert only(root, node).stale is False
    (root / "pkg" / "joints.py").write_text((root / "pkg" / "joints.py").read_text() +
                                            "\n    def reset(self):\n        self.joints = ()\n")
    commit(root, "reset")
    assert only(root, node).stale is True


SPLIT = '''def splitting_points(expr, x):
    """Points."""
    p, q = wilds(x)

    def innermost_points(expr, found):
        if not isinstance(expr, Expr):
            return
        m = expr.match(p * x + q)
        if m and m[p] != 0:
            found.add(-m[q] / m[p])
            return
        if expr.is_Atom:
            return
        for argument in expr.args:
            innermost_points(argument, found)

    innermost = set()
    innermost_points(expr, innermost)
    return innermost
'''

STACK = '''def splitting_points(expr, x):
    """Points."""
    p, q = wilds(x)
    found = set()
    stack = [expr]
    while stack:
        expr = stack.pop()
        if not isinstance(expr, Expr):
            continue
        m = expr.match(p * x + q)
        if m and m[p] != 0:
            found.add(-m[q] / m[p])
        elif not expr.is_Atom:
            stack.extend(expr.args)
    return found
'''


def test_a_recursive_helper_made_an_explicit_stack_and_a_local_renamed_keep_the_node(tmp_path: Path) -> None:
    """The node's word "innermost" was a local variable's name, and the recursion an inner helper's: the loop
    over its own stack uses the same outside names, strings and values. A new outside name in the loop
    (`expr.free`) is a flag."""
    root = one_file_repo(tmp_path / "split", "pkg/split.py", SPLIT, "split")
    node = capture(root, ["pkg/split.py#splitting_points"], "`splitting_points(expr, x)` returns -q/p for every "
                   "innermost subexpression p*x + q; it does not look inside a match and skips atoms.",
                   "Splitting at innermost linear arguments", type="component")
    commit(root, "record")
    (root / "pkg" / "split.py").write_text(STACK)
    commit(root, "a stack")
    assert only(root, node).stale is False
    edit(root, "            stack.extend(expr.args)\n", "            stack.extend(expr.free)\n", path="pkg/split.py")
    commit(root, "free symbols")
    assert only(root, node).stale is True
