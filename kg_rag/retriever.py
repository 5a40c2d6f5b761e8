"""``EntityBasedKGRAG``: the LangChain ``BaseRetriever`` over a kg-rag index (the thin LangChain layer).

All retrieval logic lives in :mod:`kg_rag.retrieve`; this class binds it to LangChain's retriever protocol:
``invoke``/``ainvoke`` return the top chunks as ``Document``s, per-call overrides go through keyword
arguments (``retriever.invoke(q, k=3, max_hops=2, edge_types=["SUPERSEDES"])``), and :meth:`retrieve`
exposes the full result (formatted context, paths, relations) for answer nodes and agent tools.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field, PrivateAttr

from kg_rag.context import render_edge
from kg_rag.embeddings import _as_matrix, model_id, normalise_rows
from kg_rag.graph import KnowledgeGraph
from kg_rag.index import GraphIndex, build_index
from kg_rag.params import QueryParams, get_preset
from kg_rag.retrieve.engine import MAX_QUERY_CHARS, GraphRetrieverEngine, fold_history, validate_query
from kg_rag.retrieve.types import RetrievalResult

logger = logging.getLogger(__name__)


def _split_kwargs(kwargs: dict[str, Any]) -> tuple[dict[str, Any], Sequence[Any] | None]:
    overrides = dict(kwargs)
    history = overrides.pop("history", None)
    if "k" in overrides:
        overrides["top_k_chunks"] = overrides.pop("k")
    return overrides, history


class EntityBasedKGRAG(BaseRetriever):
    """Knowledge-graph retriever: entity/fact matching, directed expansion, chunk scoring, budgeted context.

    Build it with :meth:`from_index` (a directory written by ``kg-rag index``), :meth:`from_graph`
    (a :class:`KnowledgeGraph` you built in code), or directly from a :class:`GraphIndex`.

    Args:
        index: the graph and its embeddings.
        embeddings: the LangChain ``Embeddings`` the index was built with (used for queries).
        params: every retrieval knob (:class:`QueryParams`); or pass ``preset`` (``default``/``seed003``).
        k: number of chunks returned (LangChain's usual name for ``params.top_k_chunks``).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    index: Any
    """The :class:`GraphIndex` (typed ``Any`` so pydantic does not try to validate numpy internals)."""
    embeddings: Any
    params: QueryParams = Field(default_factory=QueryParams)
    preset: str | None = None
    k: int | None = None

    _engine: GraphRetrieverEngine = PrivateAttr()

    def model_post_init(self, __context: Any) -> None:
        if not isinstance(self.index, GraphIndex):
            raise ValueError(f"index must be a kg_rag GraphIndex, got {type(self.index).__name__}")
        if not isinstance(self.params, QueryParams):
            raise ValueError(f"params must be a QueryParams, got {type(self.params).__name__}")
        params = get_preset(self.preset) if self.preset else self.params
        if self.k is not None:
            params = params.replace(top_k_chunks=self.k)
        self.params = params
        built = model_id(self.embeddings) if hasattr(self.embeddings, "embed_query") else None
        if built and self.index.embedding_model and built != self.index.embedding_model:
            logger.warning("index was embedded with %s but queries use %s", self.index.embedding_model, built)
        self._engine = GraphRetrieverEngine(self.index, self.embeddings, params)

    # ----------------------------------------------------------- constructors
    @classmethod
    def from_index(
        cls, path: str | Path, embeddings: Any | None = None, *, preset: str | None = None, **kwargs: Any
    ) -> EntityBasedKGRAG:
        """Load an index directory. ``embeddings`` defaults to the local MiniLM model (the ``local`` extra)."""
        from kg_rag.storage import load_index

        index = load_index(path)
        if embeddings is None:
            from kg_rag.embeddings import local_embeddings

            embeddings = local_embeddings()
        return cls(index=index, embeddings=embeddings, preset=preset, **kwargs)

    @classmethod
    def from_graph(
        cls, kg: KnowledgeGraph, embeddings: Any, *, type_prefix: bool = True, **kwargs: Any
    ) -> EntityBasedKGRAG:
        """Embed a graph built in code and wrap it. ``type_prefix`` embeds entities as ``name [TYPE] description``."""
        return cls(index=build_index(kg, embeddings, type_prefix=type_prefix), embeddings=embeddings, **kwargs)

    @property
    def engine(self) -> GraphRetrieverEngine:
        return self._engine

    @property
    def knowledge_graph(self) -> KnowledgeGraph:
        return self._engine.index.kg

    # ----------------------------------------------------------- full results
    def retrieve(self, query: str, **kwargs: Any) -> RetrievalResult:
        """Full result for ``query``: chunks, entities, paths, relations and the formatted ``context``.

        Keyword arguments override :class:`QueryParams` fields for this call (``k`` = ``top_k_chunks``);
        ``history`` is a list of previous turns folded into the query.
        """
        overrides, history = _split_kwargs(kwargs)
        return self._engine.retrieve(query, history=history, **overrides)

    async def aretrieve(self, query: str, **kwargs: Any) -> RetrievalResult:
        """Async :meth:`retrieve`: the query is embedded with ``aembed_query`` (native async for remote models)."""
        overrides, history = _split_kwargs(kwargs)
        p = self.params.replace(**overrides)
        text = fold_history(validate_query(query), history, p.history_turns)
        index, cg = self._engine.snapshot()
        try:
            if hasattr(self.embeddings, "aembed_query"):
                raw = await self.embeddings.aembed_query(text[:MAX_QUERY_CHARS])
            else:  # a duck-typed embeddings object without async: run it off the event loop
                raw = await asyncio.to_thread(self.embeddings.embed_query, text[:MAX_QUERY_CHARS])
        except Exception as exc:
            raise ValueError(f"embedding model failed on the query: {type(exc).__name__}: {exc}") from exc
        q = normalise_rows(_as_matrix([raw], 1, model_id(self.embeddings)))
        if index.dim and q.shape[1] != index.dim:
            raise ValueError(f"embedding model returned dimension {q.shape[1]}, the index has {index.dim}")
        return self._engine.retrieve_by_vector(q, text, p, snapshot=(index, cg))

    def format_context(self, query: str, **kwargs: Any) -> str:
        """Just the token-budgeted context string for ``query``."""
        return self.retrieve(query, **kwargs).context

    # ----------------------------------------------------------- BaseRetriever
    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        return self.to_documents(self.retrieve(query, **kwargs), kwargs.get("include_edges"))

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        return self.to_documents(await self.aretrieve(query, **kwargs), kwargs.get("include_edges"))

    def to_documents(self, result: RetrievalResult, include_edges: bool | None = None) -> list[Document]:
        """Chunks as Documents. Metadata: ids, source, scores, matched entities with their similarity, the
        rendered paths that reach the chunk and (``include_edges``) the relations touching it."""
        include = self.params.include_edges if include_edges is None else include_edges
        matched = {e.key: e for e in result.entities}
        docs = []
        for c in result.chunks:
            meta: dict[str, Any] = {
                **c.metadata,
                "chunk_id": c.id,
                "doc_id": c.doc_id,
                "source": c.metadata.get("source", c.doc_id),
                "score": c.score,
                "graph_score": c.graph_score,
                "dense_score": c.dense_score,
                "matched_entities": [
                    {"name": matched[k].name, "similarity": matched[k].similarity} for k in c.entities if k in matched
                ],
                "paths": list(c.paths),
            }
            relation_lines = [
                render_edge(r.source, r.relation_type, r.target) for r in result.relations if c.id in r.chunk_ids
            ]
            meta["graph_context"] = "\n".join(dict.fromkeys([*c.paths, *relation_lines])) or "(no graph paths)"
            if include:
                meta["edges"] = [
                    {
                        "id": r.relation_id,
                        "source": r.source,
                        "target": r.target,
                        "relation_type": r.relation_type,
                        "description": r.description,
                        "evidence": r.evidence,
                    }
                    for r in result.relations
                    if c.id in r.chunk_ids
                ]
            docs.append(Document(page_content=c.text, metadata=meta, id=c.id))
        return docs
