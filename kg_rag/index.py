"""The search index over a knowledge graph: embeddings of entities, facts and chunks, with FAISS search.

``KnowledgeGraph`` stays the editable model; ``GraphIndex`` holds what querying needs. Vectors are keyed by
content hash, so rebuilding after an incremental change only embeds text that is new.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kg_rag.embeddings import EmbeddingCache, model_id
from kg_rag.graph import Chunk, Entity, KnowledgeGraph, Relation
from kg_rag.ingest.report import IngestReport
from kg_rag.schema import DEFAULT_ENTITY_TYPE

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
    src = kg.graph.nodes[relation.source]["name"]
    tgt = kg.graph.nodes[relation.target]["name"]
    verb = relation.predicate or relation.relation_type.replace("_", " ").lower()
    return f"{src} {verb} {tgt}"


def chunk_text(chunk: Chunk) -> str:
    """Text embedded for a chunk: its title (when it has one) and its text."""
    title = str(chunk.metadata.get("title") or "").strip()
    return f"{title}\n{chunk.text}" if title else chunk.text


_FAISS_CONFIGURED = False
EXACT_MAX_ROWS = int(os.environ.get("KG_RAG_EXACT_MAX_ROWS", "25000"))
"""Vector tables up to this many rows are searched exactly; larger ones through an inverted-file index."""
PQ_MIN_ROWS = int(os.environ.get("KG_RAG_PQ_MIN_ROWS", "400000"))
"""From this many rows the inverted file stores product-quantised codes instead of full vectors."""
IVF_NPROBE = int(os.environ.get("KG_RAG_IVF_NPROBE", "16"))


def build_faiss_index(vectors: np.ndarray) -> Any:
    """Exact or inverted-file inner-product index for ``vectors`` (see :meth:`VectorTable.faiss_index`)."""
    import faiss

    _configure_faiss_threads(faiss)
    n = int(vectors.shape[0])
    d = max(int(vectors.shape[1]) if vectors.ndim == 2 else 0, 1)
    if n <= EXACT_MAX_ROWS:
        index = faiss.IndexFlatIP(d)
        if n:
            index.add(np.ascontiguousarray(vectors, dtype=np.float32))
        return index
    nlist = int(min(2048, max(128, np.sqrt(n))))
    quantizer = faiss.IndexFlatIP(d)
    if n >= PQ_MIN_ROWS and d % 8 == 0:
        index = faiss.IndexIVFPQ(quantizer, d, nlist, d // 8, 8, faiss.METRIC_INNER_PRODUCT)
    else:
        index = faiss.IndexIVFFlat(quantizer, d, nlist, faiss.METRIC_INNER_PRODUCT)
    rng = np.random.default_rng(0)
    sample = np.sort(rng.choice(n, size=min(n, 40 * nlist), replace=False))
    index.train(np.ascontiguousarray(vectors[sample], dtype=np.float32))
    for start in range(0, n, 100_000):
        index.add(np.ascontiguousarray(vectors[start : start + 100_000], dtype=np.float32))
    index.nprobe = IVF_NPROBE
    return index


def _configure_faiss_threads(faiss: Any) -> None:
    """Query-time searches are single queries: one OpenMP thread is fastest and avoids oversubscribing small
    machines alongside BLAS and torch thread pools. ``KG_RAG_FAISS_THREADS`` overrides (0 = leave FAISS alone)."""
    global _FAISS_CONFIGURED
    if _FAISS_CONFIGURED:
        return
    _FAISS_CONFIGURED = True
    threads = int(os.environ.get("KG_RAG_FAISS_THREADS", "1"))
    if threads > 0:
        faiss.omp_set_num_threads(threads)


@dataclass
class VectorTable:
    """Row-aligned ids, content hashes and L2-normalised float32 vectors, searchable with FAISS."""

    ids: list[str]
    hashes: list[str]
    vectors: np.ndarray
    _faiss: Any = field(default=None, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(self.ids) != len(self.hashes) or len(self.ids) != self.vectors.shape[0]:
            raise ValueError(
                f"vector table is inconsistent: {len(self.ids)} ids, {len(self.hashes)} hashes, "
                f"{self.vectors.shape[0]} vectors"
            )
        self._position: dict[str, int] | None = None

    @property
    def position(self) -> dict[str, int]:
        """id -> row (built on first use; large tables on the query path never need it)."""
        if self._position is None:
            self._position = {i: n for n, i in enumerate(self.ids)}
        return self._position

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1]) if self.vectors.ndim == 2 else 0

    @property
    def exact(self) -> bool:
        """Exact search (``IndexFlatIP``) up to ``EXACT_MAX_ROWS`` rows; an inverted-file index above."""
        return len(self) <= EXACT_MAX_ROWS

    def faiss_index(self) -> Any:
        """The FAISS index over the rows (cosine on normalised rows), built on first use.

        Up to ``EXACT_MAX_ROWS`` rows: exact ``IndexFlatIP``. Above: ``IndexIVFFlat`` (``IndexIVFPQ`` from
        ``PQ_MIN_ROWS`` rows, 8-bit codes of dim/8 sub-vectors), ``nprobe`` = ``IVF_NPROBE``; candidates are
        re-scored exactly against the stored vectors, so returned scores are true cosine similarities.
        """
        if self._faiss is None:
            with self._lock:
                if self._faiss is None:
                    self._faiss = build_faiss_index(self.vectors)
        return self._faiss

    def set_faiss_index(self, index: Any) -> None:
        """Attach a prebuilt index (loaded from disk); it must cover every row."""
        if index.ntotal != len(self) or (len(self) and index.d != self.dim):
            raise ValueError(
                f"FAISS index has {index.ntotal} rows of dim {index.d}, the table {len(self)} x {self.dim}"
            )
        self._faiss = index

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` rows per query: ``(scores, row positions)``; missing slots are ``-1``."""
        if k <= 0 or not len(self):
            n = queries.shape[0]
            return np.zeros((n, 0), np.float32), np.zeros((n, 0), np.int64)
        q = np.ascontiguousarray(queries, dtype=np.float32)
        k = min(k, len(self))
        if self.exact:
            return self.faiss_index().search(q, k)
        _, cand = self.faiss_index().search(q, min(len(self), max(4 * k, 32)))
        scores = np.full((q.shape[0], k), -np.inf, dtype=np.float32)
        rows = np.full((q.shape[0], k), -1, dtype=np.int64)
        for i in range(q.shape[0]):
            c = cand[i][cand[i] >= 0]
            if c.size == 0:
                continue
            exact = np.asarray(self.vectors[np.sort(c)] @ q[i], dtype=np.float32)
            order = np.argsort(-exact, kind="stable")[:k]
            scores[i, : order.size] = exact[order]
            rows[i, : order.size] = np.sort(c)[order]
        return scores, rows

    @classmethod
    def empty(cls, dim: int = 0) -> VectorTable:
        return cls([], [], np.zeros((0, dim), dtype=np.float32))


@dataclass
class GraphIndex:
    """A knowledge graph plus the embeddings needed to query it."""

    kg: KnowledgeGraph
    entities: VectorTable
    facts: VectorTable
    chunks: VectorTable
    embedding_model: str = ""
    type_prefix: bool = True
    report: IngestReport = field(default_factory=IngestReport)
    kg_version: int = -1
    compiled: Any = field(default=None, repr=False, compare=False)
    """Query arrays loaded with the index (so they need not be rebuilt); ``None`` = derive from ``kg``."""
    records: Any = field(default=None, repr=False, compare=False)
    """On-disk record reader of a loaded index (used while its graph has not been materialised)."""
    saved_stats: dict[str, Any] | None = field(default=None, repr=False, compare=False)
    """Graph counts recorded at save time, so ``stats()`` of a loaded index need not build the graph."""

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
        """Re-derive the vectors after graph edits; unchanged texts are not re-embedded."""
        return build_index(
            self.kg, embeddings, type_prefix=self.type_prefix, cache=self.cache(), report=self.report, progress=progress
        )

    def stats(self) -> dict[str, Any]:
        lazy_unbuilt = not getattr(self.kg, "materialized", True)
        s = dict(self.saved_stats) if self.saved_stats is not None and lazy_unbuilt else self.kg.stats()
        s["skipped"] = dict(sorted(self.report.skipped.items()))
        s["extraction_failures"] = len(self.report.failures)
        s["embedding_model"] = self.embedding_model
        s["dim"] = self.dim
        return s


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
    cache = cache if cache is not None else EmbeddingCache()
    with kg._lock:  # a consistent snapshot of what to embed
        version = kg.version
        ents = list(kg.entities())
        rels = list(kg.relations())
        e_texts = [entity_text(e, type_prefix) for e in ents]
        f_texts = [fact_text(r, kg) for r in rels]
        chunk_list = list(kg.chunks.values()) if embed_chunks else []
        c_texts = [chunk_text(c) for c in chunk_list]

    def table(ids: list[str], texts: list[str], desc: str) -> VectorTable:
        vectors, hashes = cache.embed(embeddings, texts, progress=progress, desc=desc)
        return VectorTable(ids, hashes, vectors) if ids else VectorTable.empty(vectors.shape[1])

    entities = table([e.key for e in ents], e_texts, "embedding entities")
    facts = table([r.id for r in rels], f_texts, "embedding facts")
    chunks = table([c.id for c in chunk_list], c_texts, "embedding chunks")
    dims = {t.dim for t in (entities, facts, chunks) if len(t)}
    if len(dims) > 1:
        raise ValueError(f"embedding dimensions disagree across entities/facts/chunks: {sorted(dims)}")
    logger.info("embedded %d texts (%d from cache)", cache.misses + cache.hits, cache.hits)
    return GraphIndex(
        kg,
        entities,
        facts,
        chunks,
        model_id(embeddings),
        type_prefix,
        report if report is not None else IngestReport(),
        version,
    )
