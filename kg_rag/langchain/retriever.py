"""``EntityBasedKGRAG``: the LangChain ``BaseRetriever`` over a kg-rag index (the thin LangChain layer).

All retrieval logic lives in :mod:`kg_rag.query`, settings resolution included. This class binds it to
LangChain's retriever protocol: ``invoke``/``ainvoke`` return the top chunks as ``Document``s, and
:meth:`retrieve` gives the full :class:`~kg_rag.model.results.RetrievalResult` (context, paths, relations) as a
traced retriever run of its own, for answer nodes and agent tools.

Settings come from one place per call: the retriever's fields (``params`` — ``preset=`` names one —, ``k``), then
the run's ``config["configurable"]``, then keyword arguments — ``retriever.invoke(q, k=3, max_hops=2)``. The
fields are plain pydantic fields: assigning one (``r.k = 3``), ``model_copy(update=...)`` and LangChain's
``configurable_fields`` all change later calls the same way, checked when set.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManager,
    AsyncCallbackManagerForRetrieverRun,
    CallbackManager,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableConfig, ensure_config
from pydantic import ConfigDict, Field, PrivateAttr, model_validator

from kg_rag.errors import InputError
from kg_rag.index.build import GraphIndex, build_index
from kg_rag.index.embeddings import model_id
from kg_rag.langchain.documents import compressor_reranker, to_documents
from kg_rag.model.graph import KnowledgeGraph
from kg_rag.model.results import RetrievalResult
from kg_rag.query.engine import QueryEngine, settings_from
from kg_rag.query.params import SETTING_NAMES, QueryParams, build_params
from kg_rag.store.memory import LiveBackend

logger = logging.getLogger(__name__)

RETRIEVAL_SETTINGS = SETTING_NAMES | {"history", "include_edges"}
"""What a call may set: every :class:`QueryParams` setting by flat name (``k`` = ``top_k_chunks``), ``history``
(earlier turns folded into the query) and ``include_edges``."""


def configured_settings(config: RunnableConfig | None) -> dict[str, Any]:
    """The retrieval settings among ``config["configurable"]``."""
    return settings_from((config or {}).get("configurable"), RETRIEVAL_SETTINGS)


class EntityBasedKGRAG(BaseRetriever):
    """Knowledge-graph retriever: entity/fact matching, directed expansion, chunk scoring, budgeted context.

    Build it with :meth:`from_index` (a directory written by ``kg-rag index``, or a ``postgresql://`` URI),
    :meth:`from_graph` (a :class:`KnowledgeGraph` you built in code), or from a :class:`GraphIndex` (``index=``)
    or any :class:`~kg_rag.store.base.QueryBackend` (``backend=``). ``index``, ``backend`` and ``embeddings`` are
    fixed once built; ``params`` (``preset=`` names one; flat settings such as ``max_hops=1`` or ``filter={...}``
    change it), ``k`` (over ``params.top_k_chunks``) and ``include_edges`` apply to every later call.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, validate_assignment=True)

    index: Any = Field(default=None, frozen=True)
    """An editable graph and its embeddings; edits to its graph are picked up by the next query."""
    backend: Any = Field(default=None, frozen=True)
    embeddings: Any = Field(frozen=True)
    """The LangChain ``Embeddings`` the index was built with (used for queries)."""
    params: QueryParams = Field(default_factory=QueryParams)
    """Every retrieval setting; ``EntityBasedKGRAG(..., preset="seed003")`` builds it from a named preset."""
    k: int | None = Field(default=None, ge=1)
    """Chunks returned (LangChain's name for ``top_k_chunks``); ``None``: the params' own."""
    include_edges: bool = True
    """Attach the relations each Document's chunk states to its metadata (``edges``)."""
    compressor: Any = None
    """A LangChain ``BaseDocumentCompressor`` (a reranker such as ``CrossEncoderReranker``, or a filter) applied to
    the chunk stage: it chooses ``k`` of the ``rerank_depth`` chunks the strategy ranked, reading their text, and
    the relations and paths are then chosen for the chunks it kept."""

    _engine: QueryEngine = PrivateAttr()

    @model_validator(mode="before")
    @classmethod
    def _settings_are_params(cls, data: Any) -> Any:
        """``preset="seed003"`` and flat settings (``max_hops=1``, ``filter={...}``) are ways to give ``params``; an
        unknown argument is an error (it would otherwise be ignored)."""
        extra = [k for k in data if k not in cls.model_fields] if isinstance(data, dict) else []
        if not extra:
            return data
        settings = {k: data[k] for k in extra}
        return {
            **{k: v for k, v in data.items() if k not in settings},
            "params": build_params(data.get("params"), **settings),
        }

    def model_post_init(self, __context: Any) -> None:
        if self.index is not None and not isinstance(self.index, GraphIndex):
            raise InputError(f"index must be a kg_rag GraphIndex, got {type(self.index).__name__}")
        # a copy of a retriever built from an index (configurable_fields) carries both: its backend is the one
        # built for that same graph, not a second source
        derived = isinstance(self.backend, LiveBackend) and self.backend.index.kg is getattr(self.index, "kg", None)
        if (self.index is None) == (self.backend is None) and not derived:
            raise InputError("give exactly one of index= (a GraphIndex) or backend= (a QueryBackend)")
        if self.backend is None:
            assert self.index is not None  # checked above: exactly one of the two
            object.__setattr__(self, "backend", LiveBackend(self.index, self.embeddings))  # frozen: set once
        built = model_id(self.embeddings) if hasattr(self.embeddings, "embed_query") else None
        stored = self.backend.info().embedding_model
        if built and stored and built != stored:
            logger.warning("index was embedded with %s but queries use %s", stored, built)
        self._engine = QueryEngine(self.backend, self.embeddings)

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> EntityBasedKGRAG:
        """A copy with its own settings that shares what it reads (the index, its locks and open files)."""
        return self.model_copy()

    # ----------------------------------------------------------- constructors
    @classmethod
    def from_index(cls, location: str | Path, embeddings: Any | None = None, **kwargs: Any) -> EntityBasedKGRAG:
        """Open an index (a directory or a ``postgresql://`` URI) for queries. ``embeddings`` defaults to the
        model the index records (``local`` MiniLM, ``fake:DIM`` or ``openai:MODEL``)."""
        from kg_rag.store import open_store

        backend = open_store(location).backend()
        if embeddings is None:
            from kg_rag.langchain.embeddings import embeddings_for_index

            embeddings = embeddings_for_index(None, backend.info().embedding_model, str(location))
        return cls(backend=backend, embeddings=embeddings, **kwargs)

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

    # ----------------------------------------------------------- settings
    def params_for(self, config: RunnableConfig | None = None, **settings: Any) -> QueryParams:
        """The :class:`QueryParams` of a call with these settings: the fields, then ``config["configurable"]``,
        then keyword arguments. Raises ``ValueError`` for an unknown or invalid setting, so callers (tools,
        graphs) can check settings before a run."""
        return self._engine_call(config, settings)[0]["params"]

    def _engine_call(self, config: RunnableConfig | None, settings: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """The engine's keyword arguments for a call (settings: the fields, then ``configurable``, then keyword
        arguments), and whether its Documents carry their edges."""
        merged = {**configured_settings(config), **settings}
        history, include = merged.pop("history", None), merged.pop("include_edges", self.include_edges)
        base = self.params if self.k is None else self.params.replace(k=self.k)
        rerank = compressor_reranker(self.compressor)
        return {"history": history, "params": base.replace(**merged), "reranker": rerank}, include

    # ----------------------------------------------------------- full results
    def retrieve(self, query: str, *, config: RunnableConfig | None = None, **settings: Any) -> RetrievalResult:
        """Full result for ``query``: chunks, entities, paths, relations and the formatted ``context``.

        Runs as a LangChain retriever run of its own (callbacks and tracing see it, under ``config``'s
        callbacks, tags and run name), with the settings of :meth:`params_for`."""
        config = ensure_config(config)
        manager = CallbackManager.configure(config.get("callbacks"), None, **self._run_options(config))
        run = manager.on_retriever_start(None, query, name=config.get("run_name") or self.get_name())
        try:
            result, include = self._retrieve(query, config, settings)
        except Exception as exc:
            run.on_retriever_error(exc)
            raise
        run.on_retriever_end(to_documents(result, include))
        return result

    async def aretrieve(self, query: str, *, config: RunnableConfig | None = None, **settings: Any) -> RetrievalResult:
        """Async :meth:`retrieve`: the query is embedded with ``aembed_query``; the graph work runs off the loop."""
        config = ensure_config(config)
        manager = AsyncCallbackManager.configure(config.get("callbacks"), None, **self._run_options(config))
        run = await manager.on_retriever_start(None, query, name=config.get("run_name") or self.get_name())
        try:
            result, include = await self._aretrieve(query, config, settings)
        except Exception as exc:
            await run.on_retriever_error(exc)
            raise
        await run.on_retriever_end(to_documents(result, include))
        return result

    def _run_options(self, config: RunnableConfig) -> dict[str, Any]:
        return {
            "inheritable_tags": config.get("tags"),
            "local_tags": self.tags,
            "inheritable_metadata": config.get("metadata"),
            "local_metadata": self.metadata,
        }

    def _retrieve(self, query: str, config: RunnableConfig | None, settings: dict) -> tuple[RetrievalResult, bool]:
        arguments, include = self._engine_call(config, settings)
        return self._engine.retrieve(query, **arguments), include

    async def _aretrieve(self, query: str, config: RunnableConfig | None, settings: dict) -> tuple[Any, bool]:
        arguments, include = self._engine_call(config, settings)
        return await self._engine.aretrieve(query, **arguments), include

    def format_context(self, query: str, config: RunnableConfig | None = None, **settings: Any) -> str:
        """Just the token-budgeted context string for ``query`` (unfenced). ``config`` applies as for
        :meth:`invoke`, so ``RunnableLambda(retriever.format_context)`` honours ``configurable`` settings."""
        return self.retrieve(query, config=config, **settings).context

    # ----------------------------------------------------------- Runnable / BaseRetriever
    def invoke(self, input: str, config: RunnableConfig | None = None, **kwargs: Any) -> list[Document]:
        """LangChain ``invoke``; settings may come per call as keyword arguments or as
        ``config={"configurable": {"k": 3, "max_hops": 2, ...}}`` (keyword arguments win). Called inside another
        run without a config of its own (``create_retriever_tool``, ``ContextualCompressionRetriever``, a
        ``RunnableLambda``), it reads the enclosing run's ``configurable``."""
        config = ensure_config(config)
        return super().invoke(input, config, **{**configured_settings(config), **kwargs})

    async def ainvoke(self, input: str, config: RunnableConfig | None = None, **kwargs: Any) -> list[Document]:
        config = ensure_config(config)
        return await super().ainvoke(input, config, **{**configured_settings(config), **kwargs})

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **settings: Any
    ) -> list[Document]:
        result, include = self._retrieve(query, None, settings)
        return self._documents(result, include)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **settings: Any
    ) -> list[Document]:
        result, include = await self._aretrieve(query, None, settings)
        return await asyncio.to_thread(self._documents, result, include)

    def _documents(self, result: RetrievalResult, include: bool) -> list[Document]:
        for warning in result.warnings:  # invoke() returns only Documents: the warnings would be lost
            logger.warning("%s", warning)
        return to_documents(result, include)
