"""``EntityBasedKGRAG``: the LangChain ``BaseRetriever`` over a kg-rag index (the thin LangChain layer).

All retrieval logic lives in :mod:`kg_rag.query`; this class binds it to LangChain's retriever protocol:
``invoke``/``ainvoke`` return the top chunks as ``Document``s, per-call overrides go through keyword
arguments (``retriever.invoke(q, k=3, max_hops=2, edge_types=["SUPERSEDES"])``), and :meth:`retrieve`
exposes the full result (formatted context, paths, relations) for answer nodes and agent tools.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableConfig
from pydantic import ConfigDict, Field, PrivateAttr

from kg_rag.context import format_context, render_edge, render_path
from kg_rag.index.build import GraphIndex, build_index
from kg_rag.index.embeddings import model_id
from kg_rag.model.graph import KnowledgeGraph
from kg_rag.query.engine import QueryEngine
from kg_rag.query.params import QueryParams, get_preset
from kg_rag.query.types import RetrievalResult
from kg_rag.store.memory import LiveBackend

logger = logging.getLogger(__name__)


_SINK = "_kg_rag_result_sink"
"""Private keyword through which :meth:`EntityBasedKGRAG.retrieve` receives the full result of a traced run."""
RETRIEVAL_SETTINGS = frozenset({f.name for f in fields(QueryParams)} | {"k", "history", "include_edges"})
"""What a call may set: every :class:`QueryParams` field, ``k`` (= ``top_k_chunks``), ``history`` and
``include_edges``."""


def configured_settings(config: RunnableConfig | None) -> dict[str, Any]:
    """Retrieval settings from ``config["configurable"]`` (keys that are not retrieval settings belong to
    other runnables, e.g. a checkpointer's ``thread_id``, and are left alone)."""
    configurable = (config or {}).get("configurable") or {}
    # k=None (what configurable_fields(k=...) passes when it is not set) means the retriever's own k
    return {k: v for k, v in configurable.items() if k in RETRIEVAL_SETTINGS and not (k == "k" and v is None)}


def _split_kwargs(kwargs: dict[str, Any]) -> tuple[dict[str, Any], Sequence[Any] | None]:
    overrides = dict(kwargs)
    history = overrides.pop("history", None)
    if "k" in overrides:
        overrides["top_k_chunks"] = overrides.pop("k")
    return overrides, history


def _with_k(params: QueryParams, k: Any) -> QueryParams:
    """``params`` with LangChain's ``k`` as ``top_k_chunks`` (``None``: as they are)."""
    return params if k is None else params.replace(top_k_chunks=k)


class EntityBasedKGRAG(BaseRetriever):
    """Knowledge-graph retriever: entity/fact matching, directed expansion, chunk scoring, budgeted context.

    Build it with :meth:`from_index` (a directory written by ``kg-rag index``, or a ``postgresql://`` URI),
    :meth:`from_graph` (a :class:`KnowledgeGraph` you built in code), or from a :class:`GraphIndex` (``index=``)
    or any :class:`~kg_rag.store.base.QueryBackend` (``backend=``).

    Args:
        index: an editable graph and its embeddings; edits to its graph are picked up by the next query.
        backend: a query backend (what :meth:`from_index` opens).
        embeddings: the LangChain ``Embeddings`` the index was built with (used for queries).
        params: every retrieval knob (:class:`QueryParams`); or pass ``preset`` (``default``/``seed003``), which
            is folded into ``params`` when the retriever is built (``preset`` then reads ``None``).
        k: number of chunks returned (LangChain's usual name for ``params.top_k_chunks``).

    Assigning ``k``, ``params`` or ``preset`` on a built retriever changes the settings of later calls
    (``r.k = 3``; ``r.k = None`` undoes it); per call, pass keyword arguments or
    ``config={"configurable": {...}}``. ``index``, ``backend`` and ``embeddings`` are fixed once built.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    index: Any = None
    backend: Any = None
    embeddings: Any
    params: QueryParams = Field(default_factory=QueryParams)
    preset: str | None = None
    k: int | None = None

    _engine: QueryEngine = PrivateAttr()
    _base: QueryParams = PrivateAttr()
    """The params before ``k`` (so that ``r.k = None`` can undo it)."""

    def model_post_init(self, __context: Any) -> None:
        if not isinstance(self.params, QueryParams):
            raise ValueError(f"params must be a QueryParams, got {type(self.params).__name__}")
        if self.index is not None and not isinstance(self.index, GraphIndex):
            raise ValueError(f"index must be a kg_rag GraphIndex, got {type(self.index).__name__}")
        # a copy of a retriever built from an index (``configurable_fields``, ``model_copy``) carries both: its
        # backend is the one built here for that same graph (refreshed after edits), not a second source
        derived = isinstance(self.backend, LiveBackend) and self.backend.index.kg is getattr(self.index, "kg", None)
        if (self.index is None) == (self.backend is None) and not derived:
            raise ValueError("give exactly one of index= (a GraphIndex) or backend= (a QueryBackend)")
        base = get_preset(self.preset) if self.preset else self.params
        params = _with_k(base, self.k)
        object.__setattr__(self, "params", params)  # not through __setattr__: the engine is built below
        # the preset is folded into params: a copy built from these fields (configurable_fields) must not apply
        # it again over params it was given
        object.__setattr__(self, "preset", None)
        self._base = base
        if self.index is not None and not derived:  # a copy shares its original's backend (and its snapshot)
            self.backend = LiveBackend(self.index, self.embeddings)
        built = model_id(self.embeddings) if hasattr(self.embeddings, "embed_query") else None
        stored = self.backend.info().embedding_model
        if built and stored and built != stored:
            logger.warning("index was embedded with %s but queries use %s", stored, built)
        self._engine = QueryEngine(self.backend, self.embeddings, params)

    def __setattr__(self, name: str, value: Any) -> None:
        """``r.k = 3``, ``r.params = ...`` and ``r.preset = ...`` reach the engine, as a user of a LangChain
        retriever expects (``r.k = None`` undoes ``k``); a bad value raises and leaves the retriever as it was.
        What it reads from (``index``, ``backend``, ``embeddings``) is fixed: build a new retriever."""
        if not hasattr(self, "_engine"):  # still being built
            super().__setattr__(name, value)
            return
        if name in ("index", "backend", "embeddings"):
            raise ValueError(f"{name} is fixed when the retriever is built; build a new EntityBasedKGRAG")
        if name not in ("k", "params", "preset"):
            super().__setattr__(name, value)
            return
        if name == "params":  # the new params are the whole story: an earlier k no longer applies
            if not isinstance(value, QueryParams):
                raise ValueError(f"params must be a QueryParams, got {type(value).__name__}")
            base, k = value, None
        elif name == "preset":
            base, k = (get_preset(value) if value else self._base), self.k
        else:
            base, k = self._base, value
        params = _with_k(base, k)
        engine = copy.copy(self._engine)  # a model_copy shares the engine object: never change the original's
        engine.params = params
        self._engine = engine
        super().__setattr__("params", params)
        super().__setattr__("k", k)
        self._base = base

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> EntityBasedKGRAG:
        """A copy; ``update`` may change settings (``k``, ``params``, ``preset``) as assignment does."""
        update = dict(update or {})
        settings = {name: update.pop(name) for name in ("params", "preset", "k") if name in update}  # k last
        fixed = sorted(set(update) & {"index", "backend", "embeddings"})
        if fixed:
            raise ValueError(f"{', '.join(fixed)} is fixed when the retriever is built; build a new EntityBasedKGRAG")
        twin = super().model_copy(update=update or None, deep=deep)
        for name, value in settings.items():
            setattr(twin, name, value)
        return twin

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> EntityBasedKGRAG:
        """A copy with its own settings that shares the index it reads (its locks and open files cannot be
        copied; a half-made copy used to release the original's reader lock)."""
        return self.model_copy()

    # ----------------------------------------------------------- constructors
    @classmethod
    def from_index(
        cls, location: str | Path, embeddings: Any | None = None, *, preset: str | None = None, **kwargs: Any
    ) -> EntityBasedKGRAG:
        """Open an index (a directory or a ``postgresql://`` URI) for queries. ``embeddings`` defaults to the
        model the index records (``local`` MiniLM, ``fake:DIM`` or ``openai:MODEL``)."""
        from kg_rag.store import open_store

        backend = open_store(location).backend()
        if embeddings is None:
            from kg_rag.langchain.embeddings import embeddings_for_index

            embeddings = embeddings_for_index(None, backend.info().embedding_model, str(location))
        return cls(backend=backend, embeddings=embeddings, preset=preset, **kwargs)

    @classmethod
    def from_graph(
        cls, kg: KnowledgeGraph, embeddings: Any, *, type_prefix: bool = True, **kwargs: Any
    ) -> EntityBasedKGRAG:
        """Embed a graph built in code and wrap it. ``type_prefix`` embeds entities as ``name [TYPE] description``."""
        return cls(index=build_index(kg, embeddings, type_prefix=type_prefix), embeddings=embeddings, **kwargs)

    @property
    def engine(self) -> QueryEngine:
        return self._engine

    @property
    def knowledge_graph(self) -> KnowledgeGraph:
        """The editable graph behind this retriever (for a saved index: the generation it serves)."""
        return self.backend.knowledge_graph()

    def refresh(self) -> bool:
        """Move to the newest version of a saved index (no-op for in-memory graphs, which are always current)."""
        return bool(self.backend.refresh())

    def params_for(self, config: RunnableConfig | None = None, **settings: Any) -> QueryParams:
        """The :class:`QueryParams` a call with these settings would use: ``config["configurable"]`` entries,
        then keyword arguments (``k`` = ``top_k_chunks``; ``history`` and ``include_edges`` are not params).
        Raises ``ValueError`` for an unknown or invalid setting, so callers (tools, graphs) can check settings
        before a run."""
        merged = {**configured_settings(config), **settings}
        unknown = sorted(set(merged) - RETRIEVAL_SETTINGS)
        if unknown:
            raise ValueError(f"unknown retrieval setting(s): {', '.join(map(repr, unknown))} (see QueryParams)")
        overrides, _ = _split_kwargs({k: v for k, v in merged.items() if k != "include_edges"})
        return self.params.replace(**overrides)

    # ----------------------------------------------------------- full results
    def retrieve(self, query: str, *, config: RunnableConfig | None = None, **kwargs: Any) -> RetrievalResult:
        """Full result for ``query``: chunks, entities, paths, relations and the formatted ``context``.

        Runs as a LangChain retriever run (callbacks and tracing see it, under ``config``'s callbacks, tags and
        run name). Keyword arguments, and ``config["configurable"]`` entries named like them, override
        :class:`QueryParams` fields for this call (``k`` = ``top_k_chunks``); ``history`` is a list of previous
        turns folded into the query.
        """
        sink: list[RetrievalResult] = []
        self.invoke(query, config, **{_SINK: sink}, **kwargs)
        return sink[0]

    async def aretrieve(self, query: str, *, config: RunnableConfig | None = None, **kwargs: Any) -> RetrievalResult:
        """Async :meth:`retrieve`: the query is embedded with ``aembed_query``; the graph work runs off the loop."""
        sink: list[RetrievalResult] = []
        await self.ainvoke(query, config, **{_SINK: sink}, **kwargs)
        return sink[0]

    def _with_context(self, result: RetrievalResult, overrides: dict[str, Any]) -> RetrievalResult:
        formatted = format_context(result, self.params.replace(**overrides))
        result.context, result.section_tokens, result.formatted = formatted.text, formatted.section_tokens, formatted
        return result

    def format_context(self, query: str, **kwargs: Any) -> str:
        """Just the token-budgeted context string for ``query``."""
        return self.retrieve(query, **kwargs).context

    # ----------------------------------------------------------- Runnable
    def invoke(self, input: str, config: RunnableConfig | None = None, **kwargs: Any) -> list[Document]:
        """LangChain ``invoke``; retrieval settings may come per call as keyword arguments or as
        ``config={"configurable": {"k": 3, "max_hops": 2, ...}}`` (keyword arguments win)."""
        return super().invoke(input, config, **{**configured_settings(config), **kwargs})

    async def ainvoke(self, input: str, config: RunnableConfig | None = None, **kwargs: Any) -> list[Document]:
        return await super().ainvoke(input, config, **{**configured_settings(config), **kwargs})

    # ----------------------------------------------------------- BaseRetriever
    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        sink = kwargs.pop(_SINK, None)
        include = kwargs.pop("include_edges", None)
        overrides, history = _split_kwargs(kwargs)
        result = self._engine.retrieve(query, history=history, **overrides)
        return self._finish(result, overrides, include, sink)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        sink = kwargs.pop(_SINK, None)
        include = kwargs.pop("include_edges", None)
        overrides, history = _split_kwargs(kwargs)
        result = await self._engine.aretrieve(query, history=history, **overrides)
        if sink is not None:  # formatting counts tokens (tiktoken): off the loop too, like the graph work
            sink.append(await asyncio.to_thread(self._with_context, result, overrides))
            return self.to_documents(result, include)
        return self._finish(result, overrides, include, sink)

    def _finish(self, result: RetrievalResult, overrides: dict, include: bool | None, sink: Any) -> list[Document]:
        if sink is not None:  # retrieve(): the caller wants the whole result, context formatted
            sink.append(self._with_context(result, overrides))
        else:  # invoke() returns only Documents: the warnings ("no relation type named ...") would be lost
            for warning in result.warnings:
                logger.warning("%s", warning)
        return self.to_documents(result, include)

    def to_documents(self, result: RetrievalResult, include_edges: bool | None = None) -> list[Document]:
        """Chunks as Documents. Metadata: ids, source, scores, matched entities with their similarity, the
        rendered paths that reach the chunk and (``include_edges``) the relations touching it."""
        include = self.params.include_edges if include_edges is None else include_edges
        matched = {e.key: e for e in result.entities}
        steps_of = {render_path(result.names, pa): {s.relation_id for s in pa.steps} for pa in result.paths}
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
            on_paths = {rid for text in c.paths for rid in steps_of.get(text, ())}  # a path already shows them
            relation_lines = [
                render_edge(r.source, r.relation_type, r.target)
                for r in result.relations
                if c.id in r.chunk_ids and r.relation_id not in on_paths
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
