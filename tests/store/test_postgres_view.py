"""What a PostgreSQL query view reads ahead for the chain: the similarity of the chunks it links to comes with
the entities' chunks (one statement, not two) and is what :meth:`similarity` gives on its own, to the bit."""

from __future__ import annotations

import numpy as np
import pytest

from kg_rag.testing.compliance import QUESTIONS, reference_index
from kg_rag.testing.embeddings import BagOfWordsEmbeddings


@pytest.fixture
def store(pg_schema_uri):
    from kg_rag.store.postgres import PostgresStore

    store = PostgresStore(pg_schema_uri)
    store.save(reference_index(BagOfWordsEmbeddings()))
    return store


def test_an_entitys_chunks_come_with_their_similarity_to_the_query(store):
    q = np.asarray(BagOfWordsEmbeddings().embed_query(QUESTIONS[0]), dtype=np.float32)
    backend = store.backend()
    try:
        with backend.reader() as view:
            entities = np.arange(view.info().entities, dtype=np.int64)
        with backend.reader() as alone:
            pairs = alone.entity_chunks(entities)
            chunks = np.unique(pairs.right)
            expected = alone.similarity("chunks", q, chunks)
        with backend.reader() as view:
            view.search("chunks", q, 1)  # the query is known: what the chain reads next comes with its similarity
            seen: list[str] = []
            fetch = view._fetch
            view._fetch = lambda sql, params=None: seen.append(sql) or fetch(sql, params)
            got = view.entity_chunks(entities[:3])
            assert len(seen) == 1
            linked = np.unique(got.right)
            assert view.similarity("chunks", q, linked).tobytes() == expected[np.searchsorted(chunks, linked)].tobytes()
            assert len(seen) == 1  # no statement for the similarity
            assert view.entity_chunks(entities).right.tolist() == pairs.right.tolist()  # many: counted only
    finally:
        backend.close()
