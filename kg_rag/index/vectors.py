"""Vector tables: row-aligned ids, content hashes and L2-normalised float32 vectors, searched with FAISS.

Tables up to ``EXACT_MAX_ROWS`` rows (25 000) are searched exactly: a flat scan up to ``SHORTLIST_MIN_ROWS``
rows; above, a scan of half-precision copies shortlists four times the rows asked for, which are then
re-scored in float32 — the same results as a float32 scan (an fp16 dot product of unit vectors is off by about
1e-4, far less than the gap between the k-th and the 4k-th best row), in less time once the table no longer
sits in the CPU cache, which is the case inside a query (measured: evaluation/design-figures.md). Larger
tables go through an inverted-file index (``KG_RAG_IVF_NPROBE`` lists probed, default 16), product-quantised from
``KG_RAG_PQ_MIN_ROWS`` rows (default 400 000), with candidates re-scored exactly. FAISS runs with
``KG_RAG_FAISS_THREADS`` OpenMP threads (default 1: queries are single vectors).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kg_rag.errors import InputError

_FAISS_CONFIGURED = False
EXACT_MAX_ROWS = 25_000
"""Vector tables up to this many rows are searched exactly; larger ones through an inverted-file index."""
PQ_MIN_ROWS = int(os.environ.get("KG_RAG_PQ_MIN_ROWS", "400000"))
"""From this many rows the inverted file stores product-quantised codes instead of full vectors."""
IVF_NPROBE = int(os.environ.get("KG_RAG_IVF_NPROBE", "16"))
SHORTLIST_MIN_ROWS = 4096
"""Exact tables from this many rows are scanned in half precision, then the shortlist re-scored in float32."""


def build_faiss_index(vectors: np.ndarray) -> Any:
    """Exact or inverted-file inner-product index for ``vectors`` (see :meth:`VectorTable.faiss_index`)."""
    import faiss

    _configure_faiss_threads(faiss)
    n = int(vectors.shape[0])
    d = max(int(vectors.shape[1]) if vectors.ndim == 2 else 0, 1)
    index: Any
    if n <= EXACT_MAX_ROWS:
        if n < SHORTLIST_MIN_ROWS:
            index = faiss.IndexFlatIP(d)
        else:
            index = faiss.IndexScalarQuantizer(d, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT)
        for start in range(0, n, 100_000):
            index.add(np.ascontiguousarray(vectors[start : start + 100_000], dtype=np.float32))
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
            raise InputError(
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
            raise InputError(
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
        index = self.faiss_index()
        if self.exact and len(self) < SHORTLIST_MIN_ROWS:
            return index.search(q, k)
        _, cand = index.search(q, min(len(self), max(4 * k, k + 32)))
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
