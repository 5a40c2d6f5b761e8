"""Query relevance of chunks: cosine similarity + ``lexical_weight`` x BM25 (normalised per query).

Computed lazily. On indexes whose chunk table is searched exactly (up to ``EXACT_MAX_ROWS`` chunks) every
value is computed, as one matrix-vector product. On larger ones the candidates are the best ``CANDIDATES``
rows by (approximate) dense search plus the best by BM25, scored exactly; strategies ask for any other row
they need (e.g. a chunk a chain links to) with :meth:`rows`, so a linked chunk is never scored approximately.
"""

from __future__ import annotations

from typing import Any

import numpy as np

CANDIDATES = 2000


class ChunkRelevance:
    def __init__(self, index: Any, cg: Any, q: np.ndarray, lexical: np.ndarray | None, lexical_weight: float):
        self.n = cg.n_chunks
        self._q = q.reshape(-1).astype(np.float32)
        self._vectors = index.chunks.vectors if len(index.chunks) == self.n else None
        self._lex = None
        if lexical is not None and lexical_weight > 0 and lexical.size and float(lexical.max()) > 0:
            self._lex = (lexical_weight * lexical / float(lexical.max())).astype(np.float32)
        self._full: np.ndarray | None = None
        self._dense_full: np.ndarray | None = None
        exact = self._vectors is None or index.chunks.exact
        if exact:
            self.candidates = np.arange(self.n)
            self.candidate_values = self.full()
        else:
            m = min(self.n, CANDIDATES)
            _, rows = index.chunks.search(self._q.reshape(1, -1), m)
            cand = rows[0][rows[0] >= 0]
            if self._lex is not None:
                lex_top = np.argpartition(-self._lex, min(m, self.n) - 1)[:m]
                cand = np.union1d(cand, lex_top[self._lex[lex_top] > 0])
            self.candidates = np.unique(cand)
            self.candidate_values = self.rows(self.candidates)

    def dense_rows(self, rows: np.ndarray) -> np.ndarray:
        rows = np.asarray(rows, dtype=np.int64)
        if self._dense_full is not None:
            return self._dense_full[rows]
        if self._vectors is None or rows.size == 0:
            return np.zeros(rows.size, dtype=np.float32)
        order = np.argsort(rows)  # sorted reads are kinder to memory-mapped vectors
        out = np.empty(rows.size, dtype=np.float32)
        out[order] = np.asarray(self._vectors[rows[order]] @ self._q, dtype=np.float32)
        return out

    def rows(self, rows: np.ndarray) -> np.ndarray:
        """Exact relevance of the given chunk rows."""
        rows = np.asarray(rows, dtype=np.int64)
        if self._full is not None:
            return self._full[rows]
        values = self.dense_rows(rows)
        return values + self._lex[rows] if self._lex is not None else values

    def dense(self) -> np.ndarray:
        """Cosine similarity of every chunk (computed on first use)."""
        if self._dense_full is None:
            if self._vectors is None:
                self._dense_full = np.zeros(self.n, dtype=np.float32)
            else:
                self._dense_full = np.asarray(self._vectors @ self._q, dtype=np.float32)
        return self._dense_full

    def full(self) -> np.ndarray:
        """Relevance of every chunk (computed on first use)."""
        if self._full is None:
            dense = self.dense()
            self._full = dense + self._lex if self._lex is not None else dense
        return self._full

    def max(self) -> float:
        return float(self.candidate_values.max()) if self.candidate_values.size else 0.0
