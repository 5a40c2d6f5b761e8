"""Building the index of a knowledge graph: the embeddings of its entities, facts and chunks.

``KnowledgeGraph`` stays the editable model; ``GraphIndex`` is that model plus its vector tables — what a
store saves. Vectors are keyed by content hash, so rebuilding after an incremental change only embeds text
that is new.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kg_rag.errors import InputError
from kg_rag.index.embeddings import EmbeddingCache, model_id
from kg_rag.index.meta import IndexMeta
from kg_rag.index.vectors import VectorTable
from kg_rag.model.change import GraphChange, apply_to_graph
from kg_rag.model.graph import KnowledgeGraph
from kg_rag.model.names import DEFAULT_ENTITY_TYPE, after_title
from kg_rag.model.records import Chunk, Entity, Relation
from kg_rag.model.report import IngestReport

logger = logging.getLogger(__name__)


def entity_text(entity: Entity, type_prefix: bool = True) -> str:
    """Text embedded for an entity: ``name [TYPE] description``.

    The ``[TYPE]`` part is included when ``type_prefix`` is on and the type is specific (not the generic
    default). Switching ``type_prefix`` changes every entity text, so the index must be re-embedded.
    """
    parts = [entity.name]
    if type_prefix and entity.entity_type != DEFAULT_ENTITY_TYPE:
        parts.append(f"[{entity.entity_type}]")
    if entity.description:
        parts.append(entity.description)
    return " ".join(parts)


def fact_text(relation: Relation, kg: KnowledgeGraph) -> str:
    """Text embedded for a fact: ``source predicate target`` in the stored direction."""
    return fact_text_of(relation, kg.graph.nodes[relation.source]["name"], kg.graph.nodes[relation.target]["name"])


def fact_text_of(relation: Relation, source_name: str, target_name: str) -> str:
    """:func:`fact_text` given the endpoints' display names (a store that reads rows, not a graph)."""
    verb = relation.predicate or relation.relation_type.replace("_", " ").lower()
    return f"{source_name} {verb} {target_name}"


def chunk_text(chunk: Chunk) -> str:
    """Text embedded for a chunk: its title (when it has one and the text does not open with it, as a Markdown
    document's first chunk does with its ``# heading``: written twice, the title would outweigh the text) and its
    text."""
    title = " ".join(str(chunk.metadata.get("title") or "").split())
    if not title or after_title(chunk.text, title) is not None:
        return chunk.text
    return f"{title}\n{chunk.text}"


@dataclass
class GraphIndex:
    """A knowledge graph plus the embeddings needed to query it (what :func:`build_index` returns and a store
    saves). Queries run on a :class:`~kg_rag.index.snapshot.Snapshot` derived from it."""

    kg: KnowledgeGraph
    entities: VectorTable
    facts: VectorTable
    chunks: VectorTable
    embedding_model: str = ""
    type_prefix: bool = True
    report: IngestReport = field(default_factory=IngestReport)
    kg_version: int = -1
    communities: Any = None
    """The index's :class:`~kg_rag.communities.CommunitySet` (``None`` until ``kg-rag communities`` ran)."""

    @property
    def dim(self) -> int:
        return max(self.entities.dim, self.facts.dim, self.chunks.dim)

    @property
    def stale(self) -> bool:
        """True when the graph changed after these vectors were built (call :meth:`refresh`)."""
        return self.kg_version != self.kg.version

    def cache(self) -> EmbeddingCache:
        """An embedding cache seeded with every vector of this index."""
        cache = EmbeddingCache()
        for table in (self.entities, self.facts, self.chunks):
            cache.add(table.hashes, table.vectors)
        return cache

    def refresh(self, embeddings: Any, *, progress: bool = False) -> GraphIndex:
        """Re-derive the vectors after graph edits; unchanged texts are not re-embedded. Communities carry over,
        those whose members changed marked stale."""
        fresh = build_index(
            self.kg, embeddings, type_prefix=self.type_prefix, cache=self.cache(), report=self.report, progress=progress
        )
        return fresh.with_communities_of(self)

    def with_communities_of(self, other: GraphIndex | None) -> GraphIndex:
        """Carry ``other``'s communities over to this index of an edited graph, marking the changed ones stale."""
        if other is not None and other.communities is not None:
            from kg_rag.communities.detect import mark_stale

            self.communities = other.communities
            mark_stale(self.communities, self.kg)
        return self

    def remove_documents(self, doc_ids: Sequence[str]) -> dict[str, int]:
        """Forget documents: what their chunks said (see :meth:`KnowledgeGraph.remove_document`) and what the
        ingest report recorded about those chunks. Call :meth:`refresh` before querying or saving."""
        return apply_to_graph(self.kg, self.report, GraphChange().remove(doc_ids))

    def stats(self) -> dict[str, Any]:
        """The same figures a store's ``stats()`` gives (:meth:`kg_rag.index.meta.IndexMeta.stats`)."""
        return IndexMeta.of_index(self, schema_version=0).stats(self.report)


def build_index(
    kg: KnowledgeGraph,
    embeddings: Any,
    *,
    type_prefix: bool = True,
    cache: EmbeddingCache | None = None,
    report: IngestReport | None = None,
    embed_chunks: bool = True,
    progress: bool = False,
) -> GraphIndex:
    """Embed entities, facts (extracted relations) and chunks of ``kg``.

    ``cache`` (e.g. ``old_index.cache()``) makes unchanged text free to re-index.
    """
    plan = _plan(kg, type_prefix, embed_chunks)
    cache = cache if cache is not None else EmbeddingCache()
    tables = [
        _table(ids, *cache.embed(embeddings, texts, progress=progress, desc=f"embedding {name}"))
        for name, ids, texts in plan.parts
    ]
    return _finish(plan, tables, cache, embeddings, type_prefix, report)


async def abuild_index(
    kg: KnowledgeGraph,
    embeddings: Any,
    *,
    type_prefix: bool = True,
    cache: EmbeddingCache | None = None,
    report: IngestReport | None = None,
    embed_chunks: bool = True,
    progress: bool = False,
) -> GraphIndex:
    """Async :func:`build_index`: texts are embedded with ``aembed_documents`` (the event loop stays free)."""
    plan = _plan(kg, type_prefix, embed_chunks)
    cache = cache if cache is not None else EmbeddingCache()
    tables = []
    for name, ids, texts in plan.parts:
        vectors, hashes = await cache.aembed(embeddings, texts, progress=progress, desc=f"embedding {name}")
        tables.append(_table(ids, vectors, hashes))
    return _finish(plan, tables, cache, embeddings, type_prefix, report)


@dataclass
class _Plan:
    kg: KnowledgeGraph
    version: int
    parts: list[tuple[str, list[str], list[str]]]


def _plan(kg: KnowledgeGraph, type_prefix: bool, embed_chunks: bool) -> _Plan:
    with kg.lock:  # a consistent snapshot of what to embed
        version = kg.version
        ents = list(kg.entities())
        rels = list(kg.relations())
        chunk_list = list(kg.chunks.values()) if embed_chunks else []
        parts = [
            ("entities", [e.key for e in ents], [entity_text(e, type_prefix) for e in ents]),
            ("facts", [r.id for r in rels], [fact_text(r, kg) for r in rels]),
            ("chunks", [c.id for c in chunk_list], [chunk_text(c) for c in chunk_list]),
        ]
    return _Plan(kg, version, parts)


def _table(ids: list[str], vectors: np.ndarray, hashes: list[str]) -> VectorTable:
    return VectorTable(ids, hashes, vectors) if ids else VectorTable.empty(vectors.shape[1])


def _finish(
    plan: _Plan, tables: list[VectorTable], cache: EmbeddingCache, embeddings: Any, type_prefix: bool, report: Any
) -> GraphIndex:
    entities, facts, chunks = tables
    dims = {t.dim for t in (entities, facts, chunks) if len(t)}
    if len(dims) > 1:
        raise InputError(f"embedding dimensions disagree across entities/facts/chunks: {sorted(dims)}")
    logger.info("embedded %d texts (%d from cache)", cache.misses + cache.hits, cache.hits)
    return GraphIndex(
        plan.kg,
        entities,
        facts,
        chunks,
        model_id(embeddings),
        type_prefix,
        report if report is not None else IngestReport(),
        plan.version,
    )
