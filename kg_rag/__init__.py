"""kg-rag: a typed, directed knowledge-graph retriever for LangChain and LangGraph."""

from kg_rag.errors import ConfigurationError, ExtractionError, IndexFormatError, KGRagError
from kg_rag.graph import Chunk, Entity, Evidence, KnowledgeGraph, Relation
from kg_rag.index import GraphIndex, build_index
from kg_rag.ingest.report import IngestReport
from kg_rag.schema import RELATED, SYNONYM, RelationTypeNormalizer, canonical_key
from kg_rag.storage import DirectoryStore, load_index, save_index

__version__ = "0.1.0"

__all__ = [
    "RELATED",
    "SYNONYM",
    "Chunk",
    "ConfigurationError",
    "DirectoryStore",
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
    "load_index",
    "save_index",
]
