"""Staleness (issue 38): a node that describes a defect or a limitation (an ``issue`` node, or one whose prose
says the code "cannot") is a flag when the code it references gains a call or a check and loses none
(trust/defects.py), with real git and files on both sides (a flag, and no flag)."""

from __future__ import annotations

from pathlib import Path

from test_staleness import commit, edit, one_file_repo, only
from test_staleness_sympy import capture

from autology_mcp.knowledge.trust.defects import describes_defect
from autology_mcp.knowledge.trust.mentions import Said, mentions


SOLVER = '''def solve(equation, known=None):
    """Solutions of an equation."""
    found = general(equation)
    if known:
        kept = []
        for solution in found:
            try:
                kept.append(fit(solution, known))
            except ValueError:
                continue
        found = kept
    return found
'''


def test_an_issue_node_is_a_flag_when_its_symbol_gains_a_call_or_a_check(tmp_path: Path) -> None:
    """An issue node says the code behaves badly; a fix that only adds a call (``equilibria(...)``) or a check
    takes away nothing it names. Formatting, a docstring, a local renamed and a call passed a keyword are
    no fix; the same commit under a component node that states no limitation is information."""
    root = one_file_repo(tmp_path / "solver", "pkg/solver.py", SOLVER, "solver")
    issue = capture(root, ["pkg/solver.py#solve"], "With `known` values, `solve` keeps only the solutions `fit` can "
                    "match: a steady solution that `general` does not return is lost.", "solve loses steady solutions")
    component = capture(root, ["pkg/solver.py#solve"], "`solve` takes the solutions of `general` and, with `known` "
                        "values, fits each one with `fit`.", "How solve works", type="component")
    commit(root, "record")
    edit(root, '    """Solutions of an equation."""\n', '    """The solutions of an equation, fitted."""\n', path="pkg/solver.py")
    edit(root, "        kept = []\n", "        fitted = [ ]  # fitted\n", path="pkg/solver.py")
    edit(root, "                kept.append(fit(solution, known))\n", "                fitted.append(fit(solution, known, strict=True))\n",
         path="pkg/solver.py")
    edit(root, "        found = kept\n", "        found = fitted\n", path="pkg/solver.py")
    commit(root, "docstring, formatting, a local renamed, a keyword passed")
    assert only(root, issue).stale is False
    assert only(root, component).stale is False
    edit(root, "        found = fitted\n", "        found = fitted + equilibria(equation, known)\n", path="pkg/solver.py")
    commit(root, "steady solutions")
    finding = only(root, issue)
    assert finding.stale is True and "`equilibria`" in finding.why and "may fix" in finding.why
    assert only(root, component).stale is False  # an added call that touches nothing it says: information
    edit(root, "        found = fitted + equilibria(equation, known)\n", "        found = fitted\n", path="pkg/solver.py")
    edit(root, "            except ValueError:\n", "            except ValueError:\n                if not known:\n"
         "                    raise\n", path="pkg/solver.py")
    commit(root, "a check")
    finding = only(root, issue)
    assert finding.stale is True and "condition" in finding.why


BOUNDS = '''class Bounds:
    def __init__(self):
        self.low = {}

    def tighten(self, name, value):
        self.low[name] = max(self.low.get(name, value), value)

    def reset(self):
        self.low.clear()
'''


def test_a_node_that_says_the_code_cannot_do_something_is_a_flag_when_its_class_gains_a_method(tmp_path: Path) -> None:
    """"Bounds cannot undo one bound" (a component node's title) against a class that gains ``undo``: what it
    says it cannot do it may do now. A "cannot" in the body only (a decision's reason) or inside a string the
    node quotes is not what the node is about, and a class that gains a method under such a node is
    information."""
    root = one_file_repo(tmp_path / "bounds", "pkg/bounds.py", BOUNDS, "bounds")
    limit = capture(root, ["pkg/bounds.py#Bounds"], "`Bounds.tighten` only raises a bound; there is no way to take "
                    "one back but `reset()`, which clears them all.", "Bounds cannot undo one bound", type="component")
    quoted = capture(root, ["pkg/bounds.py#Bounds"], "`Bounds.tighten` raises a bound and `reset()` clears them all; "
                     "the caller logs 'cannot tighten' on a conflict.", "Bounds tighten and reset", type="component")
    reason = capture(root, ["pkg/bounds.py#Bounds"], "## Context\nBounds are raised often.\n\n## Decision\n"
                     "`Bounds.tighten` raises a bound and `reset()` clears them all.\n\n## Alternatives\nA solver "
                     "with undo: it cannot run in constant memory.\n\n## Consequences\nNone.", "Bounds only tighten",
                     type="decision")
    commit(root, "record")
    edit(root, "    def reset(self):\n", "    def undo(self, name, value):\n        self.low[name] = self.history.pop()\n\n"
         "    def reset(self):\n", path="pkg/bounds.py")
    commit(root, "undo one bound")
    finding = only(root, limit)
    assert finding.stale is True and "`undo`" in finding.why
    assert only(root, quoted).stale is False
    assert only(root, reason).stale is False
    assert describes_defect(Said(*mentions("It can't stream."), "It can't stream."))
    assert not describes_defect(Said(set(), set(), "It reads `cannot_fail` and logs \"unable to read\"."))
    assert not describes_defect(Said(set(), set(), "The parser\nThe old parser cannot stream."))


HANDLERS = '''def register(kind):
    def wrap(func):
        HANDLERS[kind] = func
        return func
    return wrap


HANDLERS = {}


@register("infinite")
def infinite(value):
    return value in ("oo", "-oo")
'''


def test_an_issue_node_on_a_file_is_a_flag_when_the_file_gains_a_call_and_not_for_comments(tmp_path: Path) -> None:
    """A whole-file reference of an issue node: a handler added that asks something new is a flag; a comment
    and a docstring are not."""
    root = one_file_repo(tmp_path / "handlers", "pkg/handlers.py", HANDLERS, "handlers")
    issue = capture(root, ["pkg/handlers.py"], "Only the literal infinities have an `infinite` handler: any other "
                    "value gets None, even a finite one.", "infinite is None for finite values")
    commit(root, "record")
    edit(root, "def infinite(value):\n", "def infinite(value):\n    \"\"\"The infinities.\"\"\"\n    # oo, -oo\n",
         path="pkg/handlers.py")
    commit(root, "docs")
    assert only(root, issue).stale is False
    (root / "pkg" / "handlers.py").write_text((root / "pkg" / "handlers.py").read_text() +
                                              '\n\n@register("finite")\ndef finite(value):\n    return is_number(value)\n')
    commit(root, "a finite handler")
    finding = only(root, issue)
    assert finding.stale is True and "`is_number`" in finding.why


BRANCHES = '''class Visitor:
    def visit_if(self, node):
        for body in node.bodies:
            body.accept(self)
        if node.else_body:
            if not node.else_body.unreachable:
                node.else_body.accept(self)
            else:
                self.skip()
        self.end()
'''


def test_a_negated_test_with_its_branches_swapped_is_the_same_code_and_a_new_test_beside_it_a_flag(
        tmp_path: Path) -> None:
    """``if not x: A else: B`` written ``if x: B else: A`` tests nothing new (an issue node on the file keeps
    holding); a branch added for a new condition (``node.unreachable_else``), with every test kept, may fix it."""
    root = one_file_repo(tmp_path / "visitor", "pkg/visitor.py", BRANCHES, "visitor")
    issue = capture(root, ["pkg/visitor.py"], "`visit_if` always counts a missing else as a branch: only an "
                    "`else_body` marked unreachable is skipped.", "A missing else counts as a branch")
    commit(root, "record")
    edit(root, "            if not node.else_body.unreachable:\n                node.else_body.accept(self)\n"
         "            else:\n                self.skip()\n",
         "            if node.else_body.unreachable:\n                self.skip()\n"
         "            else:\n                node.else_body.accept(self)\n", path="pkg/visitor.py")
    commit(root, "swapped")
    assert only(root, issue).stale is False
    edit(root, "        if node.else_body:\n", "        if node.unreachable_else:\n            self.skip()\n"
         "        elif node.else_body:\n", path="pkg/visitor.py")
    commit(root, "an unreachable else")
    finding = only(root, issue)
    assert finding.stale is True and "condition" in finding.why
