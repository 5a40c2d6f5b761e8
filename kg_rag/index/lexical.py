"""Lexical relevance: Okapi BM25 over chunk texts, as a sparse matrix (no per-query loop over the corpus).

Used as a retrieval channel fused with dense similarity (``QueryParams.lexical_weight``) — exact terms such
as figures, codes and rare names are where embeddings are weakest — and as the ``bm25`` baseline.
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import scipy.sparse as sp

_TOKEN = re.compile(r"\w+", re.UNICODE)


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


class BM25Index:
    """Okapi BM25 over chunk texts with a sparse term matrix (no per-query loop over the corpus)."""

    def __init__(self, texts: list[str], k1: float = 1.5, b: float = 0.75) -> None:
        vocab: dict[str, int] = {}
        rows, cols, vals = [], [], []
        lengths = np.zeros(len(texts), dtype=np.float32)
        for i, text in enumerate(texts):
            counts = Counter(tokenize(text))
            lengths[i] = sum(counts.values())
            for tok, n in counts.items():
                rows.append(i)
                cols.append(vocab.setdefault(tok, len(vocab)))
                vals.append(n)
        self.vocab = vocab
        tf = sp.csr_matrix((np.asarray(vals, np.float32), (rows, cols)), shape=(len(texts), len(vocab)))
        df = np.bincount(np.asarray(cols, dtype=np.int64), minlength=len(vocab)).astype(np.float32)
        n = max(len(texts), 1)
        self.idf = np.log(1.0 + (n - df + 0.5) / (df + 0.5)).astype(np.float32)
        avg = float(lengths.mean()) if len(texts) else 1.0
        tf = tf.tocoo()
        norm = k1 * (1 - b + b * lengths[tf.row] / max(avg, 1e-9))
        weight = tf.data * (k1 + 1) / (tf.data + norm)
        self.matrix = sp.csc_matrix((weight.astype(np.float32), (tf.row, tf.col)), shape=tf.shape)
        self.matrix.sort_indices()  # a term's chunks ascending (``column``)

    def column(self, term: int) -> tuple[np.ndarray, np.ndarray]:
        """The chunks that contain vocabulary term ``term`` (ascending) and its BM25 weight in each."""
        m = self.matrix
        start, end = int(m.indptr[term]), int(m.indptr[term + 1])
        return m.indices[start:end], m.data[start:end]

    def scores(self, query: str) -> np.ndarray:
        """BM25 of ``query`` for every chunk.

        The question's few columns are summed one after another in the order its words first occur, straight
        from the CSC arrays: the sum SciPy's product of those columns makes (same order, same float32 steps, so
        the same bits) without building the column slice, which cost more than the sum on a 2 000-chunk corpus.
        """
        ids = [self.vocab[t] for t in tokenize(query) if t in self.vocab]
        out = np.zeros(self.matrix.shape[0], dtype=np.float32)
        if not ids:
            return out
        counts = Counter(ids)
        cols = np.fromiter(counts.keys(), dtype=np.int64)
        q = self.idf[cols] * np.fromiter(counts.values(), dtype=np.float32)
        for term, weight in zip(cols.tolist(), q):
            rows, data = self.column(term)
            out[rows] += data * weight  # a term's chunks are distinct: no repeated index in the add
        return out
