// The page of `autology graph export --format html`. Layout: d3-force (many-body repulsion with a
// Barnes-Hut quadtree, springs along relations, a weak pull to the centre, collision so no two nodes
// overlap), run a few milliseconds per frame so the page stays responsive while it settles.
// Drawing: one canvas, redrawn on demand. Every piece of node text goes into the DOM through
// textContent or onto the canvas with fillText: never parsed as HTML.
"use strict";
(function () {
  const body = document.body;
  window.addEventListener("error", (e) => body.setAttribute("data-error", String(e.message)));

  const input = JSON.parse(document.getElementById("graph-data").textContent);
  const COLOURS = input.colours;
  const STATUS_ORDER = ["active", "needs_review", "superseded", "missing"];
  const MISSING_COLOUR = "#c92a2a";
  const FONT = '12px system-ui, -apple-system, "Segoe UI", sans-serif';
  const LABEL_CHARS = 48;

  // ---------------------------------------------------------------- the model
  const nodes = [];
  const byId = new Map();
  for (const n of input.data.nodes) {
    const m = { id: n.id, type: n.type, title: n.title, status: n.status, tags: n.tags, references: n.references,
      text: n.excerpt, out: [], inc: [], degree: 0 };
    byId.set(n.id, m);
    nodes.push(m);
  }
  const edges = [];
  for (const r of input.data.relations) {
    const s = byId.get(r.source);
    if (!s) continue;
    let t = byId.get(r.target);
    if (!t) {  // a relation to a node that is not in the store: drawn as a hollow "missing" node
      t = { id: r.target, type: "missing", title: "missing node " + r.target.slice(0, 8), status: "missing", tags: [],
        references: [], text: "", out: [], inc: [], degree: 0 };
      byId.set(r.target, t);
      nodes.push(t);
    }
    const e = { s: s, t: t, type: r.type, description: r.description, confidence: r.confidence };
    edges.push(e);
    s.out.push(e);
    t.inc.push(e);
    if (s !== t) { s.degree++; t.degree++; }
  }
  nodes.forEach((n) => {
    n.r = 4 + Math.min(10, 1.5 * Math.sqrt(n.degree));
    n.haystack = (n.title + " " + n.tags.map((t) => "#" + t).join(" ") + " " + n.id).toLowerCase();
    n.label = n.title.length > LABEL_CHARS ? n.title.slice(0, LABEL_CHARS - 1) + "\u2026" : n.title;
  });
  // Labels compete for space: the better connected a node, the earlier its label is placed.
  const byImportance = nodes.slice().sort((a, b) => b.degree - a.degree || (a.title < b.title ? -1 : 1));

  // ---------------------------------------------------------------- filters, search, selection
  const hiddenTypes = new Set();
  const hiddenStatuses = new Set();
  const shown = (n) => !hiddenTypes.has(n.type) && !hiddenStatuses.has(n.status);
  let matches = null;       // Set of nodes matching the search, or null when the search box is empty
  let matchList = [];
  let matchCursor = -1;
  let selected = null;
  let hovered = null;
  let neighbourhood = null; // the selected node and its neighbours

  // ---------------------------------------------------------------- canvas and view
  const canvas = document.getElementById("graph");
  const ctx = canvas.getContext("2d");
  const stage = document.getElementById("stage");
  let W = 0, H = 0, dpr = 1;
  const view = { k: 1, x: 0, y: 0 };   // screen = world * k + (x, y)
  let userMoved = false;                // once the user pans or zooms, the view is theirs
  const MARGIN = 40;

  function resize() {
    const rect = stage.getBoundingClientRect();
    dpr = window.devicePixelRatio || 1;
    W = Math.max(1, Math.round(rect.width));
    H = Math.max(1, Math.round(rect.height));
    canvas.width = Math.round(W * dpr);
    canvas.height = Math.round(H * dpr);
    if (!userMoved) fit(visibleNodes());
    redraw();
  }

  function visibleNodes() { return nodes.filter(shown); }

  // The part of the window the details panel leaves free (inside the margin), and a box in the layout.
  function freeArea() {
    const right = panelOpen() ? Math.min(panel.offsetWidth + 20, W / 2) : 0;
    return { w: Math.max(W - 2 * MARGIN - right, 50), h: Math.max(H - 2 * MARGIN, 50) };
  }
  function bounds(list) {
    const b = { x0: Infinity, y0: Infinity, x1: -Infinity, y1: -Infinity };
    for (const n of list) {
      b.x0 = Math.min(b.x0, n.x - n.r); b.x1 = Math.max(b.x1, n.x + n.r);
      b.y0 = Math.min(b.y0, n.y - n.r); b.y1 = Math.max(b.y1, n.y + n.r);
    }
    return b;
  }
  const fitScale = (a, b) => Math.min(a.w / Math.max(b.x1 - b.x0, 1), a.h / Math.max(b.y1 - b.y0, 1), 2.5);
  function centre(a, b, k) {
    view.k = k;
    view.x = MARGIN + a.w / 2 - ((b.x0 + b.x1) / 2) * k;
    view.y = MARGIN + a.h / 2 - ((b.y0 + b.y1) / 2) * k;
  }

  // The nodes fill the free area (zoomed in at most 2.5 times).
  function fit(list) {
    if (!list.length) { view.k = 1; view.x = W / 2; view.y = H / 2; return; }
    const a = freeArea(), b = bounds(list);
    centre(a, b, fitScale(a, b));
  }

  // Bring nodes into the free area: pan if they fit at this zoom, zoom out if they do not, and
  // zoom in (up to 2.5) only when asked to.
  function bringIntoView(list, zoomIn) {
    if (!list.length) return;
    const a = freeArea(), b = bounds(list);
    const k = zoomIn ? fitScale(a, b) : Math.min(view.k, fitScale(a, b));
    const inView = b.x0 * k + view.x >= MARGIN && b.x1 * k + view.x <= MARGIN + a.w &&
      b.y0 * k + view.y >= MARGIN && b.y1 * k + view.y <= MARGIN + a.h;
    if (k === view.k && inView) return;
    centre(a, b, k);
    userMoved = true;
    redraw();
  }

  const sx = (n) => n.x * view.k + view.x;
  const sy = (n) => n.y * view.k + view.y;
  // Zoomed out, nodes shrink with the drawing; zoomed in, they grow more slowly than the distances
  // between them (square root), so there is ever more room for labels and no two ever overlap.
  const sr = (n) => Math.max(n.r * Math.min(view.k, Math.sqrt(view.k)), 2);

  // ---------------------------------------------------------------- drawing
  let frameRequested = false;
  function redraw() {
    if (frameRequested) return;
    frameRequested = true;
    requestAnimationFrame(() => { frameRequested = false; draw(); });
  }

  function dimmed(n) {
    return (matches !== null && !matches.has(n)) || (neighbourhood !== null && !neighbourhood.has(n));
  }

  function onScreen(x, y, pad) { return x > -pad && x < W + pad && y > -pad && y < H + pad; }

  let drawMs = 0;
  function draw() {
    const began = performance.now();
    paint();
    drawMs = performance.now() - began;
  }

  function paint() {
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    if (!nodes.length) return;
    const focusing = matches !== null || neighbourhood !== null;

    // edges: one path for the ordinary ones, then the selected node's on top
    const detailed = view.k * 40 > 28;  // arrows once an edge is long enough on screen to carry one
    const front = [];
    ctx.beginPath();
    for (const e of edges) {
      if (!shown(e.s) || !shown(e.t)) continue;
      if (selected && (e.s === selected || e.t === selected)) { front.push(e); continue; }
      const x1 = sx(e.s), y1 = sy(e.s), x2 = sx(e.t), y2 = sy(e.t);
      if ((x1 < 0 && x2 < 0) || (x1 > W && x2 > W) || (y1 < 0 && y2 < 0) || (y1 > H && y2 > H)) continue;
      ctx.moveTo(x1, y1);
      ctx.lineTo(x2, y2);
      if (detailed) arrowHead(e, x1, y1, x2, y2);
    }
    ctx.lineWidth = 1;
    ctx.strokeStyle = focusing ? "rgba(134,142,150,0.12)" : edges.length > 3000 ? "rgba(134,142,150,0.28)" : "rgba(134,142,150,0.6)";
    ctx.stroke();
    if (front.length) {
      ctx.beginPath();
      for (const e of front) {
        const x1 = sx(e.s), y1 = sy(e.s), x2 = sx(e.t), y2 = sy(e.t);
        ctx.moveTo(x1, y1);
        ctx.lineTo(x2, y2);
        arrowHead(e, x1, y1, x2, y2);
      }
      ctx.lineWidth = 1.6;
      ctx.strokeStyle = "#495057";
      ctx.stroke();
    }

    // nodes, dimmed ones first
    const drawn = [];
    for (const n of nodes) {
      if (!shown(n)) continue;
      const x = sx(n), y = sy(n), r = sr(n);
      if (!onScreen(x, y, r + 2)) continue;
      drawn.push(n);
    }
    for (const pass of [true, false]) {
      for (const n of drawn) {
        if (dimmed(n) !== pass) continue;
        const x = sx(n), y = sy(n), r = sr(n);
        ctx.globalAlpha = (pass ? 0.18 : 1) * (n.status === "superseded" ? 0.45 : 1);
        ctx.beginPath();
        ctx.arc(x, y, r, 0, 2 * Math.PI);
        if (n.type === "missing") {
          ctx.fillStyle = "#fff";
          ctx.fill();
          ctx.setLineDash([3, 2]);
          ctx.strokeStyle = MISSING_COLOUR;
          ctx.lineWidth = 1.5;
          ctx.stroke();
          ctx.setLineDash([]);
        } else {
          ctx.fillStyle = COLOURS[n.type] || "#adb5bd";
          ctx.fill();
          if (r >= 4) { ctx.strokeStyle = "#fff"; ctx.lineWidth = 1; ctx.stroke(); }
        }
        if (n.status === "needs_review" && r >= 3) {
          ctx.beginPath();
          ctx.arc(x, y, r + 2, 0, 2 * Math.PI);
          ctx.strokeStyle = "#f59f00";
          ctx.lineWidth = 2;
          ctx.stroke();
        }
      }
    }
    ctx.globalAlpha = 1;
    if (matches !== null) ring(matchList.filter(shown), "#212529", 2, 3);
    if (selected && shown(selected)) ring([selected], "#212529", 3, 4);
    if (hovered && shown(hovered)) ring([hovered], "#495057", 2, 3);
    labels(drawn, front);
  }

  function arrowHead(e, x1, y1, x2, y2) {
    const dx = x2 - x1, dy = y2 - y1, len = Math.hypot(dx, dy);
    const r = sr(e.t) + 1;
    if (len < r + 12) return;
    const ux = dx / len, uy = dy / len, tipX = x2 - ux * r, tipY = y2 - uy * r, size = 6;
    ctx.moveTo(tipX - ux * size - uy * size * 0.5, tipY - uy * size + ux * size * 0.5);
    ctx.lineTo(tipX, tipY);
    ctx.lineTo(tipX - ux * size + uy * size * 0.5, tipY - uy * size - ux * size * 0.5);
    ctx.moveTo(x2, y2);
  }

  function ring(list, colour, width, gap) {
    ctx.strokeStyle = colour;
    ctx.lineWidth = width;
    ctx.beginPath();
    for (const n of list) {
      const x = sx(n), y = sy(n), r = sr(n) + gap;
      if (!onScreen(x, y, r)) continue;
      ctx.moveTo(x + r, y);
      ctx.arc(x, y, r, 0, 2 * Math.PI);
    }
    ctx.stroke();
  }

  function halo(text, x, y, colour) {
    ctx.lineWidth = 3;
    ctx.strokeStyle = "rgba(248,249,250,0.95)";
    ctx.strokeText(text, x, y);
    ctx.fillStyle = colour;
    ctx.fillText(text, x, y);
  }

  // Labels are placed greedily, most important first: the selected node, the hovered one, the
  // selected node's neighbours and the relation types on its edges, search hits, then the rest by
  // number of relations. A label never covers another label, nor a node of about its own node's size:
  // it tries the places around its node and is left out if none is free. So at a distance only the
  // hubs are named, and zooming in names more nodes, never a pile of text.
  const NODE_FONT = FONT, EDGE_FONT = '11px system-ui, -apple-system, "Segoe UI", sans-serif';
  const textWidth = new Map();
  let lastLabels = [];
  function measure(font, text) {
    const key = font + "\u0000" + text;
    let w = textWidth.get(key);
    if (w === undefined) { ctx.font = font; w = ctx.measureText(text).width; textWidth.set(key, w); }
    return w;
  }
  function labels(drawn, front) {
    lastLabels = [];
    ctx.textBaseline = "middle";
    const onScreenSet = new Set(drawn);
    const order = [];
    const seen = new Set();
    const push = (n) => { if (n && onScreenSet.has(n) && !seen.has(n)) { seen.add(n); order.push(n); } };
    push(selected);
    push(hovered);
    if (neighbourhood) neighbourhood.forEach(push);
    const firstOthers = order.length;
    if (matches) matchList.forEach(push);
    const budget = Math.min(byImportance.length, 4000);
    for (let i = 0; i < budget; i++) push(byImportance[i]);

    const cell = 48;
    const grid = new Map();
    const cells = (b, fn) => {
      for (let gx = Math.floor(b[0] / cell); gx <= Math.floor(b[2] / cell); gx++)
        for (let gy = Math.floor(b[1] / cell); gy <= Math.floor(b[3] / cell); gy++) if (fn(gx + ":" + gy)) return true;
      return false;
    };
    const occupy = (b) => cells(b, (key) => { (grid.get(key) || grid.set(key, []).get(key)).push(b); return false; });
    // b[5]: how big a node must be to keep this label off it (a placed label: nothing may cover it)
    const free = (b, self, size) => !cells(b, (key) => {
      const list = grid.get(key);
      return list && list.some((o) => o[4] !== self && o[5] >= size && o[0] < b[2] && b[0] < o[2] && o[1] < b[3] && b[1] < o[3]);
    });
    const inside = (b) => b[0] >= 0 && b[2] <= W && b[1] >= 0 && b[3] <= H;
    const help = document.getElementById("help");  // nor does the help line at the bottom
    if (help.offsetWidth) occupy([help.offsetLeft, help.offsetTop, help.offsetLeft + help.offsetWidth, help.offsetTop + help.offsetHeight, help, Infinity]);
    // A node blocks the labels of nodes less than 1.7 times its size (a hub's name may cover its
    // small leaves, not its peers); faded nodes block nothing.
    for (const n of drawn) {
      if (n !== selected && n !== hovered && dimmed(n)) continue;
      const x = sx(n), y = sy(n), r = sr(n) + 1;
      occupy([x - r, y - r, x + r, y + r, n, n === selected || n === hovered ? Infinity : r]);
    }

    let placed = 0;
    const nodeLabel = (n) => {
      const must = n === selected || n === hovered;
      if (dimmed(n) && !must) return;
      const r = sr(n);
      // a node too small on screen is only named when it matters (selected, hovered, a neighbour, a hit)
      if (!must && r < 3 && !(neighbourhood && neighbourhood.has(n)) && !(matches && matches.has(n))) return;
      const w = measure(NODE_FONT, n.label), x = sx(n), y = sy(n), h = 18;  // 18: a little air between lines
      // Right or left of the node; a node that matters now (selected, hovered, a neighbour, a search
      // hit) may also go below, above or to a corner, where it is less plain whose label it is.
      const d = r * 0.7 + 2;
      const spots = [[x + r + 4, y], [x - r - 4 - w, y]];
      if (must || (neighbourhood && neighbourhood.has(n)) || (matches && matches.has(n))) {
        spots.push([x - w / 2, y + r + 2 + h / 2], [x - w / 2, y - r - 2 - h / 2],
          [x + d, y - d - h / 2], [x + d, y + d + h / 2], [x - d - w, y - d - h / 2], [x - d - w, y + d + h / 2]);
      }
      let spot = null;
      for (const [lx, ly] of spots) {
        const b = [lx - 2, ly - h / 2, lx + w + 2, ly + h / 2, n, Infinity];
        if (inside(b) && free(b, n, must ? Infinity : (r + 1) / 1.7)) { spot = b; break; }
      }
      if (!spot) {
        if (!must) return;
        spot = [x + r + 2, y - h / 2, x + r + 6 + w, y + h / 2, n, Infinity];
      }
      occupy(spot);
      ctx.font = NODE_FONT;
      halo(n.label, spot[0] + 2, (spot[1] + spot[3]) / 2, n === selected ? "#000" : "#212529");
      lastLabels.push({ id: n.id, box: spot.slice(0, 4) });
      placed++;
    };
    for (let i = 0; i < firstOthers; i++) nodeLabel(order[i]);
    // the relation types on the selected node's edges, where there is room for them
    for (const e of front) {
      const x1 = sx(e.s), y1 = sy(e.s), x2 = sx(e.t), y2 = sy(e.t);
      if (Math.hypot(x2 - x1, y2 - y1) < 60) continue;
      const w = measure(EDGE_FONT, e.type), x = (x1 + x2) / 2, y = (y1 + y2) / 2;
      const b = [x - w / 2 - 2, y - 7, x + w / 2 + 2, y + 7, e, Infinity];
      if (!inside(b) || !free(b, e, 0)) continue;
      occupy(b);
      ctx.font = EDGE_FONT;
      halo(e.type, b[0] + 2, y, "#495057");
    }
    for (let i = firstOthers; i < order.length && placed < 400; i++) nodeLabel(order[i]);
  }

  // ---------------------------------------------------------------- layout
  const progress = document.getElementById("progress");
  // Start from a scatter over a disc, the same for the same store (a seeded generator): d3's default
  // spiral start leaves visible spiral arms among the nodes no relation pulls into place.
  let seed = 20260208;
  const random = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 4294967296;
  const spread = 10 * Math.sqrt(nodes.length + 1);
  for (const n of nodes) {
    const angle = 2 * Math.PI * random(), distance = spread * Math.sqrt(random());
    n.x = distance * Math.cos(angle);
    n.y = distance * Math.sin(angle);
  }
  const links = edges.filter((e) => e.s !== e.t).map((e) => ({ source: e.s, target: e.t }));
  const sim = d3.forceSimulation(nodes)
    .force("link", d3.forceLink(links).distance(40))
    .force("charge", d3.forceManyBody().strength(-70).theta(0.9).distanceMax(900))
    // a pull to the centre, stronger for nodes without relations, which nothing else holds in place
    .force("x", d3.forceX(0).strength((n) => (n.degree ? 0.045 : 0.12)))
    .force("y", d3.forceY(0).strength((n) => (n.degree ? 0.045 : 0.12)))
    .force("collide", d3.forceCollide((n) => n.r + 4))
    .alphaDecay(nodes.length > 2000 ? 0.035 : 0.0228)
    .stop();
  // The forces settle in ticksToSettle ticks; then a few ticks of collision alone push apart the
  // nodes the other forces still squeeze together.
  const ticksToSettle = Math.ceil(Math.log(sim.alphaMin()) / Math.log(1 - sim.alphaDecay()));
  const SEPARATE = 30;
  let ticks = 0;
  let settled = false;
  const started = performance.now();
  let tree = null;

  function step() {
    const until = performance.now() + 30;
    while (ticks < ticksToSettle + SEPARATE && performance.now() < until) {
      if (ticks === ticksToSettle) {
        for (const name of ["link", "charge", "x", "y"]) sim.force(name, null);
        sim.force("collide").iterations(2);
        for (const n of nodes) { n.vx = 0; n.vy = 0; }
      }
      sim.tick();
      ticks++;
    }
    tree = null;
    if (!userMoved) fit(visibleNodes());
    draw();
    if (ticks < ticksToSettle + SEPARATE) {
      progress.textContent = "laying out\u2026 " + Math.round((100 * ticks) / (ticksToSettle + SEPARATE)) + "%";
      schedule(step);
      return;
    }
    settled = true;
    progress.textContent = "";
    body.dataset.settled = String(Math.round(performance.now() - started));
  }
  function schedule(fn) { if (document.hidden) setTimeout(fn, 0); else requestAnimationFrame(fn); }

  // ---------------------------------------------------------------- hit testing
  function nodeAt(px, py) {
    if (!tree) tree = d3.quadtree(nodes.filter(shown), (n) => n.x, (n) => n.y);
    const wx = (px - view.x) / view.k, wy = (py - view.y) / view.k;
    const n = tree.find(wx, wy, (14 + 6) / Math.min(view.k, 1) + 14);
    if (!n) return null;
    return Math.hypot(sx(n) - px, sy(n) - py) <= sr(n) + 4 ? n : null;
  }

  // ---------------------------------------------------------------- the details panel
  const panel = document.getElementById("panel");
  const panelOpen = () => panel.style.display === "block";
  function el(tag, attrs, text, parent) {
    const e = document.createElement(tag);
    if (attrs) for (const k of Object.keys(attrs)) e.setAttribute(k, attrs[k]);
    if (text !== undefined && text !== null) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function nodeLink(n, parent) {
    const b = el("button", { type: "button", class: "link", title: n.id }, n.title, parent);
    b.addEventListener("click", () => { select(n); bringIntoView([...neighbourhood], true); });
    return b;
  }
  function showPanel(n) {
    panel.textContent = "";
    const close = el("button", { type: "button", class: "close", "aria-label": "Close" }, "\u00d7", panel);
    close.addEventListener("click", () => { select(null); });
    el("h2", null, n.title, panel);
    const meta = el("div", { class: "meta" }, null, panel);
    const badge = el("span", { class: "badge" }, n.type, meta);
    badge.style.background = n.type === "missing" ? MISSING_COLOUR : COLOURS[n.type] || "#adb5bd";
    el("span", { class: "status" }, n.status.replace("_", " "), meta);
    el("code", null, n.id, meta);
    if (n.tags.length) el("div", { class: "meta" }, "tags: " + n.tags.map((t) => "#" + t).join(" "), panel);
    if (n.references.length) el("div", { class: "meta" }, "references: " + n.references.join(", "), panel);
    const section = (title, list, render) => {
      if (!list.length) return;
      el("h3", null, title + " (" + list.length + ")", panel);
      const ul = el("ul", null, null, panel);
      for (const e of list) render(e, el("li", null, null, ul));
    };
    section("Relations from this node", n.out, (e, li) => {
      el("span", { class: "rel" }, e.type + " \u2192 ", li);
      nodeLink(e.t, li);
      if (e.description) el("span", { class: "desc" }, e.description, li);
    });
    section("Relations to this node", n.inc, (e, li) => {
      nodeLink(e.s, li);
      el("span", { class: "rel" }, " \u2192 " + e.type, li);
      if (e.description) el("span", { class: "desc" }, e.description, li);
    });
    if (n.type === "missing") {
      el("p", { class: "note" }, "A relation points to this id, but no node with it is in the store (autology doctor lists dangling relations).", panel);
    } else if (n.text) {
      el("h3", null, "Content", panel);
      el("pre", null, n.text, panel);
      if (n.text.endsWith("\u2026") && n.text.length >= input.content_chars) {
        el("p", { class: "note" }, "Shortened to " + input.content_chars + " characters: autology show " + n.id + " prints the whole node.", panel);
      }
    }
    panel.style.display = "block";
    panel.scrollTop = 0;
  }

  function select(n) {
    selected = n;
    if (n) {
      neighbourhood = new Set([n]);
      for (const e of n.out) neighbourhood.add(e.t);
      for (const e of n.inc) neighbourhood.add(e.s);
      showPanel(n);
      body.dataset.selected = n.id;
    } else {
      neighbourhood = null;
      panel.style.display = "none";
      delete body.dataset.selected;
    }
    redraw();
  }

  // ---------------------------------------------------------------- tooltip
  const tip = document.getElementById("tip");
  function showTip(n, px, py) {
    if (!n) { tip.style.display = "none"; return; }
    tip.textContent = "";
    el("div", null, n.title, tip);
    el("small", null, n.type + " \u00b7 " + n.status.replace("_", " ") + " \u00b7 " + n.degree + " relation" + (n.degree === 1 ? "" : "s"), tip);
    tip.style.display = "block";
    const w = tip.offsetWidth, h = tip.offsetHeight;
    tip.style.left = Math.min(px + 14, W - w - 4) + "px";
    tip.style.top = (py + 14 + h > H ? py - h - 10 : py + 14) + "px";
  }

  // ---------------------------------------------------------------- pointer: pan, zoom, hover, click
  let drag = null;
  canvas.addEventListener("pointerdown", (ev) => {
    drag = { x: ev.offsetX, y: ev.offsetY, moved: false };
    canvas.setPointerCapture(ev.pointerId);
  });
  canvas.addEventListener("pointermove", (ev) => {
    if (drag) {
      const dx = ev.offsetX - drag.x, dy = ev.offsetY - drag.y;
      if (drag.moved || Math.abs(dx) + Math.abs(dy) > 3) {
        drag.moved = true;
        canvas.classList.add("dragging");
        view.x += dx; view.y += dy;
        drag.x = ev.offsetX; drag.y = ev.offsetY;
        userMoved = true;
        showTip(null);
        redraw();
      }
      return;
    }
    const n = nodeAt(ev.offsetX, ev.offsetY);
    if (n !== hovered) { hovered = n; redraw(); }
    canvas.classList.toggle("over-node", !!n);
    showTip(n, ev.offsetX, ev.offsetY);
  });
  canvas.addEventListener("pointerup", (ev) => {
    const wasDrag = drag && drag.moved;
    drag = null;
    canvas.classList.remove("dragging");
    if (wasDrag) return;
    const n = nodeAt(ev.offsetX, ev.offsetY);
    select(n);
    if (n) bringIntoView([...neighbourhood], false);
  });
  canvas.addEventListener("pointerleave", () => { if (hovered) { hovered = null; redraw(); } showTip(null); });
  canvas.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const factor = Math.exp(-ev.deltaY * (ev.deltaMode === 1 ? 0.05 : 0.0015));
    const k = Math.min(Math.max(view.k * factor, 0.02), 12);
    view.x = ev.offsetX - ((ev.offsetX - view.x) * k) / view.k;
    view.y = ev.offsetY - ((ev.offsetY - view.y) * k) / view.k;
    view.k = k;
    userMoved = true;
    showTip(null);
    redraw();
  }, { passive: false });
  document.getElementById("fit").addEventListener("click", () => {
    userMoved = false;
    fit(matches !== null && matchList.some(shown) ? matchList.filter(shown) : visibleNodes());
    redraw();
  });

  // ---------------------------------------------------------------- search
  const search = document.getElementById("search");
  const hits = document.getElementById("hits");
  function runSearch() {
    const words = search.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
    if (!words.length) {
      matches = null; matchList = []; hits.textContent = "";
    } else {
      matchList = byImportance.filter((n) => words.every((w) => n.haystack.indexOf(w) >= 0));
      matches = new Set(matchList);
      hits.textContent = matchList.length + (matchList.length === 1 ? " match" : " matches");
    }
    matchCursor = -1;
    body.dataset.matches = matches === null ? "" : String(matchList.length);
    redraw();
  }
  search.addEventListener("input", runSearch);
  search.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && matchList.length) {
      const list = matchList.filter(shown);
      if (!list.length) return;
      matchCursor = (matchCursor + (ev.shiftKey ? -1 : 1) + list.length) % list.length;
      select(list[matchCursor]);
      bringIntoView([...neighbourhood], true);
      hits.textContent = (matchCursor + 1) + " of " + list.length;
      redraw();
    } else if (ev.key === "Escape") {
      search.value = "";
      runSearch();
    }
  });
  document.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape" && document.activeElement !== search) select(null);
    if (ev.key === "/" && document.activeElement !== search) { ev.preventDefault(); search.focus(); }
  });

  // ---------------------------------------------------------------- filters (the legend)
  function chips(containerId, values, counts, colourOf, hidden, label) {
    const box = document.getElementById(containerId);
    for (const v of values) {
      if (!counts.get(v)) continue;
      const b = el("button", { type: "button", class: "chip", "aria-pressed": "true", "data-value": v, title: "Show or hide " + label(v) }, null, box);
      const dot = el("i", null, null, b);
      colourOf(v, dot);
      b.appendChild(document.createTextNode(label(v) + " "));
      el("b", null, String(counts.get(v)), b);
      b.addEventListener("click", () => {
        if (hidden.has(v)) hidden.delete(v); else hidden.add(v);
        b.setAttribute("aria-pressed", String(!hidden.has(v)));
        tree = null;
        if (selected && !shown(selected)) select(null);
        if (hovered && !shown(hovered)) { hovered = null; showTip(null); }
        redraw();
      });
    }
  }
  const count = (key) => nodes.reduce((m, n) => m.set(n[key], (m.get(n[key]) || 0) + 1), new Map());
  const typeCounts = count("type");
  chips("types", Object.keys(COLOURS).concat(["missing"]), typeCounts, (v, dot) => {
    if (v === "missing") { dot.style.border = "1.5px dashed " + MISSING_COLOUR; dot.style.background = "#fff"; }
    else dot.style.background = COLOURS[v];
  }, hiddenTypes, (v) => v);
  chips("statuses", STATUS_ORDER, count("status"), (v, dot) => {
    dot.style.background = v === "superseded" ? "rgba(134,142,150,0.45)" : v === "missing" ? "#fff" : "#868e96";
    if (v === "needs_review") dot.style.border = "2px solid #f59f00";
    if (v === "missing") dot.style.border = "1.5px dashed " + MISSING_COLOUR;
  }, hiddenStatuses, (v) => v.replace("_", " "));

  // ---------------------------------------------------------------- for tests and scripts
  window.autologyGraph = {
    settled: () => settled,
    view: () => ({ k: view.k, x: view.x, y: view.y, width: W, height: H }),
    drawMs: () => drawMs,  // how long the last frame took to draw
    // the nodes shown now: on screen (CSS pixels from the canvas's top left corner) and in the layout
    positions: () => nodes.filter(shown).map((n) => ({ id: n.id, x: sx(n), y: sy(n), r: sr(n), wx: n.x, wy: n.y, wr: n.r })),
    // the labels drawn in the last frame: node id and the label's box on screen
    labelled: () => lastLabels.slice(),
  };

  if (typeof ResizeObserver === "function") new ResizeObserver(resize).observe(stage);
  else window.addEventListener("resize", resize);
  resize();
  body.dataset.rendered = String(nodes.length);
  if (!nodes.length) {
    document.getElementById("empty").style.display = "block";
    body.dataset.settled = "0";
    settled = true;
  } else {
    step();
  }
})();
