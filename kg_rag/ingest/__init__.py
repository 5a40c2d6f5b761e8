"""Ingestion: every path (LLM extraction, GraphDocuments, OpenIE, files) produces the same graph model."""

from kg_rag.ingest.documents import load_documents, split_documents
from kg_rag.ingest.extract import (
    ExtractedEntity,
    ExtractedRelation,
    ExtractionResult,
    LLMExtractor,
    apply_extraction,
)
from kg_rag.ingest.graph_documents import import_graph_documents
from kg_rag.ingest.openie import import_openie
from kg_rag.ingest.report import IngestReport

__all__ = [
    "ExtractedEntity",
    "ExtractedRelation",
    "ExtractionResult",
    "IngestReport",
    "LLMExtractor",
    "apply_extraction",
    "import_graph_documents",
    "import_openie",
    "load_documents",
    "split_documents",
]
