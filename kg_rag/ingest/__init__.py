"""Ingestion: every path (LLM extraction, GraphDocuments, OpenIE, saved extraction files, your files) produces
the same graph model. The loaders and the LLM extractor bind to LangChain and are imported on first use, so
``import kg_rag.ingest`` stays free of LangChain."""

from __future__ import annotations

from importlib import import_module
from typing import Any

from kg_rag.ingest.graph_documents import import_graph_documents
from kg_rag.ingest.openie import import_openie
from kg_rag.model.report import IngestReport

_LAZY = {
    "load_documents": "kg_rag.ingest.documents",
    "split_documents": "kg_rag.ingest.documents",
    "ExtractedEntity": "kg_rag.ingest.extract",
    "ExtractedRelation": "kg_rag.ingest.extract",
    "ExtractionResult": "kg_rag.ingest.extract",
    "LLMExtractor": "kg_rag.ingest.extract",
    "apply_extraction": "kg_rag.ingest.extract",
    "import_extraction_file": "kg_rag.ingest.extraction_file",
    "ExtractionSchema": "kg_rag.ingest.extraction_schema",
    "load_schema": "kg_rag.ingest.extraction_schema",
    "estimate_extraction": "kg_rag.ingest.cost",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'kg_rag.ingest' has no attribute {name!r}")


__all__ = ["IngestReport", "import_graph_documents", "import_openie", *_LAZY]
