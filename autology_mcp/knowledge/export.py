"""``autology graph export``: the knowledge graph as Mermaid, Graphviz DOT, GraphML, JSON or one HTML page.

Every format is rendered from the same plain data (:func:`graph_data`): nodes sorted by id, relations
sorted by (source, type, target), so the same store always gives the same file. The HTML page
(knowledge/graph_html.py) is self-contained: the data, the styles, its script and the vendored
d3-force layout are all in the file; nothing is fetched when it is opened.
"""

from __future__ import annotations

import html
import json
from typing import TYPE_CHECKING, Any
from xml.etree import ElementTree as ET

if TYPE_CHECKING:
    from autology_mcp.knowledge.store import NodeStore

FORMATS = ("mermaid", "dot", "graphml", "json", "html")
EXCERPT_CHARS = 400
TYPE_COLOURS = {
    "decision": "#e8590c",
    "component": "#1c7ed6",
    "convention": "#2b8a3e",
    "concept": "#7048e8",
    "pattern": "#0c8599",
    "issue": "#c92a2a",
    "session": "#868e96",
}


def graph_data(store: NodeStore, excerpt_chars: int = EXCERPT_CHARS) -> dict[str, Any]:
    """Nodes (id, type, title, status, tags, references, excerpt) and relations, deterministic order.

    ``excerpt`` is the content, cut to ``excerpt_chars`` (ending in "…" when cut)."""
    nodes = []
    known = set()
    for node in sorted(store.index.all_nodes(), key=lambda n: n.id):
        known.add(node.id)
        cut = len(node.content) > excerpt_chars
        excerpt = node.content[: excerpt_chars - 1] + "…" if cut else node.content
        nodes.append(
            {
                "id": node.id,
                "type": node.type.value,
                "title": node.title,
                "status": node.status.value,
                "tags": list(node.tags),
                "references": list(node.references),
                "excerpt": excerpt,
            }
        )
    relations = []
    for r in sorted(store.index.relations(), key=lambda r: (r.source, r.type.value, r.target)):
        relations.append(
            {
                "source": r.source,
                "target": r.target,
                "type": r.type.value,
                "description": r.description,
                "confidence": r.confidence,
                "dangling": r.target not in known,
            }
        )
    return {"nodes": nodes, "relations": relations}


# ------------------------------------------------------------------------------ text formats


def to_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _mermaid_id(node_id: str) -> str:
    return "n_" + node_id.replace("-", "_")


def _mermaid_label(text: str) -> str:
    return html.escape(text, quote=True).replace("&quot;", "#quot;").replace("&#x27;", "'")


def to_mermaid(data: dict[str, Any]) -> str:
    lines = ["graph LR"]
    for node in data["nodes"]:
        lines.append(
            f'  {_mermaid_id(node["id"])}["{_mermaid_label(node["title"])}<br/><i>{node["type"]}</i>"]:::{node["type"]}'
        )
    for r in data["relations"]:
        if r["dangling"]:
            lines.append(f'  {_mermaid_id(r["target"])}["missing {r["target"][:8]}"]:::missing')
    for r in data["relations"]:
        lines.append(f"  {_mermaid_id(r['source'])} -->|{r['type']}| {_mermaid_id(r['target'])}")
    for node_type, colour in TYPE_COLOURS.items():
        lines.append(f"  classDef {node_type} fill:{colour},color:#fff,stroke:#333")
    lines.append("  classDef missing fill:#fff,stroke:#c92a2a,stroke-dasharray:4")
    superseded = [_mermaid_id(n["id"]) for n in data["nodes"] if n["status"] == "superseded"]
    if superseded:
        lines.append("  classDef superseded opacity:0.5")
        lines.append(f"  class {','.join(superseded)} superseded")
    return "\n".join(lines) + "\n"


def _dot_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(data: dict[str, Any]) -> str:
    lines = [
        "digraph autology {",
        "  rankdir=LR;",
        '  node [shape=box, style="rounded,filled", fontcolor=white, fontname="Helvetica"];',
    ]
    for node in data["nodes"]:
        style = ', style="rounded,filled,dashed"' if node["status"] == "superseded" else ""
        lines.append(
            f"  {_dot_string(node['id'])} [label={_dot_string(node['title'] + chr(10) + node['type'])}, "
            f'fillcolor="{TYPE_COLOURS[node["type"]]}"{style}];'
        )
    for r in data["relations"]:
        if r["dangling"]:
            lines.append(
                f'  {_dot_string(r["target"])} [label="missing", fillcolor=white, fontcolor=red, style=dashed];'
            )
    for r in data["relations"]:
        lines.append(f"  {_dot_string(r['source'])} -> {_dot_string(r['target'])} [label={_dot_string(r['type'])}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def to_graphml(data: dict[str, Any]) -> str:
    ns = "http://graphml.graphdrawing.org/xmlns"
    root = ET.Element("graphml", {"xmlns": ns})
    keys = [
        ("type", "node", "string"),
        ("title", "node", "string"),
        ("status", "node", "string"),
        ("tags", "node", "string"),
        ("relation", "edge", "string"),
        ("description", "edge", "string"),
        ("confidence", "edge", "double"),
    ]
    for name, domain, kind in keys:
        ET.SubElement(root, "key", {"id": name, "for": domain, "attr.name": name, "attr.type": kind})
    graph = ET.SubElement(root, "graph", {"id": "autology", "edgedefault": "directed"})

    def data_el(parent: ET.Element, key: str, value: Any) -> None:
        if value is not None and value != "":
            ET.SubElement(parent, "data", {"key": key}).text = str(value)

    for node in data["nodes"]:
        el = ET.SubElement(graph, "node", {"id": node["id"]})
        data_el(el, "type", node["type"])
        data_el(el, "title", node["title"])
        data_el(el, "status", node["status"])
        data_el(el, "tags", ",".join(node["tags"]))
    for r in data["relations"]:
        if r["dangling"]:
            ET.SubElement(graph, "node", {"id": r["target"]})
    for i, r in enumerate(data["relations"]):
        el = ET.SubElement(graph, "edge", {"id": f"e{i}", "source": r["source"], "target": r["target"]})
        data_el(el, "relation", r["type"])
        data_el(el, "description", r["description"])
        data_el(el, "confidence", r["confidence"])
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# ------------------------------------------------------------------------------ html


def to_html(data: dict[str, Any], title: str = "autology knowledge graph") -> str:
    """One self-contained page (knowledge/graph_html.py): a force-directed drawing, search, filters, details."""
    from autology_mcp.knowledge.graph_html import render_page

    return render_page(data, TYPE_COLOURS, title)


RENDERERS = {"mermaid": to_mermaid, "dot": to_dot, "graphml": to_graphml, "json": to_json, "html": to_html}


def export(store: NodeStore, fmt: str) -> str:
    if fmt not in RENDERERS:
        from autology_mcp.common.errors import ValidationError

        raise ValidationError("format", f"unknown export format {fmt!r}", FORMATS)
    if fmt == "html":  # the page shows a node's whole text (up to graph_html.CONTENT_CHARS) when clicked
        from autology_mcp.knowledge.graph_html import CONTENT_CHARS

        return to_html(graph_data(store, excerpt_chars=CONTENT_CHARS))
    return RENDERERS[fmt](graph_data(store))
