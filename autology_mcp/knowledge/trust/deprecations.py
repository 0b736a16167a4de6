"""Deprecations beyond the referenced code's own names (:mod:`.staleness`): what the code imports from
another module of the project, or passes to it by keyword, that is deprecated there
(:func:`_elsewhere`), a parameter the node names that is newly deprecated
(:func:`parameters_deprecated`), and the names a file under a folder marks deprecated
(:func:`folder_deprecated`). What a single file marks deprecated is :func:`code_compare.deprecated`."""

from __future__ import annotations

import ast
import re

from autology_mcp.knowledge.trust.code_compare import deprecated, deprecated_parameters, find_symbol, parse_python
from autology_mcp.knowledge.trust.findings import LINES, Finding, Later, first_without
from autology_mcp.knowledge.trust.git_history import History
from autology_mcp.knowledge.trust.mentions import Said


_IMPORT_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*)([A-Za-z_][\w.]*)?[ \t]+import[ \t]+(\([^)]*\)|[^\n;]+)", re.MULTILINE)


def _imports(text: str) -> dict[str, tuple[int, str, str]]:
    """The names a Python module imports from other modules: local name -> (dots of a relative import,
    the module, the name there). Read with a pattern, not parsed: it is asked of every referenced file."""
    found = {}
    for m in _IMPORT_FROM.finditer(text):
        dots, module = len(m.group(1)), m.group(2) or ""
        for item in m.group(3).strip("()").split(","):
            parts = item.split("#")[0].split()
            if len(parts) == 1 or len(parts) == 3 and parts[1] == "as":
                found[parts[-1]] = (dots, module, parts[0])
    return found


def _module_paths(path: str, dots: int, module: str) -> list[str]:
    """Where an import's module may be, in the project (paths from the root): beside ``path`` for a
    relative import, under any folder above it for an absolute one (``pkg.mod`` from ``src/pkg/x.py``)."""
    parts = [p for p in module.split(".") if p]
    if not parts:
        return []
    folders = path.split("/")[:-1]
    if dots:
        if dots - 1 > len(folders):
            return []
        bases = ["/".join(folders[:len(folders) - (dots - 1)])]
    else:
        bases = ["/".join(folders[:i]) for i in range(len(folders), -1, -1)]
    inner = "/".join(parts)
    return [f"{b}/{inner}{tail}".lstrip("/") for b in bases for tail in (".py", "/__init__.py")]


def _elsewhere(text: str, path: str, anchor: str, said: Said, read) -> set[str]:
    """What the referenced code takes from another module of the project that is deprecated there and
    that the node names: a name it gives, imported (``Client`` of ``from ._client import Client``,
    deprecated in its own module); or a parameter the referenced code (the ``#symbol``, or the file)
    passes to an imported function or class by keyword, deprecated there and named by the node
    (``proxies=proxies`` passed to ``Client``, which warns when given ``proxies``). As keys
    ``module.py:Name`` and ``module.py:Name(parameter)``; ``read(path)`` is the module's text then or now."""
    if not path.endswith(".py"):
        return set()
    imported = _imports(text)
    if not imported:
        return set()
    found: set[str] = set()
    calls: dict[str, set[str]] | None = None
    passes = any(f"{k}=" in text for k in said.names | said.listed_words)  # a keyword the node names, passed somewhere
    texts: dict[str, str | None] = {}
    for local, (dots, module, name) in sorted(imported.items()):
        named = local in said.names or name in said.names
        if not named and not (passes and f"{local}(" in text):
            continue
        for where in _module_paths(path, dots, module):
            other = texts[where] if where in texts else texts.setdefault(where, read(where))
            if other is None:
                continue
            if "deprecat" not in other.lower() and "futurewarning" not in other.lower():
                break
            if named and deprecated(other, where, {name}):
                found.add(f"{where}:{name}")
            marks = deprecated_parameters(other, where).get(name)
            if marks:
                if calls is None:
                    calls = _keywords_passed(text, anchor)
                params, deprecated_there = marks
                found |= {f"{where}:{name}({p})" for p in deprecated_there & calls.get(local, set())
                          if said.names_parameter(p, params)}
            break
    return found


def watched(text: str, path: str, anchor: str, said: Said) -> bool:
    """Whether :func:`_elsewhere` has something to look at for this node: a name it gives that the code
    imports, or a keyword the code passes to an imported name that the node names (or lists)."""
    imported = _imports(text) if path.endswith(".py") else {}
    if any(local in said.names or name in said.names for local, (_, _, name) in imported.items()):
        return True
    if not any(f"{local}(" in text for local in imported):
        return False
    return any(k in said.names or k in said.listed_words for local, keys in _keywords_passed(text, anchor).items() if local in imported
               for k in keys)


def deprecated_elsewhere(h: History, base: str, ref: str, path: str, key: str, explain: bool, later: Later) -> Finding:
    """The flag for a key of :func:`_elsewhere`, with the commit of the other module that deprecated it."""
    module, _, what = key.partition(":")
    name, _, parameter = what.rstrip(")").partition("(")
    if parameter:
        test = lambda t: parameter not in deprecated_parameters(t, module).get(name, ((), frozenset()))[1]  # noqa: E731
        why = f"parameter `{parameter}` of `{name}`, which {path} passes on, is deprecated in {module}"
    else:
        test = lambda t: not deprecated(t, module, {name})  # noqa: E731
        why = f"`{name}`, which {path} imports, is deprecated in {module}"
    when = first_without(h, Later(h, base, module), test)
    return Finding(ref, True, f"{why} ({when})", later.text(explain))


def _keywords_passed(text: str, anchor: str) -> dict[str, set[str]]:
    """The keyword arguments the code (the ``#symbol``, or the whole module) passes to each called name."""
    tree = parse_python(text)
    if tree is None:
        return {}
    code = find_symbol(tree, anchor) if anchor and not LINES.match(anchor) else tree
    out: dict[str, set[str]] = {}
    for node in ast.walk(code) if code is not None else []:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            out.setdefault(node.func.id, set()).update(k.arg for k in node.keywords if k.arg)
    return out


def parameters_deprecated(before: str, now: str, path: str, scopes: set[str], symbol: bool,
                           said: Said) -> list[tuple[str, str]]:
    """The parameters newly deprecated (a warning raised when one is given: :func:`deprecated_parameters`)
    that the node names (:meth:`Said.names_parameter`), of the referenced ``#symbol`` or a function in
    it (``symbol``), or of a function or class the node names: (function, parameter). A parameter's
    deprecation is not its function's: a node about ``Client`` that never names ``proxies`` still holds."""
    marks = deprecated_parameters(now, path)
    if not marks:
        return []
    then = deprecated_parameters(before, path)
    found = []
    for scope, (params, deprecated_now) in sorted(marks.items()):
        if symbol:
            inside = any(scope == s or scope.startswith(f"{s}.") or scope.endswith(f".{s}") for s in scopes)
        else:
            inside = scope.rsplit(".", 1)[-1] in scopes
        if not inside:
            continue
        old = then.get(scope, ((), frozenset()))[1]
        found += [(scope, p) for p in sorted(deprecated_now - old) if said.names_parameter(p, params)]
    return found


FOLDER_DEPRECATIONS_READ = 40  # files under a folder read for the deprecation of a name the node gives


def folder_deprecated(h: History, rev: str | None, path: str, names: set[str]) -> dict[str, str]:
    """The names a file under the folder ``path`` marks deprecated (:func:`deprecated`: a decorator, a
    warning, a module ``__getattr__`` for an old name), at ``rev`` (None: the work tree): name -> the
    first such file. Only the files that say "deprecat" and hold one of the names are read (two ``git
    grep``); the store's own files and tests aside."""
    if not names:
        return {}
    at = [rev] if rev else []
    strip = (lambda f: f.removeprefix(f"{rev}:")) if rev else (lambda f: f)
    if (rev, path) not in h._deprecating:  # asked once per folder in one judgement (several nodes share a folder)
        saying = h._git("grep", "-l", "-I", "-i", "-e", "deprecat", "-e", "futurewarning", *at, "--", path,
                        ":(exclude).autology", *NOT_TESTS) or ""
        h._deprecating[(rev, path)] = {strip(f) for f in saying.splitlines()}
    if not h._deprecating[(rev, path)]:
        return {}
    named = h._git("grep", "-l", "-I", "-w", "-F", *(a for n in sorted(names)[:200] for a in ("-e", n)), *at, "--",
                   path, ":(exclude).autology", *NOT_TESTS) or ""
    files = sorted(h._deprecating[(rev, path)] & {strip(f) for f in named.splitlines()})
    found: dict[str, str] = {}
    for f in files[:FOLDER_DEPRECATIONS_READ]:
        text = h.content(rev, f) if rev else h.worktree(f)
        for name in sorted(deprecated(text or "", f, names - found.keys())):
            found[name] = f
    return found


NOT_TESTS = (":(exclude,glob)**/*_test.*", ":(exclude,glob)**/test_*", ":(exclude,glob)**/tests/**")  # old names live on in tests
