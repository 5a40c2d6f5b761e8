"""Embedding calls and the content-hash cache (``kg_rag/index/embeddings.py``): unchanged text is not embedded again;
wrong output or a failing model is a clear error that loses nothing."""

from __future__ import annotations

import asyncio

import pytest

from kg_rag import Chunk, EntityBasedKGRAG, KnowledgeGraph, build_index, load_index, save_index


def test_reindexing_unchanged_text_is_nearly_free(tmp_path, counting_embeddings):
    kg = KnowledgeGraph()
    for i in range(10):
        kg.add_chunk(Chunk(f"c{i}", f"text {i}", f"d{i}"))
        kg.add_relation(f"A{i}", f"B{i}", "OWNS", chunk_id=f"c{i}")
    index = build_index(kg, counting_embeddings)
    first = counting_embeddings.embedded
    assert first == 20 + 10 + 10
    save_index(index, tmp_path / "i")
    loaded = load_index(tmp_path / "i")
    loaded.kg.add_chunk(Chunk("new", "brand new", "dn"))
    loaded.kg.add_relation("A0", "Z", "OWNS", chunk_id="new")
    assert loaded.stale
    refreshed = loaded.refresh(counting_embeddings)
    # only the new chunk, the new entity Z and the new fact; A0's text is unchanged
    assert counting_embeddings.embedded - first == 3
    assert not refreshed.stale and len(refreshed.entities) == 21


def test_wrong_embedding_output_is_a_clear_error():
    class Broken:
        def embed_documents(self, texts):
            return [[1.0, 2.0]] * (len(texts) - 1)

    kg = KnowledgeGraph()
    kg.add_relation("A", "B", "OWNS")
    with pytest.raises(ValueError, match="returned shape"):
        build_index(kg, Broken())


def ids(docs):
    return [d.metadata["chunk_id"] for d in docs]


# ------------------------------------------------------------------ faulty models
class RaisingEmbeddings:
    model = "raising"

    def embed_documents(self, texts):
        raise ConnectionError("embedding service down")

    def embed_query(self, text):
        raise ConnectionError("embedding service down")


class WrongDimEmbeddings(RaisingEmbeddings):
    model = "wrong-dim"

    def embed_query(self, text):
        return [0.1] * 7


def test_embedding_failures_are_clear_and_lose_nothing(demo_index, bow_embeddings):
    kg = KnowledgeGraph.from_records(
        demo_index.kg.entity_records(), demo_index.kg.relation_records(), demo_index.kg.chunk_records()
    )
    with pytest.raises(ValueError, match="embedding model RaisingEmbeddings:raising failed: ConnectionError"):
        build_index(kg, RaisingEmbeddings())
    assert len(kg) == len(demo_index.kg)  # the graph is untouched
    r = EntityBasedKGRAG(index=demo_index, embeddings=RaisingEmbeddings())
    with pytest.raises(ValueError, match="failed on the query: ConnectionError"):
        r.invoke("Project Atlas")
    r = EntityBasedKGRAG(index=demo_index, embeddings=WrongDimEmbeddings())
    with pytest.raises(ValueError, match="dimension 7, the index has 512"):
        r.invoke("Project Atlas")
    with pytest.raises(ValueError, match="dimension 7, the index has 512"):
        asyncio.run(r.ainvoke("Project Atlas"))
    assert ids(EntityBasedKGRAG(index=demo_index, embeddings=bow_embeddings).invoke("Project Atlas"))
