"""The store compliance suite: what every backend must do, checked the same way for each.

Subclass :class:`StoreComplianceSuite` and provide a ``store_factory`` fixture returning a callable that makes a
new, empty store (a :class:`~kg_rag.store.base.GraphStore`) on every call. The suite saves a reference index
into it and checks, against the in-process reference backend:

- the round trip (records, direction, documents, counts);
- every :class:`~kg_rag.store.base.QueryBackend` operation, results compared in the space of user-facing ids
  (entity keys, relation ids, chunk ids) so backends may number rows their own way — with every filter:
  relation-type allow and deny lists, direction, synonym links, blocked entities, hop limits, frontier caps;
- retrieval end to end for every strategy (same chunks, same context);
- document writes: replacing a document forgets its old version, deleting one forgets everything it said,
  both atomic; readers see committed writes (after ``refresh()`` where a backend serves a fixed version);
- one writer at a time: a second writer gives up with an error naming the holder.

A fresh store numbers rows in the order of the saved index (as both built-in backends do), so ties that are
broken by handle break the same way as in the reference.
"""

from __future__ import annotations

import threading
import uuid
from typing import Any

import numpy as np
import pytest

from kg_rag.index.build import GraphIndex, build_index
from kg_rag.index.snapshot import Snapshot
from kg_rag.model.graph import KnowledgeGraph
from kg_rag.model.records import Chunk
from kg_rag.store.base import EdgeFilter
from kg_rag.store.locking import IndexLockedError
from kg_rag.store.memory import SnapshotBackend
from kg_rag.testing.embeddings import BagOfWordsEmbeddings

MARKER = "CONFIDENTIAL-MARKER-7731"


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


class StoreComplianceSuite:
    """Subclass with a ``store_factory`` fixture (see the module docstring)."""

    @pytest.fixture
    def store_factory(self) -> Any:  # pragma: no cover - subclasses provide it
        raise NotImplementedError("provide a store_factory fixture returning a new, empty store per call")

    @pytest.fixture
    def embeddings(self) -> BagOfWordsEmbeddings:
        return BagOfWordsEmbeddings()

    @pytest.fixture
    def reference(self, embeddings: BagOfWordsEmbeddings) -> GraphIndex:
        from kg_rag.communities import refresh_communities

        index = build_index(reference_graph(), embeddings)
        index.communities, _ = refresh_communities(index.kg, max_cluster_size=4)
        return index

    @pytest.fixture
    def saved(self, store_factory: Any, reference: GraphIndex) -> Any:
        store = store_factory()
        store.save(reference)
        return store

    # ------------------------------------------------------------------ round trip
    def test_new_store_is_empty(self, store_factory: Any) -> None:
        assert not store_factory().exists()

    def test_round_trip_keeps_records_direction_and_documents(self, saved: Any, reference: GraphIndex) -> None:
        assert saved.exists()
        loaded = saved.load()
        kg, ref = loaded.kg, reference.kg
        assert sorted(kg.entity_records(), key=lambda r: r["key"]) == sorted(
            ref.entity_records(), key=lambda r: r["key"]
        )
        assert sorted(kg.relation_records(), key=lambda r: r["id"]) == sorted(
            ref.relation_records(), key=lambda r: r["id"]
        )
        assert sorted(kg.chunk_records(), key=lambda r: r["id"]) == sorted(ref.chunk_records(), key=lambda r: r["id"])
        assert [r.id for r in kg.find_relations("Directive 2023-07", "Directive 2019-03")]
        assert not kg.find_relations("Directive 2019-03", "Directive 2023-07", "SUPERSEDES")
        assert sorted(d["id"] for d in saved.documents()) == sorted(ref.documents())
        assert {d["id"]: d["chunks"] for d in saved.documents()}["orders.md"] == 2
        stats = saved.stats()
        assert (stats["chunks"], stats["entities"], stats["relations"]) == (
            len(ref.chunks),
            len(ref),
            ref.stats()["relations"],
        )
        assert stats["synonym_links"] == ref.stats()["synonym_links"] == 4  # two links, stored both ways
        for table in ("entities", "facts", "chunks"):
            a, b = getattr(loaded, table), getattr(reference, table)
            assert sorted(a.ids) == sorted(b.ids)
            order = [a.position[i] for i in b.ids]
            assert np.allclose(a.vectors[order], b.vectors, atol=1e-6)

    # ------------------------------------------------------------------ protocol
    def test_query_protocol_matches_the_reference(self, saved: Any, reference: GraphIndex, embeddings: Any) -> None:
        ref_backend = SnapshotBackend(Snapshot.from_index(reference))
        backend = saved.backend()
        with ref_backend.reader() as rv, backend.reader() as sv:
            rk, sk = _Keys(rv), _Keys(sv)
            info_r, info_s = rv.info(), sv.info()
            assert (info_s.entities, info_s.relations, info_s.chunks, info_s.documents, info_s.dim) == (
                info_r.entities,
                info_r.relations,
                info_r.chunks,
                info_r.documents,
                info_r.dim,
            )
            assert info_s.relation_types == info_r.relation_types
            all_keys = [e.key for e in reference.kg.entities()]
            all_chunks = sorted(reference.kg.chunks)
            assert sk.entities(sk.entity_handles(all_keys)) == all_keys
            assert sv.lookup_entities(["no such entity"]) == {}
            assert sk.chunks(sk.chunk_handles(all_chunks)) == all_chunks
            assert sorted(c.id for _, c in sv.iter_chunks()) == all_chunks
            for question in QUESTIONS:
                q = np.asarray(embeddings.embed_query(question), np.float32)
                for kind, to_keys in (("entities", "entities"), ("facts", "relations"), ("chunks", "chunks")):
                    for k in (1, 5, 50):
                        a, b = rv.search(kind, q, k, 0.05), sv.search(kind, q, k, 0.05)
                        assert getattr(sk, to_keys)(b.ids) == getattr(rk, to_keys)(a.ids), (question, kind, k)
                        assert np.allclose(a.scores, b.scores, atol=1e-5)
                        # a hit's score is its similarity (a backend may reuse search scores as similarities)
                        assert np.allclose(sv.similarity(kind, q, b.ids), b.scores, atol=1e-5)
                sims_r = rv.similarity("chunks", q, rk.chunk_handles(all_chunks))
                sims_s = sv.similarity("chunks", q, sk.chunk_handles(all_chunks))
                assert np.allclose(sims_r, sims_s, atol=1e-5)
                lex_r, lex_s = rv.lexical_search(question, 8), sv.lexical_search(question, 8)
                assert sk.chunks(lex_s.ids) == rk.chunks(lex_r.ids)
                assert np.allclose(lex_r.scores, lex_s.scores, rtol=1e-4)
                assert np.allclose(
                    rv.lexical_scores(question, rk.chunk_handles(all_chunks)),
                    sv.lexical_scores(question, sk.chunk_handles(all_chunks)),
                    rtol=1e-4,
                )
            seeds = ["directive 2019-03", "lars eriksen", "incident 42"]
            for edge_filter in FILTERS:
                for blocked in ([], ["priya nair"]):
                    fr, fs = rk.blocked(edge_filter, blocked), sk.blocked(edge_filter, blocked)
                    for hops in (0, 1, 3):
                        for frontier in (2, 2000):
                            weights = [1.0, 0.5, 0.25]
                            a = rv.expand(
                                dict(zip(rk.entity_handles(seeds).tolist(), weights)),
                                hops,
                                fr,
                                decay=0.5,
                                max_frontier=frontier,
                                prefer=frozenset({"REPORTS_TO"}),
                                prefer_weight=1.0,
                            )
                            b = sv.expand(
                                dict(zip(sk.entity_handles(seeds).tolist(), weights)),
                                hops,
                                fs,
                                decay=0.5,
                                max_frontier=frontier,
                                prefer=frozenset({"REPORTS_TO"}),
                                prefer_weight=1.0,
                            )
                            assert _expansion(sk, b) == _expansion(rk, a), (edge_filter, blocked, hops, frontier)
                    some = ["priya nair", "memo a", "migration"]
                    for among in (False, True):
                        a = rv.edges_of(rk.entity_handles(some), fr, among=among)
                        b = sv.edges_of(sk.entity_handles(some), fs, among=among)
                        assert _edges(sk, b) == _edges(rk, a)
                    pa, ea = rv.chunk_relations(rk.chunk_handles(all_chunks), fr)
                    pb, eb = sv.chunk_relations(sk.chunk_handles(all_chunks), fs)
                    assert list(zip(sk.chunks(pb.left), sk.relations(pb.right))) == list(
                        zip(rk.chunks(pa.left), rk.relations(pa.right))
                    )
                    assert _edges(sk, eb) == _edges(rk, ea)
            ref_edges = rv.edges_of(rk.entity_handles(all_keys), EdgeFilter.build())
            rel_ids = rk.relations(ref_edges.ids)
            store_edges = sv.edges_of(sk.entity_handles(all_keys), EdgeFilter.build())
            handle_of = dict(zip(sk.relations(store_edges.ids), store_edges.ids.tolist()))
            handles_s = np.asarray([handle_of[r] for r in rel_ids], np.int64)
            assert _edges(sk, sv.edges_by_id(handles_s)) == _edges(rk, rv.edges_by_id(ref_edges.ids))
            pa, pb = rv.relation_chunks(ref_edges.ids), sv.relation_chunks(handles_s)
            assert list(zip(sk.relations(pb.left), sk.chunks(pb.right))) == list(
                zip(rk.relations(pa.left), rk.chunks(pa.right))
            )
            pa, pb = rv.chunk_entities(rk.chunk_handles(all_chunks)), sv.chunk_entities(sk.chunk_handles(all_chunks))
            assert list(zip(sk.chunks(pb.left), sk.entities(pb.right))) == list(
                zip(rk.chunks(pa.left), rk.entities(pa.right))
            )
            pa, pb = rv.entity_chunks(rk.entity_handles(all_keys)), sv.entity_chunks(sk.entity_handles(all_keys))
            assert list(zip(sk.entities(pb.left), sk.chunks(pb.right))) == list(
                zip(rk.entities(pa.left), rk.chunks(pa.right))
            )
            assert np.array_equal(
                rv.mention_counts(rk.entity_handles(all_keys)), sv.mention_counts(sk.entity_handles(all_keys))
            )
            assert np.array_equal(rv.degrees(rk.entity_handles(all_keys)), sv.degrees(sk.entity_handles(all_keys)))
            assert [e.__dict__ for e in sv.entities(sk.entity_handles(all_keys))] == [
                e.__dict__ for e in rv.entities(rk.entity_handles(all_keys))
            ]
            assert [c.__dict__ for c in sv.chunks(sk.chunk_handles(all_chunks))] == [
                c.__dict__ for c in rv.chunks(rk.chunk_handles(all_chunks))
            ]
            assert [r.id for r in sv.relations(handles_s)] == rel_ids
            assert [r.source for r in sv.relations(handles_s)] == [r.source for r in rv.relations(ref_edges.ids)]
            bad = np.asarray([-1, 10**9], np.int64)  # unknown handles are left out or read as nothing
            assert sv.entities(bad) == [None, None] and sv.chunks(bad) == [None, None]
            assert len(sv.edges_by_id(bad)) == 0 and len(sv.chunk_entities(bad)) == 0
            assert np.array_equal(sv.mention_counts(bad), np.zeros(2, np.float32))

    def test_communities_are_stored_and_served(self, saved: Any, reference: GraphIndex) -> None:
        loaded = saved.load().communities
        assert loaded is not None and loaded.to_dict() == reference.communities.to_dict()
        assert len(reference.communities.levels) >= 2  # the suite's graph has a hierarchy
        ref_backend = SnapshotBackend(Snapshot.from_index(reference))
        with ref_backend.reader() as rv, saved.backend().reader() as sv:
            rk, sk = _Keys(rv), _Keys(sv)
            assert sv.info().extra["communities"] == len(reference.communities)
            assert sv.info().extra["community_levels"] == reference.communities.levels
            keys = [e.key for e in reference.kg.entities()]
            for level in (None, 0, 1, 5):
                for some in (keys, keys[:3], ["priya nair", "memo a"]):
                    assert sv.communities_for(sk.entity_handles(some), level) == rv.communities_for(
                        rk.entity_handles(some), level
                    )
            ids = [c.id for c in reference.communities][:3] + ["no such community"]
            got = sv.community_records(ids)
            assert [c.to_record() if c else None for c in got] == [
                c.to_record() if c else None for c in rv.community_records(ids)
            ]
            assert got[-1] is None
            for level in (None, 0, 1, 9):
                assert [c.id for c in sv.list_communities(level)] == [c.id for c in rv.list_communities(level)]

    def test_retrieval_matches_the_reference_for_every_strategy(
        self, saved: Any, reference: GraphIndex, embeddings: Any
    ) -> None:
        from kg_rag.query.engine import QueryEngine

        ref = QueryEngine(SnapshotBackend(Snapshot.from_index(reference)), embeddings)
        engine = QueryEngine(saved.backend(), embeddings)
        from kg_rag.context import format_context

        for question in QUESTIONS:
            for strategy in ("chain", "frequency", "path", "ppr"):
                for extra in ({}, {"edge_types": ["REPORTS_TO", "MANAGES"]}, {"exclude_entities": ["Priya Nair"]}):
                    a = ref.retrieve(question, strategy=strategy, **extra)
                    b = engine.retrieve(question, strategy=strategy, **extra)
                    assert [c.id for c in b.chunks] == [c.id for c in a.chunks], (question, strategy, extra)
                    assert format_context(b).text == format_context(a).text, (question, strategy, extra)

    # ------------------------------------------------------------------ writes
    def test_replacing_a_document_forgets_its_old_version(self, saved: Any, embeddings: Any) -> None:
        reader = saved.backend()
        fragment = KnowledgeGraph()
        fragment.add_chunk(Chunk("c1-v2", "Directive 2019-03 supersedes Directive 2023-07.", "orders.md"))
        fragment.add_relation(
            "Directive 2019-03",
            "Directive 2023-07",
            "SUPERSEDES",
            chunk_id="c1-v2",
            evidence="Directive 2019-03 supersedes Directive 2023-07",
        )
        saved.replace_documents(fragment, embeddings)
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
        assert {c.doc_id for c in kg.chunks.values() if c.doc_id == "orders.md"} == {"orders.md"}
        assert [c for c in kg.chunks if c.startswith("c1") or c == "c2"] == ["c1-v2"]
        getattr(reader, "refresh", lambda: None)()
        with reader.reader() as view:  # a reader sees the committed write
            assert view.chunk_handles(["c1-v2", "c1"]).keys() == {"c1-v2"}

    def test_deleting_a_document_forgets_everything_it_said(self, saved: Any, embeddings: Any) -> None:
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

    def test_a_second_writer_gives_up_naming_the_holder(self, saved: Any) -> None:
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

    def test_saving_again_replaces_the_index(self, saved: Any, embeddings: Any) -> None:
        kg = KnowledgeGraph()
        kg.add_chunk(Chunk("only", "Alpha precedes Beta.", f"d-{uuid.uuid4().hex[:6]}"))
        kg.add_relation("Alpha", "Beta", "PRECEDES", chunk_id="only")
        saved.save(build_index(kg, embeddings))
        loaded = saved.load().kg
        assert list(loaded.chunks) == ["only"] and len(loaded) == 2
        assert saved.stats()["relations"] == 1
