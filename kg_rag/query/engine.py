"""The retrieval pipeline without LangChain: settings, query text and embedding, then the declared stages.

:class:`QueryEngine` runs one query against a :class:`~kg_rag.store.base.QueryBackend` inside one read view, so
it sees one version of the data, and returns a :class:`~kg_rag.model.results.RetrievalResult` with everything a
caller needs — the ranked chunks, entities, paths and relationship rows, and the formatted context. The stages
themselves are in :mod:`kg_rag.query.stages`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kg_rag.context.format import ContextFormatter, format_context
from kg_rag.errors import InputError
from kg_rag.index.embeddings import aembed_query, embed_query
from kg_rag.model.results import RetrievalResult
from kg_rag.query.history import HISTORY_WEIGHT, MAX_QUERY_CHARS, earlier_turns, validate_query
from kg_rag.query.params import QueryParams
from kg_rag.query.relation_match import type_index
from kg_rag.query.stages import Reranker, run_pipeline
from kg_rag.query.threads import query_threads
from kg_rag.store.base import QueryBackend
from kg_rag.tokens import count_tokens

logger = logging.getLogger(__name__)


class QueryEngine:
    """Runs queries against a backend with a fixed embedding model and default :class:`QueryParams`.
    ``formatter`` writes the context the result carries: ``(result, params) -> FormattedContext``
    (:func:`~kg_rag.context.format.format_context` by default; ``docs/extending.md`` shows another)."""

    def __init__(
        self,
        backend: QueryBackend,
        embeddings: Any,
        params: QueryParams | None = None,
        *,
        formatter: ContextFormatter = format_context,
    ) -> None:
        if not hasattr(embeddings, "embed_query"):
            raise InputError("embeddings must provide embed_query()/embed_documents() (a LangChain Embeddings)")
        if params is not None and not isinstance(params, QueryParams):
            raise InputError(f"params must be a QueryParams, got {type(params).__name__}")
        if not isinstance(backend, QueryBackend):
            raise InputError(f"backend must be a kg_rag.store.QueryBackend, got {type(backend).__name__}")
        self.backend = backend
        self.embeddings = embeddings
        self.params = params or QueryParams()
        self.formatter = formatter
        backend.warm_up()
        count_tokens("warm up")  # the tokenizer loads once per process: on the first query it cost 0.1-0.3 s
        with backend.reader() as view:  # the relation types' word index (which types a question asks for) is
            info = view.info()  # built once per version: 9 ms for MuSiQue's 2 739 types, not in a first query
        type_index(info.relation_types, info.version)

    @classmethod
    def for_index(cls, index: Any, embeddings: Any, params: QueryParams | None = None) -> QueryEngine:
        """An engine over an editable :class:`~kg_rag.index.build.GraphIndex` (graph edits are picked up)."""
        from kg_rag.store.memory import LiveBackend

        return cls(LiveBackend(index, embeddings), embeddings, params)

    def prepare(
        self, query: Any, history: Sequence[Any] | None = None, params: QueryParams | None = None, **settings: Any
    ) -> tuple[QueryParams, str, str]:
        """The settings of one call (``params`` or the engine's, with ``settings`` by flat name, ``k`` included),
        its question (validated) and the earlier turns it follows (``""`` without history)."""
        p = (params or self.params).replace(**settings)
        return p, validate_query(query), earlier_turns(history, p.seeds.history_turns)

    def retrieve(
        self,
        query: str,
        *,
        history: Sequence[Any] | None = None,
        params: QueryParams | None = None,
        reranker: Reranker | None = None,
        **settings: Any,
    ) -> RetrievalResult:
        """Run the whole pipeline for one query. ``settings`` are :class:`QueryParams` settings by flat name;
        ``history`` holds earlier turns of a conversation, context for the question (not part of it);
        ``reranker`` chooses the chunks kept among ``rerank_depth`` ranked ones (see :data:`Reranker`)."""
        p, text, earlier = self.prepare(query, history, params, **settings)
        q = embed_query(self.embeddings, text[:MAX_QUERY_CHARS])
        if earlier:
            q = blend(q, embed_query(self.embeddings, earlier[:MAX_QUERY_CHARS]))
        return self.retrieve_by_vector(q, text, p, earlier, reranker)

    async def aretrieve(
        self,
        query: str,
        *,
        history: Sequence[Any] | None = None,
        params: QueryParams | None = None,
        reranker: Reranker | None = None,
        **settings: Any,
    ) -> RetrievalResult:
        """Async :meth:`retrieve`: the query is embedded with ``aembed_query`` and the graph work runs in a
        worker thread, so the event loop is never blocked by it."""
        p, text, earlier = self.prepare(query, history, params, **settings)
        q = await aembed_query(self.embeddings, text[:MAX_QUERY_CHARS])
        if earlier:
            q = blend(q, await aembed_query(self.embeddings, earlier[:MAX_QUERY_CHARS]))
        return await asyncio.to_thread(self.retrieve_by_vector, q, text, p, earlier, reranker)

    def retrieve_by_vector(
        self,
        q: np.ndarray,
        query_text: str,
        params: QueryParams | None = None,
        earlier: str = "",
        reranker: Reranker | None = None,
    ) -> RetrievalResult:
        """The pipeline after query embedding (what latency benchmarks time). ``earlier``: the conversation's
        earlier turns, whose names may seed the search."""
        p = params or self.params
        with query_threads(), self.backend.reader() as view:
            vector = np.asarray(q, dtype=np.float32).reshape(-1)
            return run_pipeline(
                view, vector, query_text, p, earlier, reranker, embed=self.embed, formatter=self.formatter
            )

    def embed(self, text: str) -> np.ndarray:
        """``text`` embedded as a query (normalised, one row)."""
        return embed_query(self.embeddings, text)


def blend(question: np.ndarray, earlier: np.ndarray) -> np.ndarray:
    """The question's vector plus :data:`HISTORY_WEIGHT` times the earlier turns', normalised: the question
    leads, the earlier turns pull toward what it may refer to."""
    v = np.asarray(question, np.float32).reshape(-1) + HISTORY_WEIGHT * np.asarray(earlier, np.float32).reshape(-1)
    norm = float(np.linalg.norm(v))
    return (v / norm if norm > 0 else v).astype(np.float32)


def settings_from(configurable: Mapping[str, Any] | None, known: frozenset[str]) -> dict[str, Any]:
    """The retrieval settings among a run's ``configurable`` entries (other keys belong to other runnables, e.g.
    a checkpointer's ``thread_id``, and are left alone); ``k=None`` means "unset"."""
    return {k: v for k, v in (configurable or {}).items() if k in known and not (k == "k" and v is None)}
