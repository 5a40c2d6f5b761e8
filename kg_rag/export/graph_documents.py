"""LangChain ``GraphDocument``s: one per chunk, holding the entities it mentions and the relations it evidences.

The dicts have ``GraphDocument``'s fields (``nodes``, ``relationships``, ``source``), so
``GraphDocument.model_validate(d)`` builds the LangChain object (see :mod:`kg_rag.langchain.graph_documents`)
and :func:`kg_rag.ingest.import_graph_documents` reads either back. Nothing is lost on the way: a node per
description the chunk gave, a relationship per evidence record (quote, confidence, description, weight,
predicate), the document's registry entry on its first chunk, and what has no chunk (evidence or descriptions
added in code, synonym links) in one extra GraphDocument whose source is marked ``kg_rag_unsourced``.
Relationship ``source``/``target`` are the stored source and target: direction survives the round trip.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import asdict
from pathlib import Path
from typing import Any

from kg_rag.errors import InputError
from kg_rag.export.rows import atomic_file, check_target
from kg_rag.model.graph import KnowledgeGraph
from kg_rag.model.records import SYNONYM_KIND

UNSOURCED = "kg_rag_unsourced"
DOCUMENT_KEY = "kg_rag_document"


def _node(entity: Any, properties: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"id": entity.name, "type": entity.entity_type, "properties": properties or {}}


def graph_document_dicts(kg: KnowledgeGraph) -> list[dict[str, Any]]:
    """The graph as GraphDocument-shaped dicts (chunks in stored order, then the unsourced remainder)."""
    entities = {e.key: e for e in kg.entities()}
    rels_by_chunk: dict[str | None, list[dict[str, Any]]] = defaultdict(list)
    for rel in kg.relations(include_synonyms=True):
        src, tgt = entities[rel.source], entities[rel.target]
        if rel.kind == SYNONYM_KIND:
            score = kg.graph.edges[rel.source, rel.target, rel.id].get("score", 0.0)
            rels_by_chunk[None].append(
                {
                    "source": _node(src),
                    "target": _node(tgt),
                    "type": rel.relation_type,
                    "properties": {"kind": SYNONYM_KIND, "score": score},
                }
            )
            continue
        for ev in rel.evidence:
            props = {k: v for k, v in asdict(ev).items() if k not in ("chunk_id", "quote") and v is not None}
            if ev.quote is not None:
                props["evidence"] = ev.quote
            if rel.predicate is not None:
                props["predicate"] = rel.predicate
            props["relation_id"] = rel.id
            source = ev.chunk_id if ev.chunk_id in kg.chunks else None
            if source is not None and ev.doc_id == kg.chunks[source].doc_id:
                props.pop("doc_id", None)  # the chunk's own document: implied by the source
            rels_by_chunk[source].append(
                {"source": _node(src), "target": _node(tgt), "type": rel.relation_type, "properties": props}
            )
    nodes_by_chunk: dict[str | None, list[dict[str, Any]]] = defaultdict(list)
    for e in entities.values():
        described: set[str | None] = set()
        for d in e.description_records:
            source = d.chunk_id if d.chunk_id in kg.chunks else None
            props = {"description": d.text}
            if source is None and d.doc_id is not None:
                props["doc_id"] = d.doc_id
            nodes_by_chunk[source].append(_node(e, props))
            described.add(source)
        for cid in e.chunk_ids:
            if cid not in described and cid in kg.chunks:
                nodes_by_chunk[cid].append(_node(e))
        if not e.chunk_ids and None not in described:
            nodes_by_chunk[None].append(_node(e))
    out: list[dict[str, Any]] = []
    seen_docs: set[str] = set()
    for cid, chunk in kg.chunks.items():
        meta: dict[str, Any] = {**chunk.metadata, "chunk_id": chunk.id, "doc_id": chunk.doc_id}
        doc = kg.docs.get(chunk.doc_id)
        if doc is not None and chunk.doc_id not in seen_docs:
            seen_docs.add(chunk.doc_id)
            meta[DOCUMENT_KEY] = asdict(doc)
        out.append(
            {
                "nodes": nodes_by_chunk.get(cid, []),
                "relationships": rels_by_chunk.get(cid, []),
                "source": {"page_content": chunk.text, "metadata": meta, "type": "Document"},
            }
        )
    chunkless_docs = [asdict(d) for d_id, d in kg.docs.items() if d_id not in seen_docs]
    if nodes_by_chunk.get(None) or rels_by_chunk.get(None) or chunkless_docs:
        meta = {UNSOURCED: True}
        if chunkless_docs:
            meta["kg_rag_documents"] = chunkless_docs
        out.append(
            {
                "nodes": nodes_by_chunk.get(None, []),
                "relationships": rels_by_chunk.get(None, []),
                "source": {"page_content": "", "metadata": meta, "type": "Document"},
            }
        )
    return out


def write_graph_documents(kg: KnowledgeGraph, path: Path, *, overwrite: bool = False) -> dict[str, Any]:
    """A JSON array of GraphDocument dicts."""
    check_target(path, overwrite=overwrite)
    docs = graph_document_dicts(kg)
    with atomic_file(path, encoding="utf-8") as fh:
        json.dump(docs, fh, ensure_ascii=False)
        fh.write("\n")
    relations = sum(1 for _ in kg.relations(include_synonyms=True))
    return {"files": [str(path)], "entities": kg.graph.number_of_nodes(), "relations": relations}


def read_graph_documents(path: str | Path) -> KnowledgeGraph:
    """The graph a :func:`write_graph_documents` file holds, through the GraphDocument import."""
    from kg_rag.ingest.graph_documents import import_graph_documents

    with open(path, encoding="utf-8") as fh:
        try:
            docs = json.load(fh)
        except ValueError as exc:
            raise InputError(f"{path}: not JSON ({exc})") from exc
    if not isinstance(docs, list):
        raise InputError(f"{path}: expected a JSON array of GraphDocuments")
    kg = KnowledgeGraph()
    import_graph_documents(kg, docs, keep_types=True)
    return kg
