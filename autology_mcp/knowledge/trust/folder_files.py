"""What a folder holds, read for a node that references the folder (issue 38): the files the node
names by their bare names, the names the folder's files hold or define, and the code snippets the node
gives that they hold (``git grep``).

A node about a folder often lists its modules without the folder's path: "typer/ holds `main.py`,
`core.py` ...". Those are paths under the folder, as ``typer/main.py`` would be: when one that the
folder held is deleted or renamed, what the node says of the folder's layout may no longer hold. A
bare file name is a name in backticks with an extension and no slash (``_compat.py``, ``py.typed``);
a web address or a dotted name that is no file of the folder was never held by it, so it is never
"gone" (the staleness rule asks only for the files the folder held at the node's base, or when its
fingerprint was taken).

A node that says the folder holds one module, or no other files ("a single-module package", "there are no
submodules"), no longer holds when a source file is added to it (not a module renamed) (:func:`says_no_others`, :func:`sources_added`);
nor does one that counts its modules ("made of five modules"), the count right at the node's base, when one
is added (:func:`counts_sources`), or its public ones ("six public modules, private platform helpers"), when a
public one is added (:func:`counts_public`).

The ``git`` argument of the grep helpers runs ``git`` with the given arguments in the work tree and
returns its output, or None when git failed (:meth:`git_history.History._git`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

Git = Callable[..., str | None]

_BARE_FILE = re.compile(r"`([\w-]+(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{0,7})`")
_SOURCE_EXTENSIONS = r"(?:py|pyi|pyx|js|jsx|ts|tsx|mjs|go|rs|rb|java|kt|c|h|cc|cpp|hpp|cs|swift)"
_PROSE_FILE = re.compile(rf"(?<![\w./-])([\w-]+\.{_SOURCE_EXTENSIONS})(?![\w/-]|\.\w)")
_DEFINES = r"(def|class|func|fn|type|struct|interface|enum|trait|const|var|let|function|module)"  # POSIX ERE: no (?:


_NO_OTHERS = re.compile(r"\bsingle[- ](?:module|file)\b|\bno\s+(?:other\s+)?(?:sub)?modules\b"
                        r"|\bno\s+other\s+(?:source\s+)?files\b|\bonly\s+(?:one|two|three|four|five)\s+(?:source\s+)?"
                        r"(?:modules|files)\b", re.IGNORECASE)
_TEST = re.compile(r"(^|/)(tests?|testing)/|(^|/)test_")
_SOURCE = re.compile(rf"\.{_SOURCE_EXTENSIONS}$")


def says_no_others(text: str) -> bool:
    """Whether the node says its folder holds one module, or no other files or modules."""
    return _NO_OTHERS.search(text) is not None


_NUMBERS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")
_COUNTED = re.compile(rf"\b({'|'.join(_NUMBERS)}|\d{{1,2}})\s+(public\s+)?(?:source\s+|python\s+)?(?:modules|files)\b",
                      re.IGNORECASE)


def _number(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBERS.index(word.lower()) + 1


def counts_sources(text: str) -> set[int]:
    """The numbers of modules or files the node says its folder holds ("made of five modules", "3 source files")."""
    return {_number(n) for n, public in _COUNTED.findall(text) if not public}


def counts_public(text: str) -> set[int]:
    """The numbers of public modules the node says its folder holds ("six public modules, private platform
    helpers"): those whose path under the folder has no part that starts with ``_`` (:func:`public_only`)."""
    return {_number(n) for n, public in _COUNTED.findall(text) if public}


def public_only(files: set[str], folder: str) -> set[str]:
    """The public modules among ``files`` under ``folder``: no part of the path below it starts with ``_``
    (``__init__.py``, ``_manylinux.py`` and ``_vendor/x.py`` are not public)."""
    folder = folder.rstrip("/")
    below = {f: f[len(folder) + 1:] if folder and f.startswith(folder + "/") else f for f in files}
    return {f for f, rest in below.items() if not any(part.startswith("_") for part in rest.split("/"))}


def counts_or_no_others(text: str) -> bool:
    """Whether the node says how many modules its folder holds (public ones too), or that it holds no others: what
    the source files under it then are is worth recording with its fingerprint (:func:`sources_at`)."""
    return says_no_others(text) or bool(counts_sources(text)) or bool(counts_public(text))


def sources_at(git: Git, rev: str | None, folder: str) -> set[str]:
    """The source files under ``folder`` at ``rev``, or now (None: tracked, or in the work tree and not
    ignored); tests aside."""
    listing = git("ls-tree", "-r", "--name-only", rev, "--", folder) if rev else \
        git("ls-files", "--cached", "--others", "--exclude-standard", "--", folder)
    return {f for f in (listing or "").splitlines() if _SOURCE.search(f) and not _TEST.search(f)}


def sources_added(git: Git, base: str, folder: str, counts: set[int] | None = None,
                  then: list[str] | None = None, public: bool = False) -> list[str]:
    """The source files under ``folder`` now that it did not hold at ``base`` (or, ``then``, when the node's
    fingerprint was taken: a relate committed later moves the base), when it holds more of them than it did
    (a module renamed adds none); tests aside. With ``counts`` (:func:`counts_sources`), only when the folder
    held one of those numbers then: a count the node gives that was right. ``public``: the public modules only
    (:func:`public_only`), for a count of them (:func:`counts_public`)."""
    held = set(then) if then is not None else sources_at(git, base, folder)
    now = sources_at(git, None, folder)
    if public:
        held, now = public_only(held, folder), public_only(now, folder)
    if counts is not None and len(held) not in counts:
        return []
    return sorted(now - held) if len(now) > len(held) else []


def named_files(text: str, folder: str) -> set[str]:
    """The paths under ``folder`` of the bare file names ``text`` gives in backticks, or in prose when a
    source file's (``_asyncio.py (AsyncRetrying)``)."""
    folder = folder.rstrip("/")
    names = {m.group(1) for m in _BARE_FILE.finditer(text)} | {m.group(1) for m in _PROSE_FILE.finditer(text)}
    return {f"{folder}/{name}" if folder else name for name in names}


def defined(git: Git, names: list[str], path: str, *also: str) -> set[str]:
    """Which of ``names`` a file under ``path`` (the work tree) defines: ``def name``, ``class name``,
    ``func (r *T) name``, ``type name``, ``const name``, or ``name =`` at a line's start, not indented (a
    module's variable; ``kwargs = {}`` in a function is a local of its own); a name only used there (an
    import, a call) was not moved there."""
    found: set[str] = set()
    for start in range(0, len(names), 100):
        chunk = "|".join(re.escape(n) for n in names[start:start + 100])
        pattern = rf"(^|[^A-Za-z0-9_]){_DEFINES}[[:space:]]+(\([^)]*\)[[:space:]]*)?({chunk})([^A-Za-z0-9_]|$)|^({chunk})[[:space:]]*:?=[^=]"
        out = git("grep", "-I", "-h", "-o", "-E", "-e", pattern, "--", path, ":(exclude).autology", *also) or ""
        found.update(w for line in out.splitlines() for w in re.findall(r"[A-Za-z0-9_]+", line))
    return found & set(names)


def grep_names(git: Git, names: list[str], rev: str | None, path: str, *also: str) -> set[str]:
    """Which of ``names`` a file under ``path`` (a folder, or a pathspec) holds as a whole word, at
    ``rev`` (None: the work tree); the store's own files aside."""
    found: set[str] = set()
    for start in range(0, len(names), 200):
        args = ["grep", "-I", "-h", "-o", "-w", "-F"]
        for name in names[start:start + 200]:
            args += ["-e", name]
        out = git(*args, *([rev] if rev else []), "--", path, ":(exclude).autology", *also) or ""
        found.update(line.split(":", 1)[-1].strip() if rev else line.strip() for line in out.splitlines())
    return found & set(names)


def held_snippets(git: Git, read: Callable[[str], str | None], snippets: list[str], rev: str | None,
                  path: str) -> set[str]:
    """Which of the code snippets the node gives (``except OSError: pass``) a file under ``path`` holds,
    whitespace and comments aside, at ``rev`` (None: the work tree); ``read`` gives a file's text there.
    The files read are those ``git grep`` finds with the snippet's longest word."""
    from autology_mcp.knowledge.trust.code_compare import code_words
    from autology_mcp.knowledge.trust.symbol_rules import squeezed

    found = set()
    for snippet in snippets:
        word = max(re.findall(r"\w+", snippet), key=len, default="")
        out = git("grep", "-I", "-l", "-F", "-e", word, *([rev] if rev else []), "--", path,
                  ":(exclude).autology") if word else None
        for line in (out or "").splitlines():
            text = read(line.split(":", 1)[1] if rev else line)
            if text is not None and squeezed(snippet) in squeezed(code_words(text, line)):
                found.add(snippet)
                break
    return found
