"""kg-rag: a typed, directed knowledge-graph retriever for LangChain and LangGraph.

The core (model, ingest, index, store, query, context, eval) does not import LangChain; the names bound to
LangChain (the retriever, the answer graph, the agent tools, document loading) and the ingest pipeline are
imported on first use, so a command that only queries does not pay for them.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from kg_rag.context import format_context, render_edge, render_path
from kg_rag.errors import (
    ConfigurationError,
    ExtractionError,
    IndexFormatError,
    IndexNotFoundError,
    KGRagError,
    StoreError,
)
from kg_rag.index import GraphIndex, abuild_index, build_index
from kg_rag.model import RELATED, SYNONYM, Chunk, Entity, Evidence, KnowledgeGraph, Relation, canonical_key
from kg_rag.model.relation_types import RelationTyper
from kg_rag.query import PPR, PRESETS, Chain, Frequency, HybridPath, QueryEngine, QueryParams, get_preset
from kg_rag.query.types import RetrievalResult
from kg_rag.store import DirectoryStore, IndexLockedError, QueryBackend, load_index, open_store, save_index

try:  # the installed distribution's version: one number, kept in pyproject.toml
    from importlib.metadata import PackageNotFoundError, version

    __version__ = version("kg-rag")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"

_LAZY = {
    "IngestReport": "kg_rag.ingest",
    "import_graph_documents": "kg_rag.ingest",
    "import_openie": "kg_rag.ingest",
    "EntityBasedKGRAG": "kg_rag.langchain.retriever",
    "build_answer_graph": "kg_rag.langchain.answer",
    "AnswerGenerationError": "kg_rag.langchain.answer",
    "make_retriever_tool": "kg_rag.langchain.tools",
    "make_path_tool": "kg_rag.langchain.tools",
    "make_global_search_tool": "kg_rag.langchain.communities",
    "build_global_search": "kg_rag.langchain.communities",
    "format_documents": "kg_rag.langchain.documents",
    "build_agent": "kg_rag.langchain.tools",
    "default_chat_model": "kg_rag.langchain.chat",
    "local_embeddings": "kg_rag.langchain.embeddings",
    "make_embeddings": "kg_rag.langchain.embeddings",
    "load_documents": "kg_rag.ingest.documents",
    "split_documents": "kg_rag.ingest.documents",
    "LLMExtractor": "kg_rag.ingest.extract",
    "import_extraction_file": "kg_rag.ingest.extraction_file",
    "index_documents": "kg_rag.ingest.pipeline",
    "aindex_documents": "kg_rag.ingest.pipeline",
    "PostgresStore": "kg_rag.store.postgres",
}


def __getattr__(name: str) -> Any:
    # The LangChain bindings are imported lazily so the plain core stays importable on its own.
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'kg_rag' has no attribute {name!r}")


__all__ = [
    "PPR",
    "PRESETS",
    "RELATED",
    "SYNONYM",
    "Chain",
    "Chunk",
    "ConfigurationError",
    "DirectoryStore",
    "Entity",
    "Evidence",
    "ExtractionError",
    "Frequency",
    "GraphIndex",
    "HybridPath",
    "IndexFormatError",
    "IndexNotFoundError",
    "IndexLockedError",
    "IngestReport",
    "KGRagError",
    "KnowledgeGraph",
    "QueryBackend",
    "QueryEngine",
    "QueryParams",
    "Relation",
    "RelationTyper",
    "RetrievalResult",
    "abuild_index",
    "build_index",
    "canonical_key",
    "format_context",
    "get_preset",
    "import_graph_documents",
    "import_openie",
    "load_index",
    "open_store",
    "render_edge",
    "render_path",
    "save_index",
    "StoreError",
    *_LAZY,
]
