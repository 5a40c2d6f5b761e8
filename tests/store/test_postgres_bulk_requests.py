"""PostgreSQL answers bulk requests (ppr asks for the edges among thousands of entities and the mentions of
hundreds of chunks) with other SQL than a chain's small ones: ``edges_of`` joins the ids on the relation indexes
above ``ANY_MAX_IDS`` ids, and ``chunk_entities`` skips its look-ahead above ``PREFETCH_FOR_CHUNKS`` chunks. Both
forms give the same answers; here every request takes the bulk form (the thresholds set to 0) and is compared
with the small form, and ppr retrieves the same through both."""

from __future__ import annotations

import numpy as np
import pytest

from kg_rag.query.engine import QueryEngine
from kg_rag.store.base import EdgeFilter
from kg_rag.store.postgres import view as pg
from kg_rag.testing.compliance import QUESTIONS, reference_index
from kg_rag.testing.embeddings import BagOfWordsEmbeddings


@pytest.fixture
def store(pg_schema_uri):
    from kg_rag.store.postgres import PostgresStore

    store = PostgresStore(pg_schema_uri)
    store.save(reference_index(BagOfWordsEmbeddings()))
    return store


def _answers(store) -> dict:
    backend = store.backend()
    try:
        with backend.reader() as view:
            entities = np.fromiter((h for h, _ in _entities(view)), dtype=np.int64)
            chunks = np.fromiter((h for h, _ in view.iter_chunks()), dtype=np.int64)
            half = entities[::2]
            filters = [EdgeFilter(), EdgeFilter.build(None, ["REPORTS_TO"], "both", False, [int(entities[0])])]
            out = {
                "edges": [
                    (among, i, view.edges_of(ids, f, among=among).ids.tolist())
                    for among in (False, True)
                    for ids in (entities, half, entities[:3])
                    for i, f in enumerate(filters)
                ],
                "mentions": [(p.left.tolist(), p.right.tolist()) for p in (view.chunk_entities(chunks),)],
                "counts": view.mention_counts(entities).tolist(),
            }
        ppr = QueryEngine(backend, BagOfWordsEmbeddings()).retrieve(QUESTIONS[1], strategy="ppr")
        out["ppr"] = ([c.id for c in ppr.chunks], [c.score for c in ppr.chunks], ppr.context)
        return out
    finally:
        backend.close()


def _entities(view):
    handles = view.lookup_entities([e.key for e in reference_index(BagOfWordsEmbeddings()).kg.entities()])
    return sorted((h, k) for k, h in handles.items())


def test_bulk_requests_answer_as_small_ones(store, monkeypatch):
    small = _answers(store)
    assert any(ids for _, _, ids in small["edges"]) and small["mentions"][0][0] and small["ppr"][0]
    monkeypatch.setattr(pg, "ANY_MAX_IDS", 0)
    monkeypatch.setattr(pg, "PREFETCH_FOR_CHUNKS", 0)
    assert _answers(store) == small


class _NoStatements:
    def execute(self, *args, **kwargs):
        raise AssertionError("a statement was sent")

    cursor = execute


def test_a_picks_mentions_bring_what_its_next_step_reads(store):
    """A chain's pick asks for one chunk's mentions; the same statement brings the names of what it mentions and
    the chunk's own record (the chain reads its words next, and the result its text), as the database has them."""
    backend = store.backend()
    try:
        with backend.reader() as fresh:
            chunks = [h for h, _ in fresh.iter_chunks()]
            expected = {h: fresh.chunks(np.asarray([h], np.int64))[0].__dict__ for h in chunks}
        for h in chunks:
            with backend.reader() as view:
                mentioned = view.chunk_entities(np.asarray([h], np.int64)).right
                if not mentioned.size:
                    continue
                records = view.entities(mentioned)
                conn, view.conn = view.conn, _NoStatements()
                try:
                    assert view.chunks(np.asarray([h], np.int64))[0].__dict__ == expected[h]
                    assert view.names(mentioned) == [e.name for e in records]
                finally:
                    view.conn = conn
    finally:
        backend.close()
