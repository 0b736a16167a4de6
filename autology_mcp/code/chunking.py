"""Split a file into retrieval chunks and extract its symbols.

- Python: its outline (:mod:`autology_mcp.code.python_outline`) gives functions, classes, methods,
  module constants and routes (decorated handlers); a file whose strings or brackets never close
  falls back to the regex heuristics.
- Other code: per-language regex heuristics (seed 003) find symbol starts; a region runs to the
  next symbol.
- Code chunks are symbol-bounded regions, a preamble before the first symbol, and the code between
  symbols; a region longer than ``code_max_lines`` is cut into overlapping windows.
- Markdown and reStructuredText: heading sections, windowed. Anything else: sliding windows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from autology_mcp.code.config import IndexConfig
from autology_mcp.code.python_outline import outline


@dataclass(frozen=True)
class Chunk:
    start_line: int
    end_line: int
    chunk_type: str  # preamble | symbol | code | doc | text
    symbol_name: str | None
    symbol_kind: str | None
    text: str


@dataclass(frozen=True)
class Symbol:
    name: str
    kind: str
    start_line: int
    end_line: int
    signature: str


LANGUAGES = {
    ".py": "python", ".pyi": "python",
    ".js": "javascript", ".jsx": "javascript", ".mjs": "javascript", ".cjs": "javascript",
    ".ts": "typescript", ".tsx": "typescript", ".vue": "javascript", ".svelte": "javascript",
    ".go": "go", ".rs": "rust", ".java": "java", ".kt": "kotlin", ".kts": "kotlin", ".scala": "scala",
    ".swift": "swift", ".cs": "csharp", ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp",
    ".hpp": "cpp", ".hh": "cpp", ".rb": "ruby", ".php": "php", ".lua": "lua", ".sh": "shell",
    ".bash": "shell", ".zsh": "shell", ".sql": "sql", ".ex": "elixir", ".exs": "elixir", ".dart": "dart",
    ".md": "markdown", ".markdown": "markdown", ".rst": "rst",
}


SHEBANG_LANGUAGES = {
    "python": "python", "python3": "python", "python2": "python", "sh": "shell", "bash": "shell", "zsh": "shell",
    "dash": "shell", "ksh": "shell", "node": "javascript", "deno": "typescript", "ruby": "ruby", "lua": "lua",
    "php": "php", "elixir": "elixir",
}
_SHEBANG = re.compile(rb"^#![ \t]*(\S+)(?:[ \t]+(-\S+[ \t]+)*(\S+))?")


def shebang_language(head: bytes) -> str | None:
    """The language a ``#!`` first line names (``#!/usr/bin/env python3``, ``#!/bin/bash -e``), or None."""
    m = _SHEBANG.match(head)
    if not m:
        return None
    program = m.group(1).rsplit(b"/", 1)[-1]
    if program == b"env" and m.group(3):
        program = m.group(3).rsplit(b"/", 1)[-1]
    name = re.sub(rb"[\d.]+$", b"", program).decode("ascii", "replace") or program.decode("ascii", "replace")
    return SHEBANG_LANGUAGES.get(name) or SHEBANG_LANGUAGES.get(program.decode("ascii", "replace"))


def language_of(path: str, head: bytes = b"") -> str:
    """The language by extension; a file without one, by its ``#!`` line when ``head`` is given."""
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    if dot > 0:
        return LANGUAGES.get(name[dot:].lower(), "text")
    return (shebang_language(head) if dot < 0 and head else None) or "text"


def _signature(line: str) -> str:
    return line.strip()[:200]


# ---------------------------------------------------------------- windows and regions


def windows(start: int, end: int, max_lines: int, overlap: int) -> list[tuple[int, int]]:
    """Overlapping line windows covering ``start..end`` (inclusive, 1-based)."""
    if end - start + 1 <= max_lines:
        return [(start, end)]
    out = []
    step = max_lines - overlap
    s = start
    while True:
        e = min(s + max_lines - 1, end)
        out.append((s, e))
        if e >= end:
            return out
        s += step


def _trim(lines: list[str], start: int, end: int) -> tuple[int, int] | None:
    """Shrink ``start..end`` past blank lines at both ends; None if nothing is left."""
    while start <= end and not lines[start - 1].strip():
        start += 1
    while end >= start and not lines[end - 1].strip():
        end -= 1
    return (start, end) if start <= end else None


@dataclass(frozen=True)
class Region:
    start: int
    end: int
    name: str | None
    kind: str | None
    chunk_type: str


def _emit(lines: list[str], region: Region, max_lines: int, overlap: int, out: list[Chunk]) -> None:
    span = _trim(lines, region.start, region.end)
    if span is None:
        return
    for s, e in windows(span[0], span[1], max_lines, overlap):
        out.append(Chunk(s, e, region.chunk_type, region.name, region.kind, "\n".join(lines[s - 1 : e])))


def _fill(lines: list[str], regions: list[Region], first: int, last: int, gap_name, gap_kind,
          gap_type_first: str, gap_type: str) -> list[Region]:
    """Regions plus the gaps between them, in line order, covering ``first..last``."""
    out: list[Region] = []
    cursor = first
    for i, r in enumerate(sorted(regions, key=lambda r: (r.start, r.end))):
        if r.start < cursor:  # overlapping (should not happen); clip
            r = Region(cursor, r.end, r.name, r.kind, r.chunk_type)
            if r.start > r.end:
                continue
        if r.start > cursor:
            out.append(Region(cursor, r.start - 1, gap_name, gap_kind, gap_type_first if not out else gap_type))
        out.append(r)
        cursor = r.end + 1
    if cursor <= last:
        out.append(Region(cursor, last, gap_name, gap_kind, gap_type_first if not out else gap_type))
    return out


# ---------------------------------------------------------------- Python (its outline)


def _python(lines: list[str], text: str, cfg: IndexConfig) -> tuple[list[Region], list[Symbol]] | None:
    """Regions and symbols from the file's outline: a function or a class is one region, a class longer
    than ``code_max_lines`` one region per method and the code between them; None if it does not parse."""
    definitions = outline(text)
    if definitions is None:
        return None
    regions: list[Region] = []
    symbols: list[Symbol] = []
    for d in definitions:
        symbols.append(Symbol(d.name, d.kind, d.start, d.end, _signature(lines[d.line - 1])))
        if d.kind == "constant":
            continue
        if d.kind != "class":
            regions.append(Region(d.start, d.end, d.name, d.kind, "symbol"))
            continue
        methods = [m._replace(name=f"{d.name}.{m.name}") for m in d.methods]
        symbols.extend(Symbol(m.name, m.kind, m.start, m.end, _signature(lines[m.line - 1])) for m in methods)
        if d.end - d.start + 1 <= cfg.code_max_lines or not methods:
            regions.append(Region(d.start, d.end, d.name, "class", "symbol"))
            continue
        inner = [Region(m.start, m.end, m.name, m.kind, "symbol") for m in methods]
        regions.extend(_fill(lines, inner, d.start, d.end, d.name, "class", "symbol", "symbol"))
    return regions, symbols


# ---------------------------------------------------------------- regex heuristics (seed 003)

_ID = r"[A-Za-z_$][\w$]*"
# An indented "if (ready) {" has a method's shape, but these words never name one: such a line is a
# "block", which starts a new chunk of the definition it is in (long methods stay in several chunks)
# without being a symbol.
_JS_KEYWORDS = r"(?:if|for|while|switch|catch|with|function|return|do|else|try|typeof|await|yield|new|delete|void)"
_HEURISTICS: dict[str, list[tuple[str, re.Pattern[str]]]] = {
    "python": [
        ("class", re.compile(rf"^\s*class\s+({_ID})")),
        ("function", re.compile(rf"^\s*(?:async\s+)?def\s+({_ID})")),
    ],
    "javascript": [
        ("class", re.compile(rf"^\s*(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+({_ID})")),
        ("function", re.compile(rf"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*({_ID})")),
        ("function", re.compile(rf"^\s*(?:export\s+)?(?:const|let|var)\s+({_ID})\s*=\s*(?:async\s+)?(?:function|\([^)]*\)\s*=>|{_ID}\s*=>)")),
        ("interface", re.compile(rf"^\s*(?:export\s+)?(?:declare\s+)?interface\s+({_ID})")),
        ("type", re.compile(rf"^\s*(?:export\s+)?(?:declare\s+)?type\s+({_ID})\s*[=<]")),
        ("enum", re.compile(rf"^\s*(?:export\s+)?(?:const\s+)?enum\s+({_ID})")),
        ("constant", re.compile(r"^\s*(?:export\s+)?const\s+([A-Z][A-Z0-9_]+)\s*=")),
        ("route", re.compile(r"""^\s*(?:\w+)\.(?:get|post|put|patch|delete|all|use|route)\(\s*['"`](/[^'"`]*)""")),
        ("block", re.compile(rf"^\s+(?:public\s+|private\s+|protected\s+|static\s+|async\s+|readonly\s+)*({_JS_KEYWORDS})\s*\([^)]*\)\s*(?::\s*[^={{]+)?\{{\s*$")),
        ("method", re.compile(rf"^\s+(?:public\s+|private\s+|protected\s+|static\s+|async\s+|readonly\s+)*(?!{_JS_KEYWORDS}\b)({_ID})\s*\([^)]*\)\s*(?::\s*[^={{]+)?\{{\s*$")),
    ],
    "go": [
        ("function", re.compile(r"^func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)")),
        ("type", re.compile(r"^type\s+([A-Za-z_]\w*)")),
        ("constant", re.compile(r"^(?:const|var)\s+([A-Za-z_]\w*)")),
    ],
    "rust": [
        ("function", re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:unsafe\s+)?(?:const\s+)?fn\s+([A-Za-z_]\w*)")),
        ("class", re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:struct|enum|trait|union)\s+([A-Za-z_]\w*)")),
        ("impl", re.compile(r"^\s*impl(?:<[^>]*>)?\s+(?:[\w:<>, ]+\s+for\s+)?([A-Za-z_]\w*)")),
        ("constant", re.compile(r"^\s*(?:pub\s+)?(?:const|static)\s+([A-Z_][A-Z0-9_]*)")),
        ("type", re.compile(r"^\s*(?:pub\s+)?type\s+([A-Za-z_]\w*)")),
    ],
    "java": [
        ("class", re.compile(r"^\s*(?:(?:public|private|protected|static|final|abstract|sealed|data|open|internal)\s+)*(?:class|interface|enum|record|object)\s+([A-Za-z_]\w*)")),
        ("method", re.compile(r"^\s+(?:(?:public|private|protected|static|final|abstract|synchronized|override|suspend|internal|open)\s+)+[\w<>\[\], ?]*?\b([A-Za-z_]\w*)\s*\([^;]*$")),
        ("function", re.compile(r"^\s*(?:(?:public|private|internal|override|suspend|inline)\s+)*fun\s+(?:<[^>]*>\s*)?(?:[\w.]+\.)?([A-Za-z_]\w*)")),
    ],
    "c": [
        ("class", re.compile(r"^\s*(?:typedef\s+)?(?:struct|union|enum|class|namespace)\s+([A-Za-z_]\w*)\s*(?:[:{]|$)")),
        ("function", re.compile(r"^(?!\s)(?!(?:if|for|while|switch|return|else)\b)[\w\s\*&:<>,~]*?\b([A-Za-z_][\w:~]*)\s*\([^;]*\)\s*(?:const\s*)?(?:\{\s*)?$")),
        ("constant", re.compile(r"^#define\s+([A-Z_][A-Z0-9_]*)")),
    ],
    "ruby": [
        ("class", re.compile(r"^\s*(?:class|module)\s+([A-Z]\w*(?:::\w+)*)")),
        ("function", re.compile(r"^\s*def\s+(?:self\.)?([A-Za-z_]\w*[?!=]?)")),
    ],
    "php": [
        ("class", re.compile(r"^\s*(?:abstract\s+|final\s+)?(?:class|interface|trait)\s+([A-Za-z_]\w*)")),
        ("function", re.compile(r"^\s*(?:(?:public|private|protected|static|abstract|final)\s+)*function\s+&?([A-Za-z_]\w*)")),
    ],
    "shell": [("function", re.compile(r"^\s*(?:function\s+)?([A-Za-z_][\w-]*)\s*\(\)\s*\{?"))],
    "sql": [("table", re.compile(r"^\s*create\s+(?:or\s+replace\s+)?(?:table|view|function|procedure|index)\s+(?:if\s+not\s+exists\s+)?([\w.\"]+)", re.I))],
    "elixir": [
        ("class", re.compile(r"^\s*defmodule\s+([\w.]+)")),
        ("function", re.compile(r"^\s*defp?\s+([a-z_]\w*[?!]?)")),
    ],
    "lua": [("function", re.compile(r"^\s*(?:local\s+)?function\s+([\w.:]+)"))],
}
_HEURISTICS["typescript"] = _HEURISTICS["javascript"]
_HEURISTICS["kotlin"] = _HEURISTICS["java"]
_HEURISTICS["scala"] = _HEURISTICS["java"] + [("function", re.compile(r"^\s*(?:override\s+)?def\s+([A-Za-z_]\w*)"))]
_HEURISTICS["csharp"] = _HEURISTICS["java"]
_HEURISTICS["swift"] = _HEURISTICS["java"] + [("function", re.compile(r"^\s*(?:(?:public|private|static|override)\s+)*func\s+([A-Za-z_]\w*)"))]
_HEURISTICS["dart"] = _HEURISTICS["java"]
_HEURISTICS["cpp"] = _HEURISTICS["c"]


def _heuristic(lines: list[str], language: str) -> tuple[list[Region], list[Symbol]]:
    patterns = _HEURISTICS.get(language, [])
    found: list[tuple[int, str, str]] = []
    for no, line in enumerate(lines, 1):
        if len(line) > 400:
            continue
        for kind, pattern in patterns:
            m = pattern.match(line)
            if m:
                found.append((no, m.group(1), kind))
                break
    regions: list[Region] = []
    symbols: list[Symbol] = []
    for i, (no, name, kind) in enumerate(found):
        end = found[i + 1][0] - 1 if i + 1 < len(found) else len(lines)
        span = _trim(lines, no, end)
        end = span[1] if span else no
        if kind == "block":  # a chunk of the definition it is in; that symbol now ends here
            owner = symbols[-1] if symbols else None
            if owner is not None:
                symbols[-1] = replace(owner, end_line=end)
            regions.append(Region(no, end, owner and owner.name, owner and owner.kind, "symbol"))
            continue
        symbols.append(Symbol(name, kind, no, end, _signature(lines[no - 1])))
        regions.append(Region(no, end, name, kind, "symbol"))
    return regions, symbols


# ---------------------------------------------------------------- documents

_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_ATX = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$")
_RST_UNDER = re.compile(r"^([=\-`:'\"~^_*+#<>.])\1{2,}\s*$")


def _headings(lines: list[str], language: str) -> list[tuple[int, int, str]]:
    """(line, level, title) of each heading; fenced code is skipped in Markdown."""
    out: list[tuple[int, int, str]] = []
    if language == "markdown":
        fenced = False
        for no, line in enumerate(lines, 1):
            if _FENCE.match(line):
                fenced = not fenced
                continue
            if fenced:
                continue
            m = _ATX.match(line)
            if m:
                out.append((no, len(m.group(1)), m.group(2).strip()))
            elif no > 1 and re.match(r"^(=+|-+)\s*$", line) and lines[no - 2].strip() and len(line.strip()) >= 3:
                if not out or out[-1][0] != no - 1:
                    prev = lines[no - 2]
                    if not _ATX.match(prev) and not prev.lstrip().startswith(("-", "*", "|", ">")):
                        out.append((no - 1, 1 if line.strip()[0] == "=" else 2, prev.strip()))
    else:  # rst: a title line followed by an underline at least as long (an overline is allowed)
        levels: list[str] = []
        for no in range(2, len(lines) + 1):
            under, title = lines[no - 1], lines[no - 2]
            m = _RST_UNDER.match(under)
            if not m or not title.strip() or _RST_UNDER.match(title) or len(under.rstrip()) < len(title.rstrip()):
                continue
            if title.startswith((" ", "\t", "..")):
                continue
            start = no - 1
            overline = no >= 3 and lines[no - 3].rstrip() == under.rstrip()
            if overline:
                start = no - 2
            key = ("o" if overline else "") + m.group(1)
            if key not in levels:
                levels.append(key)
            out.append((start, levels.index(key) + 1, title.strip()))
    return out


def _documents(lines: list[str], language: str) -> tuple[list[Region], list[Symbol]]:
    heads = _headings(lines, language)
    regions: list[Region] = []
    symbols: list[Symbol] = []
    trail: list[tuple[int, str]] = []
    for i, (no, level, title) in enumerate(heads):
        end = heads[i + 1][0] - 1 if i + 1 < len(heads) else len(lines)
        while trail and trail[-1][0] >= level:
            trail.pop()
        trail.append((level, title))
        crumb = " > ".join(t for _, t in trail)[:300]
        symbols.append(Symbol(title[:200], "heading", no, end, _signature(lines[no - 1])))
        regions.append(Region(no, end, crumb, "heading", "doc"))
    return regions, symbols


# ---------------------------------------------------------------- entry point


def chunk_file(path: str, text: str, cfg: IndexConfig) -> tuple[list[Chunk], list[Symbol]]:
    """The chunks (in line order) and symbols of one file's text."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines:
        return [], []
    language = language_of(path, text[:256].encode("utf-8", "replace"))
    chunks: list[Chunk] = []
    if language in ("markdown", "rst"):
        regions, symbols = _documents(lines, language)
        for r in _fill(lines, regions, 1, len(lines), None, None, "doc", "doc"):
            _emit(lines, r, cfg.doc_max_lines, cfg.doc_overlap_lines, chunks)
        return chunks, symbols
    if language == "text" or language not in _HEURISTICS:
        for s, e in windows(1, len(lines), cfg.text_max_lines, cfg.text_overlap_lines):
            span = _trim(lines, s, e)
            if span:
                chunks.append(Chunk(span[0], span[1], "text", None, None, "\n".join(lines[span[0] - 1 : span[1]])))
        return chunks, []
    parsed = _python(lines, text, cfg) if language == "python" else None
    regions, symbols = parsed if parsed is not None else _heuristic(lines, language)
    for r in _fill(lines, regions, 1, len(lines), None, None, "preamble", "code"):
        _emit(lines, r, cfg.code_max_lines, cfg.code_overlap_lines, chunks)
    return chunks, symbols
