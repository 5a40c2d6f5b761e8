"""kg-rag: a typed, directed knowledge-graph retriever for LangChain and LangGraph.

The core (model, ingest, index, store, query, context, eval) does not import LangChain; the names bound to
LangChain (the retriever, the answer graph, the agent tools, document loading) and the ingest pipeline are
imported on first use, so a command that only queries does not pay for them.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from kg_rag.errors import (
    ConfigurationError,
    ExtractionError,
    IndexFormatError,
    IndexNotFoundError,
    KGRagError,
    StoreError,
)

_LAZY = {
    "format_context": "kg_rag.context",
    "render_edge": "kg_rag.context",
    "render_path": "kg_rag.context",
    "GraphIndex": "kg_rag.index",
    "abuild_index": "kg_rag.index",
    "build_index": "kg_rag.index",
    "RELATED": "kg_rag.model",
    "SYNONYM": "kg_rag.model",
    "Chunk": "kg_rag.model",
    "Entity": "kg_rag.model",
    "Evidence": "kg_rag.model",
    "KnowledgeGraph": "kg_rag.model",
    "Relation": "kg_rag.model",
    "canonical_key": "kg_rag.model",
    "RelationTyper": "kg_rag.model.relation_types",
    "PPR": "kg_rag.query",
    "PRESETS": "kg_rag.query",
    "Chain": "kg_rag.query",
    "Frequency": "kg_rag.query",
    "HybridPath": "kg_rag.query",
    "QueryEngine": "kg_rag.query",
    "QueryParams": "kg_rag.query",
    "get_preset": "kg_rag.query",
    "RetrievalResult": "kg_rag.model.results",
    "DirectoryStore": "kg_rag.store",
    "IndexLockedError": "kg_rag.store",
    "QueryBackend": "kg_rag.store",
    "load_index": "kg_rag.store",
    "open_store": "kg_rag.store",
    "save_index": "kg_rag.store",
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
    "index_documents": "kg_rag.indexing.job",
    "aindex_documents": "kg_rag.indexing.job",
    "PostgresStore": "kg_rag.store.postgres",
}


def __getattr__(name: str) -> Any:
    # Every name is imported on first use: the LangChain bindings so the plain core stays importable on its own,
    # the core so that ``import kg_rag.cli`` (every command) loads only what its command needs.
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    if name == "__version__":
        return _version()
    raise AttributeError(f"module 'kg_rag' has no attribute {name!r}")


def _version() -> str:
    """The installed distribution's version: one number, kept in pyproject.toml."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("kg-rag")
    except PackageNotFoundError:  # a source tree that was never installed
        return "0+unknown"


__all__ = [  # noqa: F822 - the names are resolved on first use by __getattr__
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
