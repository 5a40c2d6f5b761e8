"""Import of LangChain ``GraphDocument`` lists (what ``LLMGraphTransformer`` produces).

``GraphDocument`` lives in langchain-community / langchain-neo4j; objects are read by their fields
(``nodes``, ``relationships``, ``source``) so neither package is a dependency. Plain dicts with the same
fields work too.

What :mod:`kg_rag.export.graph_documents` writes comes back whole (``keep_types=True``): relationship
``predicate``, ``weight``, ``doc_id`` and synonym links (``kind: "synonym"``), each document's registry entry
(``kg_rag_document`` in its first chunk's metadata), and what had no chunk (a source marked
``kg_rag_unsourced``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from kg_rag.model import Chunk, KnowledgeGraph
from kg_rag.model.names import canonical_key, clean_display_name, upper_snake
from kg_rag.model.records import SYNONYM_KIND
from kg_rag.model.relation_types import RelationTyper
from kg_rag.model.report import IngestReport
from kg_rag.tokens import count_tokens


def _field(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


def import_graph_documents(
    kg: KnowledgeGraph,
    graph_documents: Iterable[Any],
    *,
    typer: RelationTyper | None = None,
    report: IngestReport | None = None,
    keep_types: bool = False,
) -> IngestReport:
    """Merge GraphDocuments into ``kg``; each one's ``source`` Document becomes a chunk.

    The chunk id comes from ``source.metadata["chunk_id"|"id"]`` or a content hash; the document id
    from ``metadata["doc_id"|"source"]``. Relationship ``source``/``target`` keep their roles.
    ``keep_types`` takes relationship types as they are (UPPER_SNAKE) instead of typing them as predicates:
    for GraphDocuments whose types are already kg-rag relation types (a kg-rag export).
    """
    typer = typer or RelationTyper()
    report = report if report is not None else IngestReport()
    for gd in graph_documents:
        source = _field(gd, "source")
        text = str(_field(source, "page_content", "") or "") if source is not None else ""
        meta = dict(_field(source, "metadata", {}) or {}) if source is not None else {}
        registry = [meta.pop("kg_rag_document")] if isinstance(meta.get("kg_rag_document"), dict) else []
        registry += [d for d in meta.pop("kg_rag_documents", None) or [] if isinstance(d, dict)]
        chunk_id: str | None
        doc_id: str | None
        if meta.get("kg_rag_unsourced"):  # what an export had without a chunk: no chunk to make
            chunk_id = doc_id = None
        else:
            chunk_id = str(
                meta.get("chunk_id") or meta.get("id") or "gd-" + hashlib.sha1(text.encode()).hexdigest()[:16]
            )
            doc_id = str(meta.get("doc_id") or meta.get("source") or chunk_id)
            kg.add_chunk(
                Chunk(
                    chunk_id,
                    text,
                    doc_id,
                    {k: v for k, v in meta.items() if k not in ("chunk_id", "id", "doc_id")},
                    count_tokens(text),
                )
            )
            report.added["chunks"] += 1
        for doc in registry:
            if doc.get("id"):
                kg.add_document(
                    str(doc["id"]),
                    source=doc.get("source"),
                    content_hash=doc.get("content_hash"),
                    title=doc.get("title"),
                    metadata=doc.get("metadata") or None,
                )
        types: dict[str, str] = {}
        for node in _field(gd, "nodes", []) or []:
            name = clean_display_name(str(_field(node, "id", "") or ""))
            if not name:
                report.skip("empty_entity_name")
                continue
            if report.refuses("entity", name):
                continue
            props = _field(node, "properties", {}) or {}
            ntype = _field(node, "type")
            types[canonical_key(name)] = ntype
            kg.add_entity(name, ntype, props.get("description"), chunk_id=chunk_id, doc_id=props.get("doc_id"))
            report.added["entities"] += 1
        for rel in _field(gd, "relationships", []) or []:
            src, tgt = _field(rel, "source"), _field(rel, "target")
            s = clean_display_name(str(_field(src, "id", "") or "")) if src is not None else ""
            t = clean_display_name(str(_field(tgt, "id", "") or "")) if tgt is not None else ""
            if not s or not t:
                report.skip("empty_member")
                continue
            if canonical_key(s) == canonical_key(t):
                report.skip("self_loop")
                continue
            if report.refuses("member", s, t):
                continue
            props = _field(rel, "properties", {}) or {}
            if props.get("kind") == SYNONYM_KIND:  # an entity-resolution link, not an extracted relation
                kg.add_synonym(s, t, float(props.get("score") or 0.0))
                continue
            confidence = props.get("confidence")
            try:
                confidence = None if confidence is None else min(1.0, max(0.0, float(confidence)))
            except (TypeError, ValueError):
                confidence = None
            weight = props.get("weight", 1.0)
            try:
                weight = max(0.0, float(weight))
            except (TypeError, ValueError):
                weight = 1.0
            rtype = _field(rel, "type")
            kg.add_relation(
                s,
                t,
                upper_snake(rtype) if keep_types and rtype else typer(rtype),
                predicate=props.get("predicate"),
                description=props.get("description"),
                evidence=props.get("evidence"),
                confidence=confidence,
                chunk_id=chunk_id,
                doc_id=props.get("doc_id") or doc_id,
                weight=weight,
                source_type=_field(src, "type") or types.get(canonical_key(s)),
                target_type=_field(tgt, "type") or types.get(canonical_key(t)),
            )
            report.added["relations"] += 1
    return report
