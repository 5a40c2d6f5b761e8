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
        self.matrix.sort_indices()  # each term's chunks ascending (a slice of columns keeps them so)

    def scores(self, query: str) -> np.ndarray:
        ids = [self.vocab[t] for t in tokenize(query) if t in self.vocab]
        if not ids:
            return np.zeros(self.matrix.shape[0], dtype=np.float32)
        counts = Counter(ids)
        cols = np.fromiter(counts.keys(), dtype=np.int64)
        q = self.idf[cols] * np.fromiter(counts.values(), dtype=np.float32)
        return np.asarray(self.matrix[:, cols] @ q).ravel()
