import pytest
from code_fixtures import GO_SERVER, MD_GUIDE, PY_WEBSOCKET, RST_API, TS_CLIENT

from autology_mcp.code.chunking import chunk_file, language_of, shebang_language, windows
from autology_mcp.code.config import IndexConfig
from autology_mcp.code.scan import classify_content

CFG = IndexConfig()


def by_name(symbols):
    return {s.name: s for s in symbols}


def test_windows_overlap_and_cover():
    assert windows(1, 10, 20, 5) == [(1, 10)]
    ws = windows(1, 50, 20, 5)
    assert ws == [(1, 20), (16, 35), (31, 50)]


def test_python_symbols_and_chunks():
    chunks, symbols = chunk_file("src/ws.py", PY_WEBSOCKET, CFG)
    syms = by_name(symbols)
    assert syms["WebSocketClient"].kind == "class"
    assert syms["WebSocketClient.reconnect_after_timeout"].kind == "method"
    assert syms["open_socket"].kind == "function"
    assert syms["health"].kind == "route"
    assert syms["health"].start_line == PY_WEBSOCKET.split("\n").index('@app.route("/health")') + 1
    assert syms["MAX_RETRIES"].kind == "constant"
    assert syms["open_socket"].signature == "def open_socket(url):"
    assert chunks[0].chunk_type == "preamble" and chunks[0].start_line == 1
    assert "import time" in chunks[0].text
    cls = [c for c in chunks if c.symbol_name == "WebSocketClient"]
    assert len(cls) == 1 and cls[0].chunk_type == "symbol"  # small class: one chunk
    lines = PY_WEBSOCKET.split("\n")
    for c in chunks:  # every chunk's text is exactly its lines
        assert c.text == "\n".join(lines[c.start_line - 1 : c.end_line])


def test_large_python_class_is_split_into_methods_and_windows():
    body = "\n".join(f"        x{i} = {i}" for i in range(200))
    src = f"class Big:\n    ATTR = 1\n\n    def small(self):\n        pass\n\n    def huge(self):\n{body}\n"
    cfg = IndexConfig(code_max_lines=50, code_overlap_lines=10)
    chunks, symbols = chunk_file("big.py", src, cfg)
    names = [(c.symbol_name, c.start_line, c.end_line) for c in chunks]
    assert names[0] == ("Big", 1, 2)  # class header up to the first method
    assert ("Big.small", 4, 5) in names
    huge = [c for c in chunks if c.symbol_name == "Big.huge"]
    assert len(huge) == 5 and huge[0].start_line == 7 and huge[-1].end_line == 207
    assert huge[1].start_line == huge[0].end_line - 10 + 1  # overlapping windows
    assert all(c.end_line - c.start_line + 1 <= 50 for c in chunks)


def test_python_syntax_error_falls_back_to_heuristics():
    src = "def ok():\n    return 1\n\ndef broken(:\n    pass\n\nclass K:\n    pass\n"
    chunks, symbols = chunk_file("bad.py", src, CFG)
    assert [s.name for s in symbols] == ["ok", "broken", "K"]
    assert [c.symbol_name for c in chunks] == ["ok", "broken", "K"]


def test_typescript_heuristics():
    chunks, symbols = chunk_file("web/client.ts", TS_CLIENT, CFG)
    syms = by_name(symbols)
    assert syms["SessionOptions"].kind == "interface"
    assert syms["PlaybackSession"].kind == "class"
    assert syms["startListenTogether"].kind == "function"
    assert syms["parseRoomCode"].kind == "function"
    assert chunks[0].chunk_type == "preamble" and "EventEmitter" in chunks[0].text


def test_typescript_control_flow_is_not_a_method():
    """zod's index had 1,523 "methods" named if, for, switch, while or catch, each cutting a chunk."""
    src = ("export class Parser {\n  parse(input: string): Result {\n    if (input.length > 0) {\n      return ok(input);\n"
           "    }\n    for (const c of input) {\n      switch (c) {\n      }\n    }\n    try {\n    } catch (e) {\n    }\n"
           "    while (more()) {\n    }\n    return fail();\n  }\n\n  static async reset(): Promise<void> {\n  }\n}\n")
    chunks, symbols = chunk_file("src/parser.ts", src, CFG)
    assert [(s.name, s.kind, s.start_line, s.end_line) for s in symbols] == [
        ("Parser", "class", 1, 1), ("parse", "method", 2, 16), ("reset", "method", 18, 20)]
    # a control-flow line still starts a chunk (long methods stay in several), of the method it is in
    assert [(c.symbol_name, c.start_line, c.end_line) for c in chunks] == [
        ("Parser", 1, 1), ("parse", 2, 2), ("parse", 3, 5), ("parse", 6, 6), ("parse", 7, 16), ("reset", 18, 20)]


def test_go_heuristics():
    chunks, symbols = chunk_file("server/main.go", GO_SERVER, CFG)
    assert [(s.name, s.kind) for s in symbols] == [("Server", "type"), ("ServeHealth", "function"), ("main", "function")]
    assert language_of("server/main.go") == "go"


def test_markdown_sections_skip_fenced_code():
    chunks, symbols = chunk_file("docs/guide.md", MD_GUIDE, CFG)
    assert [s.name for s in symbols] == ["Guide", "Installation", "Reconnection policy", "Backoff"]
    assert [c.symbol_name for c in chunks] == [
        "Guide", "Guide > Installation", "Guide > Reconnection policy", "Guide > Reconnection policy > Backoff"]
    assert all(c.chunk_type == "doc" for c in chunks)
    install = chunks[1]
    assert "make install" in install.text and "# not a heading" in install.text


def test_rst_sections():
    chunks, symbols = chunk_file("docs/api.rst", RST_API, CFG)
    assert [s.name for s in symbols] == ["API reference", "Sessions"]
    assert chunks[0].start_line == 1 and chunks[1].symbol_name == "API reference > Sessions"


def test_plain_text_sliding_windows():
    text = "\n".join(f"line {i}" for i in range(120))
    cfg = IndexConfig(text_max_lines=50, text_overlap_lines=10)
    chunks, symbols = chunk_file("notes.txt", text, cfg)
    assert symbols == []
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 50), (41, 90), (81, 120)]
    assert all(c.chunk_type == "text" for c in chunks)


def test_classify_content():
    assert classify_content(b"abc\x00def", CFG) == "binary"
    assert classify_content(b"\xff\xfe\xfa", CFG) == "binary"
    assert classify_content(b"// Code generated by x. DO NOT EDIT.\npackage a\n", CFG) == "generated"
    assert classify_content(b"x" * 10000, CFG) == "minified"
    assert classify_content(b"def f():\n    return 1\n", CFG) is None


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b"# Generated from ../LaTeX.g4 by ANTLR 4.11\nfrom antlr4 import *\n", "generated"),
        (b"# This file is autogenerated\nX = 1\n", "generated"),
        (b"# -*- coding: utf-8 -*-\n# Automatically generated by tool\n", "generated"),
        (b'"""Lookup table."""\n# This table was generated by a call to f()\n', "generated"),
        (b"/* @generated */\nint x;\n", "generated"),
        # prose that only mentions generated things is indexed
        (b"# This tests the compilation of the source code generated with codegen\n", None),
        (b'"""\nContext manager for temporary files generated by the tests.\n"""\n', None),
        (b"def generated(x):\n    return x\n", None),
    ],
)
def test_generated_markers(head, expected):
    assert classify_content(head, CFG) == expected


@pytest.mark.parametrize("head, language", [
    (b"#!/usr/bin/env python3\n", "python"),
    (b"#!/usr/bin/python3.11 -u\n", "python"),
    (b"#!/bin/bash -e\n", "shell"),
    (b"#! /bin/sh\n", "shell"),
    (b"#!/usr/bin/env -S node --no-warnings\n", "javascript"),
    (b"#!/usr/bin/perl\n", None),
    (b"print(1)\n", None),
    (b"", None),
])
def test_shebang_language(head, language):
    assert shebang_language(head) == language
    assert language_of("scripts/x", head) == (language or "text")
    assert language_of("scripts/x.md", head) == "markdown"  # an extension wins
