"""Where an index lives must not change results: a saved directory index answers exactly like the same
index held in memory, for every strategy."""

from __future__ import annotations

import pytest

from kg_rag.bench import synthetic_index
from kg_rag.context import render_path
from kg_rag.query.engine import QueryEngine
from kg_rag.query.params import QueryParams


class _VectorsOnly:
    def embed_query(self, text):
        raise RuntimeError("vectors only")

    embed_documents = embed_query


@pytest.fixture(scope="module")
def small():
    s = synthetic_index(400, 3000, dim=32, n_queries=12, seed=7)
    return s, QueryEngine.for_index(s.index, _VectorsOnly(), QueryParams())


def test_saved_index_gives_identical_results(small, tmp_path):
    """Queries on a saved index run from the saved arrays and record offsets — same results as in memory."""
    from kg_rag import DirectoryStore

    s, engine = small
    store = DirectoryStore(tmp_path / "idx")
    store.save(s.index)
    loaded = QueryEngine(store.backend(), _VectorsOnly(), QueryParams())
    for strategy in ("chain", "ppr", "frequency", "path"):
        p = QueryParams(strategy=strategy, max_context_tokens=1500)
        for q, text in zip(s.queries, s.query_texts):
            a, b = engine.retrieve_by_vector(q, text, p), loaded.retrieve_by_vector(q, text, p)
            assert [(c.id, c.score, c.text) for c in a.chunks] == [(c.id, c.score, c.text) for c in b.chunks]
            assert [e.key for e in a.entities] == [e.key for e in b.entities]
            assert [render_path(a.names, x) for x in a.paths] == [render_path(b.names, x) for x in b.paths]
            assert [r.relation_id for r in a.relations] == [r.relation_id for r in b.relations]


def test_lazy_index_can_still_be_edited(tmp_path, bow_embeddings, demo_index):
    from kg_rag import Chunk, EntityBasedKGRAG, load_index, save_index

    save_index(demo_index, tmp_path / "idx")
    loaded = load_index(tmp_path / "idx")
    r = EntityBasedKGRAG(index=loaded, embeddings=bow_embeddings)
    before = [d.metadata["chunk_id"] for d in r.invoke("Quokka Council")]
    loaded.kg.add_chunk(Chunk("new", "Quokka Council supersedes Storage Policy v2.", "new-doc"))
    loaded.kg.add_relation("Quokka Council", "Storage Policy v2", "SUPERSEDES", chunk_id="new")
    after = [d.metadata["chunk_id"] for d in r.invoke("Quokka Council")]
    assert "new" not in before and after[0] == "new"
