"""kg-rag: a typed, directed knowledge-graph retriever for LangChain and LangGraph."""

from kg_rag.errors import ConfigurationError, ExtractionError, IndexFormatError, KGRagError
from kg_rag.graph import Chunk, Entity, Evidence, KnowledgeGraph, Relation
from kg_rag.index import GraphIndex, build_index
from kg_rag.ingest.report import IngestReport
from kg_rag.params import PRESETS, QueryParams, get_preset
from kg_rag.schema import RELATED, SYNONYM, RelationTypeNormalizer, canonical_key
from kg_rag.storage import DirectoryStore, load_index, save_index

__version__ = "0.1.0"


def __getattr__(name: str):
    # The LangChain binding is imported lazily so the plain core stays importable on its own.
    if name == "EntityBasedKGRAG":
        from kg_rag.retriever import EntityBasedKGRAG

        return EntityBasedKGRAG
    if name == "format_context":
        from kg_rag.context import format_context

        return format_context
    raise AttributeError(f"module 'kg_rag' has no attribute {name!r}")


__all__ = [
    "RELATED",
    "SYNONYM",
    "Chunk",
    "ConfigurationError",
    "DirectoryStore",
    "EntityBasedKGRAG",
    "PRESETS",
    "QueryParams",
    "Entity",
    "Evidence",
    "ExtractionError",
    "GraphIndex",
    "IndexFormatError",
    "IngestReport",
    "KGRagError",
    "KnowledgeGraph",
    "Relation",
    "RelationTypeNormalizer",
    "build_index",
    "canonical_key",
    "format_context",
    "get_preset",
    "load_index",
    "save_index",
]
