"""The graph as LangChain ``GraphDocument`` objects (``langchain_community.graphs.graph_document``), e.g. for
``Neo4jGraph.add_graph_documents``; :func:`kg_rag.ingest.import_graph_documents` reads them back losslessly
(``keep_types=True``). Needs ``langchain-community`` (or ``langchain-neo4j``, whose classes are the same)."""

from __future__ import annotations

from typing import Any

from kg_rag.export.graph_documents import graph_document_dicts
from kg_rag.model.graph import KnowledgeGraph


def _graph_document_class() -> Any:
    try:
        from langchain_community.graphs.graph_document import GraphDocument
    except ImportError:
        try:
            # the alternative package (optional, not installed with kg-rag): same class, another module
            from langchain_neo4j.graphs.graph_document import GraphDocument  # type: ignore[import-not-found,no-redef]
        except ImportError as exc:
            raise ImportError(
                "GraphDocument objects need langchain-community or langchain-neo4j: pip install langchain-community"
            ) from exc
    return GraphDocument


def to_graph_documents(kg: KnowledgeGraph) -> list[Any]:
    """One ``GraphDocument`` per chunk (see :mod:`kg_rag.export.graph_documents` for what each holds)."""
    cls = _graph_document_class()
    return [cls.model_validate(d) for d in graph_document_dicts(kg)]
