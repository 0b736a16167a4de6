"""autology_query ranking and filters (autology_mcp.knowledge.search over the SQLite FTS5 index)."""

from __future__ import annotations

import pytest
from core_helpers import write_node_file

from autology_mcp.common.errors import ValidationError
from autology_mcp.common.text import node_query_terms as query_terms


def ids(hits):
    return [h.node.id for h in hits]


def test_title_and_tag_matches_rank_above_content_only_matches(autology, capture):
    content_only = capture("Storage notes", "We talked about caching once, among many other storage topics.")
    in_title = capture("Caching strategy", "Keep it simple and measured.")
    in_tags = capture("Hot paths", "Keep hot paths fast.", tags=["caching"])
    hits = autology.query("caching")
    assert set(ids(hits)) == {content_only, in_title, in_tags}
    assert ids(hits)[-1] == content_only
    scores = {h.node.id: h.score for h in hits}
    assert scores[in_title] > scores[content_only]
    assert scores[in_tags] > scores[content_only]


def test_superseded_ranks_below_active(autology, capture):
    old = capture("Session tokens in cookies", "Store session tokens in cookies.")
    new = capture("Session tokens in headers", "Store session tokens in headers.")
    autology.update(old, status="superseded")
    hits = autology.query("session tokens")
    assert ids(hits) == [new, old]
    assert hits[1].score < hits[0].score
    autology.update(old, status="active")
    autology.update(new, status="superseded")
    assert ids(autology.query("session tokens")) == [old, new]


def test_needs_review_ranks_between(autology, capture):
    a = capture("Queue worker", "queue worker")
    b = capture("Queue worker", "queue worker")
    c = capture("Queue worker", "queue worker")
    autology.update(b, status="needs_review")
    autology.update(c, status="superseded")
    assert ids(autology.query("queue worker")) == [a, b, c]


def test_scores_are_within_0_and_1(autology, capture):
    for i in range(15):
        capture(f"Node {i} about search", " ".join(["search ranking"] * (i + 1)) + f" extra{i}", tags=["search"])
    capture("Superseded search", "search", status="superseded")
    for query in ("search", "search ranking extra3", "ranking", "nothing-matches-this", "the"):
        for hit in autology.query(query, limit=100):
            assert 0.0 <= hit.score <= 1.0
    hits = autology.query("search ranking extra3")
    assert hits[0].node.title == "Node 3 about search"  # the only one with all three terms


def test_more_query_terms_matched_ranks_higher(autology, capture):
    one = capture("Database", "postgres database")
    both = capture("Database migrations", "postgres database migrations with alembic")
    assert ids(autology.query("database migrations"))[0] == both
    assert one in ids(autology.query("database migrations"))


def test_type_filter(autology, capture):
    concept = capture("Billing cycle", "billing")
    issue = capture("Billing bug", "billing", type="issue")
    assert ids(autology.query("billing", type="issue")) == [issue]
    assert ids(autology.query(type="concept")) == [concept]
    with pytest.raises(ValidationError, match="unknown node type"):
        autology.query("billing", type="bugs")


def test_tags_filter_requires_all_tags(autology, capture):
    both = capture("Both", "shared", tags=["auth", "api"])
    capture("Auth only", "shared", tags=["auth"])
    capture("Api only", "shared", tags=["api"])
    assert ids(autology.query("shared", tags=["auth", "api"])) == [both]
    assert ids(autology.query(tags=["api", "auth"])) == [both]
    assert len(autology.query(tags=["auth"])) == 2
    assert autology.query(tags=["auth", "missing"]) == []
    with pytest.raises(ValidationError, match="tags"):
        autology.query(tags=["Auth"])


def test_limit_default_10_and_max_100(autology, capture):
    for i in range(12):
        capture(f"Item {i}", "common words")
    assert len(autology.query("common")) == 10
    assert len(autology.query()) == 10
    assert len(autology.query("common", limit=12)) == 12
    assert len(autology.query("common", limit=100)) == 12
    assert len(autology.query("common", limit=1)) == 1
    for bad in (0, 101, -1, 2.5, "10", True):
        with pytest.raises(ValidationError, match="from 1 to 100"):
            autology.query("common", limit=bad)


def test_empty_query_lists_the_most_recently_modified_first(autology, root):
    times = ["2026-01-03T00:00:00Z", "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"]
    made = []
    for i, modified in enumerate(times):
        node_id, path = write_node_file(root, "concept", title=f"N{i}")
        path.write_text(path.read_text().replace("2026-01-02T03:04:05Z", modified))
        made.append(node_id)
    autology.store.reconcile()
    for query in (None, "", "   "):
        hits = autology.query(query)
        assert ids(hits) == [made[0], made[2], made[1]]
        assert all(h.score is None for h in hits)  # a listing: nothing ranked, no made-up score
    for query in ("?!", "🚀", "-- ..."):  # something asked, nothing searchable in it: no answer, not every node
        assert autology.query(query) == []
    autology.update(made[1], title="touched")  # now the most recent
    assert ids(autology.query())[0] == made[1]


def test_no_match_is_an_empty_list(autology, capture):
    capture("Something", "else")
    assert autology.query("zebra") == []


@pytest.mark.parametrize(
    "query", ['"unbalanced', "NEAR(a b)", "a AND OR NOT", "col:value", "*", "^start", "-x", "a'b", "(", "{x}", "words*"]
)
def test_fts_syntax_in_the_query_is_just_text(autology, capture, query):
    node = capture("Plain", "plain words value start")
    terms = set(query_terms(query))
    # no word at all ("*", "(") is nothing searchable: no answer
    expected = [node] if terms & {"plain", "words", "value", "start"} else []
    assert ids(autology.query(query)) == expected


def test_stemming_and_diacritics(autology, capture):
    node = capture("Caching", "We cache the café menu.")
    assert ids(autology.query("cached")) == [node]
    assert ids(autology.query("cafe")) == [node]


def test_ranking_is_deterministic(autology, capture):
    for i in range(8):
        capture("Same title", "identical content")
    first = [(h.node.id, h.score) for h in autology.query("identical")]
    assert first == [(h.node.id, h.score) for h in autology.query("identical")]
    autology.store.rebuild()
    assert first == [(h.node.id, h.score) for h in autology.query("identical")]


def test_query_terms_drop_stop_words_unless_nothing_is_left():
    assert query_terms("How do we cache the tokens?") == ["cache", "tokens"]
    assert query_terms("the") == ["the"]
    assert query_terms("") == []
    assert query_terms("naïve café ünïcode") == ["naive", "cafe", "unicode"]  # one normalisation: accents folded


def test_a_title_match_beats_a_content_stuffed_with_the_term(autology, capture):
    stuffed = capture("Notes", " ".join(["caching"] * 60))
    titled = capture("Caching", "A short note about something else entirely, with several more words.")
    assert ids(autology.query("caching")) == [titled, stuffed]
    tagged = capture("Hot paths", "Nothing about it in the text.", tags=["caching"])
    assert ids(autology.query("caching"))[-1] == stuffed
    assert set(ids(autology.query("caching"))[:2]) == {titled, tagged}


def test_a_title_match_is_found_even_below_many_stronger_content_matches(root):
    """BM25 ranks content that repeats a word above a title holding it once; the title match must
    still be a candidate (not cut off with the BM25 pool) and come first."""
    from autology_mcp.knowledge.service import Autology
    from autology_mcp.knowledge.store import NodeStore

    store = NodeStore(root, durable=False)
    store.init()
    service = Autology(store)
    try:
        for i in range(90):
            service.capture(f"Notes {i}", " ".join(["caching"] * 40), type="concept")
        titled = service.capture("Caching", "A short note about something else entirely.", type="concept").id
        tagged = service.capture("Hot paths", "Nothing in the text.", type="concept", tags=["caching"]).id
        hits = service.query("caching")
        assert set(ids(hits)[:2]) == {titled, tagged}
        assert all(0.0 <= h.score <= 1.0 for h in hits)
        assert ids(service.query("caching", limit=1))[0] in {titled, tagged}
        assert ids(service.query("caching", tags=["caching"])) == [tagged]
    finally:
        service.close()


from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_WORDS = ["cache", "caching", "auth", "token", "session", "queue", "retry", "the", "graph", "index",
          # identifiers and compounds (issue 37): weighed in the labels; "authtoken" meets the title "auth token"
          "token_cache", "retryQueue", "`session`", "auth.token", "authtoken"]


_SLOW_OK = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]


def _corpus(max_size: int):
    """Nodes as (title words, content words, tags, status, type)."""
    return st.lists(
        st.tuples(
            st.lists(st.sampled_from(_WORDS), min_size=1, max_size=3),
            st.lists(st.sampled_from(_WORDS), min_size=1, max_size=30),
            st.lists(st.sampled_from(["auth", "perf", "api"]), max_size=2, unique=True),
            st.sampled_from(["active", "needs_review", "superseded"]),
            st.sampled_from(["concept", "issue"]),
        ),
        min_size=1,
        max_size=max_size,
    )


def _query(max_words: int):
    words = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=max_words).map(" ".join)
    credit = st.sampled_from(["", " (Jane Doe, PR 12)", ". Patch by Graph Index", " (#31)"])
    return st.tuples(words, credit).map("".join)


def _service_with(tmp_path_factory, corpus):
    """A fresh store holding the generated corpus."""
    from autology_mcp.knowledge.service import Autology
    from autology_mcp.knowledge.store import NodeStore

    store = NodeStore(tmp_path_factory.mktemp("rank"), durable=False)
    store.init()
    service = Autology(store)
    for title, content, tags, status, node_type in corpus:
        service.capture(" ".join(title), " ".join(content), type=node_type, tags=tags, status=status)
    return service


@settings(max_examples=40, deadline=None, suppress_health_check=_SLOW_OK)
@given(
    corpus=_corpus(25),
    query=_query(3),
    limit=st.integers(1, 12),
    filters=st.sampled_from([{}, {"type": "issue"}, {"tags": ["auth"]}, {"tags": ["auth", "perf"]}]),
)
def test_ranking_properties(tmp_path_factory, corpus, query, limit, filters):
    service = _service_with(tmp_path_factory, corpus)
    try:
        hits = service.query(query, limit=limit, **filters)
        assert len(hits) <= limit
        assert all(0.0 <= h.score <= 1.0 for h in hits)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        for hit in hits:
            if "type" in filters:
                assert hit.node.type == filters["type"]
            assert set(filters.get("tags", [])) <= set(hit.node.tags)
        assert hits == service.query(query, limit=limit, **filters)  # deterministic
    finally:
        service.close()


def _brute_force(index, query: str, node_type, tags, limit):
    """The ranking by the documented formula, scoring every matching node one by one:
    ``(bm25 + label) / (bm25 ceiling + label ceiling) * status``, where label adds, for each label
    field (title, tags, title compounds, identifiers) that holds a term, the term's IDF among that
    field times the field's weight, times 1.5 for a term of an identifier the query names; credits
    and pull-request numbers are not part of the query."""
    import math

    from autology_mcp.common.query_text import identifier_words, without_boilerplate
    from autology_mcp.common.text import node_query_terms as query_terms
    from autology_mcp.knowledge.models import NodeStatus
    from autology_mcp.knowledge.search import COLUMN_WEIGHTS, IDENTIFIER_WEIGHT, LABEL_WEIGHTS, STATUS_FACTOR

    query = without_boilerplate(query)
    terms = query_terms(query)
    named = set(identifier_words(query))
    quoted = ['"' + t.replace('"', '""') + '"' for t in terms]
    conn = index.conn
    total = conn.execute("SELECT count(*) FROM nodes").fetchone()[0]

    def idf(table: str, expression: str) -> tuple[float, int]:
        hits = conn.execute(f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", (expression,)).fetchone()[0]
        value = math.log((total - hits + 0.5) / (hits + 0.5))
        return (value if value > 0 else 1e-6), hits

    idfs = [idf("nodes_fts", q)[0] for q in quoted]
    field_idfs = {
        field: [weight * v * (IDENTIFIER_WEIGHT if t in named else 1.0) if n else 0.0
                for t, (v, n) in zip(terms, (idf("nodes_labels", "{" + field + "} : " + q) for q in quoted))]
        for field, weight in LABEL_WEIGHTS.items()
    }
    ceiling = 2.2 * sum(idfs) + sum(sum(v) for v in field_idfs.values())
    w = COLUMN_WEIGHTS
    bm25 = dict(
        conn.execute(
            f"SELECT rowid, -bm25(nodes_fts, {w[0]}, {w[1]}, {w[2]}) FROM nodes_fts WHERE nodes_fts MATCH ?",
            (" OR ".join(quoted),),
        ).fetchall()
    )
    scored = []
    for rowid, score in bm25.items():
        node_id, status, modified, ntype = conn.execute(
            "SELECT id, status, modified, type FROM nodes WHERE rowid = ?", (rowid,)
        ).fetchone()
        node_tags = {t for (t,) in conn.execute("SELECT tag FROM tags WHERE node_id = ?", (node_id,))}
        if (node_type and ntype != node_type) or not set(tags) <= node_tags:
            continue

        def has(expression):
            return conn.execute(
                "SELECT 1 FROM nodes_labels WHERE nodes_labels MATCH ? AND rowid = ?", (expression, rowid)
            ).fetchone() is not None

        label = sum(v for field, values in field_idfs.items() for v, q in zip(values, quoted)
                    if v and has("{" + field + "} : " + q))
        relevance = min((max(score, 0) + label) / ceiling, 1)
        scored.append((node_id, modified, round(relevance * STATUS_FACTOR[NodeStatus(status)], 4)))
    scored.sort(key=lambda s: s[0])
    scored.sort(key=lambda s: s[1], reverse=True)
    scored.sort(key=lambda s: s[2], reverse=True)
    return [(s[0], s[2]) for s in scored[:limit]]


@settings(max_examples=30, deadline=None, suppress_health_check=_SLOW_OK)
@given(
    corpus=_corpus(40),
    query=_query(4),
    limit=st.integers(1, 12),
    filters=st.sampled_from([{}, {"type": "issue"}, {"tags": ["auth"]}]),
)
def test_ranking_equals_scoring_every_match(tmp_path_factory, corpus, query, limit, filters):
    """Scoring the nodes with a label term, then the rest best by BM25 until none can enter, gives
    exactly the list that scoring every matching node gives."""
    service = _service_with(tmp_path_factory, corpus)
    try:
        hits = service.query(query, limit=limit, **filters)
        expected = _brute_force(service.store.index, query, filters.get("type"), tuple(filters.get("tags", ())), limit)
        assert [(h.node.id, h.score) for h in hits] == expected
    finally:
        service.close()


def test_a_rare_term_in_content_beats_weak_title_matches_of_a_common_term(autology, capture):
    """The nodes with a label term are weak here; a node holding only the rare term in its content
    must still be found, exactly as scoring every match finds it."""
    for i in range(12):
        capture(f"Note {i}", "alpha appears in this text")
    for i in range(3):
        capture(f"Alpha notes {i}", "nothing else")
    for i in range(24):
        capture(f"Filler {i}", "gamma words only")
    rare = capture("Other", "the beta case explained")
    hits = autology.query("alpha beta", limit=3)
    assert hits[0].node.id == rare
    assert [(h.node.id, h.score) for h in hits] == _brute_force(autology.store.index, "alpha beta", None, (), 3)


# ------------------------------------------------------------------------------ the pruned search
# Above PRUNE_FROM_MATCHES term matches, autology_query scores only the nodes that can still enter
# the list (search._pruned). These tests lower the threshold to 0 so that small stores take that
# path, and check it against the exhaustive path (every match scored) and the brute-force scorer.

from contextlib import contextmanager  # noqa: E402
from unittest import mock  # noqa: E402

from autology_mcp.knowledge import search as search_module  # noqa: E402


@contextmanager
def _pruning_always():
    with mock.patch.object(search_module, "PRUNE_FROM_MATCHES", 0):
        yield


def _exhaustive(service, query, **filters):
    with mock.patch.object(search_module, "_pruned", lambda index, q: None):
        return service.query(query, **filters)


class _Spy:
    """Records what the pruned path asked SQLite for: the candidate sets of its final statements."""

    def __init__(self, index):
        self.index, self.original, self.candidates = index, index.ranked_rows, []

    def __call__(self, match, weights, bonus, node_type, tags, limit, among=None):
        if among is not None:  # the last one of a query is its final statement
            self.candidates.append(among)
        return self.original(match, weights, bonus, node_type, tags, limit, among)


@settings(max_examples=40, deadline=None, suppress_health_check=_SLOW_OK)
@given(
    corpus=_corpus(40),
    query=_query(4),
    limit=st.integers(1, 12),
    filters=st.sampled_from([{}, {"type": "issue"}, {"tags": ["auth"]}]),
)
def test_pruned_ranking_equals_scoring_every_match(tmp_path_factory, corpus, query, limit, filters):
    service = _service_with(tmp_path_factory, corpus)
    try:
        with _pruning_always():
            hits = [(h.node.id, h.score) for h in service.query(query, limit=limit, **filters)]
        assert hits == [(h.node.id, h.score) for h in _exhaustive(service, query, limit=limit, **filters)]
        expected = _brute_force(service.store.index, query, filters.get("type"), tuple(filters.get("tags", ())), limit)
        assert hits == expected
    finally:
        service.close()


_VOCAB = [f"w{i:02d}" for i in range(40)]


def _skewed_store(root, nodes: int, seed: int):
    """A store whose words follow a steep curve (w00 is in most nodes, w39 in few), with titles and
    tags from the same words: many matches per query, labels of many values, as at 100k nodes."""
    import random

    from autology_mcp.knowledge.service import Autology
    from autology_mcp.knowledge.store import NodeStore

    rng = random.Random(seed)
    weights = [1.0 / (i + 1) for i in range(len(_VOCAB))]
    store = NodeStore(root, durable=False)
    store.init()
    service = Autology(store)
    for i in range(nodes):
        title = " ".join(rng.choices(_VOCAB, weights, k=rng.randint(1, 4)))
        content = " ".join(rng.choices(_VOCAB, weights, k=rng.randint(5, 120)))
        tags = sorted(set(rng.choices(_VOCAB[:12], k=rng.randint(0, 3))))
        status = rng.choices(["active", "needs_review", "superseded"], [8, 1, 1])[0]
        service.capture(f"{title} {i}", content, type=rng.choice(["concept", "issue"]), tags=tags, status=status)
    return service


def test_pruning_leaves_nodes_out_and_returns_the_exhaustive_list(tmp_path):
    """On a store where most nodes match most queries, the pruned path scores a fraction of the
    matches, and returns exactly the exhaustive list (ids, scores and order), whatever the filters,
    limits and number of terms (one term: the labels' threshold; two to six: the smallest sets of
    terms that can reach; seven and more: MaxScore's split)."""
    import random

    service = _skewed_store(tmp_path / "p", 400, seed=7)
    rng = random.Random(11)
    spy = _Spy(service.store.index)
    service.store.index.ranked_rows = spy
    left_out = 0
    try:
        with _pruning_always():
            for n in range(200):
                words = rng.sample(_VOCAB, rng.choice([1, 1, 2, 2, 3, 4, 6, 8]))
                query = " ".join(words)
                filters = rng.choice([{}, {}, {"type": "issue"}, {"tags": [rng.choice(_VOCAB[:12])]}])
                limit = rng.choice([1, 3, 10, 10, 25])
                spy.candidates.clear()
                hits = [(h.node.id, h.score) for h in service.query(query, limit=limit, **filters)]
                assert hits == [(h.node.id, h.score) for h in _exhaustive(service, query, limit=limit, **filters)], (query, filters, limit)
                if spy.candidates:
                    matches = service.store.index.rowids_for(" OR ".join(f'"{w}"' for w in words))
                    rowids, requirement = spy.candidates[-1]
                    scored = set(rowids) | (set(service.store.index.rowids_for(requirement)) if requirement else set())
                    left_out += len(set(matches) - scored) > 0
    finally:
        service.close()
    assert left_out >= 50  # the pruning really prunes on this store


def test_the_requirement_expression():
    """The smallest sets of terms whose bounds reach the threshold, as FTS5 sees them."""
    quoted = ['"a"', '"b"', '"c"']
    reach = lambda threshold: (lambda most: most >= threshold)  # noqa: E731
    assert search_module._requirement(quoted, [1.0, 2.0, 3.0], reach(0.5)) is None  # any term alone can
    assert search_module._requirement(quoted, [1.0, 2.0, 3.0], reach(7.0)) == ""  # not even all three
    assert search_module._requirement(quoted, [1.0, 2.0, 3.0], reach(3.0)) == '("c") OR ("a" AND "b")'
    assert search_module._requirement(quoted, [1.0, 2.0, 3.0], reach(5.0)) == '("b" AND "c")'
    many = [f'"t{i}"' for i in range(8)]
    bounds = [1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 5.0]  # the four weakest together: 4.0
    assert search_module._requirement(many, bounds, reach(4.5)) == '"t4" OR "t5" OR "t6" OR "t7"'


def test_a_bonus_of_many_values_is_joined_and_gives_the_same_rows(tmp_path):
    """More than 255 distinct label values (five or more terms) cannot be named by a byte: the bonus
    is then joined as JSON; both ways give the same rows, to the bit."""
    from autology_mcp.knowledge.node_index import _bonus_column

    service = _skewed_store(tmp_path / "b", 300, seed=3)
    try:
        index = service.store.index
        rowids = index.rowids_for('"w00" OR "w01"')
        bonus = {r: 0.5 + i / 1000 for i, r in enumerate(rowids)}
        assert len(set(bonus.values())) > 255 and _bonus_column(bonus) is None
        few = {r: [0.25, 1.5, 3.125][r % 3] for r in rowids}
        assert _bonus_column(few) is not None
        for table in (bonus, few):
            rows = index.ranked_rows('"w00" OR "w01"', search_module.COLUMN_WEIGHTS, table, None, (), -1)
            assert {r[0]: r[5] for r in rows} == {r: table.get(r, 0.0) for r in rowids}
            assert [r[4] + r[5] for r in rows] == sorted((r[4] + r[5] for r in rows), reverse=True)
    finally:
        service.close()
