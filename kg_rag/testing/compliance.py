"""The store compliance suite: what every backend must do, checked the same way for each, as named case tables.

Subclass :class:`StoreComplianceSuite` and provide a **class-scoped** ``store_factory`` fixture returning a
callable that makes a new, empty store (a :class:`~kg_rag.store.graph_store.GraphStore`) on every call::

    class TestMyStore(StoreComplianceSuite):
        capabilities = Capabilities(fixed_version_readers=True)   # only where the backend legitimately differs

        @pytest.fixture(scope="class")
        def store_factory(self, tmp_path_factory):
            return lambda: MyStore(tmp_path_factory.mktemp("store"))

The suite saves a reference index into it and checks, against the in-process reference backend (the
differential oracle), one named case per test, so a failure names what broke:

- ``ROUND_TRIP``: records, direction, documents, counts and vectors survive a save;
- ``PROTOCOL``: every :class:`~kg_rag.store.base.QueryBackend` operation, results compared in the space of
  user-facing ids (entity keys, relation ids, chunk ids) so backends may number rows their own way — with every
  filter: relation-type allow and deny lists, direction, synonym links, blocked entities, hop limits, frontier
  caps;
- ``COMMUNITIES`` and ``RETRIEVAL``: community lookups; retrieval end to end for every strategy (same chunks,
  same context);
- ``WRITES``: sequences of document writes (replace, delete, add, re-add, merge into stored chunks) through
  :class:`~kg_rag.indexing.writer.IndexWriter`, compared with the same writes applied to the in-memory model:
  same records, counts, vectors, ingest report, stale communities, and query results;
- then what writers must guarantee: a deleted document is forgotten everywhere, readers see committed writes,
  one writer at a time (a second gives up naming the holder), saving again replaces the index.

A fresh store numbers rows in the order of the saved index (as both built-in backends do), so ties that are
broken by handle break the same way as in the reference. :class:`Capabilities` declares what a backend may do
differently (readers fixed to a version until ``refresh()``, approximate vector search, no communities).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pytest

from kg_rag.index.build import GraphIndex, build_index
from kg_rag.index.snapshot import Snapshot
from kg_rag.indexing.writer import IndexWriter
from kg_rag.model.change import GraphChange, apply_to_graph
from kg_rag.model.graph import KnowledgeGraph
from kg_rag.model.records import Chunk
from kg_rag.store.base import EdgeFilter, QueryBackend
from kg_rag.store.graph_store import refreshed
from kg_rag.store.locking import IndexLockedError
from kg_rag.store.memory import SnapshotBackend
from kg_rag.testing.embeddings import BagOfWordsEmbeddings

MARKER = "CONFIDENTIAL-MARKER-7731"


@dataclass(frozen=True)
class Capabilities:
    """What a backend may legitimately do differently from the in-process reference; the suite adapts."""

    fixed_version_readers: bool = False
    """Readers keep the version they opened until ``refresh()`` (the directory store); otherwise every new
    reader sees the newest committed write."""
    approximate_search: bool = False
    """Vector search may miss rows (an index without exact re-scoring): top-k results are compared by recall
    (at least ``min_recall``), not by order."""
    min_recall: float = 0.8
    communities: bool = True
    """The backend stores and serves communities (when not, the community cases are skipped)."""


def reference_graph() -> KnowledgeGraph:
    """A small graph with what backends get wrong: direction, several types, parallel and reversed relations,
    a hub, relations evidenced in several chunks, synonym links, entity descriptions, and awkward names."""
    kg = KnowledgeGraph()
    texts = {
        "c1": ("orders.md", "Directive 2023-07 supersedes Directive 2019-03. The CIO signed Directive 2023-07."),
        "c2": ("orders.md", "Directive 2019-03 revokes Memo A. Directive 2023-07 cites Memo A."),
        "c3": ("org.md", "Lars Eriksen reports to Priya Nair. Priya Nair manages Platform Engineering."),
        "c4": ("org.md", "Priya Nair reports to Daniel Okafor, the CTO. The CTO reports to Maria Chen."),
        "c5": ("ops.md", "The storage freeze was caused by Incident 42. Incident 42 blocked the migration."),
        "c6": ("ops.md", "Platform Engineering owns the migration. The migration implements Directive 2023-07."),
        "c7": ("misc.md", f"{MARKER}: Agent Smith drafted Memo A. Memo A mentions Platform Engineering."),
        "c8": ("misc.md", 'Café Müller hosted the C# meetup; the meetup discussed "A -> B" notation.'),
    }
    for cid, (doc, text) in texts.items():
        kg.add_chunk(Chunk(cid, text, doc, {"title": doc.split(".")[0].title()}))
    facts = [
        ("Directive 2023-07", "SUPERSEDES", "Directive 2019-03", "c1"),
        ("CIO", "SIGNED", "Directive 2023-07", "c1"),
        ("Directive 2019-03", "REVOKES", "Memo A", "c2"),
        ("Directive 2023-07", "CITES", "Memo A", "c2"),
        ("Lars Eriksen", "REPORTS_TO", "Priya Nair", "c3"),
        ("Priya Nair", "MANAGES", "Platform Engineering", "c3"),
        ("Priya Nair", "REPORTS_TO", "Daniel Okafor", "c4"),
        ("Daniel Okafor", "REPORTS_TO", "Maria Chen", "c4"),
        ("Incident 42", "CAUSED", "storage freeze", "c5"),
        ("Incident 42", "BLOCKED", "migration", "c5"),
        ("Platform Engineering", "OWNS", "migration", "c6"),
        ("migration", "IMPLEMENTS", "Directive 2023-07", "c6"),
        ("Agent Smith", "DRAFTED", "Memo A", "c7"),
        ("Memo A", "MENTIONS", "Platform Engineering", "c7"),
        ("Café Müller", "HOSTED", "C# meetup", "c8"),
        ("C# meetup", "DISCUSSED", '"A -> B" notation', "c8"),
        ("Memo A", "CITES", "Directive 2023-07", "c7"),  # the reverse of a c2 relation: a different relation
        ("Priya Nair", "MANAGES", "Platform Engineering", "c6"),  # the same relation, evidenced twice
    ]
    for src, rtype, tgt, cid in facts:
        quote = kg.chunks[cid].text.split(".")[0]
        kg.add_relation(src, tgt, rtype, chunk_id=cid, evidence=quote, description=f"{rtype.lower()} ({cid})")
    kg.add_entity("Agent Smith", "PERSON", f"{MARKER}: drafted by Agent Smith", chunk_id="c7")
    kg.add_entity("Priya Nair", "PERSON", "Head of Platform Engineering", chunk_id="c3")
    kg.add_entity("Daniel Okafor", "PERSON", "the CTO", chunk_id="c4")
    kg.add_entity("CTO", "ROLE", chunk_id="c4")
    kg.add_synonym("Daniel Okafor", "CTO", 0.93)
    kg.add_synonym("Directive 2023-07", "Directive 2019-03", 0.91)
    return kg


QUESTIONS = [
    "Which directive superseded Directive 2019-03?",
    "Who does Lars Eriksen report to, and who manages Platform Engineering?",
    "What caused the storage freeze?",
    "Who drafted Memo A?",
    "Where was the C# meetup hosted?",
]

FILTERS = [
    EdgeFilter.build(),
    EdgeFilter.build(direction="out"),
    EdgeFilter.build(direction="in"),
    EdgeFilter.build(types=["REPORTS_TO", "MANAGES"]),
    EdgeFilter.build(exclude_types=["CITES", "SUPERSEDES"]),
    EdgeFilter.build(synonyms=False),
    EdgeFilter.build(types=["NO_SUCH_TYPE"]),
]


class _Keys:
    """Translate a backend's handles to user-facing ids (and back) so results compare across backends."""

    def __init__(self, view: Any) -> None:
        self.view = view

    def entities(self, handles: Any) -> list[str | None]:
        return [e.key if e is not None else None for e in self.view.entities(np.asarray(handles, np.int64))]

    def relations(self, handles: Any) -> list[str | None]:
        return [r.id if r is not None else None for r in self.view.relations(np.asarray(handles, np.int64))]

    def chunks(self, handles: Any) -> list[str | None]:
        return [c.id if c is not None else None for c in self.view.chunks(np.asarray(handles, np.int64))]

    def entity_handles(self, keys: list[str]) -> np.ndarray:
        found = self.view.lookup_entities(keys)
        return np.asarray([found[k] for k in keys], dtype=np.int64)

    def chunk_handles(self, ids: list[str]) -> np.ndarray:
        found = self.view.chunk_handles(ids)
        return np.asarray([found[c] for c in ids], dtype=np.int64)

    def blocked(self, edge_filter: EdgeFilter, keys: list[str]) -> EdgeFilter:
        return EdgeFilter(
            edge_filter.types,
            edge_filter.exclude_types,
            edge_filter.direction,
            edge_filter.synonyms,
            frozenset(int(h) for h in self.entity_handles(keys)),
        )


def _edges(keys: _Keys, edge_set: Any) -> list[tuple]:
    ids = keys.relations(edge_set.ids)
    src, dst = keys.entities(edge_set.src), keys.entities(edge_set.dst)
    return [
        (ids[i], src[i], dst[i], edge_set.type_of(i), round(float(edge_set.weight[i]), 5), bool(edge_set.synonym[i]))
        for i in range(len(edge_set))
    ]


def _expansion(keys: _Keys, exp: Any) -> list[tuple]:
    nodes = keys.entities(exp.nodes)
    has = exp.parent_edge >= 0
    parents = keys.relations(exp.parent_edge[has]) if has.any() else []
    it = iter(parents)
    rows = []
    for i, node in enumerate(nodes):
        parent = next(it) if has[i] else None
        rows.append((node, int(exp.hop[i]), round(float(exp.score[i]), 5), parent, bool(exp.parent_forward[i])))
    return sorted(rows, key=lambda r: r[0])


# ---------------------------------------------------------------------------------------------- cases
@dataclass
class Views:
    """What a case reads: the reference view and the store's view (one consistent version each), their id
    translators, the reference index, the embeddings and the backend's capabilities."""

    rv: Any
    sv: Any
    reference: GraphIndex
    embeddings: Any
    capabilities: Capabilities
    rk: _Keys = field(init=False)
    sk: _Keys = field(init=False)

    def __post_init__(self) -> None:
        self.rk, self.sk = _Keys(self.rv), _Keys(self.sv)

    def q(self, question: str) -> np.ndarray:
        return np.asarray(self.embeddings.embed_query(question), np.float32)

    @property
    def all_keys(self) -> list[str]:
        return [e.key for e in self.reference.kg.entities()]

    @property
    def all_chunks(self) -> list[str]:
        return sorted(self.reference.kg.chunks)

    @property
    def seeds(self) -> list[str]:
        """The expansion seeds the graph still holds (a write case may have removed some)."""
        return [k for k in SEEDS if k in self.reference.kg.graph]


@dataclass(frozen=True)
class Case:
    """One named check: ``check(views)`` asserts (the id is the name pytest shows)."""

    name: str
    check: Callable[[Views], None]

    def __repr__(self) -> str:
        return self.name


def _cases(*cases: Case) -> Any:
    return pytest.mark.parametrize("case", cases, ids=[c.name for c in cases])


def _same_hits(v: Views, kind: str, to_keys: str, a: Any, b: Any, where: Any) -> None:
    got, want = getattr(v.sk, to_keys)(b.ids), getattr(v.rk, to_keys)(a.ids)
    if v.capabilities.approximate_search:
        found = len(set(got) & set(want)) / max(1, len(want))
        assert found >= v.capabilities.min_recall, (where, got, want)
        return
    assert got == want, where
    assert np.allclose(a.scores, b.scores, atol=1e-5), where


def _search(question: str, kind: str, to_keys: str) -> Case:
    def check(v: Views) -> None:
        q = v.q(question)
        for k in (1, 5, 50):
            a, b = v.rv.search(kind, q, k, 0.05), v.sv.search(kind, q, k, 0.05)
            _same_hits(v, kind, to_keys, a, b, (question, kind, k))
            # a hit's score is its similarity (a backend may reuse search scores as similarities)
            assert np.allclose(v.sv.similarity(kind, q, b.ids), b.scores, atol=1e-5), (question, kind, k)

    return Case(f"search-{kind}-q{QUESTIONS.index(question)}", check)


def _similarity_and_lexical(question: str) -> Case:
    def check(v: Views) -> None:
        q = v.q(question)
        chunks = v.all_chunks
        assert np.allclose(
            v.rv.similarity("chunks", q, v.rk.chunk_handles(chunks)),
            v.sv.similarity("chunks", q, v.sk.chunk_handles(chunks)),
            atol=1e-5,
        )
        lex_r, lex_s = v.rv.lexical_search(question, 8), v.sv.lexical_search(question, 8)
        assert v.sk.chunks(lex_s.ids) == v.rk.chunks(lex_r.ids)
        assert np.allclose(lex_r.scores, lex_s.scores, rtol=1e-4)
        assert np.allclose(
            v.rv.lexical_scores(question, v.rk.chunk_handles(chunks)),
            v.sv.lexical_scores(question, v.sk.chunk_handles(chunks)),
            rtol=1e-4,
        )

    return Case(f"similarity-and-bm25-q{QUESTIONS.index(question)}", check)


SEEDS = ["directive 2019-03", "lars eriksen", "incident 42"]


def _expand(n: int, edge_filter: EdgeFilter, blocked: list[str], *, parents: bool = True) -> Case:
    """Expansion from three seeds. ``parents=False`` compares reached nodes, hops and scores only: after writes,
    backends number new rows differently, and the parent chosen among equally good edges is the lowest handle."""

    def check(v: Views) -> None:
        fr, fs = v.rk.blocked(edge_filter, blocked), v.sk.blocked(edge_filter, blocked)
        weights = [1.0, 0.5, 0.25]
        for hops in (0, 1, 3):
            for frontier in (2, 2000):
                runs = []
                for view, keys, flt in ((v.rv, v.rk, fr), (v.sv, v.sk, fs)):
                    exp = view.expand(
                        dict(zip(keys.entity_handles(v.seeds).tolist(), weights)),
                        hops,
                        flt,
                        decay=0.5,
                        max_frontier=frontier,
                        prefer=frozenset({"REPORTS_TO"}),
                        prefer_weight=1.0,
                    )
                    rows = _expansion(keys, exp)
                    runs.append(rows if parents else [r[:3] for r in rows])
                assert runs[1] == runs[0], (hops, frontier)

    return Case(f"expand-filter{n}-{'blocked' if blocked else 'open'}", check)


def _edges_of(n: int, edge_filter: EdgeFilter, blocked: list[str]) -> Case:
    def check(v: Views) -> None:
        fr, fs = v.rk.blocked(edge_filter, blocked), v.sk.blocked(edge_filter, blocked)
        some = ["priya nair", "memo a", "migration"]
        for among in (False, True):
            a = v.rv.edges_of(v.rk.entity_handles(some), fr, among=among)
            b = v.sv.edges_of(v.sk.entity_handles(some), fs, among=among)
            assert _edges(v.sk, b) == _edges(v.rk, a), among
        pa, ea = v.rv.chunk_relations(v.rk.chunk_handles(v.all_chunks), fr)
        pb, eb = v.sv.chunk_relations(v.sk.chunk_handles(v.all_chunks), fs)
        assert list(zip(v.sk.chunks(pb.left), v.sk.relations(pb.right))) == list(
            zip(v.rk.chunks(pa.left), v.rk.relations(pa.right))
        )
        assert _edges(v.sk, eb) == _edges(v.rk, ea)

    return Case(f"edges-and-chunk-relations-filter{n}-{'blocked' if blocked else 'open'}", check)


def _all_edges(v: Views) -> tuple[Any, list[str | None], np.ndarray]:
    """The reference's edges, their ids, and the store's handles of the same relations."""
    ref_edges = v.rv.edges_of(v.rk.entity_handles(v.all_keys), EdgeFilter.build())
    rel_ids = v.rk.relations(ref_edges.ids)
    store_edges = v.sv.edges_of(v.sk.entity_handles(v.all_keys), EdgeFilter.build())
    handle_of = dict(zip(v.sk.relations(store_edges.ids), store_edges.ids.tolist()))
    return ref_edges, rel_ids, np.asarray([handle_of[r] for r in rel_ids], np.int64)


def _info(v: Views) -> None:
    a, b = v.rv.info(), v.sv.info()
    assert (b.entities, b.relations, b.chunks, b.documents, b.dim) == (
        a.entities,
        a.relations,
        a.chunks,
        a.documents,
        a.dim,
    )
    assert b.relation_types == a.relation_types
    assert b.embedding_model == a.embedding_model and b.type_prefix == a.type_prefix


def _lookups(v: Views) -> None:
    assert v.sk.entities(v.sk.entity_handles(v.all_keys)) == v.all_keys
    assert v.sv.lookup_entities(["no such entity"]) == {}
    assert v.sk.chunks(v.sk.chunk_handles(v.all_chunks)) == v.all_chunks
    assert sorted(c.id for _, c in v.sv.iter_chunks()) == v.all_chunks


def _edges_by_id(v: Views) -> None:
    ref_edges, _, handles = _all_edges(v)
    assert _edges(v.sk, v.sv.edges_by_id(handles)) == _edges(v.rk, v.rv.edges_by_id(ref_edges.ids))


def _relation_chunks(v: Views) -> None:
    ref_edges, _, handles = _all_edges(v)
    pa, pb = v.rv.relation_chunks(ref_edges.ids), v.sv.relation_chunks(handles)
    assert list(zip(v.sk.relations(pb.left), v.sk.chunks(pb.right))) == list(
        zip(v.rk.relations(pa.left), v.rk.chunks(pa.right))
    )


def _mentions(v: Views) -> None:
    chunks, keys = v.all_chunks, v.all_keys
    pa, pb = v.rv.chunk_entities(v.rk.chunk_handles(chunks)), v.sv.chunk_entities(v.sk.chunk_handles(chunks))
    assert list(zip(v.sk.chunks(pb.left), v.sk.entities(pb.right))) == list(
        zip(v.rk.chunks(pa.left), v.rk.entities(pa.right))
    )
    for handle in v.sk.chunk_handles(chunks):  # one chunk at a time, as a chain's pick asks (names read ahead)
        mentioned = v.sv.chunk_entities(np.asarray([handle], np.int64)).right
        assert v.sv.names(mentioned) == [e.name for e in v.sv.entities(mentioned)]
    pa, pb = v.rv.entity_chunks(v.rk.entity_handles(keys)), v.sv.entity_chunks(v.sk.entity_handles(keys))
    assert list(zip(v.sk.entities(pb.left), v.sk.chunks(pb.right))) == list(
        zip(v.rk.entities(pa.left), v.rk.chunks(pa.right))
    )


def _counts(v: Views) -> None:
    keys = v.all_keys
    assert np.array_equal(
        v.rv.mention_counts(v.rk.entity_handles(keys)), v.sv.mention_counts(v.sk.entity_handles(keys))
    )
    assert np.array_equal(v.rv.degrees(v.rk.entity_handles(keys)), v.sv.degrees(v.sk.entity_handles(keys)))


def _records(v: Views) -> None:
    keys, chunks = v.all_keys, v.all_chunks
    assert [e.__dict__ for e in v.sv.entities(v.sk.entity_handles(keys))] == [
        e.__dict__ for e in v.rv.entities(v.rk.entity_handles(keys))
    ]
    assert v.sv.names(v.sk.entity_handles(keys)) == [e.name for e in v.rv.entities(v.rk.entity_handles(keys))]
    labels = [(e.key, e.name) for e in v.rv.entities(v.rk.entity_handles(keys))]
    assert v.sv.labels(v.sk.entity_handles(keys)) == labels
    v.sv.entities(v.sk.entity_handles(keys[:1]))  # a label after the record was read agrees with one before
    assert v.sv.labels(v.sk.entity_handles(keys)) == labels
    assert [c.__dict__ for c in v.sv.chunks(v.sk.chunk_handles(chunks))] == [
        c.__dict__ for c in v.rv.chunks(v.rk.chunk_handles(chunks))
    ]
    ref_edges, rel_ids, handles = _all_edges(v)
    assert [r.id for r in v.sv.relations(handles)] == rel_ids
    assert [r.__dict__ for r in v.sv.relations(handles)] == [r.__dict__ for r in v.rv.relations(ref_edges.ids)]


def _unknown_handles(v: Views) -> None:
    bad = np.asarray([-1, 10**9], np.int64)  # unknown handles are left out or read as nothing
    assert v.sv.entities(bad) == [None, None] and v.sv.chunks(bad) == [None, None]
    assert v.sv.relations(bad) == [None, None]
    assert len(v.sv.edges_by_id(bad)) == 0 and len(v.sv.chunk_entities(bad)) == 0
    assert np.array_equal(v.sv.mention_counts(bad), np.zeros(2, np.float32))
    assert v.sv.names(bad) == [None, None] and v.sv.labels(bad) == [None, None]
    assert v.sv.chunk_handles(["no such chunk"]) == {}


PROTOCOL = (
    Case("info", _info),
    Case("lookups-and-chunk-scan", _lookups),
    *(
        _search(q, kind, to_keys)
        for q in QUESTIONS
        for kind, to_keys in (("entities", "entities"), ("facts", "relations"), ("chunks", "chunks"))
    ),
    *(_similarity_and_lexical(q) for q in QUESTIONS),
    *(_expand(n, f, blocked) for n, f in enumerate(FILTERS) for blocked in ([], ["priya nair"])),
    *(_edges_of(n, f, blocked) for n, f in enumerate(FILTERS) for blocked in ([], ["priya nair"])),
    Case("edges-by-id", _edges_by_id),
    Case("relation-chunks", _relation_chunks),
    Case("mentions-both-ways", _mentions),
    Case("mention-counts-and-degrees", _counts),
    Case("records", _records),
    Case("unknown-handles", _unknown_handles),
)


def _communities_for(level: int | None) -> Case:
    def check(v: Views) -> None:
        keys = v.all_keys
        for some in (keys, keys[:3], ["priya nair", "memo a"]):
            assert v.sv.communities_for(v.sk.entity_handles(some), level) == v.rv.communities_for(
                v.rk.entity_handles(some), level
            ), some

    return Case(f"communities-for-level-{level}", check)


def _community_info(v: Views) -> None:
    cs = v.reference.communities
    assert v.sv.info().extra["communities"] == len(cs)
    assert v.sv.info().extra["community_levels"] == cs.levels
    ids = [c.id for c in cs][:3] + ["no such community"]
    got = v.sv.community_records(ids)
    assert [c.to_record() if c else None for c in got] == [
        c.to_record() if c else None for c in v.rv.community_records(ids)
    ]
    assert got[-1] is None


def _list_communities(level: int | None) -> Case:
    def check(v: Views) -> None:
        assert [c.to_record() for c in v.sv.list_communities(level)] == [
            c.to_record() for c in v.rv.list_communities(level)
        ]

    return Case(f"list-communities-level-{level}", check)


COMMUNITIES = (
    Case("community-records-and-info", _community_info),
    *(_communities_for(level) for level in (None, 0, 1, 5)),
    *(_list_communities(level) for level in (None, 0, 1, 9)),
)


STRATEGIES = ("chain", "frequency", "path", "ppr")
RETRIEVAL_EXTRAS: tuple[dict[str, Any], ...] = (
    {},
    {"edge_types": ["REPORTS_TO", "MANAGES"]},
    {"exclude_entities": ["Priya Nair"]},
)


def _retrieval(question: str, strategy: str) -> Case:
    def check(v: Views) -> None:
        from kg_rag.context import format_context
        from kg_rag.query.engine import QueryEngine

        ref, engine = QueryEngine(v.rv, v.embeddings), QueryEngine(v.sv, v.embeddings)
        for extra in RETRIEVAL_EXTRAS:
            a = ref.retrieve(question, strategy=strategy, **extra)
            b = engine.retrieve(question, strategy=strategy, **extra)
            assert [c.id for c in b.chunks] == [c.id for c in a.chunks], extra
            assert format_context(b).text == format_context(a).text, extra

    return Case(f"retrieve-{strategy}-q{QUESTIONS.index(question)}", check)


RETRIEVAL = tuple(_retrieval(q, s) for q in QUESTIONS for s in STRATEGIES)


DOCUMENT_FILTERS = (
    {"doc_id": ["org.md"]},
    {"doc_id": ["orders.md", "ops.md"]},
    {"title": "Ops"},
    {"title": {"$in": ["Org", "Misc"]}, "doc_id": ["misc.md", "org.md", "ops.md"]},
    {"doc_id": ["no-such.md"]},
)


def _in_scope(v: Views, doc_filter: dict, result: Any) -> None:
    """Nothing of a result comes from outside the filter: chunks, rows, path steps and entities."""
    from kg_rag.store.scope import DocumentFilter

    kg = v.reference.kg
    scope = DocumentFilter.parse(doc_filter)
    assert scope is not None, doc_filter  # every filter of DOCUMENT_FILTERS names something
    allowed = {cid for cid, c in kg.chunks.items() if scope.matches(c.doc_id, c.metadata)}
    assert {c.id for c in result.chunks} <= allowed, doc_filter
    for rid in [r.relation_id for r in result.relations] + [s.relation_id for p in result.paths for s in p.steps]:
        relation = kg.get_relation(rid)
        assert relation is not None, (doc_filter, rid)
        evidenced = {e.chunk_id for e in relation.evidence}
        assert evidenced & allowed, (doc_filter, rid)
    mentioned = {key for cid in allowed for key in kg.entities_of_chunk(cid)}
    assert {e.key for e in result.entities} <= mentioned, doc_filter
    if "c7" not in allowed:
        assert MARKER not in result.context, doc_filter


def _document_filter(doc_filter: dict, strategy: str) -> Case:
    def check(v: Views) -> None:
        from kg_rag.context import format_context
        from kg_rag.query.engine import QueryEngine
        from kg_rag.store.scope import DocumentFilter

        scope = DocumentFilter.parse(doc_filter)
        assert v.sk.chunks(v.sv.matching_chunks(scope)) == v.rk.chunks(v.rv.matching_chunks(scope)), doc_filter
        ref, engine = QueryEngine(v.rv, v.embeddings), QueryEngine(v.sv, v.embeddings)
        for question in QUESTIONS:
            a = ref.retrieve(question, strategy=strategy, filter=doc_filter)
            b = engine.retrieve(question, strategy=strategy, filter=doc_filter)
            assert [c.id for c in b.chunks] == [c.id for c in a.chunks], (doc_filter, question)
            assert format_context(b).text == format_context(a).text, (doc_filter, question)
            _in_scope(v, doc_filter, b)

    return Case(f"filter-{strategy}-f{DOCUMENT_FILTERS.index(doc_filter)}", check)


def _filtered_search_over_a_large_scope(v: Views) -> None:
    """Above ``EXACT_ROWS`` a scoped search asks the whole table for more and more hits: the same results."""
    from kg_rag.store.scope import DocumentFilter, ScopedView

    scope = DocumentFilter.parse({"doc_id": ["orders.md", "misc.md"]})
    assert scope is not None
    exact = ScopedView(v.sv, scope)
    oversampled = ScopedView(v.sv, scope)
    oversampled.EXACT_ROWS = 0
    for question in QUESTIONS:
        q = v.q(question)
        for kind in ("entities", "facts", "chunks"):
            a, b = exact.search(kind, q, 3), oversampled.search(kind, q, 3)
            assert a.ids.tolist() == b.ids.tolist(), (question, kind)
        a, b = exact.lexical_search(question, 3), oversampled.lexical_search(question, 3)
        assert a.ids.tolist() == b.ids.tolist(), question


def _scope_members(v: Views) -> None:
    """A backend's own ``scope_members`` (PostgreSQL: two plain lookups) gives what the base class builds from
    ``chunk_entities`` and ``chunk_relations``, for every filter of the table."""
    from kg_rag.store.scope import DocumentFilter

    for doc_filter in DOCUMENT_FILTERS:
        chunks = v.sv.matching_chunks(DocumentFilter.parse(doc_filter))
        mine = v.sv.scope_members(chunks)
        want = QueryBackend.scope_members(v.sv, chunks)
        assert [a.tolist() for a in mine] == [b.tolist() for b in want], doc_filter


DOCUMENT_FILTER_CASES = (
    *(_document_filter(f, s) for f in DOCUMENT_FILTERS for s in STRATEGIES),
    Case("filter-large-scope-search", _filtered_search_over_a_large_scope),
    Case("filter-scope-members", _scope_members),
)


# ---------------------------------------------------------------------------------------------- write cases
def _fragment(chunk_id: str, doc: str, text: str, facts: list[tuple], entities: tuple = ()) -> KnowledgeGraph:
    kg = KnowledgeGraph()
    kg.add_document(doc, source=f"{doc}.src", content_hash=f"hash-of-{chunk_id}", metadata={"chunking": "512/24"})
    kg.add_chunk(Chunk(chunk_id, text, doc, {"title": doc.split(".")[0].title()}))
    for src, rtype, tgt in facts:
        kg.add_relation(src, tgt, rtype, chunk_id=chunk_id, evidence=f"{src} {rtype.lower()} {tgt}")
    for name, etype, description in entities:
        kg.add_entity(name, etype, description, chunk_id=chunk_id)
    return kg


def _revised_orders() -> GraphChange:
    text = "Directive 2019-03 supersedes Directive 2023-07."
    return GraphChange().replace(
        _fragment("c1-v2", "orders.md", text, [("Directive 2019-03", "SUPERSEDES", "Directive 2023-07")])
    )


def _new_memo() -> GraphChange:
    """A new document that merges into what is stored: a relation seen again (more evidence), a generic entity
    getting a specific type, a new description, a new entity and a new relation type."""
    text = "Priya Nair manages Platform Engineering. Memo B cites Memo A. The CIO approved Memo B."
    frag = _fragment(
        "memo-b",
        "memos.md",
        text,
        [
            ("Priya Nair", "MANAGES", "Platform Engineering"),
            ("Memo B", "CITES", "Memo A"),
            ("CIO", "APPROVED", "Memo B"),
        ],
        (("Memo A", "DOCUMENT", "an internal memo"), ("CIO", "ROLE", "chief information officer")),
    )
    return GraphChange().replace(frag)


def _same_misc_again() -> GraphChange:
    """misc.md replaced by what it already says (reports of communities it touches need not go stale)."""
    kg = reference_graph()
    frag = KnowledgeGraph()
    for chunk in kg.chunks.values():
        if chunk.doc_id == "misc.md":
            frag.add_chunk(chunk)
    names = {key: attrs["name"] for key, attrs in kg.graph.nodes(data=True)}
    for rec in kg.relation_records():
        for ev in rec["evidence"]:
            if ev["chunk_id"] in frag.chunks:
                ends = names[rec["source"]], names[rec["target"]]
                frag.add_relation(
                    *ends,
                    rec["relation_type"],
                    chunk_id=ev["chunk_id"],
                    evidence=ev["quote"],
                    description=ev["description"],
                )
    frag.add_entity("Agent Smith", "PERSON", f"{MARKER}: drafted by Agent Smith", chunk_id="c7")
    return GraphChange().replace(frag)


def _retry_into_stored_chunk() -> GraphChange:
    """An extraction retried for a stored chunk: merged, nothing replaced; its failure is cleared."""
    from kg_rag.model.report import IngestReport

    frag = KnowledgeGraph()
    frag.add_chunk(Chunk("c5", "The storage freeze was caused by Incident 42. Incident 42 blocked the migration.",
                         "ops.md", {"title": "Ops"}))  # fmt: skip
    frag.add_relation("Incident 42", "storage freeze", "DELAYED", chunk_id="c5", evidence="Incident 42")
    report = IngestReport()
    report.skip("self_loop", example="x -> x")
    return GraphChange(report=report, resolved={"c5"}).add(frag)


@dataclass(frozen=True)
class WriteCase:
    """A named sequence of changes applied to the store and to the in-memory reference."""

    name: str
    steps: tuple[Callable[[], GraphChange], ...]


WRITES = (
    WriteCase("replace-a-document", (_revised_orders,)),
    WriteCase("delete-a-document", (lambda: GraphChange(forget=True).remove(["misc.md"]),)),
    WriteCase("delete-two-documents", (lambda: GraphChange(forget=True).remove(["misc.md", "org.md"]),)),
    WriteCase("add-a-document-that-merges", (_new_memo,)),
    WriteCase("replace-with-the-same-content", (_same_misc_again,)),
    WriteCase("delete-then-add-back", (lambda: GraphChange().remove(["misc.md"]), _same_misc_again)),
    WriteCase("merge-into-a-stored-chunk", (_retry_into_stored_chunk,)),
    WriteCase(
        "replace-add-and-delete-in-one-change",
        (lambda: _revised_orders().remove(["ops.md"]).replace(_new_memo().fragments[0]),),
    ),  # fmt: skip
    WriteCase("several-writes", (_new_memo, _revised_orders, lambda: GraphChange().remove(["memos.md", "org.md"]))),
)


def _state(index: GraphIndex) -> dict[str, Any]:
    kg = index.kg
    key = repr
    return {
        "entities": sorted(map(key, kg.entity_records())),
        "relations": sorted(map(key, kg.relation_records())),
        "chunks": sorted(map(key, kg.chunk_records())),
        "documents": sorted(map(key, kg.document_records())),
        "communities": index.communities.to_dict() if index.communities is not None else None,
        "report": index.report.to_dict(),
        **{
            f"vectors-{t}": sorted(zip(getattr(index, t).ids, getattr(index, t).hashes))
            for t in ("entities", "facts", "chunks")
        },
    }


# ---------------------------------------------------------------------------------------------- the suite
class StoreComplianceSuite:
    """Subclass with a class-scoped ``store_factory`` fixture (see the module docstring)."""

    capabilities: ClassVar[Capabilities] = Capabilities()

    @pytest.fixture(scope="class")
    @classmethod
    def store_factory(cls) -> Any:  # pragma: no cover - subclasses provide it
        raise NotImplementedError("provide a class-scoped store_factory fixture returning a new, empty store per call")

    @pytest.fixture(scope="class")
    @classmethod
    def embeddings(cls) -> BagOfWordsEmbeddings:
        return BagOfWordsEmbeddings()

    @pytest.fixture(scope="class")
    @classmethod
    def reference(cls, embeddings: BagOfWordsEmbeddings) -> GraphIndex:
        return reference_index(embeddings)

    @pytest.fixture(scope="class")
    @classmethod
    def saved(cls, store_factory: Any, reference: GraphIndex) -> Any:
        """The reference saved once per class; read-only cases share it."""
        store = store_factory()
        store.save(reference)
        return store

    @pytest.fixture(scope="class")
    @classmethod
    def views(cls, saved: Any, reference: GraphIndex, embeddings: Any) -> Any:
        ref_backend = SnapshotBackend(Snapshot.from_index(reference))
        backend = saved.backend()
        try:
            yield lambda: _ViewPair(ref_backend, backend, reference, embeddings, cls.capabilities)
        finally:
            backend.close()

    def _fresh(self, store_factory: Any) -> Any:
        store = store_factory()
        store.save(reference_index(BagOfWordsEmbeddings()))
        return store

    # ------------------------------------------------------------------ round trip
    def test_new_store_is_empty(self, store_factory: Any) -> None:
        assert not store_factory().exists()

    def test_round_trip_keeps_records_direction_and_documents(self, saved: Any, reference: GraphIndex) -> None:
        assert saved.exists()
        loaded = saved.load()
        mine, ref = _state(loaded), _state(reference)
        for part in ref:
            assert mine[part] == ref[part], part
        kg = loaded.kg
        assert [r.id for r in kg.find_relations("Directive 2023-07", "Directive 2019-03")]
        assert not kg.find_relations("Directive 2019-03", "Directive 2023-07", "SUPERSEDES")
        assert sorted(d["id"] for d in saved.documents()) == sorted(reference.kg.documents())
        assert {d["id"]: d["chunks"] for d in saved.documents()}["orders.md"] == 2
        stats = saved.stats()
        assert {k: v for k, v in stats.items() if k != "generation"} == {
            k: v for k, v in reference.stats().items() if k != "generation"
        }
        assert stats["synonym_links"] == 4  # two links, stored both ways
        for table in ("entities", "facts", "chunks"):
            a, b = getattr(loaded, table), getattr(reference, table)
            order = [a.position[i] for i in b.ids]
            assert np.allclose(a.vectors[order], b.vectors, atol=1e-6), table

    def test_every_backend_is_a_query_backend(self, saved: Any) -> None:
        from kg_rag.store.base import QueryBackend
        from kg_rag.store.graph_store import GraphStore

        backend = saved.backend()
        try:
            assert isinstance(saved, GraphStore) and isinstance(backend, QueryBackend)
            with backend.reader() as view:
                assert isinstance(view, QueryBackend)
            assert backend.generation == backend.info().version
            assert backend.refresh() in (False, True) and backend.refresh() is False
            backend.warm_up()
        finally:
            backend.close()

    # ------------------------------------------------------------------ reads, case by case
    @_cases(*PROTOCOL)
    def test_query_protocol_matches_the_reference(self, case: Case, views: Any) -> None:
        with views() as v:
            case.check(v)

    @_cases(*COMMUNITIES)
    def test_communities_match_the_reference(self, case: Case, views: Any) -> None:
        if not self.capabilities.communities:
            pytest.skip("this backend declares no communities")
        with views() as v:
            case.check(v)

    @_cases(*RETRIEVAL)
    def test_retrieval_matches_the_reference(self, case: Case, views: Any) -> None:
        with views() as v:
            case.check(v)

    @_cases(*DOCUMENT_FILTER_CASES)
    def test_document_filters_hold_at_every_stage(self, case: Case, views: Any) -> None:
        with views() as v:
            case.check(v)

    # ------------------------------------------------------------------ writes, case by case
    @pytest.mark.parametrize("case", WRITES, ids=[c.name for c in WRITES])
    def test_writes_match_the_reference(self, case: WriteCase, store_factory: Any, embeddings: Any) -> None:
        store = self._fresh(store_factory)
        ref = reference_index(embeddings)
        for n, step in enumerate(case.steps):
            removed_ref = apply_to_graph(ref.kg, ref.report, step())
            ref = refreshed(ref, embeddings)
            removed = IndexWriter(store, embeddings).apply(step())
            assert removed == removed_ref, f"step {n}: removed"
        loaded = store.load()
        mine, want = _state(loaded), _state(ref)
        for part in want:
            assert mine[part] == want[part], part
        stats = store.stats()
        assert {k: v for k, v in stats.items() if k != "generation"} == {
            k: v for k, v in ref.stats().items() if k != "generation"
        }
        backend = store.backend()
        try:
            ref_backend = SnapshotBackend(Snapshot.from_index(ref))
            with ref_backend.reader() as rv, backend.reader() as sv:
                v = Views(rv, sv, ref, embeddings, self.capabilities)
                for check in (_info, _lookups, _records, _mentions, _counts, _edges_by_id):
                    check(v)
                for question in QUESTIONS[:3]:
                    for kind, to_keys in (("entities", "entities"), ("facts", "relations"), ("chunks", "chunks")):
                        _search(question, kind, to_keys).check(v)
                    _similarity_and_lexical(question).check(v)
                _expand(0, FILTERS[0], [], parents=False).check(v)
        finally:
            backend.close()

    def test_replacing_a_document_forgets_its_old_version(self, store_factory: Any, embeddings: Any) -> None:
        saved = self._fresh(store_factory)
        reader = saved.backend()
        saved.replace_documents(_revised_orders().fragments[0], embeddings)
        loaded = saved.load()
        kg = loaded.kg
        stale = {c.id for c in loaded.communities if c.stale}
        touched = {c.id for c in loaded.communities if {"directive 2023-07", "directive 2019-03"} & set(c.entities)}
        assert stale and stale <= touched  # only communities whose members changed are stale
        for c in loaded.communities:  # a stale report may state the old version: dropped, and so never served
            assert not (c.stale and (c.has_report or c.cited)), c.id
            assert set(c.entities) <= set(kg.graph.nodes)
        with saved.backend().reader() as view:
            assert not [c.id for c in view.list_communities(None) if c.id in stale and c.has_report]
        assert not kg.find_relations("Directive 2023-07", "Directive 2019-03", "SUPERSEDES")
        new = kg.find_relations("Directive 2019-03", "Directive 2023-07", "SUPERSEDES")
        assert [e.quote for e in new[0].evidence] == ["Directive 2019-03 supersedes Directive 2023-07"]
        assert [c for c in kg.chunks if c.startswith("c1") or c == "c2"] == ["c1-v2"]
        if self.capabilities.fixed_version_readers:
            with reader.reader() as view:  # still the version it opened
                assert view.chunk_handles(["c1-v2", "c1"]).keys() == {"c1"}
            assert reader.refresh() is True
        with reader.reader() as view:  # a reader sees the committed write
            assert view.chunk_handles(["c1-v2", "c1"]).keys() == {"c1-v2"}
        reader.close()

    def test_deleting_a_document_forgets_everything_it_said(self, store_factory: Any, embeddings: Any) -> None:
        saved = self._fresh(store_factory)
        removed = saved.delete_documents(["misc.md"], embeddings)
        assert removed == {"chunks": 2, "relations": 5, "entities": 4, "descriptions": 1}
        kg = saved.load().kg
        text = repr(list(kg.entity_records())) + repr(list(kg.relation_records())) + repr(list(kg.chunk_records()))
        assert MARKER not in text
        assert kg.get_entity("Agent Smith") is None and kg.get_entity("Memo A") is not None
        assert "misc.md" not in [d["id"] for d in saved.documents()]
        with pytest.raises(KeyError, match="no such doc"):
            saved.delete_documents(["no such doc"], embeddings)
        backend = saved.backend()
        with backend.reader() as view:
            assert view.lookup_entities(["agent smith"]) == {}
            assert view.lexical_search(MARKER, 5).ids.size == 0
            assert MARKER not in repr([c.to_record() for c in view.list_communities(None)])
        backend.close()

    def test_a_second_writer_gives_up_naming_the_holder(self, store_factory: Any) -> None:
        saved = self._fresh(store_factory)
        held, release = threading.Event(), threading.Event()

        def hold() -> None:
            with saved.writing(5):
                held.set()
                release.wait(10)

        thread = threading.Thread(target=hold)
        thread.start()
        try:
            assert held.wait(10)
            other = type(saved)(saved.location if hasattr(saved, "location") else saved.path)
            with pytest.raises(IndexLockedError, match="locked for writing by"):
                with other.writing(0.2):
                    pass
        finally:
            release.set()
            thread.join()
        with saved.writing(1):  # free again
            pass

    def test_saving_again_replaces_the_index(self, store_factory: Any, embeddings: Any) -> None:
        saved = self._fresh(store_factory)
        kg = KnowledgeGraph()
        kg.add_chunk(Chunk("only", "Alpha precedes Beta.", f"d-{uuid.uuid4().hex[:6]}"))
        kg.add_relation("Alpha", "Beta", "PRECEDES", chunk_id="only")
        saved.save(build_index(kg, embeddings))
        loaded = saved.load().kg
        assert list(loaded.chunks) == ["only"] and len(loaded) == 2
        assert saved.stats()["relations"] == 1


class _ViewPair:
    """``with views() as v``: the reference's and the store's read views of one query, as :class:`Views`."""

    def __init__(self, ref_backend: Any, backend: Any, reference: GraphIndex, embeddings: Any, caps: Capabilities):
        self.args = (ref_backend, backend, reference, embeddings, caps)
        self._stack: Any = None

    def __enter__(self) -> Views:
        from contextlib import ExitStack

        ref_backend, backend, reference, embeddings, caps = self.args
        self._stack = ExitStack()
        rv = self._stack.enter_context(ref_backend.reader())
        sv = self._stack.enter_context(backend.reader())
        return Views(rv, sv, reference, embeddings, caps)

    def __exit__(self, *exc: object) -> None:
        self._stack.close()


def reference_index(embeddings: Any) -> GraphIndex:
    """The reference graph, embedded, with its communities (what every case compares against)."""
    from kg_rag.communities import refresh_communities

    index = build_index(reference_graph(), embeddings)
    index.communities, _ = refresh_communities(index.kg, max_cluster_size=4)
    return index
