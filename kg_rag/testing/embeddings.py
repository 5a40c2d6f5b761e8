"""Deterministic embeddings for tests: a hashed bag of words (no model download, no LangChain import).

Shared words mean similarity, so a query that names an entity matches it — what retrieval tests need and a
random fake embedding cannot give.
"""

from __future__ import annotations

import hashlib
import re

import numpy as np

_WORD = re.compile(r"\w+")


class BagOfWordsEmbeddings:
    """``embed_documents`` / ``embed_query`` over L2-normalised hashed word counts (``size`` dimensions)."""

    def __init__(self, size: int = 512) -> None:
        self.size = size
        self.model = f"bag-of-words-{size}"

    def _vec(self, text: str) -> list[float]:
        v = np.zeros(self.size, dtype=np.float32)
        for tok in _WORD.findall(text.lower()):
            v[int(hashlib.md5(tok.encode()).hexdigest()[:8], 16) % self.size] += 1.0
        n = np.linalg.norm(v)
        return (v / n if n else v).tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vec(text)
