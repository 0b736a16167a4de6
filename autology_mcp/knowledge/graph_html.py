"""The knowledge graph as one self-contained HTML page (``autology graph export --format html``).

The page is assembled from files in ``assets/``: ``graph.html`` (the frame), ``graph.css``,
``graph.js`` (drawing, search, filters, the details panel) and d3-force with the three small d3
modules it needs (``assets/d3/``, vendored unchanged, ISC licence; see its README.md). The layout is
d3-force's, computed in the browser, so an export costs no more than writing the JSON.

Node text is untrusted: it goes into the page only as JSON inside a ``type="application/json"``
script element with every ``<``, ``>`` and ``&`` written as a ``\\u`` escape, and the page's script
puts it on screen with ``textContent`` or the canvas, never as HTML. A Content-Security-Policy
allows only the page's own two scripts (by hash) and forbids every fetch, so nothing is loaded from
anywhere even if something did slip through.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from functools import cache
from importlib import resources
from typing import Any

# (file in assets/d3, npm package, version): checked against the files by tests/test_graph_html.py
VENDORED = (
    ("d3-dispatch.min.js", "d3-dispatch", "3.0.2"),
    ("d3-quadtree.min.js", "d3-quadtree", "3.0.2"),
    ("d3-timer.min.js", "d3-timer", "3.0.2"),
    ("d3-force.min.js", "d3-force", "3.0.1"),
)
CONTENT_CHARS = 20_000  # per node in the page; longer content is cut, and the panel says how to read all of it
_PLACEHOLDER = re.compile(r"__(CSP|TITLE|STYLE|STATS|DATA|VENDOR|SCRIPT)__")


def _asset(*parts: str) -> str:
    return resources.files("autology_mcp.knowledge").joinpath("assets", *parts).read_text(encoding="utf-8")


@cache
def _static() -> dict[str, str]:
    licence = _asset("d3", "LICENSE").strip()
    vendor = "/* d3-force and the d3 modules it uses (d3js.org), vendored unchanged:\n" + licence + "\n*/\n"
    vendor += "\n".join(_asset("d3", name).strip() for name, _, _ in VENDORED)
    return {
        "frame": _asset("graph.html"),
        "style": _asset("graph.css").strip(),
        "vendor": vendor,
        "script": _asset("graph.js").strip(),
    }


def _json_for_script(value: Any) -> str:
    """JSON that can sit inside a <script> element whatever the strings in it contain."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def render_page(data: dict[str, Any], colours: dict[str, str], title: str = "autology knowledge graph") -> str:
    """The page for ``data`` (:func:`autology_mcp.knowledge.export.graph_data`); ``colours`` by node type."""
    static = _static()
    vendor = "\n" + static["vendor"] + "\n"
    script = "\n" + static["script"] + "\n"
    csp = (
        "default-src 'none'; "
        f"script-src {_sha256(vendor)} {_sha256(script)}; "
        "style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
    )
    nodes, relations = len(data["nodes"]), len(data["relations"])
    values = {
        "CSP": csp,
        "TITLE": html.escape(title),
        "STYLE": static["style"],
        "STATS": f"{nodes} node{'s' * (nodes != 1)} · {relations} relation{'s' * (relations != 1)}",
        "DATA": _json_for_script({"data": data, "colours": colours, "content_chars": CONTENT_CHARS}),
        "VENDOR": static["vendor"],
        "SCRIPT": static["script"],
    }
    # One pass, so that text inserted for one placeholder is never searched for another.
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], static["frame"])
