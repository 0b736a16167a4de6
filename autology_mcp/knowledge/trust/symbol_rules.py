"""The staleness rule for a ``path#symbol`` and a ``path#L10-40`` span (:mod:`.staleness`): a symbol's
change that may make the node wrong (:func:`symbol_change`, :func:`judge_symbol`, a caller that no
longer calls it: :func:`_caller_dropped`), and a span followed through the later commits by its code
(:func:`judge_span`), its rewrite judged as a symbol's (:func:`span_rewrite`)."""

from __future__ import annotations

import ast
import re
import sys
import textwrap
from collections import Counter

from autology_mcp.knowledge.trust.annotations import retyped
from autology_mcp.knowledge.trust.code_compare import (
    Unit,
    aliased_defaults,
    body_units,
    bound_names,
    branch_statements,
    built_strings,
    call_guards,
    calls_name,
    changed_strings,
    changed_units,
    code_words,
    constants_used,
    declared_attributes,
    decorator_names,
    definitions_added,
    dotted,
    dump,
    extracted,
    find_symbol,
    folded_parameters,
    follow,
    follow_items,
    held_strings,
    imported_from,
    is_doc,
    is_version_assignment,
    kwargs_keys,
    lines_of,
    literals,
    method_names,
    moved_units,
    names_read,
    parameters,
    parameters_kept,
    parse_as_written,
    parse_python,
    plain,
    read_through,
    self_attributes,
    sentinel_renamed,
    span_region,
    strings_of,
    symbol_units,
    units,
    units_changed,
    without_docstrings,
)
from autology_mcp.knowledge.trust.defaults import read_at_defaults
from autology_mcp.knowledge.trust.defects import _called, describes_defect, fix_added, span_fix_added
from autology_mcp.knowledge.trust.denials import denied as names_denied
from autology_mcp.knowledge.trust.denials import now_held, now_there
from autology_mcp.knowledge.trust.equivalents import about_slots, about_translation, canonical
from autology_mcp.knowledge.trust.findings import WALK_MAX, Finding, Later, _shown, _stated, first_without
from autology_mcp.knowledge.trust.git_history import History
from autology_mcp.knowledge.trust.mentions import Said, holds, term
from autology_mcp.knowledge.trust.narrowing import about_falsy, about_none, aliases_read, guards_raise, none_told_apart
from autology_mcp.knowledge.trust.package_imports import read_relative
from autology_mcp.knowledge.trust.protocols import operations
from autology_mcp.knowledge.trust.python2 import read_as_python3
from autology_mcp.knowledge.trust.renames import renamed, same_module
from autology_mcp.knowledge.trust.requirements import dropped as requirements_dropped
from autology_mcp.knowledge.trust.requirements import is_packaging
from autology_mcp.knowledge.trust.settings import set_otherwise
from autology_mcp.knowledge.trust.signatures import signature_kept, signatures_lost


REWRITTEN = 0.5  # a file more than this share of whose lines (those the node saw) are gone was rewritten


def symbol_span(text: str, symbol: str, path: str) -> tuple[int, int] | None:
    """Lines of a Python function or class (``name`` or ``Class.method``; a property's getter and setter
    together) in ``text``; None when not found or not Python."""
    if not path.endswith(".py"):
        return None
    tree = parse_python(text)
    node = find_symbol(tree, symbol) if tree is not None else None
    return lines_of(node) if node is not None else None


def follow_span(before: list[str], after: list[str], span: tuple[int, int]) -> tuple[int, int] | None:
    """Where the lines ``span`` (1-based, inclusive) of ``before`` are in ``after``; None when one of
    them changed (lines added or removed only above or below it move it)."""
    moved = follow_items(before, after, (span[0] - 1, span[1] - 1))
    return (moved[0] + 1, moved[1] + 1) if moved is not None else None


def judge_span(h: History, ref: str, path: str, later: Later, before: str, now: str,
                span: tuple[int, int], what: str, said: Said, explain: bool) -> Finding:
    """A line span followed from the base through each later commit by its code (formatting, comments
    and whitespace aside): stale when its code changed, beyond string values the node does not quote
    (a version string bumped, a message reworded): a string value the node's text holds, or one that
    held a string the node quotes or a number it states and holds it no more."""
    commits = later.commits

    def step(old: str, new: str, where: tuple[int, int]) -> tuple[int, int] | None:
        moved = follow_span(old.splitlines(), new.splitlines(), where)  # the lines as they were: no parse
        if moved is not None:
            return moved
        change = follow(old, new, where, path)
        if change.span is not None and not change.changed:
            return change.span
        if change.span is not None and change.strings:  # string values only
            if said.quotes(change.strings) or said.gives_from(change.strings) or (said.states_values and said.values_lost(
                    literals(list(change.before)), literals(list(change.after)))) or \
                    (is_packaging(path) and requirements_dropped(change.before, change.after, said.text)):
                return None  # a string the node quotes or gives a piece of as code, a number it states, a package it names, gone
            return change.span
        region = span_region(old, new, where, path)
        if region is None or not region[1]:
            return None
        if _others_added(*region, said):
            return region[1][0].start, max(u.end for u in region[1])
        if _imports_added(*region, said):  # "imports only the standard library", and it imports another module now
            return None
        if span_rewrite(*region, old, new, path, said) is not None:
            region = _moved_span(region[0], old, new, path, said)
            if region is None:
                return None
        elif describes_defect(said) and span_fix_added(*region) is not None:  # a fix of the defect it describes
            return None
        return region[1][0].start, max(u.end for u in region[1])

    if step(before, now, span) is not None:  # what the node saw against now: the commits between only name a change
        return Finding(ref, False, None, later.text(explain))
    previous, where = before, span
    for commit in commits[:WALK_MAX]:
        text = h.content(commit.sha, commit.path) or ""
        moved = step(previous, text, where)
        if moved is None:
            return Finding(ref, True, f"{what} of {path} changed ({commit.label()})", later.text(explain))
        previous, where = text, moved
    if len(commits) > WALK_MAX:  # too many to walk
        return Finding(ref, True, f"{what} of {path} changed (after {commits[WALK_MAX - 1].label()})", later.text(explain))
    if commits and step(previous, now, where) is not None:  # each commit kept it, together they did not
        when = commits[-1].label()
    else:
        when = "since the node was written" if later.gap else "uncommitted"
    return Finding(ref, True, f"{what} of {path} changed ({when})", later.text(explain))


def holder_denied(before: str, now: str, line: int, path: str, said: Said) -> tuple[str, list[str]] | None:
    """The function holding a span's first line, and the names the node says its code has not (:mod:`.denials`,
    "there is no `DashDocSetPlayURL`") that the function gained, the span itself perhaps unchanged: the key written
    two lines below it. None when it gained none, or outside Python. Most nodes deny nothing: they cost no parse."""
    held = _holding(before, line) if path.endswith(".py") and names_denied(said.text) else None
    tree = parse_python(now) if held is not None else None
    new = find_symbol(tree, held[0]) if tree is not None else None
    if held is None or new is None:
        return None
    names = now_held(said.text, code_words(_segment(before, held[1]), path), code_words(_segment(now, new), path))
    return (held[0], names) if names else None


# words by which a node counts what a span holds, or says it holds all there is
_COUNTED = re.compile(r"\b(?:only|single|sole|exactly|two|three|four|five|six|seven|eight|nine|ten)\b", re.IGNORECASE)


def _others_added(before: list[Unit], after: list[Unit], said: Said) -> bool:
    """Only new definitions put among the span's statements (:func:`definitions_added`), of names the node
    does not mention, and the node neither counts what the span holds nor says it is all there is: two
    signals added between the four a node describes leave what it says of those four true."""
    names = definitions_added(before, after)
    if not names:
        return False
    mentioned = {w.lower() for w in said.names | said.words}
    return not any(name.lower() in mentioned for name in names) and not _COUNTED.search(said.text)


# a node that says what a span imports is all it imports, or that something is never imported there
_ONLY_IMPORTS = re.compile(r"\bimports?\s+only\b|\bonly\s+imports?\b|\bnever\s+imported\b"
                           r"|\bnothing\b[^.]{0,40}?\bis\s+imported\b", re.IGNORECASE)


def _imports_added(before: list[Unit], after: list[Unit], said: Said) -> bool:
    """A module-level import of a package outside the standard library, that the node does not name, put among
    the statements of a span whose node says it imports only what it lists, or that something is never
    imported: ``from dj_database_url import DBConfig`` added to an import block that "imports only
    standard-library modules" and "never" an optional package. An import under ``try: ... except ImportError``
    may fail and is not counted (nor one only a type checker reads: parsing leaves it out)."""
    if not _ONLY_IMPORTS.search(said.text):
        return False
    kept = {plain(u) for u in before}
    guarded = [lines_of(u.node) for u in after if isinstance(u.node, ast.Try) and _catches_import_error(u.node)]
    mentioned = {w.lower() for w in said.names | said.words}
    for u in after:
        node = u.node
        if plain(u) in kept or not isinstance(node, (ast.Import, ast.ImportFrom)) or getattr(node, "level", 0) \
                or any(a <= u.start <= b for a, b in guarded):
            continue
        top = (node.module if isinstance(node, ast.ImportFrom) else node.names[0].name).split(".")[0]
        if top not in sys.stdlib_module_names and top != "__future__" and top.lower() not in mentioned:
            return True
    return False


def _catches_import_error(node: ast.Try) -> bool:
    return any(n.id in ("ImportError", "ModuleNotFoundError") for h in node.handlers if h.type is not None
               for n in ast.walk(h.type) if isinstance(n, ast.Name))


def _moved_span(gone: list[Unit], old: str, new: str, path: str, said: Said) -> tuple[list[Unit], list[Unit]] | None:
    """The span's statements found again elsewhere in the function that held them, or in a function it now calls
    (:func:`moved_units`: the same code, its variables perhaps renamed), and keeping what the node says there
    (:func:`span_rewrite`): a block moved up when a method was split, or into a helper (``_idna_encode(host)``
    holding the lines of ``_encode_host``). None when not so."""
    holder = _holder(old, gone[0].start) if path.endswith(".py") else None
    if holder is None:
        return None
    handed = _called_by(new, holder.split(".")[-1]) - _called_by(old, holder.split(".")[-1])
    for window in moved_units(new, gone, path):
        there = _holder(new, window[0].start)
        if (there == holder or there is not None and there.split(".")[-1] in handed) \
                and span_rewrite(gone, window, old, new, path, said) is None:
            return gone, window
    tree = parse_python(new) if handed else None
    for helper in (f for f in (ast.walk(tree) if tree is not None else ()) if isinstance(f, _FUNCTIONS) and f.name in handed):
        body = [u for u in units(new, path) if helper.body[0].lineno <= u.start <= (helper.end_lineno or u.start)]
        if body and span_rewrite(gone, body, old, new, path, said) is None:  # the lines, rewritten in the helper
            return gone, body
    return None


def _called_by(text: str, name: str) -> set[str]:
    """The names the functions called ``name`` in ``text`` call (``_idna_encode`` of ``_encode_host``)."""
    tree = parse_python(text)
    return set().union(*(_called(f) for f in (ast.walk(tree) if tree is not None else ())
                         if isinstance(f, _FUNCTIONS) and f.name == name))


def span_rewrite(gone_units: list[Unit], came_units: list[Unit], old_text: str, new_text: str, path: str,
                 said: Said) -> str | None:
    """Why the code of a line span, rewritten (``gone_units`` are its statements, ``came_units`` those that
    took their place), may make the node wrong, or None when it keeps what the node says, as for a
    symbol (:func:`symbol_change`): a name or a code snippet the node gives gone from it; a string it
    quotes or a number it states gone; a changed statement that uses a name or a word of the node's text
    the others do not, or whose string values the node quotes; a value the node gives as code gone.
    A rewrite that touches none of it (a generator into ``if``s, a filter added before a loop) is
    information. A bare annotation in a class that declares an attribute its methods set (``sleep:
    Callable[...]`` beside ``self.sleep = sleep``) is for the type checker alone, and not a statement of it."""
    if path.endswith(".py"):
        declared_then, declared_now = declared_attributes(old_text), declared_attributes(new_text)
        gone_units = [u for u in gone_units if u.start not in declared_then or not isinstance(u.node, ast.AnnAssign)]
        came_units = [u for u in came_units if u.start not in declared_now or not isinstance(u.node, ast.AnnAssign)]
    # a value taken out of the span into a new constant of the module (``extras_require=EXTRAS_REQUIRE``) is still there
    extracted = _constants_extracted(old_text, new_text, came_units) if path.endswith(".py") else []
    now_code = "\n".join([_unit_lines(new_text, came_units), *(_unit_lines(new_text, [u]) for u in extracted)])
    lost = _lost(code_words(_unit_lines(old_text, gone_units), path), code_words(now_code, path), said)
    lost += sorted(_defines(gone_units) - _defines(came_units))  # a function or class of the span renamed or gone
    counted = _header_counted(gone_units, came_units, said)
    if counted:
        return counted
    lost += requirements_dropped(gone_units, came_units + extracted, said.text) if is_packaging(path) else []
    if lost:
        return f"{_shown(lost)} {'is' if len(lost) == 1 else 'are'} gone from it"
    if said.states_values:
        values = said.values_lost(literals(gone_units), literals(came_units))
        if values:
            return f"{_stated(values)} gone from it"
    gone, came = units_changed(gone_units, came_units)
    values = said.values_lost(literals(gone), literals(came)) if said.states_values else []
    if values:
        return f"{_stated(values)} gone from a statement of it"
    differ = {i for u in gone for i in u.identifiers()} ^ {i for u in came for i in u.identifiers()}
    added = _added_parameters(old_text, new_text, gone_units[0].start, came_units[0].start) if gone_units and came_units \
        else set()
    used = differ & said.used_now(gone_units, came_units, added) - said.words_kept(gone, came)
    used = sorted(used - _called_with_other_messages(used, gone, came, said))
    if used:
        return f"the use of {_shown(used)} changed"
    before = Counter(s for u in gone for s in held_strings(u))
    after = Counter(s for u in came + extracted for s in held_strings(u))
    # strings only added (a ``"testing": ["pytest"]`` extra beside the ``dev`` one) are new values the node's prose
    # may use as words ("pytest depends on pluggy"): one lower-case word counts only as code or between quotes
    if said.quotes(changed_strings(before, after), held=not before - after):
        return "a string value the node quotes changed"
    if about_falsy(said.text):
        told = none_told_apart([u.node for u in gone if u.node], [u.node for u in came if u.node])
        if told:
            return told
    # a release number bumped (``version_info = (19, 7, 1)`` now ``(19, 8, 0)``) is a version, as a version string
    # is: a number the node states is judged above
    values = {v for u in gone if not is_version_assignment(u.node) for v in u.constants()} - \
        {v for u in came if not is_version_assignment(u.node) for v in u.constants()}
    values = {v for v in values if v not in ("None", "True", "False", "Ellipsis") or said.gives_value(v)}
    if values:  # a number the changed statements held is gone (`2 ** attempt` now `3 ** attempt`), or a value the node gives
        return f"{_shown(sorted(values))} gone from it"
    return None


def _called_with_other_messages(names: set[str], gone: list[Unit], came: list[Unit], said: Said) -> set[str]:
    """Of the ``names`` the node writes called with a message ("raises ValueError("Invalid compression format:
    '...'")"), those the changed statements use only in calls with another message (``raise ValueError("Cannot
    infer compression for objects of type: '%s'" % ...)`` made a ``TypeError``): another raise than the one the
    node speaks of, not a change of it."""
    out = set()
    for name in names:
        messages = said.messages_of(name)
        if not messages:
            continue
        uses = calls = 0
        other = True
        for u in (*gone, *came):
            if u.node is None:
                continue
            for n in ast.walk(u.node):
                if isinstance(n, ast.Name) and n.id == name or isinstance(n, ast.Attribute) and n.attr == name:
                    uses += 1
                if isinstance(n, ast.Call) and (dotted(n.func) or "").rsplit(".", 1)[-1] == name:
                    calls += 1
                    texts = [c.value for c in ast.walk(n.args[0]) if isinstance(c, ast.Constant)
                             and isinstance(c.value, str)] if n.args else []
                    if not texts or any(m.lower() in " ".join(texts).lower() for m in messages):
                        other = False
        if uses and uses == calls and other:
            out.add(name)
    return out


def _defines(found: list[Unit]) -> set[str]:
    return {u.node.name for u in found if isinstance(u.node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


# a node that speaks of how an exception is chained: `raise ... from`, ``__cause__``, ``__context__``
_ABOUT_CHAINING = re.compile(r"`from`|\braise\s+[\w.]+(?:\([^()\n]*\))?\s+from\b|\bwithout\s+`?from\b|__cause__"
                             r"|__context__|\bexception\s+chaining\b|\bchained\s+exceptions?\b", re.IGNORECASE)


def _chaining_changed(gone: list[Unit], came: list[Unit], said: Said) -> str | None:
    """A ``raise`` of the changed statements that gained or lost its ``from`` (``raise to_exc(exc)`` now ``raise
    to_exc(exc) from exc``), under a node that speaks of chaining: the names are the same, the traceback is not."""
    if not _ABOUT_CHAINING.search(said.text):
        return None

    def causes(units: list[Unit]) -> Counter:
        return Counter(n.cause is not None for u in units if u.node is not None for n in ast.walk(u.node)
                       if isinstance(n, ast.Raise) and n.exc is not None)

    then, now = causes(gone), causes(came)
    if now[True] > then[True] and now[False] < then[False]:
        return "a `raise` now chains its cause (`from`)"
    if now[True] < then[True] and now[False] > then[False]:
        return "a `raise` no longer chains its cause (`from`)"
    return None


def _header_counted(gone: list[Unit], came: list[Unit], said: Said) -> str | None:
    """A parameter added to a ``def`` whose header is among a span's statements, where the node counts the
    parameters (:func:`_parameters_counted`: "takes exactly ten keyword options")."""
    before = {u.node.name: u.node for u in gone if isinstance(u.node, _FUNCTIONS)}
    for u in came:
        if isinstance(u.node, _FUNCTIONS) and u.node.name in before:
            counted = _parameters_counted(before[u.node.name], u.node, said)
            if counted:
                return counted
    return None


def _receiver_only(name: str, units: list[Unit]) -> bool:
    """Whether these statements use ``name`` only to reach an attribute (``self.multicall = _multicall``), never as
    a value of its own (``return self``)."""
    nodes = [n for u in units if u.node is not None for n in ast.walk(u.node)]
    reached = sum(isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == name for n in nodes)
    return reached == sum(isinstance(n, ast.Name) and n.id == name for n in nodes)


def _constants_extracted(old_text: str, new_text: str, came: list[Unit]) -> list[Unit]:
    """The module's constants that the statements ``came`` use and that the module did not define before
    (``EXTRAS_REQUIRE = {"dev": [...]}`` for ``extras_require=EXTRAS_REQUIRE``): values taken out of them."""
    tree = parse_python(new_text) if came else None
    if tree is None:
        return []
    return [u for u in constants_used(tree, ast.Module(body=[u.node for u in came if u.node], type_ignores=[]))
            if not _defined_in(old_text, u)]


def _defined_in(text: str, unit: Unit) -> bool:
    """Whether the module ``text`` assigns, at its top level, a name the assignment ``unit`` assigns."""
    names = {t.id for t in (unit.node.targets if isinstance(unit.node, ast.Assign) else [getattr(unit.node, "target", None)])
             if isinstance(t, ast.Name)}
    tree = parse_python(text)
    return any(isinstance(t, ast.Name) and t.id in names for s in getattr(tree, "body", [])
               for t in (s.targets if isinstance(s, ast.Assign) else [s.target] if isinstance(s, ast.AnnAssign) else []))


def _unit_lines(text: str, found: list[Unit]) -> str:
    if not found:
        return ""
    return "\n".join(text.splitlines()[min(u.start for u in found) - 1:max(u.end for u in found)])


def delegated(old: ast.AST, new: ast.AST, old_tree: ast.AST | None, tree: ast.AST) -> list[ast.AST]:
    """The functions and classes of the module, outside ``new``, that ``new`` calls by name and ``old`` did
    not call outside itself: code it hands its work to now (a generator made a class, an inner helper
    moved to the module). What the node says of the symbol may hold there."""
    def outside(tree_: ast.AST | None, symbol: ast.AST) -> dict[str, ast.AST]:
        start, end = lines_of(symbol)  # (by its lines: ``symbol`` may be a rewritten copy)
        return {n.name: n for n in ast.walk(tree_) if isinstance(n, _DEFS) and not start <= n.lineno <= end} \
            if tree_ else {}

    def called(symbol: ast.AST) -> set[str]:
        return {n.func.id if isinstance(n.func, ast.Name) else n.func.attr for n in ast.walk(symbol)
                if isinstance(n, ast.Call) and (isinstance(n.func, ast.Name) or isinstance(n.func, ast.Attribute)
                                                and isinstance(n.func.value, ast.Name) and n.func.value.id in ("self", "cls"))}

    now, then = outside(tree, new), outside(old_tree, old)
    return [now[name] for name in sorted(called(new) & now.keys()) if name not in (called(old) & then.keys())]


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_DEFS = (*_FUNCTIONS, ast.ClassDef)


def symbol_change(old: ast.AST, old_text: str, new_text: str, symbol: str, path: str, said: Said) -> str | None:
    """Why a Python symbol's change may make the node wrong, or None when it keeps what the node says:
    gone; an existing parameter removed, renamed, reordered or its default changed; a name or a code
    snippet the node gives (that the symbol's code held, its docstrings aside) gone from it; a string
    the node quotes or a number it states that the symbol (or a constant it uses) held and holds no
    more; a changed statement that uses a name or a word of the node's text, or a string value it
    quotes; more than half of its statements rewritten. Formatting, comments, an added parameter, and
    statements changed that touch nothing the node says (or only gained keyword arguments) are not."""
    tree = parse_python(new_text)
    new = find_symbol(tree, symbol, said.about_overloads) if tree is not None else None
    if new is None:
        return "gone"
    retype = retyped(old_text, new_text, symbol, said.names)  # `-> str` now `-> URL`, of a node that says "a `str`"
    if retype:
        return retype
    if dump(old, False) == dump(new, False):  # its code kept: the constants it uses may not be
        values = _values_gone(old, old_text, new, tree, said)
        return f"{_stated(values)} gone from a constant it uses" if values else None
    translated = not about_translation(said.text)  # a linter's equivalent rewrites read one way (trust/equivalents.py)
    # a type checker's None checks read away (trust/narrowing.py), unless the node names what one raises
    unnarrowed = not about_none(said.text) and not guards_raise(old) & said.names
    slots = about_slots(said.text)  # a class's __slots__ read away, unless the node speaks of them
    old, new = canonical(old, translated, unnarrowed, slots), canonical(new, translated, unnarrowed, slots)
    new = read_at_defaults(old, new, said.names)  # an option it gained, at its default (trust/defaults.py)
    if dump(old, False) == dump(new, False):
        return None
    # Python 2's support dropped (``text_type`` now ``str``, ``text_type.split(self)`` now ``super().split()``),
    # and an import of the file's own package written relative (``from ._constants import``) for absolute
    old, new = read_relative(old, path), read_relative(new, path)
    old, new = read_as_python3(old, parse_python(old_text), symbol), read_as_python3(new, tree, symbol)
    old, new = canonical(old, translated, unnarrowed, slots), canonical(new, translated, unnarrowed, slots)
    if dump(old, False) == dump(new, False):
        return None
    if unnarrowed and dump(aliases_read(old), False) == dump(aliases_read(new), False):  # `fut.failed` for `x.outcome.failed`
        return None
    if about_falsy(said.text):  # "a zero-length response logs '-'", and `sent and ...` is now `sent is not None and ...`
        told = none_told_apart([old], [new])
        if told:
            return told
    # the same code, a name renamed throughout; the node naming a module (``importlib.metadata``) names it under
    # any alias the code gives it
    mapping = renamed(old, new, parse_python(old_text), tree)
    if mapping is not None and not any(n in said.names or term(n) in said.title_terms for a, b in mapping.items()
                                       if not same_module(a, b, parse_python(old_text), tree) for n in (a, b)):
        return None
    # what it handed to a function or class of the module it now calls in its place is still its code: the values
    # of a helper it extracted (``idna.decode(raw.encode('ascii'))`` now in a cached ``_idna_decode(raw)``) are held
    helpers = delegated(old, new, parse_python(old_text), tree)
    if unnarrowed and not helpers:  # a local bound once to an attribute chain, read as the chain (trust/narrowing.py);
        old, new = aliases_read(old), aliases_read(new)  # not beside a helper, whose statements match as written
    values = _values_gone(old, old_text, new, tree, said, helpers)
    if dump(old, True) == dump(new, True):  # string values only
        if values:
            return f"{_stated(values)} gone from it"
        differ = changed_strings(strings_of(old), strings_of(new))
        # one taken away, one added in other letter case or with another final stop: the same text
        texts = Counter(same_text(v) for v in differ)
        differ = {v for v in differ if texts[same_text(v)] < 2}
        built_then, built_now = built_strings(old), built_strings(new)
        built = (built_then - built_now) + (built_now - built_then)
        quoted = said.quotes(differ) or any(said.quotes_built(p) for p in built)
        return "a string value the node quotes changed" if quoted else None
    old_parameters = _parameter_names(old)  # a parameter now read from another (`mode.preview`) the node does not name
    folded = {p: q for p, q in folded_parameters(old, new).items() if not said.names_parameter(p, old_parameters)}
    # a private parameter (``_cell_len=_cell_len``, a global bound for speed) the node does not name is the
    # code's own business, not the interface the node describes: removing or changing it says nothing
    private = {p for p in old_parameters if p.startswith("_") and not said.names_parameter(p, old_parameters)}
    if isinstance(new, ast.Module) and not isinstance(old, ast.Module):  # one definition, now one per condition
        return f"it is now defined {len(new.body)} times, under conditions (a version or a platform each)"
    broke = parameters_kept(old, new, set(folded), private)
    if broke:
        return broke
    qualified = _qualifying_parameter(old, new, said) or _parameters_counted(old, new, said)
    if qualified:
        return qualified
    decorated = _decorators_named(old, new, said)
    if decorated:
        return decorated
    old_code, new_code = code_words(_segment(old_text, old), path), code_words(_segment(new_text, new), path)
    # what the code holds, its docstrings aside: a name only its prose gave ("resolves to True") is not the code's;
    # what it handed to a function or class of the module it now calls in its place is still its code (helpers)
    lost = _lost(code_words(without_docstrings(old_text, old), path),
                 "\n".join(code_words(without_docstrings(new_text, n), path) for n in [new, *helpers]), said)
    lost = [n for n in lost if not _class_keeps(new, tree, n) and not _module_kept(n, old_code, new_code, tree)]
    if lost:
        return f"{_shown(lost)} {'is' if len(lost) == 1 else 'are'} gone from it"
    denied = now_held(said.text, old_code, new_code)  # "a `match` statement is not among them", and now it is
    if denied:
        return now_there(denied, "it")
    otherwise = set_otherwise(said.text, old, new)  # "`ensure_ascii` is True", and it passes ensure_ascii=False
    if otherwise:
        return otherwise[0]
    if values:
        return f"{_stated(values)} gone from it"
    own = set(symbol.split("."))
    guarded = _newly_guarded(old, new, said) or _call_newly_guarded(old, new, said, own)
    if guarded:
        return f"{_shown([guarded])} is now under a condition"
    # statements split out into a function it calls, or reading a folded parameter the new way: the same code;
    # and the reverse, the statements of a helper of the module it called and calls no more, now
    # its own (a check moved from ``gen_salt`` into the function that called it): the same statements, and what
    # they use it used before
    gone, came = extracted(*changed_units(read_through(old, folded, aliased_defaults(old, new, private)), new), tree)
    inlined = [v for f in delegated(new, old, tree, parse_python(old_text)) for v in body_units(f)]
    values = said.values_lost(literals(gone + inlined), literals(came + [u for f in helpers for u in body_units(f)])) \
        if said.states_values else []
    if values:  # a bound the node states, changed in one statement while another still holds the number
        return f"{_stated(values)} gone from a statement of it"
    came = [u for u in came if plain(u) not in {plain(v) for v in inlined}]
    protocol = _methods_named(old, new, said)
    if protocol:
        return protocol
    # a statement the symbol held before and holds after, wherever it is (a loop's header repeated for a second
    # pass), uses nothing new; nor does a helper it defined inside and now calls from the module, nor a statement
    # now in a function of the module it calls in their place (``if _is_single_cell_widths(text): return len(text)``
    # moved into a new ``_cell_len``)
    handed = [u for f in helpers for u in body_units(f)]
    into_helpers = {plain(u) for u in handed}
    held_then, held_now = {plain(u) for u in body_units(old)}, {plain(u) for u in body_units(new)} | into_helpers
    moved_out = [lines_of(n) for n in ast.walk(old) if n is not old and isinstance(n, _DEFS)
                 and n.name in {h.name for h in helpers}]
    uses_before = {i for u in gone if plain(u) not in held_now and not any(a <= u.start <= b for a, b in moved_out)
                   for i in u.identifiers()}
    uses_before |= {i for u in inlined for i in u.identifiers()}
    # a method the class gained that the node does not name is new code beside what it describes (as an added
    # parameter is): what it uses is its own (``_form_eoms`` added, calling the ``form_eoms`` the node names), but
    # for a word of the node's title, what the node is about (``from_header`` gained by the ``IfRange`` of "a weak
    # ETag is kept", which now tests ``weak``)
    beside = _methods_gained(old, new, said)
    uses_after = {i for u in came if plain(u) not in held_then for i in u.identifiers()
                  if not any(a <= u.start <= b for a, b in beside) or term(i) in said.title_terms}
    # and the reverse of a helper inlined: a function or constant of the module that a function of the module
    # it now calls in their place uses (``_determine_setters()`` returning the ``_setattr`` the symbol chose
    # itself) is used still, and so is a string it holds
    uses_before -= {i for u in handed for i in u.identifiers()} & _module_names(tree)
    # a name used by the statements before and not after, or after and not before, counted both ways; a name
    # imported from a module is used with that module's (``Font(bold=True)`` after ``from openpyxl.styles import
    # Font``, for ``openpyxl.styles.Font(bold=True)``)
    then_from, now_from = imported_from(parse_python(old_text)), imported_from(tree)
    differ = ({i for u in gone for i in _qualified(u, then_from)} ^ {i for u in came for i in _qualified(u, now_from)}) \
        & (uses_before ^ uses_after)
    gained = _parameter_names(new) - _parameter_names(old)
    explicit = kwargs_keys(old) & gained  # a keyword it took from its **kwargs by name, now a parameter of its own
    signature = said.signature(symbol.split(".")[-1], old_parameters)
    # a word of the node's text (not a name it gives) that was a variable of the symbol's own and is gone from
    # it, renamed (``innermost = set()`` now ``res = set()``), was the code's name for its work, not what it does
    now_used = {i for u in body_units(new) for i in u.identifiers()}
    local = bound_names(old) - _parameter_names(old) - said.names - now_used
    # a class the node names, now built as a subclass of it that the module defines (`StreamingResponse(...)` now
    # `_StreamingResponse(...)`, a `class _StreamingResponse(StreamingResponse)`), is still what the code makes
    bases = _bases(tree)
    subclassed = {b for u in came for i in u.identifiers() for b in bases.get(i, ())}
    # a sentinel default renamed (``_marker`` now ``sentinel``) and tested as before is the same "no value given"
    sentinels = {n for _, p, _ in parameters(old) for n in (sentinel_renamed(old, new, p) or ())}
    # ``**kwargs`` in the node is a catch-all parameter: a variable of that name is another thing
    catch_all = said.starred - {n for f in (old, new) for kind, n, _ in parameters(_function(f)) if kind in ("*", "**")}
    used = (differ & said.used_now(body_units(old), body_units(new), gained, signature) - own - explicit - catch_all
            - said.words_kept(gone, came) - local - subclassed - sentinels - _forwarding_dropped(old, new, gone, came, said))
    if "self" in used and _receiver_only("self", gone + came):  # ``self.multicall = ...`` is about ``multicall``
        used.discard("self")
    used = sorted(used - _called_with_other_messages(used, gone, came, said))
    if used:
        return f"the use of {_shown(used)} changed"
    chained = _chaining_changed(gone, came, said)
    if chained:
        return chained
    now_code = "\n".join(code_words(without_docstrings(new_text, n), path) for n in [new, *helpers])
    dropped = _snippets_dropped(code_words(without_docstrings(old_text, old), path), now_code, said)
    if dropped:
        return f"{_shown(dropped)} is gone from a statement of it"
    same = _restructured(old, new, gone, came)  # the same names (its own variables aside) and values, rearranged
    # a name the node gives that the changed statements hold as a string before and after (a field listed in
    # `__slots__`, another added beside it) is that name, kept: the name rules judge it, not as a quoted string
    strings_then, strings_now = ({s for u in units for s in u.strings} - explicit for units in (gone, came))
    names_kept = strings_then & strings_now & said.names
    names_kept |= strings_then & {v for u in handed for v in u.strings}
    if not same and said.quotes((strings_then | strings_now) - names_kept - recased(strings_then, strings_now), held=True):
        return "a statement with a string value the node quotes changed"
    # the default of a parameter it gained, in the header, is the new option's (``requote=True`` added last), as the
    # parameter is; the same value in a statement of its body still counts
    defaults = _gained_defaults(old, new)
    # and the values of a method the class gained that the node does not name are that method's (``strict=True`` in
    # a new ``verify()`` beside the ``feed(text, *, strict=True)`` the node gives); a ``None`` a statement only tests a
    # name against (``key is not None``) gives no value (:meth:`.Unit.values_given`)
    values = {v for u in gone for v in u.values_given()} ^ {
        v for u in came if not any(a <= u.start <= b for a, b in beside)
        for v in u.values_given() - (defaults if isinstance(u.node, _FUNCTIONS) else set())}
    named = sorted(v for v in values if said.gives_value(v))
    if named:
        return f"a value the node gives changed ({_shown(named)})"
    total = len([u for u in body_units(old) if not is_doc(u)])  # a docstring is documentation, not a statement
    # a statement moved into a new `if` (a fallback put beside it) is not rewritten; into a new loop it is; nor is
    # one moved into a function it now calls, when it handed its work over (it holds no more statements than
    # before: not old statements wrapped in new code that calls them)
    moved = Counter(plain(u) for u in came) if _loops(came) <= _loops(gone) else Counter()
    handed_over = len([u for u in body_units(new) if not is_doc(u)]) <= total
    rewritten = 0
    for u in gone:
        if moved[plain(u)] > 0:
            moved[plain(u)] -= 1
        elif not handed_over or plain(u) not in into_helpers:
            rewritten += 1
    share = rewritten / total if total else 0.0  # an option passed through is not a rewrite
    if share > REWRITTEN and not same:  # not the same code restructured
        return f"{round(100 * share)}% of its statements rewritten"
    return None


def _values_gone(old: ast.AST, old_text: str, new: ast.AST, tree: ast.AST, said: Said,
                 helpers: list[ast.AST] | tuple = ()) -> list[str]:
    """What the node states (:meth:`Said.values_lost`) that the symbol and the module constants it uses held
    and hold no more, the functions it now hands its work to (``helpers``) counted as its code."""
    if not said.states_values:
        return []
    return said.values_lost(literals(symbol_units(old) + constants_used(parse_python(old_text), old)),
                            literals(symbol_units(new) + constants_used(tree, new) + [
                                u for h in helpers for u in symbol_units(h) + constants_used(tree, h)]))


def _decorators_named(old: ast.AST, new: ast.AST, said: Said) -> str | None:
    """A decorator of the symbol (of its function, class or methods; ``@jinja2.environmentfilter`` by its last part)
    taken away or added whose name the node gives, as a name or a word of its text: "`do_groupby()` is an
    environmentfilter", and ``@environmentfilter`` is now ``@pass_environment``; "a dataclass" and ``@dataclass``."""
    then, now = (set().union(*map(decorator_names, ast.walk(tree))) for tree in (old, new))
    gone = sorted(n for n in then - now if n in said.names or n in said.words)
    if gone:
        return f"the decorator {_shown(['@' + n for n in gone])} is gone"
    came = sorted(n for n in now - then if n in said.names or n in said.words)
    if came:
        return f"it is now decorated {_shown(['@' + n for n in came])}"
    return None


def recased(then: set[str], now: set[str]) -> set[str]:
    """The strings of ``then`` and ``now`` that the other side holds in other letter case only (``"etag"`` now
    ``"ETag"``, a header's name in its canonical case) or with another final stop (:func:`same_text`): the
    node that writes "ETag" does not quote a new string; the same text is there."""
    texts_then, texts_now = Counter(same_text(v) for v in then - now), Counter(same_text(v) for v in now - then)
    return {v for v in then - now if texts_now[same_text(v)]} | {v for v in now - then if texts_then[same_text(v)]}


def same_text(value: str) -> str:
    """A string value as a message reads: letter case aside, and a full stop or an exclamation mark at its end
    aside when letters remain ("must be a subclass of FieldABC" now "... FieldABC."). Not a colon: "Failed to
    connect:" now leads to a reason printed after it."""
    folded = value.strip().lower()
    bare = folded.rstrip(".!").rstrip()
    return bare if re.search(r"[a-z]", bare) else folded


def _methods_gained(old: ast.AST, new: ast.AST, said: Said) -> list[tuple[int, int]]:
    """The lines of the methods a class gained whose names the node does not give."""
    if not (isinstance(old, ast.ClassDef) and isinstance(new, ast.ClassDef)):
        return []
    then = method_names(old)
    return [lines_of(s) for s in new.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
            and s.name not in then and s.name not in said.names]


def _snippets_dropped(old_code: str, new_code: str, said: Said) -> list[str]:
    """The code snippets the node gives that the symbol holds fewer times than before, and still holds
    (gone altogether is :func:`_lost`'s): ``denom.append(Pow(b, -ex))`` now ``denom.append(Pow(b, -ex,
    evaluate=False))`` while another statement still holds ``Pow(b, -ex)``. Where the node's code was,
    other code is now, even when it only gained a keyword argument. A snippet is counted where it starts a
    name: ``len(text)`` is not in ``_cell_len(text)``."""
    if not said.snippets:
        return []
    then, now = squeezed(old_code), squeezed(new_code)

    def count(code: str, snippet: str) -> int:
        return len(re.findall(r"(?<!\w)" + re.escape(squeezed(snippet)), code))

    return [s for s in said.snippets if count(then, s) > count(now, s) > 0]


def _function(node: ast.AST | None) -> ast.AST | None:
    """A function itself; a class's ``__init__`` (None when it has none)."""
    if isinstance(node, ast.ClassDef):
        return next((n for n in node.body if isinstance(n, _FUNCTIONS) and n.name == "__init__"), None)
    return node


def _forwarding_dropped(old: ast.AST, new: ast.AST, gone: list[Unit], came: list[Unit], said: Said) -> set[str]:
    """The parameters a call of the changed statements stopped passing on under their own name
    (``naturaldelta(delta, months, minimum_unit, when=when)`` now ``naturaldelta(delta, months, minimum_unit)``,
    the callee having dropped its ``when``), while the symbol still takes them and still reads them itself
    (``now = when or _now()``): what the parameter is to the symbol is kept; where it was handed on to is the
    callee's business, unless the node writes that call with it (``naturaldelta(delta, when=when)``)."""
    out = set()
    for name in _parameter_names(old) & _parameter_names(new):
        handed_then, handed_now = _handed_on(gone, name), _handed_on(came, name)
        if len(handed_then) <= len(handed_now) or _reads(gone, name) != _reads(came, name):
            continue
        if not _reads(body_units(new), name):
            continue
        callees = {c.rsplit(".", 1)[-1] for c in set(handed_then) - set(handed_now) if c}
        if not any(re.search(rf"\b{re.escape(c)}\([^)]*\b{re.escape(name)}\b", said.text) for c in callees):
            out.add(name)
    return out


def _passed_on(units: list[Unit], name: str) -> list[tuple[ast.Call, ast.keyword]]:
    """The calls in ``units`` that pass ``name`` on under its own name (``name=name``), each with that argument."""
    return [(call, k) for u in units for call in u.parts() if isinstance(call, ast.Call)
            for k in call.keywords if k.arg == name and isinstance(k.value, ast.Name) and k.value.id == name]


def _handed_on(units: list[Unit], name: str) -> list[str]:
    """The callees of the calls in ``units`` that pass ``name`` on as ``name=name``, one per such argument."""
    return [dotted(call.func) or "" for call, _ in _passed_on(units, name)]


def _reads(units: list[Unit], name: str) -> int:
    """How often ``units`` read ``name`` other than to pass it on as ``name=name``."""
    passed = {id(k.value) for _, k in _passed_on(units, name)}
    return sum(1 for u in units for n in u.parts()
               if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) and id(n) not in passed)


def _parameter_names(node: ast.AST | None) -> set[str]:
    """A function's parameter names; a class's ``__init__``'s."""
    node = _function(node)
    return {name for _, name, _ in parameters(node)} if node is not None else set()


def _gained_defaults(old: ast.AST, new: ast.AST) -> set[str]:
    """The constant defaults (``True``, ``0``) of the parameters the function (a class's ``__init__``) gained."""
    new = _function(new)
    if not isinstance(new, _FUNCTIONS):
        return set()
    a = new.args
    positional = [*a.posonlyargs, *a.args]
    pairs = list(zip(positional[len(positional) - len(a.defaults):], a.defaults)) + \
        [(arg, d) for arg, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
    gained = _parameter_names(new) - _parameter_names(old)
    return {repr(d.value) for arg, d in pairs if arg.arg in gained and isinstance(d, ast.Constant)
            and not isinstance(d.value, (str, bytes))}


def _bases(tree: ast.AST | None) -> dict[str, set[str]]:
    """The module's classes and the names of their bases (``class _S(responses.StreamingResponse)``:
    ``StreamingResponse``)."""
    if tree is None:
        return {}
    return {c.name: {b.id if isinstance(b, ast.Name) else b.attr for b in map(_unsubscripted, c.bases)
                     if isinstance(b, (ast.Name, ast.Attribute))}
            for c in getattr(tree, "body", []) if isinstance(c, ast.ClassDef)}


def _qualified(unit: Unit, imported: dict[str, tuple[str, ...]]) -> list[str]:
    """The names a unit uses, with the parts of the module each name it uses was imported from."""
    names = unit.identifiers()
    return names + [part for name in names for part in imported.get(name, ())]


def _unsubscripted(base: ast.AST) -> ast.AST:
    """A base class given type arguments (``MultiDict[_V]``, ``Generic[T]``) as the class itself."""
    return base.value if isinstance(base, ast.Subscript) else base


def _module_kept(gone: str, old_code: str, new_code: str, tree: ast.AST | None) -> bool:
    """Whether a module the node names is still what the code uses, through names the file now imports from
    it: ``pprint.pformat(x)`` now ``pformat(x)`` under ``from pprint import pformat`` (each such name spelled
    ``module.name`` before and held now)."""
    taken = [name for name, module in imported_from(tree).items() if ".".join(module) == gone]
    return any(holds(old_code, f"{gone}.{name}") and holds(new_code, name) for name in taken)


def _class_keeps(new: ast.AST, tree: ast.AST | None, gone: str) -> bool:
    """Whether a class still has what the node gives and its code no longer spells so: its header with a base
    now given type arguments (`CIMultiDict(MultiDict)`, now ``class CIMultiDict(MultiDict[_V])``), or a base it
    no longer lists and inherits through one the module defines (`MultiMapping`, of ``MultiDictProxy(_Base,
    MultiMapping)`` now ``MultiDictProxy(_Base[_V])`` with ``class _Base(MultiMapping[_V])``): typing, not a change."""
    if not isinstance(new, ast.ClassDef):
        return False
    names = [dotted(_unsubscripted(b)) or "" for b in new.bases]
    if squeezed(gone) == squeezed(f"{new.name}({','.join(names)})"):
        return True
    bases = _bases(tree)
    seen: set[str] = set()
    todo = [n.rsplit(".", 1)[-1] for n in names]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += bases.get(name, ())
    return gone in seen - {n.rsplit(".", 1)[-1] for n in names}


def _module_names(tree: ast.AST | None) -> set[str]:
    """The names a module defines or imports at its top level."""
    found: set[str] = set()
    for s in getattr(tree, "body", []):
        if isinstance(s, _DEFS):
            found.add(s.name)
        elif isinstance(s, (ast.Assign, ast.AnnAssign)):
            found |= {n.id for t in (s.targets if isinstance(s, ast.Assign) else [s.target]) for n in ast.walk(t)
                      if isinstance(n, ast.Name)}
        elif isinstance(s, (ast.Import, ast.ImportFrom)):
            found |= {(a.asname or a.name).split(".")[0] for a in s.names}
    return found


# a node that counts a function's parameters, or says there are no others: "takes these two keyword-only options
# and nothing else", "accepts three arguments", "no other parameters"
_COUNTS_PARAMETERS = re.compile(
    r"\b(?:takes|accepts|has|exactly|only)\b[^.]{0,60}?\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven"
    r"|twelve|\d+)\s+(?:[\w-]+\s+){0,2}"
    r"(?:parameters?|arguments?|options?)\b|\b(?:parameters?|arguments?|options?)\b[^.]{0,40}?\band\s+nothing\s+else\b"
    r"|\bno\s+other\s+(?:parameters?|arguments?|options?)\b|\bno\s+(?:parameter|argument|option)\s+(?:for|to)\b",
    re.IGNORECASE)


def _parameters_counted(old: ast.AST, new: ast.AST, said: Said) -> str | None:
    """A parameter added to a function whose node counts its parameters ("stores exactly these four options"),
    says it takes no others, or that it has no option for something ("there is no option for the hook's name")
    (an added optional parameter is otherwise only an option: :func:`.code_compare.parameters_kept` lets it by)."""
    if not _COUNTS_PARAMETERS.search(said.text):
        return None
    added = sorted(_parameter_names(new) - _parameter_names(old) - {"self", "cls"})
    if not added:
        return None
    return f"it takes {_shown(added)} now, beside the parameters the node counts"


def _qualifying_parameter(old: ast.AST, new: ast.AST, said: Said) -> str | None:
    """A parameter the symbol gained whose name holds, between underscores, one of its parameters that the
    node names (``force_kw_only`` beside the ``kw_only`` of "define(kw_only=True) makes every attribute
    keyword-only"): a new option that qualifies the very option the node describes, not information
    beside it as another added parameter is."""
    had = _parameter_names(old)
    named = {p for p in had if len(p) >= 3 and said.names_parameter(p, had)}
    for gained in sorted(_parameter_names(new) - had):
        for p in sorted(named):
            if re.search(rf"(?:^|_){re.escape(p)}(?:_|$)", gained):
                return f"parameter `{gained}` added beside `{p}`"
    return None


def _holding(text: str, line: int) -> tuple[str, ast.AST] | None:
    """The innermost function holding a line, with its qualified name (``Client.__init__``); a function defined
    under an ``if``, ``try`` or ``with`` of its module or class (one per Python version) is named as if it were not."""
    tree = parse_python(text)
    found = None
    scopes: list[tuple[str, list[ast.AST]]] = [("", tree.body)] if tree is not None else []
    while scopes:
        prefix, body = scopes.pop()
        for n, _ in branch_statements(body):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    and n.lineno <= line <= (n.end_lineno or n.lineno):
                if not isinstance(n, ast.ClassDef):
                    found = (prefix + n.name, n)
                scopes.append((f"{prefix}{n.name}.", n.body))
    return found


def _holder(text: str, line: int) -> str | None:
    found = _holding(text, line)
    return found[0] if found else None


def _added_parameters(old_text: str, new_text: str, old_line: int, new_line: int) -> set[str]:
    """The parameters that the function holding a span's first statement gained (the same function, by
    name, before and after)."""
    old, new = _holding(old_text, old_line), _holding(new_text, new_line)
    if old is None or new is None or old[0] != new[0]:
        return set()
    return _parameter_names(new[1]) - _parameter_names(old[1])


_PLAIN_VALUES = frozenset({"None", "True", "False", "Ellipsis"})


def _restructured(old: ast.AST, new: ast.AST, gone: list[Unit], came: list[Unit]) -> bool:
    """Whether the changed statements are the same code rearranged: a loop into a comprehension, an
    ``if header:`` block into an early ``return {}``, a recursive inner helper into a loop over an explicit
    stack. They use the same names, the symbol's own aside (:func:`_own`: its variables, ``ldict``,
    ``key``, bound in it before or after; its inner helpers and their parameters; the methods of its own
    lists, sets and dicts, ``stack.pop()``), the same string values and the same values other than None,
    True and False, and as many loops (a comprehension's included: a ``while True`` added around a pop
    is not a rearrangement)."""
    if _loops(gone) != _loops(came):
        return False
    own = _own(old) | _own(new)
    own -= _parameter_names(old) | _parameter_names(new)  # a parameter rebound is still its caller's
    if {i for u in gone for i in u.identifiers()} - own != {i for u in came for i in u.identifiers()} - own:
        return False
    if Counter(s for u in gone for s in u.strings) != Counter(s for u in came for s in u.strings):
        return False
    return {v for u in gone for v in u.constants()} - _PLAIN_VALUES == {v for u in came for v in u.constants()} - _PLAIN_VALUES


_CONTAINERS = (ast.List, ast.Set, ast.Dict, ast.Tuple, ast.ListComp, ast.SetComp, ast.DictComp)


def _own(node: ast.AST) -> set[str]:
    """The names a function keeps to itself: the variables it binds (:func:`bound_names`), the functions and
    classes defined inside it and their parameters, and the methods it calls on a variable it made a
    list, a set or a dict (``stack = [expr]``, ``stack.pop()``): how it does its work, not what it uses."""
    found = bound_names(node)
    for n in ast.walk(node):
        if n is not node and isinstance(n, _DEFS):
            found.add(n.name)
            found |= _parameter_names(n) if not isinstance(n, ast.ClassDef) else set()
    made = {t.id for n in ast.walk(node) if isinstance(n, ast.Assign) and _container(n.value)
            for t in n.targets if isinstance(t, ast.Name)}
    found |= {n.func.attr for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
              and isinstance(n.func.value, ast.Name) and n.func.value.id in made}
    return found


def _container(value: ast.AST) -> bool:
    """A list, a set, a dict or a tuple made there: ``[x]``, ``{}``, ``set()``, a comprehension."""
    return isinstance(value, _CONTAINERS) or isinstance(value, ast.Call) and isinstance(value.func, ast.Name) \
        and value.func.id in ("list", "set", "dict") and not value.args


def _loops(found: list[Unit]) -> int:
    """The loops the statements hold: ``for`` and ``while`` statements, and each comprehension's ``for``."""
    count = 0
    for u in found:
        if isinstance(u.node, (ast.For, ast.AsyncFor, ast.While)):
            count += 1
        own = [c for f, c in ast.iter_fields(u.node) if f not in ("body", "orelse", "finalbody", "handlers", "cases")] \
            if u.node is not None else []
        for part in own:
            for child in part if isinstance(part, list) else [part]:
                if isinstance(child, ast.AST):
                    count += sum(len(n.generators) for n in ast.walk(child)
                                 if isinstance(n, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)))
    return count


def _methods_named(old: ast.AST, new: ast.AST, said: Said, skip: set[str] = frozenset()) -> str | None:
    """A class that gained or lost a method whose name, underscores aside, is a word of the node's text
    (``__reduce__`` added to a class the node says "reduce" keeps one argument of), or the special method
    behind an operation the node writes as code (:mod:`.protocols`: ``__contains__`` for ``x in missing``):
    what the node says about that behaviour may no longer hold. A special method given by assignment
    (``__call__ = __contains__ = _fail``) is a method."""
    if not (isinstance(old, ast.ClassDef) and isinstance(new, ast.ClassDef)):
        return None

    def methods(node: ast.ClassDef) -> set[str]:
        found = method_names(node)
        for s in node.body:
            if isinstance(s, ast.Assign):
                found |= {t.id for t in s.targets if isinstance(t, ast.Name) and _special(t.id)}
        return found

    words = {w.lower() for w in said.words} | {m.strip("_") for m in operations(said.text)}
    before, after = methods(old), methods(new)
    had, has = _members(old), _members(new)
    kept = had & has
    for name, verb in [*((n, "added") for n in sorted(after - before - had)),
                       *((n, "removed") for n in sorted(before - after - has))]:
        if name.strip("_").lower() in words and name.strip("_") not in kept and name not in skip:
            return f"method `{name}` {verb}"
    return None


def _special(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _members(node: ast.ClassDef) -> set[str]:
    """The names a class holds: its methods, what its body assigns and the attributes its methods set on
    ``self``. A method added under a name the class held already (``self.frame = f`` made a ``frame``
    property) is that member in another form, and one named as a member it keeps, underscores aside
    (``_form_eoms`` added beside ``form_eoms``), is not the behaviour the node's word names."""
    found = {s.name for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    for s in node.body:
        if isinstance(s, (ast.Assign, ast.AnnAssign)):
            found |= {t.id for t in (s.targets if isinstance(s, ast.Assign) else [s.target]) if isinstance(t, ast.Name)}
    found |= self_attributes(node)
    return found


def _newly_guarded(old: ast.AST, new: ast.AST, said: Said) -> str | None:
    """A code snippet the node gives (``[content]``) that the symbol held and holds now, but only under
    more conditions than before (``return [content]`` now ``return [content] if content else []``, or
    moved into an ``if``): the node describes it as what happens, and now it happens only sometimes.
    Fewer conditions (an early return for a nested ``if``) are not flagged."""
    for snippet in said.snippets:
        then = _guards(old, squeezed(snippet))
        if then is None:
            continue
        now = _guards(new, squeezed(snippet))
        if now is not None and now > then:
            return snippet
    return None


def _call_newly_guarded(old: ast.AST, new: ast.AST, said: Said, own: set[str]) -> str | None:
    """A function the node names as a call it makes (`os.path.realpath`) that the symbol calls as often as
    before, one of those calls now under more conditions and none under fewer (``full_path =
    os.path.realpath(p)`` now the ``else`` of a new ``if self.follow_symlink:``): what the node says happens
    now happens only sometimes. A condition on the object called alone (``if chardet is not None:`` around
    ``chardet.detect(body)``, a fallback beside it) asks whether the call can be made, and is not counted; nor
    is the symbol calling itself (``own``: its recursion, now behind a type check, is how it does what it does).
    The conditions it was under must all still be there: a test replaced by others (``isinstance(exc, BaseException)``
    now ``exc_type is not None and exc is not None``) is the same call asked another way, not one more condition."""
    for name in sorted(said.names - own):
        old_calls, new_calls = _call_depths(old, name), _call_depths(new, name)
        then, now = sorted(d for d, _ in old_calls), sorted(d for d, _ in new_calls)
        if then and len(then) == len(now) and all(b >= a for a, b in zip(then, now)) and then != now \
                and set().union(*(t for _, t in old_calls)) <= set().union(*(t for _, t in new_calls)):
            return name
    return None


def _call_depths(tree: ast.AST, name: str) -> list[tuple[int, frozenset[str]]]:
    """For each call of ``name`` (``name(...)``, ``x.name(...)``) in ``tree``, the conditions around it, counted
    as :func:`_guards` counts them, each operand of an ``and`` as one (``if not alt and is_terminal`` that gains
    ``and last_height`` puts the call under one more), but for those on the object called alone (``if chardet
    is not None:`` around ``chardet.detect(...)``; ``if self.console.is_terminal:`` around
    ``self.console.line()`` is on what the object is, and counts); with the counted conditions, as code."""
    found: list[tuple[int, frozenset[str]]] = []

    def on_object(test: ast.AST, called: str) -> bool:
        read = names_read(test)
        return bool(read) and all(called == r or called.startswith(r + ".") for r in read)

    def conjuncts(test: ast.AST) -> list[ast.AST]:
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            return [c for v in test.values for c in conjuncts(v)]
        return [test]

    def visit(node: ast.AST, tests: tuple[ast.AST, ...]) -> None:
        if isinstance(node, ast.Call) and (getattr(node.func, "id", None) == name or getattr(node.func, "attr", None) == name):
            called = dotted(node.func.value) if isinstance(node.func, ast.Attribute) else dotted(node.func)
            counted = [c for t in tests for c in conjuncts(t) if not on_object(c, called or "")]
            found.append((len(counted), frozenset(ast.unparse(c) for c in counted)))
        for field, value in ast.iter_fields(node):
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.AST):
                    test = _guard(node, field, value, child)
                    visit(child, tests + (test,) if test is not None else tests)

    visit(tree, ())
    return found


def _guard(node: ast.AST, field: str, value, child: ast.AST) -> ast.AST | None:
    """The condition under which ``child`` (of ``node``'s ``field``, whose value is ``value``) runs beyond
    ``node`` itself: an ``if``'s, a conditional expression's or a ``while``'s test for its branches (but an
    ``elif``: a chain is one condition), an ``and``/``or``'s first operand for the later ones. None when it
    runs whenever ``node`` does."""
    if isinstance(node, (ast.If, ast.IfExp, ast.While)) and field in ("body", "orelse"):
        elif_ = isinstance(node, ast.If) and field == "orelse" and len(value) == 1 and isinstance(child, ast.If)
        return None if elif_ else node.test
    if isinstance(node, ast.BoolOp) and child is not node.values[0]:
        return node.values[0]
    return None


def _guards(tree: ast.AST, want: str) -> int | None:
    """The fewest conditions (an ``if``'s or a conditional expression's branches, a ``while`` body, an
    ``and``/``or`` operand after the first) around a smallest piece of ``tree`` whose code holds
    ``want`` (whitespace aside); None when none does. Docstrings aside. An ``if``/``elif`` chain is one
    condition: a case put in front of it (``if type(v) in _ATOMIC_TYPES:`` before ``elif has(...)``)
    does not put its other cases under more."""
    best: int | None = None

    def visit(node: ast.AST, depth: int) -> bool:
        nonlocal best
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return False
        try:
            if want not in squeezed(ast.unparse(node)):
                return False
        except (ValueError, TypeError, AttributeError, RecursionError):
            return False
        inner = False
        for name, value in ast.iter_fields(node):
            for child in value if isinstance(value, list) else [value]:
                if not isinstance(child, ast.AST):
                    continue
                inner = visit(child, depth + (_guard(node, name, value, child) is not None)) or inner
        if not inner:
            best = depth if best is None else min(best, depth)
        return True

    visit(tree, 0)
    return best


def _lost(before_code: str, now_code: str, said: Said) -> list[str]:
    """The names and the code snippets the node gives that ``before_code`` held and ``now_code`` does not,
    and the signatures it writes that a ``def`` there agreed with and agrees with no more
    (:func:`signatures_lost`)."""
    gone = [n for n in sorted(said.names) if holds(before_code, n) and not holds(now_code, n)]
    if said.snippets or said.calls:
        old, new = squeezed(before_code), squeezed(now_code)
        # a snippet the code held only as a ``def``'s header, and that a ``def`` still agrees with, is that
        # signature kept (annotations added, ``residue(expr, x, x0)`` now ``residue(expr: Expr, x, x0)``)
        gone += [s for s in said.snippets if squeezed(s) in old and squeezed(s) not in new
                 and (_called_in(before_code, s) or not signature_kept(before_code, now_code, s))
                 and not _held_as_formatted(s, now_code)]
        gone += [s for s in said.calls if _called_in(before_code, s) and not _called_in(now_code, s)]
        gone += [s for s in signatures_lost(before_code, now_code, said.calls + said.snippets) if s not in gone]
    return gone


def _called_in(code: str, call: str) -> bool:
    """Whether the code holds this prose call as a call (whitespace aside), not as the ``def`` of a
    function with those parameters."""
    tokens = re.findall(r"\w+|\S", call.replace("'", '"'))
    pattern = re.compile(r"(?<![\w.])" + r"\s*".join(re.escape(t) for t in tokens))
    for m in pattern.finditer(code.replace("'", '"')):
        if not re.search(r"\bdef\s+$", code[max(0, m.start() - 12):m.start()]):
            return True
    return False


def _held_as_formatted(snippet: str, code: str) -> bool:
    """Whether the code holds the snippet once both are written as Python writes them back (``ast.unparse``):
    a formatter's parentheses around a long value in place of a backslash continuation, or other quotes, are
    the same code (jsonschema's ``non_prefixed_items = instance[len(schema["prefixItems"]):]``, then wrapped)."""
    def unparsed(text: str) -> str | None:
        tree = parse_as_written(textwrap.dedent(text))  # kept for the last texts: the code is parsed once
        return squeezed(ast.unparse(tree)) if tree is not None else None

    written, held = unparsed(snippet), unparsed(code)
    return written is not None and held is not None and written in held


def squeezed(code: str) -> str:
    return re.sub(r"\s+", "", code).replace("'", '"')


def _segment(text: str, node: ast.AST) -> str:
    start, end = lines_of(node)
    return "\n".join(text.splitlines()[start - 1:end])


def _judged(old: ast.AST, before: str, now: str, symbol: str, path: str, said: Said) -> str | None:
    """:func:`symbol_change`, and for a node that describes a defect, a change that may fix it
    (:func:`.defects.fix_added`), with the functions of the module it now hands its work to (:func:`delegated`)."""
    why = symbol_change(old, before, now, symbol, path, said)
    if why is None and describes_defect(said):
        why = _fix(old, before, now, symbol, said)
    return why


def _fix(old: ast.AST, before: str, now: str, symbol: str, said: Said) -> str | None:
    """:func:`.defects.fix_added` of ``symbol`` from ``before`` (where it was ``old``) to ``now``."""
    tree = parse_python(now)
    new = find_symbol(tree, symbol, said.about_overloads) if tree is not None else None
    helpers = tuple(h.name for h in delegated(old, new, parse_python(before), tree)) if new is not None else ()
    return fix_added(old, now, symbol, said, helpers, parse_python(before))


def _fixed_on_the_way(h: History, later: Later, old: ast.AST, before: str, now: str, symbol: str,
                      said: Said) -> tuple[str, str] | None:
    """For a node that describes a defect, a fix added by one later commit to the version before it, when
    the code was first rewritten in a way that keeps what the node says (a loop made one call that scans the
    same characters) and fixed after (a test widened by a clause): compared with the node's own code, the
    rewrite took calls and tests away, so :func:`.defects.fix_added` of the whole range sees none. The
    reason and the commit; None when no step adds a fix."""
    then, then_text = old, before
    for commit in later.commits[:WALK_MAX]:
        text = h.content(commit.sha, commit.path)
        if text is None:
            return None
        why = _fix(then, then_text, text, symbol, said)
        if why:
            return why, commit.label()
        tree = parse_python(text)
        then = find_symbol(tree, symbol, said.about_overloads) if tree is not None else None
        if then is None:
            return None
        then_text = text
    # uncommitted edits after the last commit walked (with none walked, _judged compared these two already)
    why = _fix(then, then_text, now, symbol, said) if then is not old and then_text != now else None
    return (why, "uncommitted") if why else None


def judge_symbol(h: History, ref: str, path: str, later: Later, before: str, old: ast.AST, now: str,
                  symbol: str, said: Said, explain: bool) -> Finding:
    why = _judged(old, before, now, symbol, path, said)
    caller = _caller_dropped(before, now, symbol, said) if why is None else None
    if caller:
        when = first_without(h, later, lambda t: _caller_dropped(before, t, symbol, said) is None)
        return Finding(ref, True, f"{caller} in {path} ({when})", later.text(explain))
    inherited = _inherited_named(before, now, symbol, said) if why is None else None
    if inherited:
        when = first_without(h, later, lambda t: _inherited_named(before, t, symbol, said) is None)
        return Finding(ref, True, f"`{symbol}` of {path} changed: {inherited} ({when})", later.text(explain))
    if why is None:
        defect = describes_defect(said)
        changed = (defect or explain) and dump(old, True) != dump(_symbol_in(now, symbol) or old, True)
        fixed = _fixed_on_the_way(h, later, old, before, now, symbol, said) if defect and changed else None
        if fixed:
            return Finding(ref, True, f"`{symbol}` of {path} changed: {fixed[0]} ({fixed[1]})", later.text(explain))
        info = later.text(explain)
        if explain and changed:
            info = f"`{symbol}` changed but keeps its parameters and the names the node gives" + (f"; {info}" if info else "")
        return Finding(ref, False, None, info)
    if why == "gone":
        when = first_without(h, later, lambda t: _symbol_in(t, symbol) is not None)
        return Finding(ref, True, f"`{symbol}` is gone from {path} ({when})", later.text(explain))
    when = first_without(h, later, lambda t: _judged(old, before, t, symbol, path, said) is None)
    return Finding(ref, True, f"`{symbol}` of {path} changed: {why} ({when})", later.text(explain))


def _inherited_named(before: str, now: str, symbol: str, said: Said) -> str | None:
    """A class whose base, a class of the same file, gained or lost a method the node names (a word of its
    text, or the special method behind an operation it writes: :func:`_methods_named`) that the class does
    not define itself: what its instances do is what they inherit (jinja's ``ChainableUndefined``, whose
    ``async for`` the node says fails, and ``Undefined`` gains ``__aiter__``)."""
    then_tree, now_tree = parse_python(before), parse_python(now)
    if then_tree is None or now_tree is None:
        return None
    then, cls = find_symbol(then_tree, symbol), find_symbol(now_tree, symbol)
    if not (isinstance(then, ast.ClassDef) and isinstance(cls, ast.ClassDef)):
        return None
    own = _members(then) | _members(cls)
    owner = symbol.rsplit(".", 1)[0] + "." if "." in symbol else ""
    for base in cls.bases:
        if not isinstance(base, ast.Name) or base.id == cls.name:
            continue
        old, new = find_symbol(then_tree, owner + base.id), find_symbol(now_tree, owner + base.id)
        why = _methods_named(old, new, said, skip=own) if old is not None and new is not None else None
        if why:
            return f"its base `{base.id}`: {why}"
    return None


def _caller_dropped(before: str, now: str, symbol: str, said: Said) -> str | None:
    """A function of the file that the node names (``send()``, a method of the same class first), which
    called the referenced ``#symbol`` when the node was written and calls it no more (``send()`` now
    calls a new ``_get_connection``), or calls it without testing a name the node gives that every call
    of it was under (``if Preview.remove_redundant_parens in self.mode:`` taken away from around the
    call): what the node says of the symbol's part in it may no longer hold."""
    name = symbol.split(".")[-1]
    if not said.names or name not in before:
        return None
    owner = symbol.rsplit(".", 1)[0] + "." if "." in symbol else ""
    for caller in sorted(said.names - set(symbol.split("."))):
        if not holds(before, caller):
            continue
        then = _symbol_in(before, owner + caller) if owner else None
        qualified = then is not None
        then = then if qualified else _symbol_in(before, caller)
        if then is None or not isinstance(then, (ast.FunctionDef, ast.AsyncFunctionDef)) or not _calls(then, name):
            continue
        found = _symbol_in(now, owner + caller if qualified else caller)
        if found is None:
            continue
        if not _calls(found, name) and not _hands_on(found, name):
            return f"`{caller}` no longer calls `{name}`"
        untested = sorted(call_guards(then, name) & said.names - call_guards(found, name))
        if untested:
            return f"`{caller}` calls `{name}` without testing {_shown(untested)} now"
    return None


def _calls(node: ast.AST, name: str) -> bool:
    """Whether the code calls ``name`` (``name(...)``, ``x.name(...)``)."""
    return any(calls_name(n, name) for n in ast.walk(node))


def _hands_on(node: ast.AST, name: str) -> bool:
    """Whether the code passes the function ``name`` to a call, to be called there (``self._parse_nested(
    self._parse_array)``, a depth limit wrapped around the call it made)."""
    return any(isinstance(a, ast.Name) and a.id == name or isinstance(a, ast.Attribute) and a.attr == name
               for n in ast.walk(node) if isinstance(n, ast.Call) for a in [*n.args, *(k.value for k in n.keywords)])


def _symbol_in(text: str, symbol: str) -> ast.AST | None:
    tree = parse_python(text)
    return find_symbol(tree, symbol) if tree is not None else None
