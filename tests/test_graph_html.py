"""The HTML graph (``autology graph export --format html``): the page's parts, its escaping, and the page
itself opened in headless Chromium at 50, 500 and 5,000 nodes (driven over the DevTools protocol by
tests/chromium_cdp.py; skipped where Chromium is not installed)."""

from __future__ import annotations

import base64
import fnmatch
import hashlib
import json
import math
import re
import struct
import sys
import time
import tomllib
import zlib
from pathlib import Path

import pytest

from autology_mcp.knowledge.export import TYPE_COLOURS, export, graph_data, to_html
from autology_mcp.knowledge.graph_html import CONTENT_CHARS, VENDORED
from autology_mcp.knowledge.service import Autology

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from chromium_cdp import CHROMIUM, Browser  # noqa: E402
from store_corpus import generate_store  # noqa: E402

ASSETS = Path(__file__).resolve().parent.parent / "autology_mcp" / "knowledge" / "assets"
ADR = "## Context\nc\n\n## Decision\nd\n\n## Alternatives\na\n\n## Consequences\nq"
XSS_TITLE = "<img src=x onerror=alert(1)>"
XSS_CONTENT = (
    'Ends the data early: </script><script>document.body.setAttribute("data-error","injected")</script>\n'
    "<!-- <script> an HTML comment and a script opener, & an ampersand, "
    "<svg onload=alert(2)>, __SCRIPT__ and __DATA__ placeholders."
)
WIDTH, HEIGHT = 1200, 800
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (Debian: apt-get install chromium)")


@pytest.fixture
def service(tmp_path: Path):
    s = Autology.open(tmp_path)
    ids = {
        "old": s.capture("Use Redis for the cache", ADR, type="decision", tags=["cache"]).id,
        "new": s.capture("Use an in-process cache", ADR, type="decision", tags=["cache", "perf"]).id,
        "comp": s.capture("Pricing API", "Serves prices.", type="component", references=["src/pricing.py"]).id,
        "xss": s.capture(XSS_TITLE, XSS_CONTENT, type="concept", tags=["security"]).id,
        "long": s.capture("A long note", "word " * 5000, type="concept").id,
    }
    s.relate(ids["new"], ids["old"], "supersedes", description="cheaper to run")
    s.relate(ids["new"], ids["comp"], "affects")
    s.relate(ids["xss"], ids["comp"], "relates_to", description=XSS_TITLE)
    s.update(ids["old"], status="superseded")
    s.ids = ids  # type: ignore[attr-defined]
    yield s
    s.close()


def payload(page: str) -> dict:
    raw = page.split('<script id="graph-data" type="application/json">', 1)[1].split("</script>", 1)[0]
    return json.loads(raw)


def scripts(page: str) -> list[str]:
    return re.findall(r"<script>(.*?)</script>", page, flags=re.S)


# ------------------------------------------------------------------------------ the page's parts


def test_vendored_d3_matches_its_record() -> None:
    readme = (ASSETS / "d3" / "README.md").read_text()
    for name, package, version in VENDORED:
        text = (ASSETS / "d3" / name).read_text()
        assert text.startswith(f"// https://d3js.org/{package}/ v{version} "), name
        assert f"| {name} | {package} | {version} | ISC |" in readme
    assert "Permission to use, copy, modify, and/or distribute" in (ASSETS / "d3" / "LICENSE").read_text()


def test_every_asset_is_package_data() -> None:
    config = tomllib.loads((ASSETS.parents[2] / "pyproject.toml").read_text())
    globs = config["tool"]["setuptools"]["package-data"]["autology_mcp.knowledge"]
    for path in ASSETS.rglob("*"):
        if path.is_file():
            rel = path.relative_to(ASSETS.parent).as_posix()
            assert any(fnmatch.fnmatch(rel, g) for g in globs), f"{rel} would be missing from the wheel"


def test_page_is_self_contained_and_locked_down(service: Autology) -> None:
    page = export(service.store, "html")
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"<(script|img|iframe|link)[^>]*\s(src|href)=", page, flags=re.I)
    assert "@import" not in page and "url(" not in page
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', page).group(1)
    assert "default-src 'none'" in csp and "unsafe-inline" not in csp.split("style-src")[0]
    # the page's own two scripts, and only they, may run: their hashes are in the policy
    own = scripts(page)
    assert len(own) == 2
    for body in own:
        digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in csp
    assert page.count("<script") == 3 and page.count("</script>") == 3  # the data, d3, the page's script


def test_untrusted_text_cannot_leave_the_data_element(service: Autology) -> None:
    page = export(service.store, "html")
    assert XSS_TITLE not in page and "<svg" not in page and "<!--" not in page and "<img" not in page
    data = payload(page)["data"]
    node = next(n for n in data["nodes"] if n["id"] == service.ids["xss"])
    assert node["title"] == XSS_TITLE and node["excerpt"] == XSS_CONTENT  # round trip, placeholders untouched
    rel = next(r for r in data["relations"] if r["source"] == service.ids["xss"])
    assert rel["description"] == XSS_TITLE
    assert "&lt;" in to_html(graph_data(service.store), title="<b>x</b>")  # the page title is escaped too


def test_page_carries_whole_content_up_to_the_cap(service: Autology) -> None:
    data = payload(export(service.store, "html"))
    assert data["content_chars"] == CONTENT_CHARS and data["colours"] == TYPE_COLOURS
    nodes = {n["id"]: n for n in data["data"]["nodes"]}
    assert nodes[service.ids["new"]]["excerpt"] == ADR  # the whole text, not the JSON export's 400 characters
    long = nodes[service.ids["long"]]["excerpt"]
    assert len(long) == CONTENT_CHARS and long.endswith("…")
    assert len(json.loads(export(service.store, "json"))["nodes"][0]["excerpt"]) <= 400  # JSON export unchanged


def test_empty_store_gives_a_page(tmp_path: Path) -> None:
    s = Autology.open(tmp_path)
    page = export(s.store, "html")
    s.close()
    assert payload(page)["data"] == {"nodes": [], "relations": []} and "0 nodes · 0 relations" in page


# ------------------------------------------------------------------------------ in headless Chromium


def png_pixels(path: Path) -> tuple[int, int, bytes]:
    """Width, height and the decompressed scanlines of a PNG (enough to tell a blank image)."""
    blob = path.read_bytes()
    assert blob[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(blob):
        (length,), kind = struct.unpack(">I", blob[pos : pos + 4]), blob[pos + 4 : pos + 8]
        chunk = blob[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", chunk[:8])
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    return width, height, zlib.decompress(idat)


def open_settled(browser: Browser, page: Path, timeout: float = 300):
    tab = browser.open(page.as_uri(), timeout=timeout)
    tab.wait_for("document.body.dataset.settled", timeout=timeout)
    return tab


def closest_pairs(points: list[dict], key_x: str, key_y: str, within: float) -> list[tuple[dict, dict, float]]:
    """Every pair of points closer than ``within`` (a grid, so 5,000 points take no time)."""
    grid: dict[tuple[int, int], list[dict]] = {}
    for p in points:
        grid.setdefault((int(p[key_x] // within), int(p[key_y] // within)), []).append(p)
    pairs = []
    for (gx, gy), cell in grid.items():
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                for q in grid.get((gx + dx, gy + dy), ()):
                    for p in cell:
                        if p["id"] < q["id"]:
                            d = math.hypot(p[key_x] - q[key_x], p[key_y] - q[key_y])
                            if d < within:
                                pairs.append((p, q, d))
    return pairs


def check_drawing(tab, count: int) -> dict:
    """The checks every size must pass; returns the view for further checks."""
    assert tab.evaluate("document.body.dataset.error || ''") == ""
    assert tab.errors() == []
    view = tab.evaluate("autologyGraph.view()")
    positions = tab.evaluate("autologyGraph.positions()")
    assert len(positions) == count
    # inside the frame, clear of its edges: nothing clamped
    for p in positions:
        assert 20 <= p["x"] <= view["width"] - 20 and 20 <= p["y"] <= view["height"] - 20, p
    # no pile-up along the drawing's own bounding box either
    xs, ys = [p["x"] for p in positions], [p["y"] for p in positions]
    for side in (min(xs), max(xs)):
        assert sum(abs(x - side) < 1 for x in xs) <= max(2, count // 100)
    for side in (min(ys), max(ys)):
        assert sum(abs(y - side) < 1 for y in ys) <= max(2, count // 100)
    # no two centres coincide on screen, and no two nodes overlap in the layout
    assert not closest_pairs(positions, "x", "y", 1.0)
    overlaps = [(p["id"], q["id"]) for p, q, d in closest_pairs(positions, "wx", "wy", 30.0) if d < p["wr"] + q["wr"]]
    assert not overlaps, overlaps[:5]
    check_labels(tab)
    return view


def check_labels(tab) -> None:
    """No label printed over another."""
    labels = tab.evaluate("autologyGraph.labelled()")
    assert len(labels) <= 400
    for i, a in enumerate(labels):
        for b in labels[i + 1 :]:
            x0, y0, x1, y1 = a["box"]
            u0, v0, u1, v1 = b["box"]
            assert x1 <= u0 or u1 <= x0 or y1 <= v0 or v1 <= y0, (a, b)


def named_share(tab) -> float:
    """The share of the nodes on screen that carry a label."""
    view = tab.evaluate("autologyGraph.view()")
    on_screen = [
        p for p in tab.evaluate("autologyGraph.positions()") if 0 <= p["x"] <= view["width"] and 0 <= p["y"] <= view["height"]
    ]
    return len(tab.evaluate("autologyGraph.labelled()")) / max(len(on_screen), 1)


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (Debian: apt-get install chromium)")
    with Browser(WIDTH, HEIGHT) as b:
        yield b


def sized_page(tmp_path: Path, size: int) -> Path:
    root = tmp_path / f"store-{size}"
    root.mkdir()
    generate_store(root, size)
    s = Autology.open(root)
    page = tmp_path / f"graph-{size}.html"
    page.write_text(export(s.store, "html"), encoding="utf-8")
    s.close()
    return page


@needs_chromium
@pytest.mark.parametrize("size", [50, 500, pytest.param(5000, marks=pytest.mark.slow)])
def test_readable_at_size(browser: Browser, tmp_path: Path, size: int) -> None:
    page = sized_page(tmp_path, size)
    tab = open_settled(browser, page)
    assert tab.evaluate("document.body.dataset.rendered") == str(size)
    check_drawing(tab, size)
    assert all(url == page.as_uri() for url in tab.requests()), tab.requests()
    # zooming in names a larger share of the nodes in view, never all 5,000 at once
    far = named_share(tab)
    for _ in range(5):
        tab.mouse("mouseWheel", WIDTH / 2, HEIGHT / 2, deltaX=0, deltaY=-300)
    time.sleep(0.2)
    near = named_share(tab)
    check_labels(tab)
    if size > 50:
        assert far < near
    assert len(tab.evaluate("autologyGraph.labelled()")) < min(size, 400)
    shot = tmp_path / f"graph-{size}.png"
    tab.screenshot(shot)
    width, height, pixels = png_pixels(shot)
    assert (width, height) == (WIDTH, HEIGHT) and len(set(pixels)) > 20, "the screenshot is blank"
    assert tab.errors() == []


def node_centre(tab, node_id: str) -> tuple[float, float]:
    """The node's centre in page coordinates (the canvas sits below the header)."""
    top = tab.evaluate("document.getElementById('graph').getBoundingClientRect().top")
    p = next(p for p in tab.evaluate("autologyGraph.positions()") if p["id"] == node_id)
    return p["x"], p["y"] + top


@needs_chromium
def test_click_search_and_filters(browser: Browser, service: Autology, tmp_path: Path) -> None:
    page = tmp_path / "graph.html"
    page.write_text(export(service.store, "html"), encoding="utf-8")
    tab = open_settled(browser, page)
    check_drawing(tab, 5)
    ids = service.ids

    # clicking a node shows its title, type, status, tags, content and relations, as text
    tab.click(*node_centre(tab, ids["xss"]))
    tab.wait_for(f"document.body.dataset.selected === {json.dumps(ids['xss'])}", timeout=10)
    panel = tab.evaluate(
        "({h2: document.querySelector('#panel h2').textContent, text: document.getElementById('panel').innerText,"
        " pre: document.querySelector('#panel pre').textContent, images: document.images.length,"
        " svgs: document.querySelectorAll('body svg').length, scripts: document.scripts.length})"
    )
    assert panel["h2"] == XSS_TITLE and panel["pre"] == XSS_CONTENT
    assert panel["images"] == 0 and panel["svgs"] == 0 and panel["scripts"] == 3  # nothing of it became markup
    for part in ("concept", "active", "#security", "relates_to", "Pricing API", ids["xss"]):
        assert part in panel["text"], part

    tab.click(*node_centre(tab, ids["new"]))
    tab.wait_for(f"document.body.dataset.selected === {json.dumps(ids['new'])}", timeout=10)
    text = tab.evaluate("document.getElementById('panel').innerText")
    assert "supersedes" in text and "Use Redis for the cache" in text and "cheaper to run" in text and "## Context" in text
    # a relation in the panel leads to its node
    tab.evaluate("[...document.querySelectorAll('#panel button.link')].find(b => b.textContent === 'Pricing API').click()")
    assert tab.evaluate("document.body.dataset.selected") == ids["comp"]
    assert "src/pricing.py" in tab.evaluate("document.getElementById('panel').innerText")

    tab.click(*node_centre(tab, ids["long"]))
    assert "autology show" in tab.evaluate("document.getElementById('panel').innerText")  # says it was shortened

    # search highlights what matches; Enter selects the match
    tab.evaluate("document.getElementById('search').focus()")
    tab.type_text("redis")
    assert tab.evaluate("document.body.dataset.matches") == "1"
    assert "1 match" in tab.evaluate("document.getElementById('hits').textContent")
    tab.send("Input.dispatchKeyEvent", {"type": "keyDown", "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13})
    tab.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13})
    assert tab.evaluate("document.body.dataset.selected") == ids["old"]
    tab.evaluate("const s = document.getElementById('search'); s.value = '#cache'; s.dispatchEvent(new Event('input'))")
    assert tab.evaluate("document.body.dataset.matches") == "2"

    # filters by type and by status hide nodes (and the panel of a hidden node)
    tab.evaluate("document.querySelector('#types .chip[data-value=decision]').click()")
    shown = {p["id"] for p in tab.evaluate("autologyGraph.positions()")}
    assert shown == {ids["comp"], ids["xss"], ids["long"]}
    assert tab.evaluate("document.body.dataset.selected || ''") == ""
    tab.evaluate("document.querySelector('#types .chip[data-value=decision]').click()")
    tab.evaluate("document.querySelector('#statuses .chip[data-value=superseded]').click()")
    shown = {p["id"] for p in tab.evaluate("autologyGraph.positions()")}
    assert ids["old"] not in shown and len(shown) == 4
    tab.evaluate("document.querySelector('#statuses .chip[data-value=superseded]').click()")
    check_drawing(tab, 5)

    assert not [e for e in browser.events if e["method"] == "Page.javascriptDialogOpening"]
    assert tab.evaluate("document.body.dataset.error || ''") == ""
    assert tab.errors() == []
    assert tab.requests() == [page.as_uri()]


@needs_chromium
def test_dangling_relation_and_empty_store_pages(browser: Browser, tmp_path: Path) -> None:
    s = Autology.open(tmp_path / "one")
    a = s.capture("Alpha", "a", type="concept").id
    ghost = "3f2b8c1e-9d4a-4e5b-8c7d-1a2b3c4d5e6f"
    path = tmp_path / "one" / ".autology" / "nodes" / "concepts" / f"{a}.md"
    path.write_text(path.read_text().replace("relations: []", f"relations:\n- type: uses\n  target: {ghost}"))
    s.store.reconcile()
    page = tmp_path / "dangling.html"
    page.write_text(export(s.store, "html"), encoding="utf-8")
    s.close()
    tab = open_settled(browser, page)
    check_drawing(tab, 2)
    assert tab.evaluate("document.querySelector('#types .chip[data-value=missing]') !== null")
    tab.click(*node_centre(tab, ghost))
    assert "no node with it is in the store" in tab.evaluate("document.getElementById('panel').innerText")

    empty = Autology.open(tmp_path / "empty")
    page = tmp_path / "empty.html"
    page.write_text(export(empty.store, "html"), encoding="utf-8")
    empty.close()
    tab = open_settled(browser, page)
    assert tab.evaluate("getComputedStyle(document.getElementById('empty')).display") == "block"
    assert tab.errors() == []
