"""Indexing: embeddings and their cache (``embeddings``), vector tables (``vectors``), BM25 (``lexical``), the
index of a graph (``build``), the immutable query snapshot (``snapshot``) and synonym links (``synonyms``)."""

from kg_rag.index.build import GraphIndex, abuild_index, build_index, chunk_text, entity_text, fact_text
from kg_rag.index.embeddings import EmbeddingCache, embed_query, model_id, normalise_rows
from kg_rag.index.vectors import VectorTable

__all__ = [
    "EmbeddingCache",
    "GraphIndex",
    "VectorTable",
    "abuild_index",
    "build_index",
    "chunk_text",
    "embed_query",
    "entity_text",
    "fact_text",
    "model_id",
    "normalise_rows",
]
