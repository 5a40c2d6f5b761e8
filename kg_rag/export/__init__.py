"""Export: the graph in the formats other tools read — GraphML (Gephi, yEd, NetworkX), Neo4j (``neo4j-admin``
CSV and a ``LOAD CSV`` script), LangChain ``GraphDocument`` JSON and kg-rag's own JSON lines.

Every format keeps each relation's stored direction (source -> target) and its type; evidence and provenance
travel as attributes. :func:`export_graph` writes one format; each module also reads its format back where a
round trip is meaningful (GraphDocuments and JSON lines rebuild the same :class:`KnowledgeGraph`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from kg_rag.errors import InputError
from kg_rag.export.graph_documents import graph_document_dicts, read_graph_documents, write_graph_documents
from kg_rag.export.graphml import read_graphml, to_networkx, write_graphml
from kg_rag.export.jsonl import read_jsonl, write_jsonl
from kg_rag.export.neo4j import write_neo4j
from kg_rag.model.graph import KnowledgeGraph

FORMATS = ("graphml", "neo4j", "graph-documents", "jsonl")
"""The built-in formats (what ``kg-rag export --format`` offers)."""

Writer = Callable[..., dict[str, Any]]
"""``writer(kg, out: Path, *, overwrite: bool) -> {"files": [...], "entities": n, "relations": n}``."""

WRITERS: dict[str, Writer] = {
    "graphml": write_graphml,
    "neo4j": write_neo4j,
    "graph-documents": write_graph_documents,
    "jsonl": write_jsonl,
}


def register_format(name: str, writer: Writer) -> None:
    """Let :func:`export_graph` write ``name`` with ``writer`` (see :data:`Writer`)."""
    if not name or not callable(writer):
        raise InputError("register_format needs a name and a writer callable")
    WRITERS[name] = writer


def export_graph(kg: KnowledgeGraph, fmt: str, out: str | Path, *, overwrite: bool = False) -> dict[str, Any]:
    """Write ``kg`` as ``fmt`` to ``out`` (a file; for ``neo4j`` a folder). Returns what was written
    (``files``, ``entities``, ``relations``). An existing file, or a folder that is not empty, is refused
    (``FileExistsError``) unless ``overwrite``."""
    if fmt not in WRITERS:
        raise InputError(f"unknown export format {fmt!r}; choose one of {', '.join(WRITERS)}")
    return WRITERS[fmt](kg, Path(out), overwrite=overwrite)


__all__ = [
    "FORMATS",
    "WRITERS",
    "export_graph",
    "graph_document_dicts",
    "read_graph_documents",
    "read_graphml",
    "read_jsonl",
    "register_format",
    "to_networkx",
    "write_graph_documents",
    "write_graphml",
    "write_jsonl",
    "write_neo4j",
]
