"""The backend base class: every backend is a ``QueryBackend``; a new backend needs only the primitives (the
derived operations have defaults that agree with the built-in, faster versions); the lifecycle is explicit."""

from __future__ import annotations

import inspect
from collections.abc import Iterator

import numpy as np
import pytest

from kg_rag.index.snapshot import Snapshot
from kg_rag.store.base import EdgeFilter, QueryBackend, VersionedBackend
from kg_rag.store.memory import LiveBackend, SnapshotBackend
from kg_rag.testing.compliance import reference_index

PRIMITIVES = {
    "info",
    "search",
    "similarity",
    "lexical_search",
    "lexical_scores",
    "lookup_entities",
    "expand",
    "edges_of",
    "chunk_entities",
    "entity_chunks",
    "chunk_relations",
    "relation_chunks",
    "entities",
    "relations",
    "chunks",
    "iter_chunks",
}


class PrimitivesOnly(QueryBackend):
    """A third backend as a newcomer would start it: the primitives only (delegated to a snapshot here)."""

    def __init__(self, inner: SnapshotBackend) -> None:
        self.inner = inner

    def info(self):
        return self.inner.info()

    def search(self, kind, query, k, min_score=None):
        return self.inner.search(kind, query, k, min_score)

    def similarity(self, kind, query, ids):
        return self.inner.similarity(kind, query, ids)

    def lexical_search(self, text, k):
        return self.inner.lexical_search(text, k)

    def lexical_scores(self, text, chunk_ids):
        return self.inner.lexical_scores(text, chunk_ids)

    def lookup_entities(self, keys):
        return self.inner.lookup_entities(keys)

    def expand(self, seeds, max_hops, edge_filter, **kwargs):
        return self.inner.expand(seeds, max_hops, edge_filter, **kwargs)

    def edges_of(self, entity_ids, edge_filter, *, among=False):
        return self.inner.edges_of(entity_ids, edge_filter, among=among)

    def chunk_entities(self, chunk_ids):
        return self.inner.chunk_entities(chunk_ids)

    def entity_chunks(self, entity_ids):
        return self.inner.entity_chunks(entity_ids)

    def chunk_relations(self, chunk_ids, edge_filter):
        return self.inner.chunk_relations(chunk_ids, edge_filter)

    def relation_chunks(self, relation_ids):
        return self.inner.relation_chunks(relation_ids)

    def entities(self, ids):
        return self.inner.entities(ids)

    def relations(self, ids):
        return self.inner.relations(ids)

    def chunks(self, ids):
        return self.inner.chunks(ids)

    def iter_chunks(self) -> Iterator:
        return self.inner.iter_chunks()

    def list_communities(self, level=None):
        return self.inner.list_communities(level)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    from kg_rag.testing.embeddings import BagOfWordsEmbeddings

    return reference_index(BagOfWordsEmbeddings())


def test_the_primitives_are_the_abstract_core():
    assert QueryBackend.__abstractmethods__ == frozenset(PRIMITIVES)
    with pytest.raises(TypeError, match="abstract"):
        QueryBackend()  # type: ignore[abstract]


def test_derived_operations_from_the_primitives_agree_with_the_fast_ones(reference):
    fast = SnapshotBackend(Snapshot.from_index(reference))
    slow = PrimitivesOnly(fast)
    keys = [e.key for e in reference.kg.entities()]
    handles = np.asarray(list(fast.lookup_entities(keys).values()) + [-1, 10**6], np.int64)
    assert np.array_equal(slow.mention_counts(handles), fast.mention_counts(handles))
    assert slow.names(handles) == fast.names(handles) == [e.name for e in fast.entities(handles[:-2])] + [None] * 2
    assert np.array_equal(slow.degrees(handles), fast.degrees(handles))
    chunk_ids = sorted(reference.kg.chunks) + ["no such chunk"]
    assert slow.chunk_handles(chunk_ids) == fast.chunk_handles(chunk_ids)
    edges = fast.edges_of(handles[:-2], EdgeFilter.build())
    a, b = slow.edges_by_id(edges.ids), fast.edges_by_id(edges.ids)
    assert a.ids.tolist() == b.ids.tolist() and a.src.tolist() == b.src.tolist() and a.dst.tolist() == b.dst.tolist()
    assert [a.type_of(i) for i in range(len(a))] == [b.type_of(i) for i in range(len(b))]
    assert np.allclose(a.weight, b.weight) and a.synonym.tolist() == b.synonym.tolist()
    for level in (None, 0, 1, 7):
        for some in (handles, handles[:3]):
            assert slow.communities_for(some, level) == fast.communities_for(some, level)
    ids = [c.id for c in reference.communities][:4] + ["nope"]
    assert [c and c.id for c in slow.community_records(ids)] == [c and c.id for c in fast.community_records(ids)]


def test_the_term_scorer_agrees_with_bm25_of_each_text_to_the_bit(reference):
    """The in-process scorer answers every part of a question from its columns; the default asks the backend
    for each text (and reads the chunk for its words). Both give BM25 of the text exactly, and the same top
    chunks as the backend's own search."""
    from kg_rag.index.lexical import tokenize
    from kg_rag.store.memory import ColumnScorer

    fast = SnapshotBackend(Snapshot.from_index(reference))
    slow = PrimitivesOnly(fast)
    texts = [c.text for c in list(reference.kg.chunks.values())[:3]]
    words = tokenize(" ".join(texts[0].split()[:12]) + " the the zzznotaword")
    column, default = fast.term_scorer(words), slow.term_scorer(words)
    assert isinstance(column, ColumnScorer) and type(default).__name__ == "TermScorer"
    handles = np.arange(fast.info().chunks + 1, dtype=np.int64) - 1  # -1 and one past the end are unknown
    rests = [[w for w in words if w not in gone] for gone in ({"directive"}, {"the", "2023"}, set(words))]
    for part in (words, words[::2], words[3:], *rests, ["zzznotaword"], ["signed", "aardvark"], []):
        text = " ".join(part)
        expected = fast.lexical_scores(text, handles)
        assert column.scores(text, handles).tobytes() == expected.tobytes()
        assert default.scores(text, handles).tobytes() == expected.tobytes()
        top = fast.lexical_search(text, 1)
        assert column.best(text) == default.best(text) == (float(top.scores[0]) if len(top) else 0.0)
        for k in (1, 3, 1000):  # the question's candidates come from the scorer: the backend's search exactly
            want = fast.lexical_search(text, k)
            for got in (column.search(text, k), default.search(text, k)):
                assert got.ids.tolist() == want.ids.tolist() and got.scores.tobytes() == want.scores.tobytes()
    asked = set(words)
    for handle in range(fast.info().chunks):
        assert column.words_in(handle) == default.words_in(handle) & asked


def test_a_query_view_decodes_each_record_once_and_only_for_its_query(reference):
    """Within one query's view a record is decoded once (a query reads the same entity for its rows, paths and
    entities shown); the next query, and another thread, decode their own."""
    import threading

    fast = SnapshotBackend(Snapshot.from_index(reference))
    reads: list[int] = []
    records = fast.snapshot.records

    class Counting:
        def __getattr__(self, name):
            return getattr(records, name)

        def entity(self, row):
            reads.append(row)
            return records.entity(row)

    fast.snapshot.records = Counting()
    ids = np.asarray([0, 1, 0, 1, -1, 10**6], np.int64)
    with fast.query_view() as view:
        first = view.entities(ids)
        again = view.entities(ids[:2])
        with fast.query_view() as inner:  # nested: the same memo
            inner.entities(ids[:1])
        elsewhere: list = []
        worker = threading.Thread(target=lambda: elsewhere.extend(fast.entities(ids[:1])))
        worker.start()
        worker.join()
    assert reads == [0, 1, 0]  # the other thread decoded its own copy
    assert first[0] is first[2] is again[0] and first[4] is None and first[5] is None
    assert elsewhere[0] is not first[0] and elsewhere[0] == first[0]
    fast.entities(ids[:1])
    with fast.query_view() as view:
        view.entities(ids[:1])
    assert reads == [0, 1, 0, 0, 0]  # outside a view nothing is kept; a new view starts afresh


def test_the_lifecycle_is_explicit_with_defaults(reference):
    backend = PrimitivesOnly(SnapshotBackend(Snapshot.from_index(reference)))
    with backend.reader() as view:
        assert view is backend  # an immutable backend is its own view
    assert backend.refresh() is False and backend.generation == backend.info().version
    backend.warm_up()
    backend.close()
    with pytest.raises(ValueError, match="does not hold an editable graph"):
        backend.knowledge_graph()


def test_warm_up_builds_the_in_process_indexes_a_first_query_would(reference, bow_embeddings, monkeypatch):
    """FAISS and BM25 are built by ``warm_up`` (the engine calls it), so the first query's stages show its own
    work: before, the first query's candidates stage built BM25 from every chunk's text."""
    import kg_rag.store.memory as memory

    built: list[int] = []

    class CountedBM25(memory.BM25Index):
        def __init__(self, texts: list[str]) -> None:
            built.append(len(texts))
            super().__init__(texts)

    monkeypatch.setattr(memory, "BM25Index", CountedBM25)
    backend = SnapshotBackend(Snapshot.from_index(reference))
    tables = (backend.snapshot.entities, backend.snapshot.facts, backend.snapshot.chunks)
    assert all(t._faiss is None for t in tables)
    backend.warm_up()
    assert built == [backend.info().chunks] and all(t._faiss is not None for t in tables)
    text = next(iter(reference.kg.chunks.values())).text
    with backend.query_view() as view:
        assert len(view.lexical_search(text, 3)) and view.term_scorer(text.lower().split()).best(text) > 0
    assert len(built) == 1  # the query read the index warm-up built
    from kg_rag.index.build import build_index
    from kg_rag.model.graph import KnowledgeGraph

    empty = SnapshotBackend(Snapshot.from_index(build_index(KnowledgeGraph(), bow_embeddings)))
    empty.warm_up()
    assert len(built) == 1  # nothing to build over no chunks


def test_in_process_backends_are_query_backends_without_forwarding(reference, bow_embeddings):
    live = LiveBackend(reference, bow_embeddings)
    assert isinstance(live, VersionedBackend) and isinstance(live, QueryBackend)
    with live.reader() as view:
        assert isinstance(view, SnapshotBackend)
    assert live.knowledge_graph() is reference.kg
    for cls in (LiveBackend, SnapshotBackend, VersionedBackend):
        assert "__getattr__" not in vars(cls)


def test_store_backends_are_query_backends(tmp_path, reference, pg_schema_uri):
    from kg_rag.store import DirectoryStore
    from kg_rag.store.directory import DirectoryBackend
    from kg_rag.store.postgres import PostgresStore
    from kg_rag.store.postgres.backend import PostgresBackend, PostgresView

    for store in (DirectoryStore(tmp_path / "idx"), PostgresStore(pg_schema_uri)):
        store.save(reference)
        backend = store.backend()
        try:
            assert isinstance(backend, (DirectoryBackend, PostgresBackend)) and isinstance(backend, VersionedBackend)
            with backend.reader() as view:
                assert isinstance(view, QueryBackend)
                assert isinstance(view, (SnapshotBackend, PostgresView))
            assert backend.generation == store.stats()["generation"]
        finally:
            backend.close()
    for cls in (DirectoryBackend, PostgresBackend, PostgresView):
        assert "__getattr__" not in vars(cls)


def test_the_engine_takes_only_query_backends(bow_embeddings):
    from kg_rag.query.engine import QueryEngine

    with pytest.raises(ValueError, match="QueryBackend"):
        QueryEngine(object(), bow_embeddings)


def test_versioned_backends_delegate_every_query_operation():
    from kg_rag.store.base import _Forward

    delegated = {
        name
        for name, member in vars(VersionedBackend).items()
        if (inspect.isfunction(member) or isinstance(member, _Forward)) and not name.startswith("_")
    }
    operations = {
        name
        for name, member in vars(QueryBackend).items()
        if inspect.isfunction(member)
        and not name.startswith("_")
        and name not in {"reader", "refresh", "warm_up", "close", "knowledge_graph", "to_index"}
    }
    assert operations <= delegated, operations - delegated
