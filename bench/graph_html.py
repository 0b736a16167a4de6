"""The HTML graph (``autology graph export --format html``) at 50, 500 and 5,000 nodes, in headless Chromium.

For each size: a seeded store (bench/store_corpus.py, 1-2 relations per node), the export's time and
the page's size, then the page opened in a fresh headless Chromium (tests/chromium_cdp.py) and timed
from navigation to the layout settled (``data-settled``, which the page sets when d3-force's
simulation has cooled; the page also reports its own milliseconds from its script's start), and
the time to draw one frame while zooming in and out (ten wheel steps per run).

    python bench/graph_html.py [--sizes 50 500 5000] [--runs 3] [--shots DIR]

``--shots DIR`` also writes screenshots: each size fitted to the window, the 5,000-node graph zoomed
in, a node clicked (its details panel) and a search at 500 nodes.

``--candidates NPMDIR`` instead compares the layout libraries considered (docs/benchmarks.md, "HTML
graph"): d3-force, sigma.js 3 + graphology + ForceAtlas2, Cytoscape.js + fcose, vis-network, each
in a minimal page (layout, then the library's own drawing), reporting page size, time to a settled
layout and crowding (nodes whose nearest neighbour is closer than a tenth of the mean spacing).
With ``--networkx-python PY`` it also times ``networkx.spring_layout`` (the Python alternative) in
an interpreter PY that has networkx, numpy and scipy. Prepare NPMDIR once (npm registry):

    npm install --prefix NPMDIR d3-force@3.0.1 sigma@3.0.3 graphology@0.26.0 \\
        graphology-layout-forceatlas2@0.10.1 cytoscape@3.34.4 cytoscape-fcose@2.2.0 vis-network@10.1.5 esbuild
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from chromium_cdp import CHROMIUM, Browser  # noqa: E402
from store_corpus import generate_store  # noqa: E402

from autology_mcp.knowledge.export import export  # noqa: E402
from autology_mcp.knowledge.service import Autology  # noqa: E402

WIDTH, HEIGHT = 1280, 800


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def make_store(root: Path, size: int) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    generate_store(root, size)
    return root


def export_page(root: Path, out: Path) -> tuple[float, int]:
    service = Autology.open(root)
    started = time.perf_counter()
    text = export(service.store, "html")
    elapsed = time.perf_counter() - started
    service.close()
    out.write_text(text, encoding="utf-8")
    return elapsed, len(text.encode("utf-8"))


def open_page(browser: Browser, page: Path):
    started = time.monotonic()
    tab = browser.open(page.as_uri(), timeout=600)
    tab.wait_for("document.body.dataset.settled", timeout=600)
    return tab, time.monotonic() - started


def measure(sizes: list[int], runs: int, shots: Path | None) -> None:
    print(f"# {uptime()}")
    print(f"# chromium: {CHROMIUM}; window {WIDTH}x{HEIGHT}; {runs} runs per size, each in a fresh browser")
    with tempfile.TemporaryDirectory(prefix="autology-graph-html-") as tmp:
        for size in sizes:
            root = make_store(Path(tmp) / f"store-{size}", size)
            page = Path(tmp) / f"graph-{size}.html"
            export_s, size_bytes = export_page(root, page)
            walls, own, frames = [], [], []
            for _ in range(runs):
                with Browser(WIDTH, HEIGHT) as browser:
                    tab, wall = open_page(browser, page)
                    walls.append(wall)
                    own.append(int(tab.evaluate("document.body.dataset.settled")) / 1000)
                    errors = tab.errors()
                    labels = len(tab.evaluate("autologyGraph.labelled()"))
                    for i in range(10):  # frames while zooming in, then out
                        tab.mouse("mouseWheel", WIDTH / 2, HEIGHT / 2, deltaX=0, deltaY=-120 if i < 5 else 120)
                        time.sleep(0.1)
                        frames.append(tab.evaluate("autologyGraph.drawMs()"))
            relations = json.loads(
                page.read_text().split('type="application/json">', 1)[1].split("</script>", 1)[0]
            )["data"]["relations"]
            print(
                f"nodes={size:5} relations={len(relations):5} page={size_bytes / 1e6:6.2f} MB export={export_s:5.2f} s "
                f"open->settled median={statistics.median(walls):6.2f} s (runs {', '.join(f'{w:.2f}' for w in walls)}) "
                f"layout(page's own clock) median={statistics.median(own):6.2f} s labels at fit={labels} "
                f"frame while zooming median/max={statistics.median(frames):.1f}/{max(frames):.1f} ms console errors={len(errors)}",
                flush=True,
            )
            if shots:
                screenshots(page, size, shots)
    print(f"# {uptime()}")


def screenshots(page: Path, size: int, shots: Path) -> None:
    shots.mkdir(parents=True, exist_ok=True)
    with Browser(WIDTH, HEIGHT) as browser:
        tab, _ = open_page(browser, page)
        time.sleep(0.3)
        tab.screenshot(shots / f"graph-{size}.png")
        if size >= 5000:
            for _ in range(6):
                tab.mouse("mouseWheel", WIDTH / 2, HEIGHT / 2, deltaX=0, deltaY=-300)
            time.sleep(0.3)
            tab.screenshot(shots / f"graph-{size}-zoomed.png")
            for _ in range(3):
                tab.mouse("mouseWheel", WIDTH / 2, HEIGHT / 2, deltaX=0, deltaY=-300)
            time.sleep(0.3)
            tab.screenshot(shots / f"graph-{size}-zoomed-more.png")
        if size == 500:
            # the best connected node, clicked: its details panel and its neighbourhood
            top = tab.evaluate("document.getElementById('graph').getBoundingClientRect().top")
            best = max(tab.evaluate("autologyGraph.positions()"), key=lambda p: p["wr"])
            tab.click(best["x"], best["y"] + top)
            time.sleep(0.3)
            tab.mouse("mouseMoved", best["x"], best["y"] + top)
            time.sleep(0.2)
            tab.screenshot(shots / f"graph-{size}-clicked.png")
            tab.evaluate("document.querySelector('#panel .close').click()")
            tab.evaluate("{ const s = document.getElementById('search'); s.value = 'cache'; s.dispatchEvent(new Event('input')); }")
            time.sleep(0.3)
            tab.screenshot(shots / f"graph-{size}-search.png")
            tab.evaluate("{ const s = document.getElementById('search'); s.value = ''; s.dispatchEvent(new Event('input')); }")
            for kind in ("component", "concept", "pattern", "issue", "session", "convention"):
                tab.evaluate(f"document.querySelector('#types .chip[data-value={kind}]').click()")
            tab.evaluate("document.getElementById('fit').click()")
            time.sleep(0.3)
            tab.screenshot(shots / f"graph-{size}-decisions-only.png")
        assert not tab.errors(), tab.errors()


# ------------------------------------------------------------------------------ candidates

CANDIDATE_COMMON = """
var D = JSON.parse(document.getElementById('d').textContent);
var idx = new Map(D.nodes.map(function (n, i) { return [n.id, i]; }));
var E = D.relations.filter(function (r) { return idx.has(r.target) && r.source !== r.target; })
  .map(function (r) { return [idx.get(r.source), idx.get(r.target)]; });
var COL = %s;
function done(t0, pos) { window.__pos = pos; document.body.dataset.settled = String(Math.round(performance.now() - t0)); }
"""

CANDIDATES = {
    "d3-force 3.0.1": (
        "d3",
        """
var t0 = performance.now();
var nodes = D.nodes.map(function (n) { return { t: n.type }; });
var sim = d3.forceSimulation(nodes)
  .force('link', d3.forceLink(E.map(function (e) { return { source: e[0], target: e[1] }; })).distance(40))
  .force('charge', d3.forceManyBody().strength(-70).theta(0.9).distanceMax(900))
  .force('x', d3.forceX().strength(0.045)).force('y', d3.forceY().strength(0.045))
  .force('collide', d3.forceCollide(8)).alphaDecay(nodes.length > 2000 ? 0.035 : 0.0228).stop();
var n = Math.ceil(Math.log(sim.alphaMin()) / Math.log(1 - sim.alphaDecay()));
for (var i = 0; i < n; i++) sim.tick();
var pos = nodes.map(function (p) { return [p.x, p.y]; });
var c = document.getElementById('c'), W = c.width = innerWidth, H = c.height = innerHeight, g = c.getContext('2d');
var xs = pos.map(function (p) { return p[0]; }), ys = pos.map(function (p) { return p[1]; });
var x0 = Math.min.apply(null, xs), x1 = Math.max.apply(null, xs), y0 = Math.min.apply(null, ys), y1 = Math.max.apply(null, ys);
var s = Math.min((W - 40) / (x1 - x0 || 1), (H - 40) / (y1 - y0 || 1));
function X(p) { return 20 + (p[0] - x0) * s; } function Y(p) { return 20 + (p[1] - y0) * s; }
g.strokeStyle = 'rgba(120,120,120,0.3)'; g.beginPath();
E.forEach(function (e) { g.moveTo(X(pos[e[0]]), Y(pos[e[0]])); g.lineTo(X(pos[e[1]]), Y(pos[e[1]])); }); g.stroke();
nodes.forEach(function (p, i) { g.fillStyle = COL[p.t]; g.beginPath(); g.arc(X(pos[i]), Y(pos[i]), 3, 0, 7); g.fill(); });
done(t0, pos);
""",
    ),
    "sigma 3.0.3 + graphology 0.26 + ForceAtlas2 0.10.1 (300 iterations)": (
        "sigma",
        """
var t0 = performance.now();
var G = new GL.Graph({ multi: true }), seed = 1;
function rnd() { seed = (seed * 1664525 + 1013904223) % 4294967296; return seed / 4294967296; }
D.nodes.forEach(function (n, i) { G.addNode(String(i), { x: rnd() * 100, y: rnd() * 100, size: 3, color: COL[n.type] }); });
E.forEach(function (e) { G.addEdge(String(e[0]), String(e[1]), { color: '#ccc' }); });
GL.forceAtlas2.assign(G, { iterations: 300, settings: GL.forceAtlas2.inferSettings(G) });
var pos = D.nodes.map(function (n, i) { var a = G.getNodeAttributes(String(i)); return [a.x, a.y]; });
new GL.Sigma(G, document.getElementById('box'), { renderLabels: false });
done(t0, pos);
""",
    ),
    "cytoscape 3.34.4 + fcose 2.2.0 (quality QUALITY)": (
        "cytoscape",
        """
var t0 = performance.now();
var els = D.nodes.map(function (n, i) { return { data: { id: 'n' + i, c: COL[n.type] } }; })
  .concat(E.map(function (e, j) { return { data: { id: 'e' + j, source: 'n' + e[0], target: 'n' + e[1] } }; }));
var cy = cytoscape({ container: document.getElementById('box'), elements: els, layout: { name: 'preset' },
  style: [{ selector: 'node', style: { 'background-color': 'data(c)', width: 6, height: 6 } }, { selector: 'edge', style: { width: 0.5, 'line-color': '#ccc' } }] });
var lay = cy.layout({ name: 'fcose', animate: false, randomize: true, quality: 'QUALITY' });
lay.one('layoutstop', function () { var pos = cy.nodes().map(function (n) { var p = n.position(); return [p.x, p.y]; }); cy.fit(); done(t0, pos); });
lay.run();
""",
    ),
    "vis-network 10.1.5 (barnesHut, up to 1000 stabilisation iterations)": (
        "vis",
        """
var t0 = performance.now();
var net = new vis.Network(document.getElementById('box'), {
  nodes: new vis.DataSet(D.nodes.map(function (n, i) { return { id: i, color: COL[n.type], shape: 'dot', size: 4 }; })),
  edges: new vis.DataSet(E.map(function (e, j) { return { id: j, from: e[0], to: e[1] }; })) },
  { layout: { improvedLayout: false, randomSeed: 1 }, edges: { smooth: false, color: '#ccc' },
    physics: { solver: 'barnesHut', stabilization: { iterations: 1000, updateInterval: 50 } } });
net.once('stabilizationIterationsDone', function () { net.setOptions({ physics: false }); var p = net.getPositions();
  done(t0, D.nodes.map(function (n, i) { return [p[i].x, p[i].y]; })); });
""",
    ),
}


def candidate_libraries(npm: Path) -> dict[str, str]:
    modules = npm / "node_modules"
    d3 = HERE.parent / "autology_mcp" / "knowledge" / "assets" / "d3"
    entry = npm / "sigma-entry.js"
    entry.write_text(
        'import Graph from "graphology"; import Sigma from "sigma"; '
        'import forceAtlas2 from "graphology-layout-forceatlas2"; window.GL = { Graph, Sigma, forceAtlas2 };\n'
    )
    bundle = npm / "sigma-bundle.min.js"
    subprocess.run(
        [str(modules / ".bin" / "esbuild"), str(entry), "--bundle", "--minify", "--format=iife", f"--outfile={bundle}"],
        check=True,
        capture_output=True,
    )
    cyto = ["cytoscape/dist/cytoscape.min.js", "layout-base/layout-base.js", "cose-base/cose-base.js", "cytoscape-fcose/cytoscape-fcose.js"]
    return {
        "d3": "\n".join((d3 / f"{m}.min.js").read_text() for m in ("d3-dispatch", "d3-quadtree", "d3-timer", "d3-force")),
        "sigma": bundle.read_text(),
        "cytoscape": "\n".join((modules / f).read_text() for f in cyto),
        "vis": (modules / "vis-network/standalone/umd/vis-network.min.js").read_text(),
    }


def crowded(pos: list[list[float]]) -> int:
    """Nodes whose nearest neighbour is closer than a tenth of the mean spacing sqrt(area / n)."""
    xs, ys = [p[0] for p in pos], [p[1] for p in pos]
    cell = 0.1 * math.sqrt((max(xs) - min(xs)) * (max(ys) - min(ys)) / len(pos))
    grid: dict[tuple[int, int], list[int]] = {}
    for i, (x, y) in enumerate(pos):
        grid.setdefault((int(x // cell), int(y // cell)), []).append(i)
    count = 0
    for i, (x, y) in enumerate(pos):
        cx, cy = int(x // cell), int(y // cell)
        count += any(
            j != i and math.hypot(pos[j][0] - x, pos[j][1] - y) < cell
            for dx in (-1, 0, 1)
            for dy in (-1, 0, 1)
            for j in grid.get((cx + dx, cy + dy), ())
        )
    return count


NETWORKX_LAYOUT = """
import json, sys, time
import networkx as nx
data = json.load(open(sys.argv[1]))
graph = nx.Graph()
graph.add_nodes_from(n["id"] for n in data["nodes"])
graph.add_edges_from((r["source"], r["target"]) for r in data["relations"] if r["source"] != r["target"])
started = time.perf_counter()
pos = nx.spring_layout(graph, seed=1)
elapsed = time.perf_counter() - started
json.dump({"seconds": elapsed, "pos": [list(map(float, pos[n["id"]])) for n in data["nodes"]],
           "versions": [nx.__version__]}, open(sys.argv[2], "w"))
"""


def networkx_layout(python: str, data: dict, tmp: Path) -> str:
    """networkx.spring_layout (numpy, and scipy above 500 nodes) in another interpreter that has them."""
    source, out = tmp / "nx-graph.json", tmp / "nx-out.json"
    source.write_text(json.dumps(data))
    subprocess.run([python, "-c", NETWORKX_LAYOUT, str(source), str(out)], check=True)
    result = json.loads(out.read_text())
    n_crowded = crowded(result["pos"])
    size = len(result["pos"])
    return f"layout={result['seconds']:6.2f} s (Python, no page) crowded={n_crowded} ({100 * n_crowded / size:.1f}%)"


def compare(npm: Path, sizes: list[int], shots: Path | None, fcose_quality: str, timeout: float, nx_python: str | None) -> None:
    from autology_mcp.knowledge.export import TYPE_COLOURS, graph_data

    libraries = candidate_libraries(npm)
    print(f"# {uptime()}")
    with tempfile.TemporaryDirectory(prefix="autology-graph-candidates-") as tmp:
        for size in sizes:
            service = Autology.open(make_store(Path(tmp) / f"store-{size}", size))
            data = graph_data(service.store)
            service.close()
            slim = json.dumps(
                {
                    "nodes": [{"id": n["id"], "type": n["type"]} for n in data["nodes"]],
                    "relations": [{"source": r["source"], "target": r["target"]} for r in data["relations"]],
                }
            ).replace("<", "\\u003c")
            for name, (lib, js) in CANDIDATES.items():
                page = Path(tmp) / f"{lib}-{size}.html"
                page.write_text(
                    "<!DOCTYPE html><html><head><meta charset=utf-8><style>html,body{margin:0;height:100%}"
                    "#box{width:100%;height:100%}canvas#c{display:block}</style></head><body><div id=box><canvas id=c></canvas></div>"
                    f"<script id=d type=application/json>{slim}</script><script>{libraries[lib]}</script>"
                    f"<script>{CANDIDATE_COMMON % json.dumps(TYPE_COLOURS)}{js.replace('QUALITY', fcose_quality)}</script></body></html>"
                )
                line = f"{name.replace('QUALITY', fcose_quality):70} n={size:5} libraries={len(libraries[lib]) / 1e3:5.0f} kB"
                try:
                    with Browser(WIDTH, HEIGHT) as browser:
                        started = time.monotonic()
                        tab = browser.open(page.as_uri(), timeout=timeout)
                        own = int(tab.wait_for("document.body.dataset.settled", timeout=timeout)) / 1000
                        wall = time.monotonic() - started
                        pos = tab.evaluate("window.__pos")
                        if shots:
                            shots.mkdir(parents=True, exist_ok=True)
                            time.sleep(0.5)
                            tab.screenshot(shots / f"candidate-{lib}-{size}.png")
                    n_crowded = crowded(pos)
                    line += f" layout={own:6.2f} s open->settled={wall:6.2f} s crowded={n_crowded} ({100 * n_crowded / size:.1f}%)"
                except TimeoutError:
                    line += f" did not settle within {timeout:.0f} s"
                print(line, flush=True)
            if nx_python:
                name = f"networkx spring_layout ({nx_python})"
                print(f"{name:70} n={size:5} {networkx_layout(nx_python, data, Path(tmp))}", flush=True)
    print(f"# {uptime()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 500, 5000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--shots", type=Path, help="write screenshots here")
    parser.add_argument("--candidates", type=Path, metavar="NPMDIR", help="compare the candidate libraries instead")
    parser.add_argument("--fcose-quality", default="draft", choices=["draft", "default", "proof"])
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--networkx-python", help="with --candidates: also time networkx.spring_layout in this interpreter (needs networkx, numpy, scipy)")
    args = parser.parse_args()
    if CHROMIUM is None:
        sys.exit("chromium is not installed")
    if args.candidates:
        compare(args.candidates, args.sizes, args.shots, args.fcose_quality, args.timeout, args.networkx_python)
    else:
        measure(args.sizes, args.runs, args.shots)


if __name__ == "__main__":
    main()
