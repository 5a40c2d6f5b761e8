"""Whole-index saves into PostgreSQL: a first save bulk-loads (frozen rows, constraints after the copy) and
picks each vector table's index by its size — an inverted file for very large tables, a half-precision HNSW
for the others — and searches through either agree with the reference."""

from __future__ import annotations

import numpy as np

from kg_rag.index.snapshot import Snapshot
from kg_rag.store.memory import SnapshotBackend
from kg_rag.store.postgres import tables as S
from kg_rag.testing.compliance import QUESTIONS, reference_index


def index_kinds(store) -> dict[str, str]:
    with store.connect(autocommit=True) as conn:
        return {table: kind for table, _, kind in conn.execute(S.VECTOR_INDEX_QUERY, (store.schema,)).fetchall()}


def test_ivf_lists_follow_the_in_process_rule():
    assert S.ivf_lists(1_000_000) == 1000 and S.ivf_lists(30_000) == 173 and S.ivf_lists(100) == 100
    assert S.vector_index_statement("kg", "fact_vectors", S.IVF_MIN_ROWS, 384)[0] == "ivfflat"
    assert S.vector_index_statement("kg", "fact_vectors", S.IVF_MIN_ROWS - 1, 384)[0] == "hnsw-halfvec"
    assert S.vector_index_statement("kg", "fact_vectors", 10, S.HALFVEC_MAX_DIM + 1)[0] == "hnsw"


def test_large_tables_get_an_inverted_file_and_searches_agree(pg_server, bow_embeddings, monkeypatch):
    import uuid

    from kg_rag.store.postgres import PostgresStore

    reference = reference_index(bow_embeddings)
    monkeypatch.setattr(S, "IVF_MIN_ROWS", 10)  # entities and facts (17 each) get a file, chunks (8) HNSW
    store = PostgresStore(f"{pg_server}&kg_schema=t_{uuid.uuid4().hex[:10]}&kg_search=hnsw")
    try:
        store.save(reference)
        assert store.last_write["kind"] == "save" and "ivfflat_entity_vectors_s" in store.last_write
        kinds = {"entity_vectors": "ivfflat", "fact_vectors": "ivfflat", "chunk_vectors": "hnsw-halfvec"}
        assert index_kinds(store) == kinds
        with store.connect(autocommit=True) as conn:  # searches know which index to go through
            assert (
                conn.execute(f"SELECT value FROM {store.schema}.meta WHERE key = 'vector_indexes'").fetchone()[0]
                == kinds
            )
        ref = SnapshotBackend(Snapshot.from_index(reference))
        with ref.reader() as rv, store.backend().reader() as sv:
            for question in QUESTIONS:
                q = np.asarray(bow_embeddings.embed_query(question), np.float32)
                for kind in ("entities", "facts", "chunks"):
                    a, b = rv.search(kind, q, 10, 0.05), sv.search(kind, q, 10, 0.05)
                    assert np.allclose(a.scores, b.scores, atol=1e-5), (question, kind)
        store.save(reference)  # saving over it keeps the indexes it has
        assert index_kinds(store)["entity_vectors"] == "ivfflat"
    finally:
        store.drop()


def test_a_first_save_needs_no_vacuum(pg_schema_uri, bow_embeddings):
    """Rows of a first save are copied frozen, so the visibility map is set without a vacuum pass: the
    traversal's covering indexes are read index-only at once."""
    from kg_rag.store.postgres import PostgresStore

    store = PostgresStore(pg_schema_uri)
    store.save(reference_index(bow_embeddings))
    with store.connect(autocommit=True) as conn:
        pages, visible = conn.execute(
            "SELECT relpages, relallvisible FROM pg_class WHERE oid = %s::regclass", (f"{store.schema}.relations",)
        ).fetchone()
    assert pages > 0 and visible == pages
