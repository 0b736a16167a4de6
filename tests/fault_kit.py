"""Shared by the fault, load and bad-input tests and by bench/faults.py and bench/load.py.

- :class:`RawServer`: a real ``autology serve`` subprocess spoken to in raw JSON-RPC over its pipes,
  so the test controls exactly when a request is sent, which answers arrived (acknowledged = the
  client got the tool result), and can ``kill -9`` the server at any moment.
- :class:`Ledger`: what the clients were told (captures, updates, relations, deletes).
- :func:`check_store`: the store's invariants, read from the files independently of the store's own
  code paths: every node file parses and sits at its spec path; no relation dangles; the graph index
  equals the relations in the files; the search index (SQLite) equals the files.
- :func:`check_ledger`: nothing acknowledged is lost.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from autology_mcp.common.text import fts_text
from autology_mcp.knowledge.markdown import parse_node

PROTOCOL_VERSION = "2025-06-18"
_NODE_PATH = re.compile(
    r"^(decision|component|convention|concept|pattern|issue|session)s/"
    r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.md$"
)


def serve_command(root: Path | str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "autology_mcp", "--root", str(root), "serve", *extra]


class RawServer:
    """``autology serve`` as a subprocess, with a line-delimited JSON-RPC client on its stdio."""

    def __init__(self, root: Path | str, *extra: str, stderr: BinaryIO | int = subprocess.DEVNULL):
        self.proc = subprocess.Popen(
            serve_command(root, *extra), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, bufsize=0
        )
        self._next_id = 0
        self._responses: dict[int, dict[str, Any]] = {}
        self._cv = threading.Condition()
        self._send_lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if "id" in message and ("result" in message or "error" in message):
                with self._cv:
                    self._responses[message["id"]] = message
                    self._cv.notify_all()
        with self._cv:
            self._cv.notify_all()

    def send(self, method: str, params: dict[str, Any] | None = None, notification: bool = False) -> int:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        with self._send_lock:
            request_id = -1
            if not notification:
                self._next_id += 1
                request_id = message["id"] = self._next_id
            assert self.proc.stdin is not None
            self.proc.stdin.write((json.dumps(message) + "\n").encode())
        return request_id

    def wait(self, request_id: int, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._cv:
            while request_id not in self._responses:
                left = deadline - time.monotonic()
                if left <= 0 or (self.proc.poll() is not None and not self._reader.is_alive()):
                    raise TimeoutError(f"no answer to request {request_id}")
                self._cv.wait(min(left, 0.5))
            return self._responses[request_id]

    def answered(self) -> dict[int, dict[str, Any]]:
        with self._cv:
            return dict(self._responses)

    def initialize(self, timeout: float = 30.0) -> dict[str, Any]:
        request_id = self.send(
            "initialize",
            {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": {"name": "fault-kit", "version": "1"}},
        )
        result = self.wait(request_id, timeout)
        self.send("notifications/initialized", notification=True)
        return result

    def call(self, tool: str, arguments: dict[str, Any]) -> int:
        return self.send("tools/call", {"name": tool, "arguments": arguments})

    def call_and_wait(self, tool: str, arguments: dict[str, Any], timeout: float = 30.0) -> dict[str, Any]:
        return tool_result(self.wait(self.call(tool, arguments), timeout))

    def kill(self) -> None:
        """``kill -9``: no chance to clean up or flush anything."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)
        self._close_pipes()

    def close(self) -> None:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        self._close_pipes()

    def _close_pipes(self) -> None:
        self._reader.join(5)
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None and not pipe.closed:
                try:
                    pipe.close()
                except OSError:
                    pass


def tool_result(message: dict[str, Any]) -> dict[str, Any]:
    """The ``result`` of a tools/call answer (a JSON-RPC error becomes an isError result)."""
    if "error" in message:
        return {"isError": True, "content": [{"type": "text", "text": json.dumps(message["error"])}]}
    return message["result"]


def result_text(result: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in result.get("content", []))


# ------------------------------------------------------------------------------ what the clients were told


@dataclass
class Ledger:
    """Everything acknowledged to a client, and every destructive request sent (acknowledged or not)."""

    captured: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> (title, content), acknowledged
    updates_sent: dict[str, list[str]] = field(default_factory=dict)  # id -> contents sent in update requests
    updates_acked: dict[str, str] = field(default_factory=dict)  # id -> content of the last acknowledged update
    related: set[tuple[str, str, str]] = field(default_factory=set)  # acknowledged relates
    unrelate_sent: set[tuple[str, str, str]] = field(default_factory=set)
    delete_sent: set[str] = field(default_factory=set)
    deleted: set[str] = field(default_factory=set)  # acknowledged deletes
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def merge(self, other: Ledger) -> None:
        self.captured |= other.captured
        for node_id, contents in other.updates_sent.items():
            self.updates_sent.setdefault(node_id, []).extend(contents)
        self.updates_acked |= other.updates_acked
        self.related |= other.related
        self.unrelate_sent |= other.unrelate_sent
        self.delete_sent |= other.delete_sent
        self.deleted |= other.deleted


def read_nodes(root: Path) -> tuple[dict[str, Any], list[str]]:
    """Every node file parsed (id -> node), and the problems found reading them."""
    nodes: dict[str, Any] = {}
    problems: list[str] = []
    base = root / ".autology" / "nodes"
    for path in sorted(base.rglob("*")) if base.exists() else []:
        if path.is_dir():
            continue
        rel = path.relative_to(base).as_posix()
        if not _NODE_PATH.match(rel):
            problems.append(f"stray file in nodes/: {rel}")
            continue
        try:
            node = parse_node(path.read_text(encoding="utf-8"))
        except Exception as exc:  # noqa: BLE001 - any failure to read is the finding
            problems.append(f"unreadable node file {rel}: {exc}")
            continue
        if f"{node.type.value}s/{node.id}.md" != rel:
            problems.append(f"node {node.id} is in {rel}")
        if node.id in nodes:
            problems.append(f"duplicate id {node.id}")
        nodes[node.id] = node
    return nodes, problems


def check_store(root: Path | str) -> dict[str, Any]:
    """The store's invariants, from the files. Returns counts and a list of problems (empty = all hold)."""
    root = Path(root)
    nodes, problems = read_nodes(root)
    relations = {(n.id, r.target, r.type.value, r.description, r.confidence) for n in nodes.values() for r in n.relations}
    dangling = sorted((s, t, ty) for s, t, ty, _d, _c in relations if t not in nodes)
    problems += [f"dangling relation {s} -[{ty}]-> {t}" for s, t, ty in dangling]

    index_path = root / ".autology" / "graph" / "index.json"
    try:
        data = json.loads(index_path.read_text(encoding="utf-8"))
        in_index = {
            (r["source"], r["target"], r["type"], r.get("description"), r["confidence"]) for r in data["relations"]
        }
        if in_index != relations:
            problems.append(
                f"graph index differs from the files: {len(in_index - relations)} extra, {len(relations - in_index)} missing"
            )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        problems.append(f"graph index unreadable: {exc!r}")

    db = root / ".autology" / "cache" / "nodes.sqlite"
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
        try:
            rows = conn.execute(
                "SELECT n.id, n.title, f.title, f.content FROM nodes n JOIN nodes_fts f ON f.rowid = n.rowid"
            ).fetchall()
            fts_rows = conn.execute("SELECT count(*) FROM nodes_fts").fetchone()[0]
            index_relations = set(
                conn.execute("SELECT source, target, type, description, confidence FROM relations").fetchall()
            )
        finally:
            conn.close()
        indexed = {node_id: (title, fts_title, content) for node_id, title, fts_title, content in rows}
        expected = {n.id: (n.title, fts_text(n.title), fts_text(n.content)) for n in nodes.values()}
        if indexed != expected or fts_rows != len(nodes):
            wrong = sum(1 for k in expected.keys() & indexed.keys() if expected[k] != indexed[k])
            problems.append(
                f"search index differs from the files: {len(indexed.keys() - expected.keys())} extra, "
                f"{len(expected.keys() - indexed.keys())} missing, {wrong} stale, {fts_rows} full-text rows "
                f"for {len(nodes)} files"
            )
        if index_relations != relations:
            problems.append("the cache's relations differ from the files")
    except sqlite3.Error as exc:
        problems.append(f"search index unreadable: {exc}")
    return {"nodes": len(nodes), "relations": len(relations), "problems": problems}


def check_ledger(root: Path | str, ledger: Ledger) -> list[str]:
    """Nothing acknowledged is lost, nothing deleted comes back, nothing appears from nowhere."""
    nodes, _ = read_nodes(Path(root))
    problems: list[str] = []
    for node_id, (title, content) in ledger.captured.items():
        if node_id in ledger.delete_sent:
            continue
        node = nodes.get(node_id)
        if node is None:
            problems.append(f"acknowledged capture lost: {node_id} {title!r}")
        elif node_id not in ledger.updates_sent and (node.title, node.content) != (title, content):
            problems.append(f"acknowledged capture changed: {node_id}")
    for node_id in ledger.deleted:
        if node_id in nodes:
            problems.append(f"acknowledged delete came back: {node_id}")
    for node_id, content in ledger.updates_acked.items():
        node = nodes.get(node_id)
        if node is None:
            continue  # deleted since (checked above)
        if node.content != content and node.content not in ledger.updates_sent[node_id]:
            problems.append(f"acknowledged update lost: {node_id} has {node.content[:40]!r}")
    in_files = {(n.id, r.target, r.type.value) for n in nodes.values() for r in n.relations}
    for relation in ledger.related:
        source, target, _type = relation
        if source in ledger.delete_sent or target in ledger.delete_sent or relation in ledger.unrelate_sent:
            continue
        if relation not in in_files:
            problems.append(f"acknowledged relation lost: {relation}")
    return problems


def temp_files_left(root: Path | str) -> list[str]:
    """Temporary files of interrupted atomic writes (they live in cache/, never in nodes/)."""
    cache = Path(root) / ".autology" / "cache"
    return sorted(p.name for p in cache.glob(".*.tmp")) if cache.exists() else []


# ------------------------------------------------------------------------------ kill -9 in the middle of writes

RELATION_TYPES_USED = ("uses", "affects", "depends_on", "relates_to")


def _content(rng: Any, label: str) -> str:
    """Unique text of varied size (a few hundred bytes to ~60 KB), so some writes take a while."""
    words = " ".join(rng.choice(("cache", "index", "lock", "retry", "graph", "node", "write")) for _ in range(40))
    body = f"{label}: {words}."
    if rng.random() < 0.2:
        body += "\n\n" + "\n".join(f"- line {i} {words}" for i in range(rng.randint(50, 200)))
    return body


def kill_iteration(root: Path | str, rng: Any, ledger: Ledger, iteration: int, burst: int = 20) -> dict[str, Any]:
    """Start ``autology serve``, pipeline a burst of writes, ``kill -9`` it at a random moment, then
    record which requests were acknowledged. Returns what happened (requests sent/answered, whether the
    kill came during start-up) plus the file-level problems found right after the kill."""
    server = RawServer(root)
    sent: list[tuple[int, str, Any]] = []
    during_startup = rng.random() < 0.15
    try:
        if during_startup:  # kill while the server starts: reconcile, index rebuild, graph index check
            time.sleep(rng.uniform(0.0, 0.6))
        else:
            server.initialize()
            live = [i for i in ledger.captured if i not in ledger.delete_sent]
            touched: set[str] = set()
            for k in range(burst):
                roll = rng.random()
                label = f"fault {iteration}.{k}"
                candidates = [i for i in live if i not in touched]
                if candidates and roll < 0.2:
                    node_id = rng.choice(candidates)
                    touched.add(node_id)
                    content = _content(rng, f"update {label}")
                    ledger.updates_sent.setdefault(node_id, []).append(content)
                    sent.append((server.call("autology_update", {"id": node_id, "content": content}), "update", (node_id, content)))
                elif len(live) >= 2 and roll < 0.45:
                    source, target = rng.sample(live, 2)
                    relation = (source, target, rng.choice(RELATION_TYPES_USED))
                    arguments = {"source": source, "target": target, "type": relation[2]}
                    sent.append((server.call("autology_relate", arguments), "relate", relation))
                elif candidates and roll < 0.5:
                    node_id = rng.choice(candidates)
                    live.remove(node_id)
                    ledger.delete_sent.add(node_id)
                    sent.append((server.call("autology_delete", {"id": node_id}), "delete", node_id))
                else:
                    title, content = f"Fault node {iteration}.{k}", _content(rng, label)
                    arguments = {"title": title, "content": content, "type": "concept", "tags": ["fault"]}
                    sent.append((server.call("autology_capture", arguments), "capture", (title, content)))
            if sent:  # the first answer, then a random moment: the kill lands while the rest are served
                try:
                    server.wait(sent[0][0], timeout=20)
                except TimeoutError:
                    pass
            time.sleep(rng.uniform(0.0, 0.004 * burst))
    finally:
        server.kill()
    answered = server.answered()
    acked = 0
    for request_id, kind, payload in sent:
        message = answered.get(request_id)
        if message is None:
            continue
        result = tool_result(message)
        if result.get("isError"):
            continue
        acked += 1
        if kind == "capture":
            ledger.captured[result["structuredContent"]["id"]] = payload
        elif kind == "update":
            ledger.updates_acked[payload[0]] = payload[1]
        elif kind == "relate":
            ledger.related.add(payload)
        elif kind == "delete":
            ledger.deleted.add(payload)
    _nodes, problems = read_nodes(Path(root))
    index_path = Path(root) / ".autology" / "graph" / "index.json"
    if index_path.exists():
        try:
            json.loads(index_path.read_text(encoding="utf-8"))
        except ValueError as exc:
            problems.append(f"graph index is not whole JSON after the kill: {exc}")
    return {
        "sent": len(sent),
        "acknowledged": acked,
        "in_flight": len(sent) - sum(1 for r, _k, _p in sent if r in answered),
        "during_startup": during_startup,
        "problems": problems,
    }


# ------------------------------------------------------------------------------ load: N processes x M concurrent calls

LOAD_MIX = (("capture", 0.34), ("query", 0.18), ("relate", 0.18), ("update", 0.14), ("delete", 0.08), ("unrelate", 0.08))


async def run_load(root: Path | str, processes: int, concurrency: int, seconds: float, seed: int = 1) -> dict[str, Any]:
    """``processes`` real ``autology serve`` subprocesses on one root, each driven by ``concurrency``
    concurrent tasks through the SDK's stdio ``Client``, doing a mixed workload for ``seconds``.
    Returns the ledger, per-operation counts, and unexpected errors (anything but a race with a delete)."""
    import random

    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    ledger = Ledger()
    live: list[str] = []
    counts: dict[str, int] = {name: 0 for name, _ in LOAD_MIX}
    races: dict[str, int] = {name: 0 for name, _ in LOAD_MIX}
    unexpected: list[str] = []
    names = [name for name, _ in LOAD_MIX]
    weights = [w for _, w in LOAD_MIX]
    command = serve_command(root)
    params = StdioServerParameters(command=command[0], args=command[1:])

    async def task(client: Any, rng: random.Random, tag: str, deadline: float) -> None:
        k = 0
        while time.monotonic() < deadline:
            k += 1
            op = rng.choices(names, weights)[0]
            if op in ("relate", "unrelate") and len(live) < 2 or op in ("update", "delete") and not live:
                op = "capture"
            if op == "capture":
                title, content = f"Load {tag}.{k}", f"load test node {tag} {k} " + rng.choice(("alpha", "beta", "gamma"))
                args = {"title": title, "content": content, "type": "concept", "tags": ["load", tag]}
            elif op == "query":
                args = {"query": rng.choice(("alpha", "beta", "load test", tag)), "limit": rng.choice((1, 10, 50))}
            elif op in ("relate", "unrelate"):
                source, target = rng.sample(live, 2)
                relation = (source, target, rng.choice(RELATION_TYPES_USED))
                args = {"source": source, "target": target, "type": relation[2]}
                if op == "unrelate":
                    ledger.unrelate_sent.add(relation)
            elif op == "update":
                node_id = rng.choice(live)
                content = f"updated by {tag} step {k} " + rng.choice(("alpha", "beta"))
                ledger.updates_sent.setdefault(node_id, []).append(content)
                args = {"id": node_id, "content": content}
            else:
                node_id = rng.choice(live)
                live.remove(node_id)
                ledger.delete_sent.add(node_id)
                args = {"id": node_id}
            result = await client.call_tool(f"autology_{op}", args)
            counts[op] += 1
            if result.is_error:
                text = result.content[0].text if result.content else ""
                if "not found" in text.lower():  # relate/update/delete racing a delete of the same node
                    races[op] += 1
                else:
                    unexpected.append(f"{op} {args}: {text[:300]}")
                continue
            if op == "capture":
                node_id = result.structured_content["id"]
                ledger.captured[node_id] = (args["title"], args["content"])
                live.append(node_id)
            elif op == "relate":
                ledger.related.add(relation)
            elif op == "update":
                ledger.updates_acked[args["id"]] = args["content"]
            elif op == "delete":
                ledger.deleted.add(args["id"])

    async def process(p: int, deadline: float) -> None:
        async with Client(params) as client:
            async with anyio.create_task_group() as group:
                for m in range(concurrency):
                    group.start_soon(task, client, random.Random(seed * 1000 + p * 100 + m), f"p{p}m{m}", deadline)

    started = time.monotonic()
    deadline = started + seconds + 2.0  # servers take a moment to start
    async with anyio.create_task_group() as group:
        for p in range(processes):
            group.start_soon(process, p, deadline)
    elapsed = time.monotonic() - started
    return {"ledger": ledger, "counts": counts, "races": races, "unexpected": unexpected, "elapsed_s": elapsed}
