"""What a node's text names and states, as the staleness rule reads it (:mod:`.staleness`): the
identifiers and paths it mentions (:func:`mentions`: in backticks, shaped like an identifier, called,
dotted), and :class:`Said`: its words, the code snippets and prose calls it gives, the strings it
quotes and the numbers it states, and which of them a piece of code holds."""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass
from functools import cached_property

from autology_mcp.knowledge.trust.code_compare import Literals, Unit, version_parts


_TICKS = re.compile(r"`([^`\n]{1,120})`")
# an identifier a prose word is not: snake_case, camelCase or PascalCase with an inner capital, dotted
_SHAPED = re.compile(r"(?<![\w.])(?:[A-Za-z_][A-Za-z0-9]*_[A-Za-z0-9_]+|[a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*"
                     r"|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?![\w])")
_CALLED = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\((?!e?s\))")  # retry(), app.retry(x); not user(s)
_URL = re.compile(r"\b(?:https?|ftp)://\S+|\bwww\.\S+|\S+@\S+\.\w+")
_WEB = re.compile(r"\bhttps?://[\w-]+(?:\.[\w-]+)+[^\s`'\"<>]*")  # a link to a host, not a message's "http://..."
# last parts of a dotted word that make it a file name or an address, not a name
_NOT_NAMES = frozenset("""py pyi pyc js jsx ts tsx mjs cjs json yaml yml toml cfg ini txt md rst html htm css scss xml
    csv tsv lock log sh bash zsh bat ps1 exe dll so dylib go rs rb java kt swift cpp hpp cc cxx sql proto png jpg jpeg gif
    svg pdf zip gz tgz tar whl egg com org net edu gov io dev app co uk de fr www env cfg conf svc""".split())
_WORDS = re.compile(r"(?<![\w.])[A-Za-z_][A-Za-z0-9_]{4,}(?![\w])")
_JOIN = re.compile(r"(?<=[0-9a-z])[-_]+(?=[0-9a-z])")  # the joints of SHA-1, if_range
_TERM = re.compile(r"[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*")  # a word of the title, SHA-1 and If-Range whole
_QUALIFIER = re.compile(r"(?<![\w.])([A-Za-z_][A-Za-z0-9_]{4,})\.(?=[A-Za-z_])")  # Preview. of Preview.member
_SNIPPET = re.compile(r"[()=\[\]{}]|\s(?:if|for|in|not|and|or|return|[-+*/%|&]|//|\*\*)\s"
                      r"|^\s*(?:except|try|finally|else|elif|while|with|for|if|async)\b[^:`]*:")  # a clause: `except OSError: pass`
# a call with its arguments in prose: self.get_connection(request.url, proxies), get_url_scheme(url)
_PROSE_CALL = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\(([^()\n]{1,80})\)")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_STARRED = re.compile(r"(?<![\w*])\*\*?([A-Za-z_]\w*)")  # *args, **kwargs
_PATHISH = re.compile(r"^[\w.-]+(?:/[\w.-]+)+/?$")
# a string the node quotes: 'Perhaps you meant http://...?', "utf-8", “…”; not an apostrophe (the app's)
_QUOTED = re.compile(r"""(?<![\w'"])(?:'([^'\n]{1,200})'|"([^"\n]{1,200})"|\u201c([^\u201d\n]{1,200})\u201d"""
                     r"""|\u2018([^\u2019\n]{1,200})\u2019)(?![\w])""")
# where a quoted message leaves the code's text out: an ellipsis, a placeholder (%s, %r, {}, {name!r})
# a header as a node writes it, ``Content-Type: application/json``: its name, then its value
_HEADER = re.compile(r"([A-Z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*): (\S.*)")
_ELIDED = re.compile(r"\.\.\.|\u2026|%[-#0-9.]*[sdrifx]|\{[^{}]*\}")
# a number the node states: 5000, 3.0, 1.21.1, "< 4"; not of a word (utf8), an issue (#123), a date or a range
_STATED = re.compile(r"(?<![\w.\-/#,])(?:\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)*)(?![\w/]|-\d|\.\d|,\d)")  # 64-bit: 64; 10,000
# a list of words in prose: "cookies, proxies, cert, verify, timeout and trust_env" (backticks allowed)
_LIST = re.compile(r"(?<![\w.])`?[A-Za-z_]\w*`?(?:,\s+`?[A-Za-z_]\w*`?){1,},?\s+(?:and|or)\s+`?[A-Za-z_]\w*`?(?![\w(])")
_LIST_ITEM = re.compile(r"[A-Za-z_]\w*")
SMALL = frozenset({"0", "1", "2"})  # numbers too common in code and prose to say anything alone


def mentions(text: str) -> tuple[set[str], set[str]]:
    """The identifiers and the paths a node's text names: in backticks, shaped like an identifier
    (``retry_after``, ``HTTPAdapter``, ``MAX_RETRIES``), called (``retry()``, ``retry(call)``: a word
    right before "(", but not a plural "user(s)"), or dotted (``app.retry``). A dotted name
    (``a.b.score_candidates``) counts by its last part: the module path around it is how the prose
    reached it, not what it names; a file name or a web address (``setup.cfg``, ``example.com``) is not one."""
    names: set[str] = set()
    paths: set[str] = set()
    for span in _TICKS.findall(text):
        span = span.strip()
        if _PATHISH.match(span):
            paths.add(span.rstrip("/"))
            continue
        for ident in _IDENT.findall(span):
            last = ident.split(".")[-1]
            if len(last) >= 3 and ("." not in ident or _dotted_name(ident)):
                names.add(last)
    prose = _URL.sub(" ", _TICKS.sub(" ", text))
    for ident in _SHAPED.findall(prose):
        last = ident.split(".")[-1]
        if _is_shaped(last) or ("." in ident and _dotted_name(ident)):
            names.add(last)
    names |= called(prose)
    return names, paths


_DOTTED_PATH = re.compile(r"(?<![\w./-])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?![\w/(-])")


def dotted_paths(text: str) -> set[str]:
    """The dotted paths a node's text gives, in backticks or prose, and each of their heads of two parts or
    more (``uvicorn.subprocess.get_subprocess``: also ``uvicorn.subprocess``), web addresses aside; not a
    file name (``setup.py``) nor a call (``app.run()``)."""
    found: set[str] = set()
    for match in _DOTTED_PATH.finditer(_URL.sub(" ", text)):
        parts = match.group(0).split(".")
        if parts[-1].lower() in _NOT_NAMES:
            parts = parts[:-1]
        found.update(".".join(parts[:n]) for n in range(2, len(parts) + 1))
    return found


def called(text: str) -> set[str]:
    """The names prose gives as calls (``retry()``, ``executor.map(fn)``): names, but too plain
    (``map``, ``parse``) to say alone that a file still holds what the node describes."""
    found = set()
    for ident in _CALLED.findall(_URL.sub(" ", _TICKS.sub(" ", text))):
        last = ident.split(".")[-1]
        if len(last) >= 3 and ("." not in ident or _dotted_name(ident)):
            found.add(last)
    return found


def _strong(text: str) -> set[str]:
    """The names a node gives plainly enough that one still in a file says the file still holds what the
    node describes: one identifier in backticks, or shaped like one (``retry_after``). Not ``map`` of
    ``executor.map``, nor ``parse()`` in prose: too plain to say so alone."""
    ticked = {i for span in _TICKS.findall(text) for i in _IDENT.findall(span) if "." not in i and len(i) >= 3}
    return ticked | {n for n in mentions(text)[0] if _is_shaped(n)}


def _dotted_name(ident: str) -> bool:
    """``app.retry`` names ``retry``; ``setup.cfg``, ``example.com`` or ``e.g`` name nothing."""
    last = ident.split(".")[-1]
    return len(last) >= 3 and last.lower() not in _NOT_NAMES


def _is_shaped(name: str) -> bool:
    """snake_case, camelCase, PascalCase with an inner capital, or CONSTANT_CASE: not a prose word."""
    return len(name) >= 3 and ("_" in name.strip("_") or any(c.isupper() for c in name[1:]))


def holds(content: str, name: str) -> bool:
    """Whether ``content`` holds ``name`` as a whole word (``name`` has no dots: :func:`mentions`)."""
    if name not in content:
        return False
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", content) is not None


def term(word: str) -> str:
    """A term as the title's words and the code's names are compared: lower case, without the hyphens
    and underscores inside it (``SHA-1`` and ``sha1``, ``If-Range`` and ``IfRange``, ``hash_pin``); a leading
    underscore stays (``_frame``, a private member, is not the title's "frame")."""
    return _JOIN.sub("", word.lower())


_FIELD = r"(?:\w+(?:-\w+)*|\{[\w.!:]*\}|%[sdrif])"  # a field of a built string, as a node writes it


@dataclass(frozen=True)
class Said:
    """What the node's text says, as the rule reads it."""

    names: set[str]
    paths: set[str]
    text: str
    kind: str = ""  # the node's type (``issue``: :func:`.defects.describes_defect`)

    @cached_property
    def about_overloads(self) -> bool:
        """Whether the text speaks of ``@overload`` signatures: then their stubs are part of the symbol."""
        return "overload" in self.text.lower()

    @cached_property
    def starred(self) -> set[str]:
        """The names the text writes only after ``*`` or ``**`` (``*args``, ``**kwargs`` "are ignored"): a function's
        catch-all parameters, not a variable that happens to share the name."""
        marked = set(_STARRED.findall(self.text))
        return marked - set(_IDENT.findall(_STARRED.sub(" ", self.text)))

    @cached_property
    def words(self) -> set[str]:
        """The words of five letters or more: a changed statement that uses one as a name touches what
        the node describes ("dataclasses are not serialised" and ``dataclasses.asdict(o)``). Not a word
        the text gives only before a dot, as the qualifier of a name (``Preview`` of
        ``Preview.normalize_docstring_quotes``): that name counts, by its last part (:func:`mentions`)."""
        found = Counter(_WORDS.findall(self.text))
        qualifiers = Counter(m.group(1) for m in _QUALIFIER.finditer(self.text))
        return {w for w in found if qualifiers[w] < found[w]}

    def messages_of(self, name: str) -> list[str]:
        """The messages the node writes ``name`` called with, by their longest literal part: ``Invalid compression
        format`` of "raises ValueError("Invalid compression format: '...'")". Empty when it writes no such call."""
        found = []
        for m in re.finditer(rf"(?<![\w.]){re.escape(name)}\(\s*(?:'([^'\n]+)|\"([^\"\n]+))", self.text):
            parts = re.split(r"\.\.\.|\u2026|%[sdr]|\{[^}]*\}", m.group(1) or m.group(2))
            longest = max((p.strip(" :;,.'\"") for p in parts), key=len)
            if len(longest) >= 4:
                found.append(longest)
        return found

    def gives_value(self, value: str) -> bool:
        """Whether the node gives this value (``None``, ``False``, ``5000``) as code: in backticks, after
        "return(s)" or "=" ("returns None"), not as a word of prose ("None of these", "Alternatives: None.")."""
        v = re.escape(value)
        return re.search(rf"`{v}`|\breturns?\s+{v}(?!\w|\.\w)|=\s*{v}(?!\w|\.\w)", self.text) is not None

    def used_now(self, before: list[Unit], after: list[Unit], added: set[str] = frozenset(),
                 signature: set[str] = frozenset()) -> set[str]:
        """The names and words whose use in changed statements counts, for code that was ``before`` and is
        ``after``: every name the node gives; a word of its text unless the code used it throughout, in
        three statements or more, before and after (the object a builder works on: ``session.trust_env =
        False`` added where ``session`` is set up in every line is not a new use of the node's
        "session"; ``value`` rebound in a setter that only stored it, or ``dataclasses.asdict(o)`` where
        no ``dataclasses`` was, is). Nor a word that is a parameter the function gained (``added``): its
        use is the new option's, which is information as the parameter is ("a proxy" in the node's prose,
        ``proxies or proxy`` in the code). The ``signature`` (:meth:`signature`) counts as words."""
        names = self.names - signature
        words = (self.words | signature) - names - added
        titled = {i for u in (*before, *after) for i in u.identifiers() if term(i) in self.title_terms} - added
        words |= titled - names
        if words:
            then = Counter(i for u in before for i in set(u.identifiers()))
            now = Counter(i for u in after for i in set(u.identifiers()))
            words = {w for w in words if then[w] < 3 or now[w] < 3}
        return names | words

    @cached_property
    def title_terms(self) -> set[str]:
        """The words of the title (the text's first line), whatever their length, folded (:func:`term`): the
        title says what the node is about, so a changed statement that uses one as a name touches it
        ("a weak ETag is kept" and a new ``weak`` tested; "one SHA-1" and ``hashlib.sha1`` now
        ``hashlib.sha3_256``), though the body's words count from five letters up. Not a single letter
        or digit, nor a bare number."""
        title = self.text.split("\n", 1)[0]
        return {f for t in _TERM.findall(title) if len(f := term(t)) >= 3 and not f.isdigit()}

    def words_kept(self, before: list[Unit], after: list[Unit]) -> set[str]:
        """The words of the text (not the names it gives) that the changed statements use as often before as
        after, each time as an identifier or as a part of one between underscores, a variable's name where
        a statement only sets it aside: "filename" read three times as ``self.raw.co_filename`` before and
        three times as a new variable ``filename`` after (set by ``filename = inspect.getfile(self.raw)``)
        is the same word used the same way, though the identifiers differ. A word used once more or once
        less (``self._proxy_map(proxies)`` now ``self._proxy_map(proxies or proxy)``) is not kept."""
        words = {w.lower(): w for w in self.words - self.names}
        if not words:
            return set()

        def uses(found: list[Unit]) -> Counter:
            count: Counter = Counter()
            for u in found:
                idents = list(u.identifiers())
                if isinstance(u.node, ast.Assign) and all(isinstance(t, ast.Name) for t in u.node.targets):
                    for t in u.node.targets:  # a value given a name: the name is not a use
                        idents.remove(t.id) if t.id in idents else None
                for i in idents:
                    parts = {i.lower()} | {p.lower() for p in i.split("_") if p}
                    count.update(parts & set(words))
            return count

        then, now = uses(before), uses(after)
        return {words[w] for w in then if then[w] == now[w]}

    def signature(self, symbol: str, parameters: set[str]) -> set[str]:
        """The parameters of ``symbol`` that the node names only as the arguments of its own call
        (``normalize(node, parens_after)``, ``_HookCaller._add_hookimpl(hookimpl)``): its signature as the node
        writes it, not what the node says the code does with them; :meth:`used_now` reads them as words."""
        call = re.compile(rf"(?<![\w.])(?:[A-Za-z_]\w*\.)*{re.escape(symbol)}\([^()\n]*\)")
        if not call.search(self.text):
            return set()
        return (self.names & parameters) - mentions(call.sub(symbol, self.text))[0]

    @cached_property
    def listed(self) -> list[set[str]]:
        """The lists of words the text gives (``params, headers, cookies, auth and timeout``): three items or
        more, separated by commas, the last by "and" or "or"."""
        return [set(_LIST_ITEM.findall(m.group(0))) - {"and", "or"} for m in _LIST.finditer(self.text)]

    @cached_property
    def listed_words(self) -> set[str]:
        return set().union(*self.listed) if self.listed else set()

    def names_parameter(self, parameter: str, parameters) -> bool:
        """Whether the node names this parameter: as a name it gives, or in a list of words at least half
        of which are parameters of the same function ("takes params, headers, cookies and auth")."""
        if parameter in self.names:
            return True
        return any(parameter in items and 2 * len(items & set(parameters)) >= len(items) for items in self.listed)

    @cached_property
    def strong(self) -> set[str]:
        return _strong(self.text)

    @cached_property
    def snippets(self) -> list[str]:
        """Code quoted in backticks (``self.url_map = Map()``, ``static_url_path + "/x"``): not one name,
        but a piece of code."""
        return sorted({s.strip() for s in _TICKS.findall(self.text) if _SNIPPET.search(s) and len(s.strip()) >= 6})

    @cached_property
    def calls(self) -> list[str]:
        """Calls with their arguments written in prose, outside backticks (``self.get_connection(request.url,
        proxies)``, ``get_url_scheme(url)``): code as the node quotes it, found in the code as a call (a
        ``def`` with those parameters is not it)."""
        prose = _URL.sub(" ", _TICKS.sub(" ", self.text))
        return sorted({m.group(0) for m in _PROSE_CALL.finditer(prose) if m.group(2).strip() not in ("s", "es")})

    @cached_property
    def literals(self) -> dict[str, tuple[str, ...]]:
        """The strings the node quotes (in quotes, or in backticks when not a name, a path, a number or
        code; a web link it gives, in quotes or not), each with its literal parts: the text around an ellipsis or a placeholder
        ('Perhaps you meant http://...?' is 'Perhaps you meant http://'), whitespace-collapsed, of two
        characters or more."""
        found = [next(g for g in m.groups() if g is not None) for m in _QUOTED.finditer(self.text)]
        links = [u.rstrip(".,;:!?)]") for u in _WEB.findall(self.text)]  # a link it gives, quoted or not
        found += [link for link in links if not any(link in q for q in found)]
        for span in _TICKS.findall(self.text):
            span = span.strip()
            if not (_IDENT.fullmatch(span) or _PATHISH.match(span) or _SNIPPET.search(span) or _STATED.fullmatch(span)
                    or span[:1] in "'\"\u201c\u2018"):
                found.append(span)
        out = {}
        for quote in found:
            header = _HEADER.fullmatch(quote)  # `Accept: application/json, */*`: the code holds the name and the value apart
            pieces = [header.group(1), header.group(2)] if header else [quote]
            parts = tuple(p for piece in pieces for p in (" ".join(p.split()) for p in _ELIDED.split(piece)) if len(p) >= 2)
            if parts:
                out[quote] = parts
        return out

    @cached_property
    def numbers(self) -> dict[str, str]:
        """The numbers the node states (``5000``, ``3.0``, ``1.21.1``, "< 4", "64-bit"), each with the
        parts of a version (a bound checked part by part, ``minor >= 21``; not of a fraction, 0.4):
        number -> the number as the node wrote it. Not 0, 1 or 2 alone (everywhere in code), nor a
        number in an address, a date or a range."""
        out: dict[str, str] = {}
        for token in (t.replace(",", "") for t in _STATED.findall(_URL.sub(" ", self.text))):
            for atom in [token, *version_parts(token)]:
                if atom not in SMALL:
                    out.setdefault(atom, token)
        return out

    def values_held(self, code: Literals) -> list[str]:
        """The strings the node quotes and the numbers it states (as :attr:`literals` and :attr:`numbers`
        key them) that ``code`` holds as literals."""
        return [q for q, parts in self.literals.items() if all(code.holds_string(p) for p in parts)] + \
            [n for n in self.numbers if n in code.numbers]

    def shown(self, value: str) -> str:
        """A value as a flag names it: a quote in quotes, a number as the node wrote it."""
        return f"'{value}'" if value in self.literals else self.numbers.get(value, value)

    def values_lost(self, before: Literals, after: Literals) -> list[str]:
        """The strings the node quotes and the numbers it states that ``before`` held as literals (every
        literal part of a quote) and ``after`` does not: what the node says literally that the code no
        longer holds (a message changed from http:// to https://, a bound from < 4 to < 5)."""
        # a value held whole that is now only part of a longer one is not held: 'application/json, */*' now
        # 'application/json, */*;q=0.5'
        lost = [f"'{quote}'" for quote, parts in self.literals.items()
                if all(before.holds_string(p) for p in parts) and not all(
                    after.holds_string(p) and (after.holds_whole(p) or not before.holds_whole(p)) for p in parts)]
        lost += list(dict.fromkeys(token for atom, token in self.numbers.items()
                                   if atom in before.numbers and atom not in after.numbers))
        return lost

    @property
    def states_values(self) -> bool:
        return bool(self.literals or self.numbers)

    def quotes_built(self, pieces: tuple[str, ...]) -> bool:
        """Whether the text quotes a string built from these literal pieces (:func:`built_strings`) with a
        word in each of its fields: `(assert  (implies dN pred))` for ``f"(assert  (implies d{enc} {pred}))"``.
        Its pieces hold six characters or more besides spaces: ``f"{a}.{b}"`` is not quoted by "x.y". A field
        may also be written as the placeholder of another way to build it (``"Unsupported locale '{}'"`` of
        ``.format``, ``%s``) or as a value with a hyphen ("Unsupported locale 'en-us'")."""
        if len("".join(pieces).replace(" ", "")) < 6:
            return False
        pattern = _FIELD.join(re.escape(p) for p in pieces)
        return re.search(rf"(?<![\w]){pattern}(?![\w])", " ".join(self.text.split())) is not None

    def gives_from(self, strings) -> bool:
        """Whether the node gives, as code, a piece of one of these string values (the character class
        ``[a-z0-9.-]`` of a regular expression): it describes what that string says, so the string changed
        is what it says changed, though the piece is still there."""
        return any(snippet in value for snippet in self.snippets for value in strings)

    @cached_property
    def coded_words(self) -> set[str]:
        """The words the text gives as code or between quotes (`` `message["status"]` ``, 'expires')."""
        spans = _TICKS.findall(self.text) + ["".join(m) for m in _QUOTED.findall(self.text)]
        return {w for span in spans for w in re.findall(r"[A-Za-z_]\w*", span)}

    def quotes(self, strings, held: bool = False) -> bool:
        """Whether the node's text quotes one of these string values (a version, a message). ``held``: the
        strings are those a changed statement holds, not values that changed themselves; then a value of one
        lower-case word (``"status"``) is quoted only as code or between quotes: "with that status" in prose is
        a word of the prose, not the string ("an ETag" is the header's name). A value that changed ("yellow"
        gone from a style the node calls "yellow and bold") is what the prose says, even as a plain word."""
        for value in strings:
            value = value.strip()
            if len(value) < 2:
                continue
            if held and re.fullmatch(r"[a-z]+", value):
                if value in self.coded_words:
                    return True
            elif re.search(rf"(?<![\w]){re.escape(value)}(?![\w])", self.text):
                return True
        return False
