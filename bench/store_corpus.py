"""A deterministic, realistic synthetic knowledge store for bench/store.py.

Nodes read like a real project's memory: technical prose built from a vocabulary of a few hundred
words, all seven types, decisions in ADR form, tags from a shared pool, one or two relations per
node to earlier nodes, and references to plausible source files. Same seed, same store.
"""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

from autology_mcp.knowledge.markdown import render_node
from autology_mcp.knowledge.models import NODE_TYPES, KnowledgeNode, NodeStatus, NodeType, Relation, RelationType

SUBJECTS = """
cache index scheduler router gateway session token queue worker parser tokenizer serializer encoder decoder
buffer pool connection transaction migration schema snapshot replica shard partition cursor iterator
allocator logger tracer metric counter histogram alert dashboard pipeline build artifact release deployment
container cluster node pod volume mount secret certificate handshake certificate-store keyring credential
account tenant user profile permission role policy quota limit throttle retry backoff timeout deadline
heartbeat lease lock mutex semaphore barrier channel stream socket listener handler middleware endpoint
controller service repository adapter facade proxy registry plugin extension hook callback event bus
topic subscription consumer producer broker offset watermark checkpoint journal wal compaction vacuum
bloom-filter trie btree heap graph vertex edge walker visitor resolver loader bundler compiler linter
formatter validator sanitizer renderer template layout widget form modal sidebar toolbar menu payload
request response header cookie query mutation resolver field column row table view materialized-view
trigger function procedure job task cron batch chunk window frame page file blob object bucket manifest
""".split()

QUALIFIERS = """
distributed incremental lazy eager async synchronous idempotent atomic durable ephemeral persistent
in-memory on-disk compressed encrypted signed versioned sharded replicated partitioned cached stale fresh
hot cold read-only write-ahead append-only immutable mutable bounded unbounded blocking non-blocking
concurrent parallel sequential deterministic flaky slow fast expensive cheap global local regional
primary secondary fallback default legacy experimental deprecated internal public private shared
""".split()

VERBS = """
validates serialises retries batches caches invalidates compacts streams routes throttles schedules
indexes parses renders signs encrypts decrypts rotates reconciles migrates replays snapshots flushes
evicts prefetches deduplicates normalises aggregates partitions merges splits watches notifies
publishes subscribes acknowledges rejects authenticates authorises logs traces measures samples
""".split()

TECH = """
postgres sqlite redis kafka rabbitmq grpc graphql rest websocket http2 tls oauth jwt saml ldap
kubernetes docker terraform ansible nginx envoy prometheus grafana opentelemetry sentry elasticsearch
fts5 bm25 protobuf json yaml msgpack avro parquet arrow s3 gcs lambda celery asyncio tokio react
typescript python rust golang pydantic fastapi django flask sqlalchemy alembic pytest hypothesis
""".split()

CONCERNS = """
latency throughput consistency availability durability correctness security privacy observability
scalability maintainability portability cost memory startup backpressure contention fragmentation
""".split()

TAGS = """
api auth backend frontend database cache search indexing storage performance security testing ci
deploy infra observability logging metrics errors retries concurrency migrations schema config cli
docs ux accessibility i18n billing payments notifications email queue streaming sync offline mobile
web build release tooling refactoring tech-debt reliability data-model graph ranking parsing
""".split()

FILE_DIRS = ["src", "src/core", "src/api", "src/storage", "lib", "services", "internal", "pkg", "app", "web/src"]
FILE_EXTS = [".py", ".ts", ".go", ".rs", ".tsx", ".sql", ".md"]

TITLE_TEMPLATES: dict[str, list[str]] = {
    "decision": [
        "Use {tech} for the {q} {s}",
        "Adopt {q} {s} instead of {s2}",
        "Switch the {s} to {tech}",
        "Choose {tech} over {tech2} for {concern}",
        "Keep the {s} {q} for {concern}",
    ],
    "component": [
        "{S} {s2} service",
        "The {q} {s} module",
        "{tech} {s} adapter",
        "{S} handler in the {s2} layer",
        "{S} worker",
    ],
    "convention": [
        "Always {verb_base} the {s} before {s2}",
        "Never share a {s} across {s2}s",
        "Name {s} files after their {s2}",
        "Every {s} must be {q}",
        "Prefer {q} {s}s in {tech} code",
    ],
    "concept": [
        "How the {s} {verb} the {s2}",
        "{S} lifecycle",
        "What a {q} {s} means",
        "{S} and {s2} ownership",
        "The {s} model of {concern}",
    ],
    "pattern": [
        "{Q} {s} pattern",
        "{S} with {q} {s2}",
        "Outbox for {s} events",
        "{S} per {s2}",
        "Retry with backoff around the {s}",
    ],
    "issue": [
        "{S} {verb} twice under load",
        "{Q} {s} leaks {s2}s",
        "Slow {s} on {tech}",
        "{S} loses {s2} after restart",
        "Flaky {s} test on CI",
    ],
    "session": [
        "Session: {s} {s2} refactor",
        "Session: moved {s} to {tech}",
        "Session: fixed {q} {s}",
        "Session: {concern} work on the {s}",
        "Session: reviewed the {s} {s2}",
    ],
}

SENTENCES = [
    "The {s} {verb} every {s2} before it reaches the {s3}.",
    "We rely on {tech} here because {concern} matters more than {concern2} for this path.",
    "A {q} {s} keeps the {s2} {q2} even when the {s3} is restarted.",
    "When the {s} is {q}, the {s2} {verb} in batches of {n} and the p95 stays under {m} ms.",
    "The {s2} owns the {s}; nothing else {verb} it directly.",
    "Calls into the {s} go through the {s2} so that {concern} is handled in one place.",
    "{tech} gives us a {q} {s}, at the cost of {concern} during {s2} migrations.",
    "If the {s} times out after {m} ms, the {s2} {verb} and retries up to {n} times with backoff.",
    "See `{path}` for the {s} and `{path2}` for the {s2} it {verb}.",
    "The old {q} {s} {verb} synchronously, which hurt {concern} under load.",
    "Each {s} carries a {s2} id so that the {s3} can be traced end to end with {tech}.",
    "We measured {n}k {s}s per second on the {q} {s2} with {tech}.",
    "Tests for the {s} use a {q} {s2} so that they stay deterministic.",
    "The {s} must never block the {s2}; it {verb} on a background {s3} instead.",
    "Configuration for the {s} lives next to the {s2} and is validated at start-up.",
]

CODE_SNIPPETS = [
    "```python\ndef {fn}({arg}):\n    return {arg}.{fn2}()\n```",
    "```sql\nSELECT id, {col} FROM {table} WHERE {col} > ? ORDER BY {col} LIMIT 100;\n```",
    "```ts\nexport async function {fn}({arg}: {Type}) {{\n  await {arg}.{fn2}();\n}}\n```",
]


def _cap(word: str) -> str:
    return word[:1].upper() + word[1:]


class CorpusGenerator:
    """Seeded generator of node fields; every call draws from one ``random.Random``."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def uuid4(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def _slots(self) -> dict[str, str]:
        r = self.rng
        s, s2, s3 = r.sample(SUBJECTS, 3)
        q, q2 = r.sample(QUALIFIERS, 2)
        tech, tech2 = r.sample(TECH, 2)
        concern, concern2 = r.sample(CONCERNS, 2)
        verb = r.choice(VERBS)
        return {
            "s": s.replace("-", " "),
            "s2": s2.replace("-", " "),
            "s3": s3.replace("-", " "),
            "S": _cap(s.replace("-", " ")),
            "q": q,
            "q2": q2,
            "Q": _cap(q),
            "tech": tech,
            "tech2": tech2,
            "concern": concern,
            "concern2": concern2,
            "verb": verb,
            "verb_base": verb[:-1] if verb.endswith("s") else verb,
            "n": str(r.randint(2, 64)),
            "m": str(r.choice([5, 10, 50, 100, 250, 500, 1000])),
            "path": self.path(),
            "path2": self.path(),
        }

    def path(self) -> str:
        r = self.rng
        return f"{r.choice(FILE_DIRS)}/{r.choice(SUBJECTS)}{r.choice(FILE_EXTS)}"

    def title(self, node_type: str) -> str:
        text = self.rng.choice(TITLE_TEMPLATES[node_type]).format(**self._slots())
        return text[:100]

    def paragraph(self, sentences: int) -> str:
        return " ".join(self.rng.choice(SENTENCES).format(**self._slots()) for _ in range(sentences))

    def snippet(self) -> str:
        r = self.rng
        return r.choice(CODE_SNIPPETS).format(
            fn=r.choice(VERBS)[:-1] + "_" + r.choice(SUBJECTS).replace("-", "_"),
            fn2=r.choice(VERBS)[:-1],
            arg=r.choice(SUBJECTS).replace("-", "_"),
            col=r.choice(SUBJECTS).replace("-", "_"),
            table=r.choice(SUBJECTS).replace("-", "_") + "s",
            Type=_cap(r.choice(SUBJECTS).replace("-", "")),
        )

    def content(self, node_type: str) -> str:
        """A few hundred to ~2,000 characters of Markdown."""
        r = self.rng
        if node_type == "decision":
            parts = [
                "## Context\n" + self.paragraph(r.randint(2, 6)),
                "## Decision\n" + self.paragraph(r.randint(1, 4)),
                "## Alternatives\n" + "\n".join(f"- {self.paragraph(1)}" for _ in range(r.randint(1, 4))),
                "## Consequences\n" + self.paragraph(r.randint(1, 5)),
            ]
            return "\n\n".join(parts)
        parts = [self.paragraph(r.randint(3, 7))]
        for _ in range(r.choice([0, 1, 1, 2, 2, 3, 4])):
            if r.random() < 0.3:
                parts.append(self.snippet())
            elif r.random() < 0.5:
                parts.append("\n".join(f"- {self.paragraph(1)}" for _ in range(r.randint(2, 4))))
            else:
                parts.append(f"### {_cap(r.choice(SUBJECTS))}\n" + self.paragraph(r.randint(1, 4)))
        return "\n\n".join(parts)

    def tags(self) -> list[str]:
        return self.rng.sample(TAGS, self.rng.randint(1, 4))

    def references(self) -> list[str]:
        return [self.path() for _ in range(self.rng.choice([0, 0, 1, 1, 2]))]

    def node_type(self) -> str:
        # Weighted like a real store: many components/concepts/decisions, fewer sessions.
        return self.rng.choices(NODE_TYPES, weights=[20, 22, 10, 18, 10, 10, 10])[0]

    def query(self) -> str:
        """A realistic 1-3 word query drawn from the vocabulary."""
        r = self.rng
        pools = [SUBJECTS, SUBJECTS, QUALIFIERS, TECH, CONCERNS, VERBS]
        words = [r.choice(r.choice(pools)).replace("-", " ") for _ in range(r.choice([1, 2, 2, 3]))]
        return " ".join(words)


def generate_store(
    root: Path, count: int, seed: int = 20260208, gen: CorpusGenerator | None = None
) -> list[tuple[str, str]]:
    """Write ``count`` node files under ``root/.autology/nodes``; returns (id, type) in creation order.

    ``gen`` replaces the synthetic text (e.g. store_text.TextGenerator, real docstrings)."""
    from autology_mcp.knowledge.store import NodeStore

    store = NodeStore(root, durable=False)
    store.init()
    store.close()
    gen = gen or CorpusGenerator(seed)
    base = datetime(2025, 1, 1, tzinfo=UTC)
    ids: list[str] = []
    out: list[tuple[str, str]] = []
    for i in range(count):
        node_type = gen.node_type()
        node_id = gen.uuid4()
        relations: list[Relation] = []
        if ids:
            for _ in range(gen.rng.choice([1, 1, 2, 2, 2])):
                target = gen.rng.choice(ids[-2000:] if gen.rng.random() < 0.7 else ids)
                rtype = gen.rng.choice(list(RelationType))
                if all(not (r.target == target and r.type == rtype) for r in relations):
                    relations.append(
                        Relation(
                            type=rtype,
                            target=target,
                            description=gen.paragraph(1)[:120] if gen.rng.random() < 0.3 else None,
                            confidence=gen.rng.choice([0.7, 0.8, 0.85, 0.9]),
                        )
                    )
        created = base + timedelta(minutes=37 * i + gen.rng.randint(0, 30))
        modified = created + timedelta(hours=gen.rng.choice([0, 0, 1, 5, 48]))
        status = gen.rng.choices(list(NodeStatus), weights=[85, 10, 5])[0]
        node = KnowledgeNode(
            id=node_id,
            type=NodeType(node_type),
            title=gen.title(node_type),
            content=gen.content(node_type),
            tags=tuple(gen.tags()),
            relations=tuple(relations),
            confidence=gen.rng.choice([0.7, 0.85, 0.9, 0.9, 0.9]),
            created=created,
            modified=modified,
            session=f"session-{i // 25:05d}" if gen.rng.random() < 0.4 else None,
            source=gen.rng.choice(["manual", "manual", "hook_post_commit", "hook_pre_compact"]),
            references=tuple(dict.fromkeys(gen.references())),
            status=status,
        )
        path = store.paths.node_file(node_type, node_id)
        path.write_text(render_node(node), encoding="utf-8")
        ids.append(node_id)
        out.append((node_id, node_type))
    return out
