"""``autology graph export``: the knowledge graph as Mermaid, Graphviz DOT, GraphML, JSON or one HTML page.

Every format is rendered from the same plain data (:func:`graph_data`): nodes sorted by id, relations
sorted by (source, type, target), so the same store always gives the same file. The HTML page is
self-contained: the data, the styles and a small force-directed layout drawn in inline SVG are all
in the file; nothing is fetched when it is opened.
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


def graph_data(store: NodeStore) -> dict[str, Any]:
    """Nodes (id, type, title, status, tags, references, excerpt) and relations, deterministic order."""
    nodes = []
    known = set()
    for node in sorted(store.index.all_nodes(), key=lambda n: n.id):
        known.add(node.id)
        excerpt = node.content if len(node.content) <= EXCERPT_CHARS else node.content[: EXCERPT_CHARS - 1] + "…"
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
    """One self-contained page: the data as JSON in a script tag, inline CSS and JS, an SVG canvas."""
    payload = json.dumps({"data": data, "colours": TYPE_COLOURS}, ensure_ascii=False).replace("</", "<\\/")
    return (
        _HTML.replace("__TITLE__", html.escape(title))
        .replace("__DATA__", payload)
        .replace("__STATS__", f"{len(data['nodes'])} nodes, {len(data['relations'])} relations")
    )


_HTML = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>__TITLE__</title>
<style>
  html, body { margin: 0; height: 100%; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: #212529; background: #f8f9fa; }
  #bar { position: fixed; top: 0; left: 0; right: 0; padding: 8px 12px; background: #fff; border-bottom: 1px solid #dee2e6; display: flex; gap: 12px; align-items: center; z-index: 2; flex-wrap: wrap; }
  #bar h1 { font-size: 16px; margin: 0; }
  #search { padding: 4px 8px; border: 1px solid #ced4da; border-radius: 4px; width: 220px; }
  .legend { display: flex; gap: 8px; flex-wrap: wrap; }
  .legend span { display: inline-flex; align-items: center; gap: 4px; font-size: 12px; }
  .legend i { width: 10px; height: 10px; border-radius: 50%; display: inline-block; }
  svg { position: fixed; top: 48px; left: 0; width: 100%; height: calc(100% - 48px); cursor: grab; }
  .edge { stroke: #adb5bd; stroke-width: 1.2; }
  .edge-label { font-size: 9px; fill: #868e96; }
  .node circle { stroke: #fff; stroke-width: 2; cursor: pointer; }
  .node text { font-size: 11px; fill: #343a40; pointer-events: none; }
  .node.superseded { opacity: 0.45; }
  .node.needs_review circle { stroke: #f59f00; stroke-width: 3; }
  .node.missing circle { fill: #fff; stroke: #c92a2a; stroke-dasharray: 3; }
  .dim { opacity: 0.12; }
  #panel { position: fixed; right: 12px; top: 60px; width: 320px; max-height: calc(100% - 80px); overflow: auto; background: #fff; border: 1px solid #dee2e6; border-radius: 6px; padding: 12px; display: none; z-index: 2; }
  #panel h2 { font-size: 15px; margin: 0 0 6px; }
  #panel pre { white-space: pre-wrap; font: 12px/1.4 ui-monospace, monospace; background: #f1f3f5; padding: 6px; }
  #panel .meta { color: #868e96; font-size: 12px; }
  #empty { position: fixed; top: 45%; width: 100%; text-align: center; color: #868e96; display: none; }
</style>
</head>
<body>
<div id="bar"><h1>__TITLE__</h1><span>__STATS__</span><input id="search" type="search" placeholder="filter by title or tag"><div class="legend" id="legend"></div></div>
<svg id="graph" xmlns="http://www.w3.org/2000/svg"><defs><marker id="arrow" viewBox="0 0 10 10" refX="19" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#adb5bd"/></marker></defs><g id="viewport"><g id="edges"></g><g id="nodes"></g></g></svg>
<div id="panel"></div>
<div id="empty">No knowledge nodes yet: capture some with /autology:capture or autology capture.</div>
<script id="graph-data" type="application/json">__DATA__</script>
<script>
"use strict";
window.addEventListener("error", function (e) { document.body.setAttribute("data-error", String(e.message)); });
(function () {
  var SVG = "http://www.w3.org/2000/svg";
  var input = JSON.parse(document.getElementById("graph-data").textContent);
  var data = input.data, colours = input.colours;
  var byId = {}, nodes = [], edges = [];
  data.nodes.forEach(function (n) { var c = Object.assign({}, n); byId[n.id] = c; nodes.push(c); });
  data.relations.forEach(function (r) {
    if (!byId[r.target]) { var m = { id: r.target, type: "missing", title: "missing " + r.target.slice(0, 8), status: "missing", tags: [], references: [], excerpt: "" }; byId[r.target] = m; nodes.push(m); }
    if (byId[r.source]) edges.push({ s: byId[r.source], t: byId[r.target], r: r });
  });
  // deterministic start: a circle in id order, then a force-directed layout (Fruchterman-Reingold)
  var W = 1000, H = 700, k = Math.sqrt((W * H) / Math.max(nodes.length, 1)) * 0.8;
  nodes.forEach(function (n, i) { var a = (2 * Math.PI * i) / Math.max(nodes.length, 1); n.x = W / 2 + (W / 3) * Math.cos(a); n.y = H / 2 + (H / 3) * Math.sin(a); });
  var iterations = nodes.length > 400 ? 80 : 250, temp = W / 10;
  for (var it = 0; it < iterations; it++) {
    nodes.forEach(function (n) { n.dx = 0; n.dy = 0; });
    for (var i = 0; i < nodes.length; i++) for (var j = i + 1; j < nodes.length; j++) {
      var a = nodes[i], b = nodes[j], dx = a.x - b.x, dy = a.y - b.y, d = Math.sqrt(dx * dx + dy * dy) || 0.01, f = (k * k) / d;
      a.dx += (dx / d) * f; a.dy += (dy / d) * f; b.dx -= (dx / d) * f; b.dy -= (dy / d) * f;
    }
    edges.forEach(function (e) {
      var dx = e.s.x - e.t.x, dy = e.s.y - e.t.y, d = Math.sqrt(dx * dx + dy * dy) || 0.01, f = (d * d) / k;
      e.s.dx -= (dx / d) * f; e.s.dy -= (dy / d) * f; e.t.dx += (dx / d) * f; e.t.dy += (dy / d) * f;
    });
    nodes.forEach(function (n) {
      n.dx += (W / 2 - n.x) * 0.05 * k / 10; n.dy += (H / 2 - n.y) * 0.05 * k / 10;  // gravity keeps loose nodes near
      var d = Math.sqrt(n.dx * n.dx + n.dy * n.dy) || 0.01, step = Math.min(d, temp);
      n.x = Math.min(W - 20, Math.max(20, n.x + (n.dx / d) * step));  // and the frame keeps everything in view
      n.y = Math.min(H - 20, Math.max(20, n.y + (n.dy / d) * step));
    });
    temp *= 0.97;
  }
  function el(name, attrs, parent) { var e = document.createElementNS(SVG, name); for (var a in attrs) e.setAttribute(a, attrs[a]); if (parent) parent.appendChild(e); return e; }
  var edgeLayer = document.getElementById("edges"), nodeLayer = document.getElementById("nodes");
  edges.forEach(function (e) {
    e.line = el("line", { x1: e.s.x, y1: e.s.y, x2: e.t.x, y2: e.t.y, "class": "edge", "marker-end": "url(#arrow)" }, edgeLayer);
    e.label = el("text", { x: (e.s.x + e.t.x) / 2, y: (e.s.y + e.t.y) / 2, "class": "edge-label", "text-anchor": "middle" }, edgeLayer);
    e.label.textContent = e.r.type;
  });
  nodes.forEach(function (n) {
    n.g = el("g", { "class": "node " + n.status + (n.type === "missing" ? " missing" : ""), transform: "translate(" + n.x + "," + n.y + ")" }, nodeLayer);
    el("circle", { r: 9, fill: colours[n.type] || "#fff" }, n.g);
    var t = el("text", { x: 12, y: 4 }, n.g);
    t.textContent = n.title.length > 40 ? n.title.slice(0, 39) + "…" : n.title;
    n.g.addEventListener("click", function (ev) { ev.stopPropagation(); show(n); });
  });
  var legend = document.getElementById("legend");
  Object.keys(colours).forEach(function (type) {
    var s = document.createElement("span"), i = document.createElement("i");
    i.style.background = colours[type]; s.appendChild(i); s.appendChild(document.createTextNode(type)); legend.appendChild(s);
  });
  var panel = document.getElementById("panel");
  function show(n) {
    panel.textContent = "";
    var h = document.createElement("h2"); h.textContent = n.title; panel.appendChild(h);
    var meta = document.createElement("div"); meta.className = "meta";
    meta.textContent = n.type + " · " + n.status + " · " + n.id + (n.tags.length ? " · #" + n.tags.join(" #") : "");
    panel.appendChild(meta);
    if (n.references.length) { var refs = document.createElement("div"); refs.className = "meta"; refs.textContent = "references: " + n.references.join(", "); panel.appendChild(refs); }
    if (n.excerpt) { var pre = document.createElement("pre"); pre.textContent = n.excerpt; panel.appendChild(pre); }
    var rel = edges.filter(function (e) { return e.s === n || e.t === n; });
    rel.forEach(function (e) { var p = document.createElement("div"); p.textContent = e.s.title + " —" + e.r.type + "→ " + e.t.title; panel.appendChild(p); });
    panel.style.display = "block";
  }
  document.getElementById("graph").addEventListener("click", function () { panel.style.display = "none"; });
  document.getElementById("search").addEventListener("input", function (ev) {
    var q = ev.target.value.trim().toLowerCase();
    nodes.forEach(function (n) {
      var hit = !q || n.title.toLowerCase().indexOf(q) >= 0 || n.tags.some(function (t) { return t.indexOf(q) >= 0; });
      n.g.classList.toggle("dim", !hit);
    });
  });
  // fit the drawing to the window; wheel zooms, drag pans
  var svg = document.getElementById("graph"), view;
  function fit() {
    if (!nodes.length) { view = { x: 0, y: 0, w: W, h: H }; }
    else {
      var xs = nodes.map(function (n) { return n.x; }), ys = nodes.map(function (n) { return n.y; });
      var x0 = Math.min.apply(null, xs) - 40, y0 = Math.min.apply(null, ys) - 40;
      view = { x: x0, y: y0, w: Math.max.apply(null, xs) + 200 - x0, h: Math.max.apply(null, ys) + 40 - y0 };
    }
    svg.setAttribute("viewBox", [view.x, view.y, view.w, view.h].join(" "));
  }
  fit();
  svg.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    var s = ev.deltaY > 0 ? 1.1 : 0.9; view.x += (view.w * (1 - s)) / 2; view.y += (view.h * (1 - s)) / 2; view.w *= s; view.h *= s;
    svg.setAttribute("viewBox", [view.x, view.y, view.w, view.h].join(" "));
  }, { passive: false });
  var drag = null;
  svg.addEventListener("mousedown", function (ev) { drag = { x: ev.clientX, y: ev.clientY }; });
  window.addEventListener("mouseup", function () { drag = null; });
  window.addEventListener("mousemove", function (ev) {
    if (!drag) return;
    var r = svg.getBoundingClientRect(), sx = view.w / r.width, sy = view.h / r.height;
    view.x -= (ev.clientX - drag.x) * sx; view.y -= (ev.clientY - drag.y) * sy; drag = { x: ev.clientX, y: ev.clientY };
    svg.setAttribute("viewBox", [view.x, view.y, view.w, view.h].join(" "));
  });
  if (!nodes.length) document.getElementById("empty").style.display = "block";
  document.body.setAttribute("data-rendered", String(nodes.length));
})();
</script>
</body>
</html>
"""


RENDERERS = {"mermaid": to_mermaid, "dot": to_dot, "graphml": to_graphml, "json": to_json, "html": to_html}


def export(store: NodeStore, fmt: str) -> str:
    if fmt not in RENDERERS:
        from autology_mcp.common.errors import ValidationError

        raise ValidationError("format", f"unknown export format {fmt!r}", FORMATS)
    return RENDERERS[fmt](graph_data(store))
