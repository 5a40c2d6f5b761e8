"""Graph factories for the LangGraph server (``langgraph.json`` at the repository root; ``langgraph dev``).

The server imports this module and calls :func:`retrieval_graph`, :func:`answer_graph` or
:func:`global_search_graph` for a run. The retrieval graph needs no chat model (question in; context, paths and
sources out), and the answer graph without one returns the context and says why, so ``langgraph dev`` can be
tried with no key; global search needs a model. They read the index location from the environment, open it
once per process (the retriever is cached, and a directory index moves to a newer generation on its own
``refresh``), and compile without a checkpointer: the LangGraph server brings its own persistence (threads, state
history).

The factories are ``async`` and build in a worker thread (``asyncio.to_thread``): opening the index reads
files and making the embeddings may import a library or read a model, so building on the server's event loop
would stall every other request — and ``langgraph dev`` refuses it with ``BlockingError`` on every run. The
LangGraph server awaits a factory that returns a coroutine.

Environment:
- ``KG_RAG_INDEX`` (required): an index directory or a ``postgresql://`` URI.
- ``KG_RAG_EMBEDDINGS``: query embeddings spec (default: the model the index records).
- ``KG_RAG_PRESET``: retrieval preset (default ``default``).
- ``KG_RAG_GLOBAL_LEVEL``: community level global search reads (default 0).
- ``KG_RAG_CHAT_MODEL`` (``provider:model``, ``module:attr`` or a model name), ``OPENAI_API_KEY``,
  ``OPENAI_BASE_URL``: the chat model (:mod:`kg_rag.langchain.chat`).
"""

from __future__ import annotations

import asyncio
import os
import threading
from typing import Any

from langchain_core.runnables import RunnableConfig

from kg_rag.errors import ConfigurationError

INDEX_ENV = "KG_RAG_INDEX"
EMBEDDINGS_ENV = "KG_RAG_EMBEDDINGS"
PRESET_ENV = "KG_RAG_PRESET"
LEVEL_ENV = "KG_RAG_GLOBAL_LEVEL"

_lock = threading.Lock()
_cache: dict[tuple[str, ...], Any] = {}


def _settings() -> tuple[str, str, str]:
    location = os.environ.get(INDEX_ENV, "").strip()
    if not location:
        raise ConfigurationError(f"set {INDEX_ENV} to an index directory or a postgresql:// URI")
    return location, os.environ.get(EMBEDDINGS_ENV, "").strip(), os.environ.get(PRESET_ENV, "").strip()


def _cached(key: tuple[str, ...], make: Any) -> Any:
    with _lock:
        if key not in _cache:
            _cache[key] = make()
        return _cache[key]


def retriever_from_env() -> Any:
    """The :class:`~kg_rag.langchain.retriever.EntityBasedKGRAG` the environment names (one per process)."""
    location, spec, preset = _settings()

    def make() -> Any:
        from kg_rag.langchain.embeddings import make_embeddings
        from kg_rag.langchain.retriever import EntityBasedKGRAG

        embeddings = make_embeddings(spec) if spec else None
        return EntityBasedKGRAG.from_index(location, embeddings, preset=preset or None)

    retriever = _cached(("retriever", location, spec, preset), make)
    retriever.refresh()  # cheap when nothing changed; a served directory index follows new generations
    return retriever


def _chat_model(required: bool = True) -> Any:
    """The chat model the environment names; ``None`` when there is none and it is not ``required``."""
    from kg_rag.langchain.chat import NO_CHAT_MODEL, chat_model_configured, default_chat_model

    if not chat_model_configured():
        if required:
            raise ConfigurationError(NO_CHAT_MODEL)
        return None
    return default_chat_model(max_retries=2)


async def retrieval_graph(config: RunnableConfig) -> Any:
    """Retrieval alone over ``KG_RAG_INDEX``, no chat model (input ``{"question": ...}``, optionally ``history``;
    output ``context``, ``paths`` and ``sources``; settings per run in ``config["configurable"]``). Built off
    the event loop (see the module docstring)."""
    return await asyncio.to_thread(make_retrieval_graph)


async def answer_graph(config: RunnableConfig) -> Any:
    """The retrieve -> answer graph over ``KG_RAG_INDEX`` (input ``{"question": ...}`` or ``{"messages": [...]}``;
    retrieval settings per run in ``config["configurable"]``; the output carries the answer, the documents shown
    and the citations — or, with no chat model configured, the context and ``no_answer`` saying why). Built off
    the event loop (see the module docstring)."""
    return await asyncio.to_thread(make_answer_graph)


async def global_search_graph(config: RunnableConfig) -> Any:
    """Map-reduce global search over the community reports of ``KG_RAG_INDEX`` (input ``{"question": ...}``).
    Built off the event loop (see the module docstring)."""
    return await asyncio.to_thread(make_global_search_graph)


def make_retrieval_graph() -> Any:
    """:func:`retrieval_graph`, synchronously (blocking: opens the index and makes the embeddings the first time)."""
    from kg_rag.langchain.retrieval import build_retrieval_graph

    retriever = retriever_from_env()
    return _cached(("retrieve", *_settings()), lambda: build_retrieval_graph(retriever))


def make_answer_graph() -> Any:
    """:func:`answer_graph`, synchronously (blocking: opens the index and makes the embeddings the first time)."""
    from kg_rag.langchain.answer import build_answer_graph
    from kg_rag.langchain.chat import NO_CHAT_MODEL

    retriever = retriever_from_env()
    return _cached(
        ("answer", *_settings()),
        lambda: build_answer_graph(retriever, _chat_model(required=False), no_model_reason=NO_CHAT_MODEL),
    )


def make_global_search_graph() -> Any:
    """:func:`global_search_graph`, synchronously (blocking, as :func:`make_answer_graph`)."""
    from kg_rag.langchain.communities import build_global_search

    retriever = retriever_from_env()
    raw = os.environ.get(LEVEL_ENV, "0").strip() or "0"
    if not raw.isdigit():
        raise ConfigurationError(f"{LEVEL_ENV} must be a community level (0, 1, ...), got {raw!r}")
    level = int(raw)
    return _cached(
        ("global", *_settings(), str(level)),
        lambda: build_global_search(retriever.backend, _chat_model(), level=level),
    )
