from __future__ import annotations

import pytest

from kg_rag import Chunk, KnowledgeGraph, build_index, load_index, save_index


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
