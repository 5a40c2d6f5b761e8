"""PostgreSQL runs a query's searches at once (``PostgresView.search_ahead``): the entity, fact and chunk vector
searches and BM25 go to helper connections that import the query's snapshot. The results are the ones the
searches give one after another, they read the query's version even when a writer commits meanwhile, a helper
that fails leaves its search to the query's own connection, and the stage log says where the searches ran."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from kg_rag.query.engine import QueryEngine
from kg_rag.store.postgres import backend as pg
from kg_rag.store.postgres import view as pg_view
from kg_rag.testing.compliance import QUESTIONS, reference_index
from kg_rag.testing.embeddings import BagOfWordsEmbeddings

REQUESTS = [("entities", 5), ("facts", 5), ("chunks", 8)]


@pytest.fixture
def store(pg_schema_uri):
    from kg_rag.store.postgres import PostgresStore

    store = PostgresStore(pg_schema_uri)
    store.save(reference_index(BagOfWordsEmbeddings()))
    return store


def _searches(view, q: np.ndarray, text: str) -> list[tuple[list[int], list[float]]]:
    found = [view.search(kind, q, k) for kind, k in REQUESTS]
    found.append(view.lexical_search(text, 8))
    return [(h.ids.tolist(), h.scores.tolist()) for h in found]


def _words(question: str) -> frozenset[str]:
    """What a question's lexical search reads ahead: its words' postings (:mod:`kg_rag.store.postgres.lexical`)."""
    from kg_rag.index.lexical import tokenize

    return frozenset(tokenize(question))


def _vector(question: str) -> np.ndarray:
    return np.asarray(BagOfWordsEmbeddings().embed_query(question), dtype=np.float32)


def _one_by_one(backend, q: np.ndarray, text: str) -> list[tuple[list[int], list[float]]]:
    """The searches of :func:`_searches` in a view of their own, none run ahead."""
    with backend.reader() as view:
        return _searches(view, q, text)


def _answers(backend, embeddings) -> list[tuple]:
    engine = QueryEngine(backend, embeddings)
    out = []
    for question in QUESTIONS:
        r = engine.retrieve(question)
        out.append(([c.id for c in r.chunks], [c.score for c in r.chunks], r.context))
    return out


def test_searches_run_ahead_give_what_they_give_one_by_one(store, monkeypatch):
    emb = BagOfWordsEmbeddings()
    backend = store.backend()
    try:
        ahead = _answers(backend, emb)
        with backend.reader() as view:
            q = np.asarray(emb.embed_query(QUESTIONS[0]), dtype=np.float32)
            view.search_ahead(q, REQUESTS, QUESTIONS[0])
            assert set(view._ahead) == set(REQUESTS) and _words(QUESTIONS[0]) in view._postings
            from_ahead = _searches(view, q, QUESTIONS[0])
    finally:
        backend.close()
    monkeypatch.setattr(pg, "SEARCH_WORKERS", 0)
    backend = store.backend()
    try:
        assert _answers(backend, emb) == ahead
        with backend.reader() as view:
            assert not view.concurrent_searches
            view.search_ahead(q, REQUESTS, QUESTIONS[0])  # nothing to do without helpers
            assert not view._ahead
            assert _searches(view, q, QUESTIONS[0]) == from_ahead
    finally:
        backend.close()
    assert all(ids for ids, _ in from_ahead)


def test_helpers_read_the_query_version_while_a_writer_commits(store):
    import psycopg

    q = _vector(QUESTIONS[1])
    backend = store.backend()
    try:
        before = _one_by_one(backend, q, QUESTIONS[1])
        with backend.reader() as view:
            view.info()  # the query's snapshot is taken here
            with psycopg.connect(store.conninfo, autocommit=True) as writer:
                for table in ("entity_vectors", "fact_vectors", "chunk_vectors", "postings"):
                    writer.execute(f"DELETE FROM {store.schema}.{table}")
            view.search_ahead(q, REQUESTS, QUESTIONS[1])
            assert set(view._ahead) == set(REQUESTS)
            assert _searches(view, q, QUESTIONS[1]) == before
        with backend.reader() as view:  # the writer's delete did land: a new query finds nothing
            assert all(not ids for ids, _ in _searches(view, q, QUESTIONS[1]))
    finally:
        backend.close()
    assert all(ids for ids, _ in before)


def test_a_helper_that_fails_leaves_its_search_to_the_query(store, monkeypatch, caplog):
    q = _vector(QUESTIONS[2])
    backend = store.backend()
    try:
        expected = _one_by_one(backend, q, QUESTIONS[2])

        def broken(*args):
            raise RuntimeError("connection refused")

        monkeypatch.setattr(backend, "in_snapshot", broken)
        with caplog.at_level(logging.WARNING, logger=pg_view.__name__), backend.reader() as view:
            view.search_ahead(q, REQUESTS, QUESTIONS[2])
            assert set(view._ahead) == {REQUESTS[0]}  # the one this connection ran
            assert _searches(view, q, QUESTIONS[2]) == expected
        assert "search ahead failed (connection refused)" in caplog.text
    finally:
        backend.close()


def test_the_stage_log_says_where_the_searches_ran(store, tmp_path):
    from kg_rag.store import DirectoryStore

    emb = BagOfWordsEmbeddings()
    directory = DirectoryStore(tmp_path / "idx")
    directory.save(reference_index(emb))
    for backend, ran in ((store.backend(), True), (directory.backend(), False)):
        try:
            result = QueryEngine(backend, emb).retrieve(QUESTIONS[0])
        finally:
            backend.close()
        run = {r.name: r for r in result.stages}["searches"]
        assert (run.ms is not None) is ran
        if not ran:
            assert run.skipped == "the backend runs each search where it is needed"
    backend = store.backend()
    try:  # a filtered search is the scoped view's own (it widens k until enough matching rows are found)
        scoped = QueryEngine(backend, emb).retrieve(QUESTIONS[0], filter={"doc_id": ["missing"]})
    finally:
        backend.close()
    assert {r.name: r for r in scoped.stages}["searches"].skipped.startswith("a document filter widens each search")


def test_the_floor_runs_the_searches_as_the_query_does(store, monkeypatch):
    from kg_rag.eval.floor import floor_ms

    emb = BagOfWordsEmbeddings()
    asked: list[list[tuple[str, int]]] = []
    real = pg.PostgresView.search_ahead

    def spy(self, query, requests, text=None):
        asked.append(list(requests))
        return real(self, query, requests, text)

    monkeypatch.setattr(pg.PostgresView, "search_ahead", spy)
    backend = store.backend()
    try:
        engine = QueryEngine(backend, emb)
        ms, searches = floor_ms(backend, lambda: engine.retrieve(QUESTIONS[0]))
    finally:
        backend.close()
    assert ms > 0 and {s.kind for s in searches} == {"entities", "facts", "chunks"}
    assert len(asked) == 2 and asked[1] == asked[0]  # the query's own, then the replay's: the same, at once
    assert [requests for _, requests in searches.ahead] == [asked[0]]


def test_a_query_inside_an_open_reader_runs_its_searches_in_turn(store):
    emb = BagOfWordsEmbeddings()
    backend = store.backend()
    try:
        engine = QueryEngine(backend, emb)
        alone = engine.retrieve(QUESTIONS[1])
        with backend.reader() as outer:  # the query's transaction is a savepoint of this one
            outer.info()
            nested = engine.retrieve(QUESTIONS[1])
    finally:
        backend.close()
    assert [c.id for c in nested.chunks] == [c.id for c in alone.chunks] and nested.context == alone.context
    assert {r.name: r for r in nested.stages}["searches"].skipped
    assert {r.name: r for r in alone.stages}["searches"].ms is not None


def test_searches_queued_behind_other_queries_run_on_the_querys_own_connection(store):
    import threading

    q = _vector(QUESTIONS[3])
    backend = store.backend()
    release = threading.Event()
    try:
        expected = _one_by_one(backend, q, QUESTIONS[3])
        busy = [backend.searchers().submit(release.wait, 30) for _ in range(pg.SEARCH_WORKERS)]
        with backend.reader() as view:  # every helper is busy: nothing waits for them
            view.search_ahead(q, REQUESTS, QUESTIONS[3])
            assert set(view._ahead) == set(REQUESTS) and _words(QUESTIONS[3]) in view._postings
            assert not any(f.done() for f in busy)
            assert _searches(view, q, QUESTIONS[3]) == expected
    finally:
        release.set()
        backend.close()


def test_closing_from_a_helper_thread_does_not_join_itself(store):
    backend = store.backend()
    with backend.reader() as view:
        view.info()
    backend.searchers().submit(backend.close).result(timeout=30)  # raised "cannot join current thread" before
    assert backend._searchers is None and not backend._connections


def test_the_helper_count_is_checked_with_a_one_line_error():
    assert pg._workers("0") == 0 and pg._workers("3") == 3
    for bad in ("two", "-1", ""):
        with pytest.raises(ValueError, match="KG_RAG_PG_SEARCH_WORKERS must be a whole number"):
            pg._workers(bad)


def test_warming_up_opens_the_helpers_connections(store):
    backend = store.backend()
    try:
        QueryEngine(backend, BagOfWordsEmbeddings())  # the engine warms its backend up
        assert len(backend._connections) == 1 + pg.SEARCH_WORKERS
    finally:
        backend.close()
    assert not backend._connections


def test_engines_built_on_many_threads_at_once_warm_the_helpers_up_once(store):
    import threading

    backend = store.backend()
    warm_ups: list[str] = []
    pool = backend.searchers()
    submit = pool.submit

    def counted(fn, *args, **kwargs):
        if fn.__name__ == "connect":
            warm_ups.append(threading.current_thread().name)
        return submit(fn, *args, **kwargs)

    pool.submit = counted
    try:
        start = threading.Barrier(8)

        def build() -> None:
            start.wait(timeout=30)
            QueryEngine(backend, BagOfWordsEmbeddings()).retrieve(QUESTIONS[0])

        threads = [threading.Thread(target=build) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not any(t.is_alive() for t in threads)
        # each engine's warm-up once waited on a barrier of its own: eight at once held both helpers on barriers
        # whose other halves were queued behind them (10 s of nothing, and no reader query in the concurrency test)
        assert len(warm_ups) == pg.SEARCH_WORKERS
        assert len(backend._connections) == 8 + pg.SEARCH_WORKERS
    finally:
        backend.close()
