"""Staleness that means "what the node says may no longer hold" (issues 29 and 38): has the code a
node talks about moved on since the node was written or reviewed? Decided from git history and the
working tree, never from file times.

**What the node saw.** When a node is captured, when its title, content or references change, and
when a person marks it reviewed (``autology analyze --mark-reviewed ID``), its frontmatter records a
fingerprint of the code it is written against (``code_seen``: each referenced file's git blob id,
the blob written to git's object store, the names the node gives and the strings and numbers it
states that each file held, what of the code it imports from other modules of the project was
deprecated there, for a folder which of the names it gives a file under it marked deprecated, and
the hash of the title, content and references it was taken for).
Relating, tagging or a status change keep it. A node's **base** is the commit that last changed
its own file (for a node file with uncommitted edits, or never committed, the commit HEAD's history
was at at its ``modified`` time). Each file reference is judged from the code at the base, unless
the fingerprint says the node saw other code there (a relate or a tag committed later, the node's
commit rebased or squash-merged onto newer code): then from the code it recorded, with the later
commits those after the last commit of HEAD's history that held it ("since the node was written"
when none did); when this clone does not have that code (a squashed branch's own version), a name
or a value it held that the file holds no more is stale. A fingerprint taken for other text (the
node edited by hand) is void: the base's code is what the node was written against. A folder has
no blob: the names its files held, and the files under it the node names, are what it recorded. Nodes
written before issue 38 have no
fingerprint, and their base moves with any commit of their file, until ``autology analyze
--record-fingerprints`` records the code at their base (:func:`missing_fingerprints`, ``fingerprint``
with ``rev``).

Code is compared with formatting, comments and whitespace aside
(:mod:`autology_mcp.knowledge.trust.code_compare`: Python by its statements, with what only a type
checker reads left out, so a typing-only rewrite is no change; other languages by their lines with
whitespace collapsed). Against the code now (the working tree: uncommitted edits count):

- ``path#L10-40``: the span is followed through the later commits (code added above it moves it, a
  reflow or a moved comment does not change it) and through renames; the code the node saw is judged
  against the code now (the commits between only name the change: a walk of a merged history can
  put a branch's older state after a newer one). A change only in string values the node does not
  quote (a version string, a message) is not one, unless it takes away a string the node quotes or a
  number it states, or changes a string of which the node gives a piece as code (``[a-z0-9.-]``, a
  regular expression's character class: :meth:`Said.gives_from`). A change of its code is judged as a symbol's
  (:func:`span_rewrite`; a bare annotation in a class that declares an attribute its methods set, ``sleep:
  Callable[...]`` beside ``self.sleep = sleep``, is not code; statements added right after or before the span,
  beside its own and no deeper, are not its code: a new ``add_argument(...)`` after the option the node
  describes, :func:`.code_compare.span_region`; new definitions put among its statements, of names the node
  does not mention, when the node neither counts what the span holds nor says it is all there is: two
  signals added between the four it describes, :func:`.symbol_rules._others_added`): stale when a
  function or class defined in it, or a name or snippet the node gives, is gone from the lines that
  took its place, a string it quotes or a
  number it states is gone, the changed statements differ in a name or word the node gives, in a
  string value it quotes, or lost a number (``2 ** attempt`` now ``3 ** attempt``; not the numbers of a release
  number, ``version_info = (19, 7, 1)`` bumped, which is a version as a version string is, unless the node
  states them) or a value the node gives as code; a rewrite that touches none of it (a generator into ``if``s) is information; the
  span's statements found again elsewhere in the function that held them (also when that function is now
  defined once per Python version under an ``if``), the same code with its
  variables perhaps renamed (a block moved up a split method), are followed there, and so are they in a function
  it now calls, rewritten there in a way that touches nothing the node says (``host = idna.encode(...)`` now
  ``return idna.encode(...)`` in a new ``_idna_encode(host)``) (:func:`_moved_span`). A line of another
  language is judged by the strings it quotes too (``"click"`` now ``"click>8"`` in a TOML list, under a node
  that says `click` is required without a version); in a packaging file (``setup.py``, ``setup.cfg``,
  ``pyproject.toml``, a requirements file), a package the node names that the span required and requires no more
  is a flag (``"watchgod>=0.6"`` now ``"watchfiles>=0.13"`` under "watchgod comes with [standard]":
  :mod:`.requirements`). A name the node says the code has not (:mod:`.denials`)
  that the function holding the span now has, in the span or below it, is a flag ("there is no
  `DashDocSetPlayURL`", and the key is written two lines after the span: :func:`.symbol_rules.holder_denied`). A word
  of the node's text (not a name it gives) counts unless the code uses it throughout, in three
  statements or more, before and after (``session.trust_env = False`` added to code that sets up
  ``session`` line after line is not a new use of "session"), or the changed statements use it as
  often before as after, as a name or a part of one (:meth:`Said.words_kept`).
- ``path#symbol`` (Python; found under an ``if``, ``try`` or ``with`` of its module or class as well: of a name
  defined in several branches, every definition but a stub for another platform (a function per Python version is
  both; a class per platform beside a stub is the class), and one definition now one per condition is a flag; a
  property's getter and
  setter together, its ``@overload`` stubs aside unless the node
  speaks of overloads): stale when it is gone; when an
  existing parameter is removed, renamed, reordered or its default changed, or a parameter is gained
  whose name holds one the node names between underscores (``force_kw_only`` beside the ``kw_only`` of
  "define(kw_only=True) makes every attribute keyword-only"); when a decorator whose name the node gives,
  as a name or a word of its text, is taken away or added ("`do_groupby()` is an environmentfilter", and
  ``@environmentfilter`` is now ``@pass_environment``); when a name or a code
  snippet the node gives, that the symbol held, is gone from it (its docstrings aside: a name only
  their prose gave, "resolves to True", is not the code's); when a string it quotes or a number
  it states is gone from it, or from the statements that changed (a bound raised in one statement
  while another still holds the number; what a function of the module it now calls in their place holds is
  still its code: the ``'ascii'`` of ``idna.decode(raw.encode('ascii'))`` moved into a cached helper, and the
  default of a parameter it gained, ``requote=True``, is the new option's, not a value the node gives
  changed); when its changed statements differ in the names they use by
  one the node gives (or a word of its title, of any length, compared folded: ``SHA-1`` as ``sha1``,
  ``If-Range`` as ``IfRange``, :meth:`Said.title_terms`; or a word of its text of five letters or more,
  unless it is a parameter the
  function gained, or the changed statements use it as often before as after, as a name or a part
  of one: ``self.raw.co_filename`` read into a new variable ``filename``; a statement the symbol held
  before and still holds, a loop's header repeated for a second pass, is no new use; nor are the
  statements of a helper of the module it called and calls no more, moved into it, ``gen_salt``'s check now
  in the function that called it, nor, the other way, the names and strings of statements moved into a
  function of the module it now calls in their place, ``_determine_setters()`` returning the setters the
  symbol chose itself), take away or
  newly use a string the node quotes (not one only in other letter case, ``"etag"`` now ``"ETag"``;
  unless they are the same code rearranged: :func:`_restructured`;
  the strings it quotes kept with others added beside them, a field's name added to ``__slots__``, is
  information; a string built with fields, ``f"(assert (implies d{enc} {pred}))"``, the node quotes with
  a word in each field, ``(assert (implies dN pred))``: :meth:`Said.quotes_built`), or a value it gives
  as code (``returns None``); when a code snippet the node gives is held fewer times than before, and
  still held (``Pow(b, -ex)`` one of whose two statements now passes ``evaluate=False``); when a signature
  the node writes
  (``write(self, /, b: bytes)``) that a ``def`` of the code agreed with agrees no more: a parameter it
  lists gone, moved, of another kind (made positional-only, keyword-only), or with another annotation
  or default than it gives (:mod:`.signatures`; for any reference, as a snippet is; a snippet the code
  held only as a ``def``'s header that a ``def`` still agrees with, ``residue(expr, x, x0)`` annotated, is
  kept); or when more than half of its statements changed into other names or values (the same code
  rearranged, a loop into a comprehension or a recursive inner helper into a loop over its own stack, is
  not a rewrite: the function's own variables, inner helpers and the methods of its own lists, sets and
  dicts aside; docstrings are not statements, and a statement put under a new
  ``if`` is not rewritten); when a code snippet the node gives is now under more conditions
  (``return [content]`` now ``return [content] if content else []``; an ``if``/``elif`` chain is one
  condition, so a case put in front of it is not one more; a test replaced by others,
  ``isinstance(exc, BaseException)`` now ``exc_type is not None and exc is not None``, is not one more); when a function of the file
  that the node names called the symbol and calls it no more (:func:`_caller_dropped`: "``send()``
  calls it for every request", and ``send()`` now calls a new method), or calls it without a test the
  node names that was around every call ("calls it when ``Preview.x`` is on", the ``if`` taken away);
  when a name the node says it has not (``denials``: "a ``match`` statement is not among them"; a
  negation inside a message the node quotes is not the node's) is in it now; when the node speaks of a
  false value that is not None (zero, empty: "a zero-length response logs '-', not 0") and a value the
  symbol (or a span's changed statements) tested for its truth is now tested against None, or the other
  way (``getattr(resp, 'sent', None) and ...`` now ``... is not None and ...``: :func:`.narrowing.none_told_apart`); when its
  code is the same and a string the node quotes or a number it states, held by a module constant it uses,
  is gone from that constant (``JSON_ACCEPT`` given a weight, under a node that gives the ``Accept`` header
  ``make_default_headers`` sends); or when a class gained or lost
  a method whose name, underscores aside, is a word
  of the node's text (``__reduce__`` added to a class the node says "reduce" loses an argument of; not a
  member it held in another form, ``self.frame`` made a ``frame`` property, nor one beside a member of
  that very name it keeps, ``_form_eoms`` beside ``form_eoms``), or the special method behind an
  operation the node writes as code, given by a ``def`` or by assignment (:mod:`.protocols`:
  ``__call__ = __contains__ = _fail`` under a node that says "`x in missing` is False"; the ``in`` of a
  loop is its iteration); or when such a method is gained or lost by a base of the class that is a class
  of the same file and the class does not define it itself (:func:`.symbol_rules._inherited_named`:
  ``Undefined`` gains ``__aiter__``, and ``ChainableUndefined``'s ``async for`` works); or, for a node that describes a defect
  or a limitation (an ``issue`` node, or one whose title says the code "cannot"), when the symbol now
  calls a function it did not call, or tests a condition it did not test, and still calls and tests all
  it did (:mod:`.defects`: the fix that adds a check, a call or a method, taking away nothing). An
  added parameter, an option passed through a call (a keyword argument added) and statements that
  touch nothing the node says are information; so is the code an added parameter the node does not name
  guards, read at its default (:mod:`.defaults`: ``if strip_trailing_zero:`` around the stripping the node
  describes, ``strip_trailing_zero=True``, is the stripping; ``if installed and ...`` with ``installed=None``
  never runs), and so is a name now imported from the module the code wrote it
  with (``Font(bold=True)`` after ``from openpyxl.styles import Font``, for ``openpyxl.styles.Font(bold=True)``),
  and a module the node names, used now through the names imported from it (``pformat`` for ``pprint.pformat``),
  and a snippet the node gives, held once both are written back by ``ast.unparse`` (a formatter's parentheses),
  and so are typing's renames: a sentinel default renamed and
  tested by identity as before (``default=_marker`` now ``default: ... = sentinel``), a base given type arguments
  (``CIMultiDict(MultiDict)`` now ``CIMultiDict(MultiDict[_V])``), a base the class no longer lists and inherits
  through a base the module defines (``MultiDictProxy(_Base, MultiMapping)`` now ``MultiDictProxy(_Base[_V])``,
  ``_Base`` now a ``MultiMapping``); and so are a method the class gained that the node does
  not name (what it uses and the values it holds are its own, but for a word of the title: ``from_header``
  gained by the ``IfRange`` of "a weak ETag is kept", which now tests ``weak``, is a flag), an exception or
  a function the node writes called with a message (``ValueError("Invalid compression format: '...'")``)
  that the changed statements call only with other messages (another ``raise``, made a ``TypeError``), a word of the node's text that is only a variable of the
  function's own, renamed (``innermost`` now ``res``), a keyword the function read from its
  ``**kwargs`` by name made a parameter of its own (``attrs.pop("cls")`` into ``cls=None``: a name the
  node gives, the callers' same keyword), a parameter removed and read as another's attribute of the
  same name (``preview`` as ``mode.preview``) that the node does not name, statements moved into a
  function it now calls in their place, a helper it defined inside it and now calls from the module
  (:func:`delegated`: an inner ``is_type_call`` moved out is still its code), a parameter the node names
  only as an argument of its call
  of the symbol (``_HookCaller._add_hookimpl(hookimpl)`` too) or a word only as a name's qualifier (``Preview.``)
  used by a new statement, a name it writes only as ``*args`` or ``**kwargs`` (a catch-all parameter, not a
  variable of that name), ``self`` where the changed statements only reach its attributes, and the
  same behaviour written another way: an
  import moved into the function or out of it, a string built another way with the same text (an
  f-string for ``"...{!r}".format(x)``, ``"{name!r}".format(name=a.name)`` or ``"%r" % x``), a name renamed
  throughout that the node neither gives nor titles (a variable of the symbol's own, or a function, class
  or constant the module defines the same way before and after: ``_init_converter_pat`` now
  ``_INIT_CONVERTER_PAT``, :mod:`.renames`; or a module imported under another name, which a node that names the
  module may name: ``metadata`` now ``importlib_metadata``, both ``importlib.metadata``), a class turned into a dataclass declaring the
  fields its ``__init__`` stored (or back), and a linter's equivalent rewrites (:mod:`equivalents`:
  ``assert False, m`` as ``raise AssertionError(m)``, ``not (a is b)`` as ``a is not b``, ``if not x: A
  else: B`` as ``if x: B else: A``, a mutable
  default moved into the body as ``x or {}``, a string newly marked for translation, ``_("text")``,
  unless the node speaks of translation; an exception passed alone where its type came before it,
  ``format_exception_only(type(e), e)`` as ``format_exception_only(e)``; a function that collected a
  list and returned it made a generator that yields the same values, ``out.extend(x)`` as ``yield from
  x``; and the safe fixes ruff makes on its own, :mod:`.autofixes`: ``class A(object)``, ``super(A, self)``,
  ``IOError``, ``open(p, "r")``, ``dict()``, ``set([a])``, ``list(x for x in y)``, ``sorted(list(x))``,
  ``str("")``, ``k in d.keys()``, ``not a == b``, an import's names reordered, an ``if`` or a ``with``
  holding only another, a variable returned right after it is set, ``raise Error()``), and the checks a
  type checker asks for, unless the node speaks of None or names what a guard raises (:mod:`.narrowing`: ``if x is None: raise ...``,
  ``assert x is not None``, ``"<unknown>" if fn is None else name(fn)`` read as ``name(fn)``, a local
  bound once to an attribute chain read as the chain), Python 2's support dropped (:mod:`.python2`: six's names
  read as Python 3's, ``text_type.split(self)`` as ``super().split()``), an import of the file's own package
  written relative (:mod:`.package_imports`), code after a ``return``, a lambda bound to a name made a ``def``,
  ``__slots__`` listing the attributes the class sets, and a last ``return None``. A parameter added is a flag
  when the node counts the parameters ("takes these two options and nothing else", "exactly these four options")
  or says there is no option for something (also in a ``def`` header inside ``#L`` lines); a ``raise`` that gains
  or loses its ``from`` is a flag when the node speaks of chaining (``__cause__``, ``__context__``). A value of ``#L`` lines taken out into a new module constant
  (``extras_require=EXTRAS_REQUIRE``) is still theirs. In other languages the name must still be there.
- ``path`` (a file) or a folder: stale when an import the node writes (``from pkg.plugins import
  plugin_manager``), of a module that is the file or is under the folder, names what the module bound at
  the base and binds no more (no module ``__getattr__`` or star import now: :func:`.modules.imports_gone`;
  the registry moved to ``registry.py``, where the folder still holds the name); when a name, path,
  identifier or code snippet the node's
  text gives (:func:`mentions`, in backticks, one character or more (`q`, `*`), shaped like one, called ``retry()``, dotted
  ``app.retry``), or a call it writes in prose with its arguments (``self.get_connection(request.url,
  proxies)``, held as a call, not a ``def``), which the referenced code held at the base, is gone from
  it now (comments aside; a code snippet is code in backticks, a clause too: ``except OSError: pass``);
  for a folder, when a code snippet the node gives that a file under it held at the base is in none of
  them now (:func:`held_snippets`), when a file under it that the node names (by its path, or
  by its bare name, ``main.py`` in backticks or a source file's name in prose: :mod:`folder_files`) and the folder held is deleted or renamed,
  or when a source file is added to it and the node says it holds one module ("a single-module package") or
  gives the number of its modules, or of its public modules, right at the base ("made of five modules", "six
  public modules, private platform helpers": a private helper added is not one);
  or, for a file, when more than half of the code the node saw is gone (a statement moved into a new
  block is kept) and no name it gives plainly is still in it, or when the node gives every line of a
  small file in backticks ("MANIFEST.in has two lines: `include LICENSE` and ...") and the file gained a
  line (:func:`lines_added`), or when a name the node says the file has not ("there is no `dump()`": :mod:`.denials`)
  is in it now. A name the node gives that is gone from a file and that another file of
  the same folder and kind now defines (``def``, ``class``, or a module's variable at a line's start, not
  a function's indented local) moved there, a package split, and is not gone.
- Any file reference: stale when something the node states literally, which the referenced code held
  at the base, is gone from it (:meth:`Said.values_lost`; the code: the ``#symbol`` with the module
  and class constants it uses, the ``#L`` span's statements when only their strings changed, or the
  whole file for a file or a name in another language). A string it quotes (in quotes, or in
  backticks when not a name, a path, a number or code; a web link it gives, in quotes or not) counts by
  its literal parts, the text around an
  ellipsis or a placeholder, held in one of the code's string values (docstrings aside: prose about the
  code; quotation marks aside: a node that quotes a command cannot show the quotes inside it); a
  number it states (``< 4``, ``1.21.1``, "at most 5 retries", "64-bit", "10,000"; a version
  also by its parts, as ``minor >= 21`` checks it, not a fraction, 0.4 is no 4; not 0, 1 or 2 alone,
  a date, an issue or ``2/3``) counts when the code held it as a literal (a constant, or written in
  one of its strings; in a whole Python file, not in a test of the interpreter's version: "on Python 3.8+"
  still holds when a shim's ``if sys.version_info >= (3, 7):`` goes with the support of 3.6). A string constant built from others holds the string it gives
  (``JSON_ACCEPT = f'{JSON_CONTENT_TYPE}, */*'``: 'application/json, */*', :func:`.code_compare.composed_strings`);
  a header the node writes as ``Accept: application/json`` counts by its name and its value; a value the
  code held whole and now holds only inside a longer string is gone ('application/json, */*' now
  'application/json, */*;q=0.5'; a final stop added aside). What the node quotes that the
  code never held (prose in quotes) says nothing. Also stale when a name the node mentions (or the
  ``#symbol``) is newly deprecated (``@deprecated``, a deprecation warning in it or naming it, any call
  whose message says it "is deprecated" (``print("Warning: --flag is deprecated; ...")``),
  "deprecated" in its docstring unless each sentence saying it first names a parameter; a module
  ``__getattr__`` that warns when asked for an old name; a deprecation mark in other languages; a
  warning's message counts for what its sentence saying "deprecat" names (one that never says so: its
  sentence saying "will be removed"), not for what to use instead, what the code is made compatible with, a
  hyphenated package name ("more-itertools") or a name that only qualifies the next (``datetime`` of
  "datetime.timestamp()"), and when that sentence quotes names, for those alone: "The 'HTTP_STATUS_CODES' data is
  deprecated" deprecates no ``data``), in the file, in a file under a referenced folder, or, for a name it imports from another
  module of the project, there; when a parameter the node names (as a name,
  or in a list of the function's parameters) is newly deprecated: a warning raised only when it is
  given (``if proxies: warnings.warn(...)``: the parameter's deprecation, not its function's), in the
  ``#symbol``, the function holding the ``#L`` span or a function the node names, or in a function
  or class of another module to which the referenced code passes it by keyword
  (:func:`parameters_deprecated`, :func:`_elsewhere`; what was deprecated there when the node was
  written is kept in the fingerprint, ``elsewhere``); when the file is gone; when
  it moved ("moved to new/path.py (commit)", and what changed there); when a module of the project the
  node names by its dotted path (``uvicorn.subprocess.get_subprocess``, "imports it from
  uvicorn.logging"), which the referenced code (a file, or the files under a folder) held, is no module
  now and the code no longer names it (:mod:`.modules`: renamed ``uvicorn/_subprocess.py`` while
  ``get_subprocess`` lives on; not a module made a package, nor a dotted logger name); for a Python file that a node
  describing a defect or a limitation references, when the module now calls or tests something it did
  not and still calls and tests all it did (:mod:`.defects`).

Any other later commit is information, not a flag: "3 later commits, the last: <subject>".
A flag names what changed: the name or the lines, and the commit that changed them (the first
later commit without the name, or touching the span; "uncommitted" for the working tree).

:class:`History` reads git once per question (or once for many: the blob logs of every path whose
fingerprint disagrees with its base, a folder's files that say "deprecat") and keeps the answers for
as long as HEAD stays where it is, so the edit hooks (which a running server answers) and ``analyze``
over thousands of nodes ask git little. Every git call has a timeout; without git, or outside a repository, nothing is
stale and nothing is said.

Where it lives: this module is the rule's entry (:func:`check` for one node, :func:`judge` for a store's
nodes, and the judgement of one file or folder reference); :mod:`.git_history` reads git
(:class:`History`); :mod:`.mentions` what the node's text names and states (:func:`mentions`,
:class:`Said`); :mod:`.findings` a finding and how a flag names its commit; :mod:`.signatures` a signature
the node writes; :mod:`.deprecations` what is deprecated in another module or under a folder; :mod:`.modules` a module
the node names by its path, gone;
:mod:`.symbol_rules` judges a ``#symbol`` and a ``#L`` span; :mod:`.defects` a node that describes a defect
and the change that may fix it; :mod:`.fingerprints` records the code a node saw.
"""

from __future__ import annotations

import re
from pathlib import Path

from autology_mcp.knowledge.models import KnowledgeNode
from autology_mcp.knowledge.references import reference_path
from autology_mcp.knowledge.trust.code_compare import (
    code_words,
    deprecated,
    file_literals,
    find_symbol,
    parse_python,
    rewritten_share,
)
from autology_mcp.knowledge.trust.defects import describes_defect, fix_added
from autology_mcp.knowledge.trust.denials import now_held, now_there
from autology_mcp.knowledge.trust.deprecations import (
    NOT_TESTS,
    _elsewhere,
    deprecated_elsewhere,
    folder_deprecated,
    parameters_deprecated,
)
from autology_mcp.knowledge.trust.findings import LINES, Finding, Later, _shown, _stated, first_without
from autology_mcp.knowledge.trust.fingerprints import node_bases, recorded_code, recorded_names
from autology_mcp.knowledge.trust.folder_files import (
    counts_public,
    counts_sources,
    defined,
    grep_names,
    held_snippets,
    named_files,
    says_no_others,
    sources_added,
)
from autology_mcp.knowledge.trust.git_history import Commit, History, history
from autology_mcp.knowledge.trust.mentions import Said, holds, mentions
from autology_mcp.knowledge.trust.modules import holds_path, imports_gone, in_code, modules_gone
from autology_mcp.knowledge.trust.settings import set_otherwise
from autology_mcp.knowledge.trust.symbol_rules import REWRITTEN, _holder, _lost, holder_denied, judge_span, judge_symbol


def check(h: History, node: KnowledgeNode, base: str | None, references: list[str] | None = None,
          explain: bool = False) -> list[Finding]:
    """The node's references (or ``references``), each judged against ``base`` (the module docstring),
    or against the code its fingerprint recorded when the history does not hold it at ``base``.
    ``explain``: also say the later commits that changed nothing the node says (the edit hooks show
    it); without it, the history is read only for a flag's commit or a span."""
    refs = node.references if references is None else references
    if h.head is None or base is None or not refs:
        return []
    text = f"{node.title}\n{node.content}"
    names, paths = mentions(text)
    seen, held, said = recorded_code(node), recorded_names(node), Said(names, paths, text, str(node.type))
    values, elsewhere = recorded_names(node, "values"), recorded_names(node, "elsewhere")
    marked, imports = recorded_names(node, "deprecated"), recorded_names(node, "imports")
    sources = recorded_names(node, "sources")
    return [_judge(h, base, ref, said, explain, seen.get(reference_path(ref)), held_then=held.get(reference_path(ref)),
                   values_then=values.get(reference_path(ref)), elsewhere_then=elsewhere.get(reference_path(ref)),
                   deprecated_then=marked.get(reference_path(ref)), imports_then=imports.get(reference_path(ref)),
                   sources_then=sources.get(reference_path(ref)))
            for ref in refs]


def _judge(h: History, base: str, ref: str, said: Said, explain: bool = False, recorded: str | None = None,
           moved: tuple[str, Commit] | None = None, held_then: list[str] | None = None,
           values_then: list[str] | None = None, elsewhere_then: list[str] | None = None,
           deprecated_then: list[str] | None = None, imports_then: list[str] | None = None,
           sources_then: list[str] | None = None) -> Finding:
    path = reference_path(ref)
    anchor = ref.split("#", 1)[1].strip() if "#" in ref else ""
    later = Later(h, base, path)
    before = h.content(base, path)
    lies = bool(recorded and (before is None or not h.blob_id(base, path).startswith(recorded)))
    if lies:
        seen = h.blob(recorded)  # the history lies (a rebase, a squash, a relate committed later): the code it saw
        if seen is not None:
            before = seen
            later = Later(h, base, path, *h.since_blob(path, recorded))
        elif (held_then or values_then) and (now := h.worktree(path)) is not None:  # that code is gone: what it held
            code = code_words(now, path)
            lost = [n for n in held_then or () if n in said.names and not holds(code, n)]
            if lost:
                verb = "is" if len(lost) == 1 else "are"
                return Finding(ref, True, f"{_shown(lost)} {verb} gone from {path} (since the node was written)",
                               later.text(explain))
            still = set(said.values_held(file_literals(now, path))) if values_then else set()
            gone = list(dict.fromkeys(said.shown(v) for v in values_then or ()
                                      if (v in said.literals or v in said.numbers) and v not in still))
            if gone:
                return Finding(ref, True, f"{_stated(gone)} gone from {path} (since the node was written)",
                               later.text(explain))
    if moved is None and before is None and ((h.root / path).is_dir() or not (h.root / path).is_file()
                                              and h._git("ls-tree", "-d", base, "--", path)):
        return _judge_folder(h, base, ref, path, said.names, said.paths | named_files(said.text, path), later, explain,
                             held_then, deprecated_then, said.snippets, said.text, imports_then, sources_then)
    if before is None:  # the file came after the node: nothing it said about it can have moved on
        return Finding(ref, False, None, later.text(explain))
    where = moved[0] if moved else path
    now = h.worktree(where)
    if now is None:
        renamed = h.renamed(base, path)
        if renamed is not None and moved is None and h.worktree(renamed[0]) is not None:
            inner = _judge(h, base, ref, said, False, recorded, renamed)
            said_more = f"; there, {inner.why}" if inner.stale and inner.why else ""
            return Finding(ref, True, f"{path} moved to {renamed[0]} ({renamed[1].label()}){said_more}", later.text(explain))
        deleted = h.deleted(base, path)
        return Finding(ref, True, f"{path} is gone ({deleted.label() if deleted else 'uncommitted'})", later.text(explain))
    if moved is not None:
        later = Later(h, base, where, [], True)
    elsewhere = _elsewhere(now, where, anchor, said, h.worktree)  # the code it uses, deprecated in its own module
    if elsewhere:
        if elsewhere_then is not None:  # what the fingerprint found deprecated there when the node was written
            then = set(elsewhere_then)
        else:  # (a fingerprint from before this rule: what the base held, unless the history lies)
            then = set() if lies else _elsewhere(now, where, anchor, said, lambda q: h.content(base, q))
        newly_there = sorted(elsewhere - then)
        if newly_there:
            return deprecated_elsewhere(h, base, ref, where, newly_there[0], explain, later)
    if now == before:  # (formatting alone is told apart below, where it matters: a parse costs)
        return Finding(ref, False, None, later.text(explain))
    modules = modules_gone(h._git, lambda f: (h.root / f).is_file(), said.text, in_code(before), in_code(now))
    if modules:  # a module the node names by its path, renamed or removed (:mod:`.modules`)
        when = first_without(h, later, lambda t: holds_path(t, modules[0]))
        return Finding(ref, True, _modules_gone(modules, where, when), later.text(explain))
    if path.endswith(".py"):  # an import the node writes from this module, of a name it binds no more
        broken = imports_gone(said.text, path, lambda f: before, lambda f: now)
        if broken:
            when = first_without(h, later, lambda t: not imports_gone(said.text, path, lambda f: before, lambda f: t))
            return Finding(ref, True, _imports_gone(broken, when), later.text(explain))
    said_here = any(holds(before, n) for n in said.names) or bool(said.snippets) or bool(said.calls)
    before_code, now_code = (code_words(before, path), code_words(now, path)) if said_here else (before, now)
    held = {n for n in said.names if holds(before_code, n)} if said_here else set()
    if anchor and not LINES.match(anchor):
        held.add(anchor.split(".")[-1])
    newly = sorted(deprecated(now, path, held) - deprecated(before, path, held))
    if newly:
        when = first_without(h, later, lambda t: newly[0] not in deprecated(t, path, {newly[0]}))
        verb = "is" if len(newly) == 1 else "are"
        return Finding(ref, True, f"{_shown(newly)} {verb} deprecated in {where} ({when})", later.text(explain))
    if anchor and not LINES.match(anchor):
        given = parameters_deprecated(before, now, path, {anchor}, True, said)
    else:  # a file or a span: the functions the node names; for a span, also the one that holds it
        holder = _holder(before, int(LINES.match(anchor).group(1))) if anchor and path.endswith(".py") else None
        given = (parameters_deprecated(before, now, path, {holder}, True, said) if holder else []) or \
            parameters_deprecated(before, now, path, held, False, said)
    if given:
        scope, parameter = given[0]
        when = first_without(h, later, lambda t: (scope, parameter) not in
                              parameters_deprecated(before, t, path, {scope}, True, said))
        return Finding(ref, True, f"parameter `{parameter}` of `{scope}` is deprecated in {where} ({when})",
                       later.text(explain))
    if anchor:
        match = LINES.match(anchor)
        if match:
            span = (int(match.group(1)), int(match.group(2) or match.group(1)))
            gained = holder_denied(before, now, span[0], path, said)
            if gained:
                when = first_without(h, later, lambda t: holder_denied(before, t, span[0], path, said) is None)
                return Finding(ref, True, f"{now_there(gained[1], f'`{gained[0]}` of {where}')} ({when})",
                               later.text(explain))
            return judge_span(h, ref, where, later, before, now, span, f"lines {span[0]}-{span[1]}", said, explain)
        if path.endswith(".py"):
            old_tree = parse_python(before)
            old = find_symbol(old_tree, anchor, said.about_overloads) if old_tree is not None else None
            if old is not None:
                return judge_symbol(h, ref, where, later, before, old, now, anchor, said, explain)
        last = anchor.split(".")[-1]
        if holds(before_code, last) and not holds(now_code, last):
            when = first_without(h, later, lambda t: holds(code_words(t, path), last))
            return Finding(ref, True, f"`{anchor}` is gone from {where} ({when})", later.text(explain))
    gone = sorted(n for n in held if not holds(now_code, n) and n in said.names)
    if gone and "/" in where:  # a name moved to another file of the same folder and kind (a package split) is not gone
        folder, _, name = where.rpartition("/")
        kind = f"*.{name.rsplit('.', 1)[1]}" if "." in name else "*"
        gone = sorted(set(gone) - defined(h._git, gone, f"{folder}/{kind}", *NOT_TESTS))
    gone += [s for s in _lost(before_code, now_code, said) if s not in said.names]  # code snippets
    if gone:
        first = gone[0]
        when = first_without(h, later, lambda t: not _lost(before_code, code_words(t, path), Said({first}, set(), "")) if
                              first in said.names else first not in _lost(before_code, code_words(t, path), said))
        verb = "is" if len(gone) == 1 else "are"
        return Finding(ref, True, f"{_shown(gone)} {verb} gone from {where} ({when})", later.text(explain))
    if not anchor:  # a small file whose every line the node gives (`include LICENSE`), and it gained lines
        added = lines_added(before, now, said)
        if added:
            when = first_without(h, later, lambda t: not lines_added(before, t, said))
            return Finding(ref, True, f"{where} gained {_shown(added[:3])}: the node gives every line it had ({when})",
                           later.text(explain))
    if not anchor:  # a file the node says has no `dump()`, and it has one now
        denied = now_held(said.text, before_code, now_code)
        if denied:
            when = first_without(h, later, lambda t: not now_held(said.text, before_code, code_words(t, path)))
            return Finding(ref, True, f"{now_there(denied, where)} ({when})", later.text(explain))
    if not anchor and path.endswith(".py"):  # a file the node says sets `ensure_ascii` to True, and it sets it to False
        otherwise = set_otherwise(said.text, parse_python(before), parse_python(now))
        if otherwise:
            when = first_without(h, later, lambda t: not set_otherwise(said.text, parse_python(before), parse_python(t)))
            return Finding(ref, True, f"{otherwise[0]} in {where} now ({when})", later.text(explain))
    if not anchor or not path.endswith(".py"):  # a file, or a name in another language: the file's values
        values = _values_lost(before, now, path, said)
        if values:
            when = first_without(h, later, lambda t: not _values_lost(before, t, path, said))
            return Finding(ref, True, f"{_stated(values)} gone from {where} ({when})", later.text(explain))
    kept = any(holds(now_code, n) for n in held & said.strong)
    share = 0.0 if kept else rewritten_share(before, now, path)
    if share > REWRITTEN:  # a name the node gives that is still there says it still holds
        uncommitted = ", uncommitted" if not later.commits and not later.gap else ""
        return Finding(ref, True, f"most of {where} was rewritten ({round(100 * share)}% of the code the node saw is "
                                  f"gone{uncommitted})", later.text(explain))
    if not anchor and path.endswith(".py") and describes_defect(said):  # a file: a fix of the defect it describes
        old_tree = parse_python(before)
        fixed = fix_added(old_tree, now, "", said) if old_tree is not None else None
        if fixed:
            when = first_without(h, later, lambda t: fix_added(old_tree, t, "", said) is None)
            return Finding(ref, True, f"{where} changed: {fixed} ({when})", later.text(explain))
    if not explain:
        return Finding(ref, False, None, None)
    return Finding(ref, False, None, later.text(True) or ("uncommitted edits" if not later.commits else None))


WHOLE_FILE_LINES = 12  # a file the node can give line by line


def lines_added(before: str, now: str, said: Said) -> list[str]:
    """The lines ``now`` holds that ``before`` did not, when the node gives every line of ``before`` in backticks
    (comments and blank lines aside; at most :data:`WHOLE_FILE_LINES`): "MANIFEST.in has two lines: `include
    LICENSE` and `recursive-include tests *.py *.txt`", and it gains ``include loguru/py.typed``. A node that
    gives a file whole describes all of it, so what is added is not described. Empty otherwise."""
    def lines(text: str) -> list[str]:
        return [" ".join(line.split()) for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]

    then = lines(before)
    if not then or len(then) > WHOLE_FILE_LINES:
        return []
    given = {" ".join(t.split()) for t in re.findall(r"`([^`\n]+)`", said.text)}
    if not all(line in given for line in then):
        return []
    return [line for line in lines(now) if line not in then]


def _modules_gone(modules: list[str], where: str, when: str | None = None) -> str:
    one = len(modules) == 1
    return (f"{_shown(modules)} {'is' if one else 'are'} gone: no module of the project has "
            f"{'that path' if one else 'those paths'} now, and {where} no longer names {'it' if one else 'them'}"
            + (f" ({when})" if when else ""))


def _imports_gone(imports: list[str], when: str | None = None) -> str:
    one = len(imports) == 1
    return (f"{_shown(imports)} no longer {'works' if one else 'work'}: the module no longer binds "
            f"{'that name' if one else 'those names'}" + (f" ({when})" if when else ""))


def _values_lost(before: str, now: str, path: str, said: Said) -> list[str]:
    """What the node states literally (:meth:`Said.values_lost`) that the file held and holds no more;
    the file now is scanned only when it held one."""
    if not said.numbers and not any(max(p.split(), key=len) in before for ps in said.literals.values() for p in ps):
        return []
    held = file_literals(before, path)
    if not said.numbers.keys() & held.numbers and \
            not any(all(held.holds_string(p) for p in parts) for parts in said.literals.values()):
        return []
    return said.values_lost(held, file_literals(now, path))


def _judge_folder(h: History, base: str, ref: str, path: str, names: set[str], paths: set[str],
                  later: Later, explain: bool, held_then: list[str] | None = None,
                  deprecated_then: list[str] | None = None, snippets: list[str] = (), text: str = "",
                  imports_then: list[str] | None = None, sources_then: list[str] | None = None) -> Finding:
    """A folder: gone, the mentioned paths under it (bare file names too: :func:`named_files`) that existed
    at the base, or when the fingerprint was taken, and are gone now (deleted or renamed), then the code
    snippets the node gives that a file under it held at the base and none holds now
    (:func:`held_snippets`), then the mentioned names its files held at the base, or when the node's fingerprint was taken
    (``held_then``), and hold no more; then the mentioned names a file under it newly marks deprecated
    (:func:`folder_deprecated`), against what the fingerprint found deprecated (``deprecated_then``)
    or, without one, what the base's files did. A source file added to a folder whose modules the node counts,
    or says there are no others, is judged against the source files the fingerprint recorded (``sources_then``),
    or the base's."""
    if not (h.root / path).exists():
        return Finding(ref, True, f"{path}/ is gone", later.text(explain))
    for p in sorted(paths):
        if (p == path or p.startswith(path + "/")) and not (h.root / p).exists() \
                and (p in (held_then or ()) or h._git("cat-file", "-e", f"{base}:./{p}") is not None):
            return Finding(ref, True, f"{p} is gone from {path}", later.text(explain))
    changed = bool(text) and h.changed_since(base, path)
    recount = changed or sources_then is not None  # (or since the fingerprint was taken: a relate committed later)
    # "a single-module package", or "made of five modules" (five at the base), and a module added to it
    no_others, counts = (says_no_others(text), counts_sources(text)) if recount else (False, set())
    added = sources_added(h._git, base, path, None if no_others else counts, sources_then) if no_others or counts else []
    claim = "no other module" if no_others else f"{' or '.join(map(str, sorted(counts)))} modules"
    public = counts_public(text) if recount and not added else set()  # "six public modules", and a seventh added
    if public:
        added = sources_added(h._git, base, path, public, sources_then, public=True)
        claim = f"{' or '.join(map(str, sorted(public)))} public modules"
    if added:
        return Finding(ref, True, f"{_shown(added)} {'is' if len(added) == 1 else 'are'} added to {path}/, which "
                                  f"the node says holds {claim}", later.text(explain))
    if changed:  # a module the node names by its path, renamed or removed
        modules = modules_gone(h._git, lambda f: (h.root / f).is_file(), text,
                               lambda ms: grep_names(h._git, ms, base, path), lambda ms: grep_names(h._git, ms, None, path))
        if modules:
            return Finding(ref, True, _modules_gone(modules, f"{path}/"), later.text(explain))
    if changed or imports_then:  # an import it writes that worked then (or when the fingerprint was taken)
        broken = imports_gone(text, path, lambda f: h.content(base, f), h.worktree, imports_then)
        if broken:
            return Finding(ref, True, _imports_gone(broken), later.text(explain))
    if snippets and (h.changed_since(base, path) or set(held_then or ()) & set(snippets)):
        held = held_snippets(h._git, lambda q: h.content(base, q), snippets, base, path) | \
            (set(held_then or ()) & set(snippets))  # (or when the fingerprint was taken: a relate committed later)
        gone = sorted(held - held_snippets(h._git, h.worktree, sorted(held), None, path)) if held else []
        if gone:
            return Finding(ref, True, f"{_shown(gone)} {'is' if len(gone) == 1 else 'are'} gone from {path}/",
                           later.text(explain))
    recorded = set(held_then or ()) & names
    if not names or not recorded and deprecated_then is None and not h.changed_since(base, path):
        return Finding(ref, False, None, later.text(explain))
    wanted = sorted(names)
    found_before = grep_names(h._git, wanted, base, path) | recorded
    if not found_before:
        return Finding(ref, False, None, later.text(explain))
    found_now = grep_names(h._git, sorted(found_before), None, path)
    gone = sorted(found_before - found_now)
    if gone:
        shown = ", ".join(f"`{n}`" for n in gone[:3]) + (f" and {len(gone) - 3} more" if len(gone) > 3 else "")
        verb = "is" if len(gone) == 1 else "are"
        return Finding(ref, True, f"{shown} {verb} gone from {path}/", later.text(explain))
    marked = folder_deprecated(h, None, path, found_now)
    if marked:
        # the fingerprint checked only the names it recorded (forty at most; twenty before): any other, the base
        unchecked = set(marked) - set(held_then or ()) if deprecated_then is not None else set(marked)
        then = set(deprecated_then or ()) | set(folder_deprecated(h, base, path, unchecked))
        newly = sorted(set(marked) - then)
        if newly:
            where, test = marked[newly[0]], lambda t: newly[0] not in deprecated(t, where, {newly[0]})
            at_base = h.content(base, where)  # deprecated there already (a tag committed later): no commit to name
            when = "since the node was written" if at_base is not None and not test(at_base) else \
                first_without(h, Later(h, base, where), test)
            verb = "is" if len(newly) == 1 else "are"
            return Finding(ref, True, f"{_shown(newly)} {verb} deprecated in {path}/ ({where}, {when})",
                           later.text(explain))
    return Finding(ref, False, None, later.text(explain))


def judge(root: Path, store, nodes: list[KnowledgeNode],
          references: dict[str, list[str]] | None = None, explain: bool = False) -> dict[str, list[Finding]]:
    """Every node's references (or ``references[node id]``) judged, for ``analyze``, ``doctor``, the
    edit hooks and session-start: node id -> its findings (nodes without references are left out).
    ``explain``: each finding also says the later commits that changed nothing (:func:`check`)."""
    h = history(Path(root))
    h._diffs.clear()  # the work tree may have changed since the last question: only HEAD's answers are kept
    h._deprecating.clear()
    wanted = [n for n in nodes if (references or {}).get(n.id, n.references)]
    if h.head is None or not wanted:
        return {}
    bases = node_bases(h, store, wanted)
    h.prepare(list(bases.values()))
    h.blob_logs([path for n in wanted if bases[n.id] for path, seen in recorded_code(n).items()  # one git call for all
                 if not h.blob_id(bases[n.id], path).startswith(seen)])
    return {n.id: check(h, n, bases[n.id], (references or {}).get(n.id), explain) for n in wanted}
