"""The retrieval pipeline without LangChain: settings, query text and embedding, then the declared stages.

:class:`QueryEngine` runs one query against a :class:`~kg_rag.store.base.QueryBackend` inside one read view, so
it sees one version of the data, and returns a :class:`~kg_rag.query.types.RetrievalResult` with everything a
caller needs — the ranked chunks, entities, paths and relationship rows, and the formatted context. The stages
themselves are in :mod:`kg_rag.query.stages`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kg_rag.index.embeddings import aembed_query, embed_query
from kg_rag.query.history import MAX_QUERY_CHARS, fold_history, validate_query
from kg_rag.query.params import QueryParams
from kg_rag.query.stages import run_pipeline
from kg_rag.query.threads import query_threads
from kg_rag.query.types import RetrievalResult
from kg_rag.store.base import QueryBackend

logger = logging.getLogger(__name__)


class QueryEngine:
    """Runs queries against a backend with a fixed embedding model and default :class:`QueryParams`."""

    def __init__(self, backend: QueryBackend, embeddings: Any, params: QueryParams | None = None) -> None:
        if not hasattr(embeddings, "embed_query"):
            raise ValueError("embeddings must provide embed_query()/embed_documents() (a LangChain Embeddings)")
        if params is not None and not isinstance(params, QueryParams):
            raise ValueError(f"params must be a QueryParams, got {type(params).__name__}")
        self.backend = backend
        self.embeddings = embeddings
        self.params = params or QueryParams()
        warm = getattr(backend, "warm_up", None)
        if callable(warm):
            warm()

    @classmethod
    def for_index(cls, index: Any, embeddings: Any, params: QueryParams | None = None) -> QueryEngine:
        """An engine over an editable :class:`~kg_rag.index.build.GraphIndex` (graph edits are picked up)."""
        from kg_rag.store.memory import LiveBackend

        return cls(LiveBackend(index, embeddings), embeddings, params)

    def prepare(
        self, query: Any, history: Sequence[Any] | None = None, params: QueryParams | None = None, **settings: Any
    ) -> tuple[QueryParams, str]:
        """The settings of one call (``params`` or the engine's, with ``settings`` by flat name, ``k`` included)
        and its query text (validated, earlier turns folded in)."""
        p = (params or self.params).replace(**settings)
        return p, fold_history(validate_query(query), history, p.seeds.history_turns)

    def retrieve(
        self,
        query: str,
        *,
        history: Sequence[Any] | None = None,
        params: QueryParams | None = None,
        **settings: Any,
    ) -> RetrievalResult:
        """Run the whole pipeline for one query. ``settings`` are :class:`QueryParams` settings by flat name."""
        p, text = self.prepare(query, history, params, **settings)
        q = embed_query(self.embeddings, text[:MAX_QUERY_CHARS])
        return self.retrieve_by_vector(q, text, p)

    async def aretrieve(
        self,
        query: str,
        *,
        history: Sequence[Any] | None = None,
        params: QueryParams | None = None,
        **settings: Any,
    ) -> RetrievalResult:
        """Async :meth:`retrieve`: the query is embedded with ``aembed_query`` and the graph work runs in a
        worker thread, so the event loop is never blocked by it."""
        p, text = self.prepare(query, history, params, **settings)
        q = await aembed_query(self.embeddings, text[:MAX_QUERY_CHARS])
        return await asyncio.to_thread(self.retrieve_by_vector, q, text, p)

    def retrieve_by_vector(self, q: np.ndarray, query_text: str, params: QueryParams | None = None) -> RetrievalResult:
        """The pipeline after query embedding (what latency benchmarks time)."""
        p = params or self.params
        with query_threads(), self.backend.reader() as view:
            return run_pipeline(view, np.asarray(q, dtype=np.float32).reshape(-1), query_text, p)


def settings_from(configurable: Mapping[str, Any] | None, known: frozenset[str]) -> dict[str, Any]:
    """The retrieval settings among a run's ``configurable`` entries (other keys belong to other runnables, e.g.
    a checkpointer's ``thread_id``, and are left alone); ``k=None`` means "unset"."""
    return {k: v for k, v in (configurable or {}).items() if k in known and not (k == "k" and v is None)}
