"""Staleness (issue 38): the readings that came from the errors of the rich, marshmallow and structlog replays, once
each joined the tuning side, each with real git and files on both sides (a flag, and no flag). A private parameter
bound to a function for speed; a statement moved into the function the symbol now calls; a condition that gains a
clause; a style value gone from a span whose node names it in prose; a defect fixed by an option handed on or by a
new call in a span; a span's changed neighbour; a message that gains a full stop; a signature that gains
``*args``."""

from __future__ import annotations

from pathlib import Path

from test_staleness import commit, edit, one_file_repo, only
from test_staleness_sympy import capture

from autology_mcp.knowledge.trust.mentions import Said, mentions
from autology_mcp.knowledge.trust.symbol_rules import same_text

WIDTH = '''def cached_width(text):
    return sum(map(char_width, text))


def width(text, tabs=8, _width=cached_width):
    """The cells a text takes."""
    if len(text) < 512:
        return _width(text)
    if is_ascii(text):
        return len(text)
    return sum(map(char_width, text))
'''

WIDTH_HELPER = '''def cached_width(text, version="auto"):
    return _width(text, version)


def _width(text, version):
    if is_ascii(text):
        return len(text)
    if JOINER in text:
        return joined_width(text, version)
    return sum(char_width(c, version) for c in text)


def width(text, tabs=8, version="auto"):
    """The cells a text takes."""
    if len(text) < 512:
        return cached_width(text, version)
    return _width(text, version)
'''


def test_a_private_parameter_bound_to_a_function_is_the_code_s_own(tmp_path: Path) -> None:
    """``_width=cached_width`` (a function bound as a default so that the call reads a local) taken away, the
    function now called by its name and the rest handed to a new ``_width``: the node that says short texts
    go through the cache and ASCII text returns ``len(text)`` still holds. A public parameter taken away is a
    flag; an issue node about joined characters is a flag (the new helper tests for a joiner)."""
    root = one_file_repo(tmp_path / "w", "pkg/cells.py", WIDTH, "width")
    pattern = capture(root, ["pkg/cells.py#width"], "`width(text)` measures a text. Texts under 512 characters go "
                      "through `cached_width()`; both paths return `len(text)` at once for ASCII text.",
                      "width caches short texts", type="pattern")
    issue = capture(root, ["pkg/cells.py#width"], "`width()` adds up the width of each code point, so characters "
                    "joined by a zero width joiner are measured one by one.", "Joined characters are measured wrong")
    commit(root, "record")
    (root / "pkg/cells.py").write_text(WIDTH_HELPER)
    commit(root, "a version, and the measuring in one helper")
    assert only(root, pattern).stale is False
    finding = only(root, issue)
    assert finding.stale is True and "may fix" in finding.why
    edit(root, 'def width(text, tabs=8, version="auto"):', 'def width(text, version="auto"):', path="pkg/cells.py")
    commit(root, "no tabs")
    finding = only(root, pattern)
    assert finding.stale is True and "`tabs` removed" in finding.why


STOP = '''class Live:
    def stop(self):
        self.refresh()
        if not self.alt_screen and self.console.is_terminal:
            self.console.line()
        self.console.show_cursor(True)
'''


def test_a_call_whose_condition_gains_a_clause_is_a_flag(tmp_path: Path) -> None:
    """``console.line()`` under ``not alt_screen and console.is_terminal``, which gains ``and
    self.last_height``: it now happens less often than the node says. The condition written over three lines
    is no change; a condition on the object called alone (``if self.console:``) is not counted."""
    root = one_file_repo(tmp_path / "l", "pkg/live.py", STOP, "live")
    node = capture(root, ["pkg/live.py#Live.stop"], "`Live.stop()` refreshes once; when not on the alternate screen "
                   "and the console is a terminal it calls `console.line()` so that the next output starts below.",
                   "Live.stop leaves the cursor below", type="component")
    commit(root, "record")
    edit(root, "        if not self.alt_screen and self.console.is_terminal:\n",
         "        if (\n            not self.alt_screen\n            and self.console.is_terminal\n        ):\n", path="pkg/live.py")
    commit(root, "formatting")
    assert only(root, node).stale is False
    edit(root, "            self.console.line()\n", "            if self.console:\n                self.console.line()\n",
         path="pkg/live.py")
    commit(root, "a console may be gone")
    assert only(root, node).stale is False
    edit(root, "            and self.console.is_terminal\n", "            and self.console.is_terminal\n"
         "            and self.last_height\n", path="pkg/live.py")
    commit(root, "no line after an empty render")
    finding = only(root, node)
    assert finding.stale is True and "under a condition" in finding.why


STYLES = '''STYLES = {
    "item.bullet": Style(color="yellow", bold=True),
    "item.number": Style(color="yellow", bold=True),
    "hr": Style(color="yellow"),
    "h1": Style(bold=True),
}
'''


def test_a_value_gone_from_a_span_whose_node_names_it_in_prose_is_a_flag(tmp_path: Path) -> None:
    """The node says list markers are "yellow and bold"; ``color="yellow"`` taken from them is what it says
    changed, though it writes the word in prose. A style added beside them that the node does not give is not."""
    root = one_file_repo(tmp_path / "s", "pkg/styles.py", STYLES, "styles")
    node = capture(root, ["pkg/styles.py#L2-5"], "The default theme styles list markers yellow and bold "
                   "(\"item.bullet\" and \"item.number\"), rules yellow and h1 bold.", "List and heading styles",
                   type="convention")
    commit(root, "record")
    edit(root, '    "h1": Style(bold=True),\n', '    "h1": Style(bold=True),\n    "link": Style(color="blue"),\n',
         path="pkg/styles.py")
    commit(root, "a link style")
    assert only(root, node).stale is False
    edit(root, '"item.bullet": Style(color="yellow", bold=True)', '"item.bullet": Style(bold=True)', path="pkg/styles.py")
    edit(root, '"item.number": Style(color="yellow", bold=True)', '"item.number": Style(color="cyan")', path="pkg/styles.py")
    commit(root, "quieter markers")
    finding = only(root, node)
    assert finding.stale is True


def test_a_one_word_string_in_prose_counts_when_the_value_itself_changed() -> None:
    """"with that status" in prose: a changed statement that holds ``"status"`` is not what the node quotes (it
    would be, written `` `message["status"]` ``); ``"yellow"`` gone from a style the node calls "yellow and bold"
    is what it says."""
    text = "Styles\nList markers are yellow and bold; `call_next` returns a response with that status."
    said = Said(*mentions(text), text, "convention")
    assert not said.quotes(["status"], held=True)
    assert said.quotes(["yellow"])
    assert said.quotes(["status"])
    coded = 'Styles\n`call_next` returns a response with `message["status"]`.'
    assert Said(*mentions(coded), coded, "convention").quotes(["status"], held=True)


SCOPE = '''def render_scope(scope, max_length=None):
    items = sorted(scope.items())
    return Table(Pretty(value, max_length=max_length) for key, value in items)
'''


def test_an_option_handed_on_may_fix_a_defect(tmp_path: Path) -> None:
    """An issue node says locals are not limited in depth; ``render_scope`` gains ``max_depth`` and passes it to
    ``Pretty``: the request may be met. A constant keyword passed (``max_length=10``) is a call tuned, not an
    option handed on; the same change under a component node that names neither is information."""
    root = one_file_repo(tmp_path / "r", "pkg/scope.py", SCOPE, "scope")
    issue = capture(root, ["pkg/scope.py#render_scope"], "`render_scope()` passes only `max_length` on to `Pretty`, "
                    "so a deeply nested local prints pages; users asked for a depth limit.", "Locals have no depth limit")
    component = capture(root, ["pkg/scope.py#render_scope"], "`render_scope()` renders the locals of a scope sorted "
                        "by name, each with `Pretty`.", "render_scope", type="component")
    commit(root, "record")
    edit(root, "Pretty(value, max_length=max_length)", "Pretty(value, max_length=max_length, indent=4)", path="pkg/scope.py")
    commit(root, "an indent")
    assert only(root, issue).stale is False
    edit(root, "def render_scope(scope, max_length=None):", "def render_scope(scope, max_length=None, max_depth=None):",
         path="pkg/scope.py")
    edit(root, "indent=4)", "indent=4, max_depth=max_depth)", path="pkg/scope.py")
    commit(root, "max_depth")
    finding = only(root, issue)
    assert finding.stale is True and "`max_depth` to `Pretty`" in finding.why
    assert only(root, component).stale is False


PRINT = '''def print_all(renderables, style=None):
    out = []
    if style is None:
        for r in renderables:
            out.extend(render(r))
    else:
        for r in renderables:
            out.extend(apply_style(render(r), style))
    return out
'''


def test_a_new_call_in_a_span_may_fix_the_defect_its_node_describes(tmp_path: Path) -> None:
    """An issue node on a line span: the style is applied to the line breaks too. The span's statements now
    split each render into lines and style each line: a call they did not make, none dropped, may fix it. The
    same change under a component node that says the style is applied with `apply_style` is information."""
    root = one_file_repo(tmp_path / "p", "pkg/out.py", PRINT, "print")
    issue = capture(root, ["pkg/out.py#L6-8"], "With a style, `print_all()` styles every segment it renders, the "
                    "breaks included, so the background runs to the edge.", "A print style colours the breaks too")
    component = capture(root, ["pkg/out.py#L6-8"], "With a style, `print_all` applies it with `apply_style()` to what "
                        "each renderable renders.", "print_all styles its output", type="component")
    commit(root, "record")
    edit(root, "        for r in renderables:\n            out.extend(apply_style(render(r), style))\n",
         "        for r in renderables:\n            for line in split_lines(render(r)):\n"
         "                out.extend(apply_style(line, style))\n", path="pkg/out.py")
    commit(root, "style each line")
    finding = only(root, issue)
    assert finding.stale is True
    assert only(root, component).stale is False


QUOTE = '''def quote(s, safe="/"):
    if is_safe(s, safe):
        return s
    chars = RESERVED + safe
    return "".join(c if c in chars else encode(c) for c in s)
'''

QUOTE_WRAPPED = '''def _encoded(s, safe):
    if is_safe(s, safe):
        return s
    chars = RESERVED + safe
    return "".join(c if c in chars else encode(c) for c in s)


def quote(s, safe="/"):
    parts = []
    at = 0
    for m in ESCAPE.finditer(s):
        if m.start() != at:
            parts.append(_encoded(s[at:m.start()], safe))
        parts.append(m.group(0))
        at = m.end()
    if at != len(s):
        parts.append(_encoded(s[at:], safe))
    return "".join(parts)
'''


def test_statements_moved_into_a_helper_and_wrapped_in_new_code_are_rewritten(tmp_path: Path) -> None:
    """The whole body of ``quote`` moved into a new ``_encoded`` that ``quote`` now calls for each piece between
    the escapes it keeps: the old statements are in the helper, but the symbol holds more statements than
    before, new code around them (escapes are no longer encoded again): rewritten, a flag."""
    root = one_file_repo(tmp_path / "q", "pkg/url.py", QUOTE, "quote")
    node = capture(root, ["pkg/url.py#quote"], "quote(s, safe) returns the string as is when is_safe() finds it "
                   "safe; otherwise it encodes every character outside the reserved and safe set, the '%' of an "
                   "existing escape included.", "quote leaves safe strings alone", type="component")
    commit(root, "record")
    (root / "pkg/url.py").write_text(QUOTE_WRAPPED)
    commit(root, "keep existing escapes")
    finding = only(root, node)
    assert finding.stale is True and "rewritten" in finding.why


IMPORTS = '''import math

from pkg import validate, utils
from pkg.base import FieldABC
from pkg.validate import Validator

__all__ = [
    "Field",
    "Nested",
    "List",
]
'''


def test_a_span_s_neighbour_that_changed_too_is_not_the_span_s(tmp_path: Path) -> None:
    """An import block the node references gains a name from a module it allows, and the ``__all__`` list right
    after it gains ``"Tuple"`` in the same commit: the span is the imports, not the list, whose strings the node
    quotes in its own words ("`Nested`"). A module the node names taken out of the block is a flag."""
    root = one_file_repo(tmp_path / "i", "pkg/fields.py", IMPORTS, "fields")
    node = capture(root, ["pkg/fields.py#L3-5"], "fields.py imports from `validate`, `utils` and `base`, never from "
                   "`schema`: a field that needs schemas (`Nested`) checks against the base class.",
                   "fields.py never imports schema.py", type="convention")
    commit(root, "record")
    edit(root, "from pkg.validate import Validator\n", "from pkg.validate import Validator, Length\n", path="pkg/fields.py")
    edit(root, '    "List",\n', '    "List",\n    "Tuple",\n', path="pkg/fields.py")
    commit(root, "Tuple")
    assert only(root, node).stale is False
    edit(root, "from pkg import validate, utils\n", "from pkg import validate\n", path="pkg/fields.py")
    commit(root, "no utils")
    assert only(root, node).stale is True


MESSAGE = '''def check(inner):
    if not isinstance(inner, FieldABC):
        raise ValueError("The elements must be of type FieldABC")
    return inner
'''


def test_a_message_that_gains_a_final_stop_says_the_same(tmp_path: Path) -> None:
    """The message the node quotes gains a final period: the same text. Reworded, it is a flag."""
    root = one_file_repo(tmp_path / "m", "pkg/check.py", MESSAGE, "check")
    node = capture(root, ["pkg/check.py#check"], "`check` raises `ValueError` with 'The elements must be of type "
                   "FieldABC' for anything else.", "check refuses non-fields", type="component")
    commit(root, "record")
    edit(root, 'type FieldABC")', 'type FieldABC.")', path="pkg/check.py")
    commit(root, "a period")
    assert only(root, node).stale is False
    edit(root, 'The elements must be of type FieldABC.', 'Elements must be fields.', path="pkg/check.py")
    commit(root, "reworded")
    assert only(root, node).stale is True
    # a colon at the end leads to what is printed after it ("Failed to connect:", exc): not the same message
    assert same_text("Failed to connect.") == same_text("failed to connect") != same_text("Failed to connect:")


LOGGER = '''class Logger(Protocol):
    def debug(self, event: str, **kw: Any) -> Any:
        """Log at debug."""

    def info(self, event: str, **kw: Any) -> Any:
        """Log at info."""
'''


def test_a_signature_the_node_writes_that_now_takes_positional_arguments_is_a_flag(tmp_path: Path) -> None:
    """The node says the log methods each take `(event: str, **kw: Any)`: a parameter list with no name, the
    signature of every method it agreed with (a protocol's methods, whose only statement is a docstring). A
    method added beside them and an optional keyword added are information; ``*args`` gained, positional
    arguments the node's signature does not take, is a flag."""
    root = one_file_repo(tmp_path / "p", "pkg/types.py", LOGGER, "protocol")
    node = capture(root, ["pkg/types.py#Logger"], "The log methods `debug` and `info` each take `(event: str, **kw: "
                   "Any)` and log *event* with the keyword arguments.", "The Logger protocol", type="component")
    commit(root, "record")
    edit(root, '        """Log at info."""\n', '        """Log at info."""\n\n    def flush(self) -> None:\n'
         '        """Write out."""\n', path="pkg/types.py")
    edit(root, "def debug(self, event: str, **kw: Any)", "def debug(self, event: str, *, stack: bool = False, **kw: Any)",
         path="pkg/types.py")
    commit(root, "flush, and a stack option")
    assert only(root, node).stale is False
    edit(root, "def info(self, event: str, **kw: Any)", "def info(self, event: str, *args: Any, **kw: Any)",
         path="pkg/types.py")
    commit(root, "format the event with args")
    finding = only(root, node)
    assert finding.stale is True and "(event: str, **kw: Any)" in finding.why
