"""Export: the graph in the formats other tools read — GraphML (Gephi, yEd, NetworkX), Neo4j (``neo4j-admin``
CSV and a ``LOAD CSV`` script), LangChain ``GraphDocument`` JSON and kg-rag's own JSON lines.

Every format keeps each relation's stored direction (source -> target) and its type; evidence and provenance
travel as attributes. :func:`export_graph` writes one format; each module also reads its format back where a
round trip is meaningful (GraphDocuments and JSON lines rebuild the same :class:`KnowledgeGraph`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kg_rag.export.graph_documents import graph_document_dicts, read_graph_documents, write_graph_documents
from kg_rag.export.graphml import read_graphml, to_networkx, write_graphml
from kg_rag.export.jsonl import read_jsonl, write_jsonl
from kg_rag.export.neo4j import write_neo4j
from kg_rag.model.graph import KnowledgeGraph

FORMATS = ("graphml", "neo4j", "graph-documents", "jsonl")


def export_graph(kg: KnowledgeGraph, fmt: str, out: str | Path, *, overwrite: bool = False) -> dict[str, Any]:
    """Write ``kg`` as ``fmt`` to ``out`` (a file; for ``neo4j`` a folder). Returns what was written
    (``files``, ``entities``, ``relations``). An existing file, or a folder that is not empty, is refused
    (``FileExistsError``) unless ``overwrite``."""
    writers = {
        "graphml": write_graphml,
        "neo4j": write_neo4j,
        "graph-documents": write_graph_documents,
        "jsonl": write_jsonl,
    }
    if fmt not in writers:
        raise ValueError(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return writers[fmt](kg, Path(out), overwrite=overwrite)


__all__ = [
    "FORMATS",
    "export_graph",
    "graph_document_dicts",
    "read_graph_documents",
    "read_graphml",
    "read_jsonl",
    "to_networkx",
    "write_graph_documents",
    "write_graphml",
    "write_jsonl",
    "write_neo4j",
]
