"""Graph factories for the LangGraph server (``langgraph.json`` at the repository root; ``langgraph dev``).

The server imports this module and calls :func:`answer_graph` or :func:`global_search_graph` for a run. Both
read the index location from the environment, open it once per process (the retriever is cached, and a
directory index moves to a newer generation on its own ``refresh``), and compile without a checkpointer: the
LangGraph server brings its own persistence (threads, state history).

Both factories are ``async`` and build in a worker thread (``asyncio.to_thread``): opening the index reads
files, and making the default ``local`` embeddings imports ``transformers`` (which reads the working folder), so
building on the server's event loop would stall every other request — and ``langgraph dev`` refuses it with
``BlockingError`` on every run. The LangGraph server awaits a factory that returns a coroutine.

Environment:
- ``KG_RAG_INDEX`` (required): an index directory or a ``postgresql://`` URI.
- ``KG_RAG_EMBEDDINGS``: query embeddings spec (default: the model the index records).
- ``KG_RAG_PRESET``: retrieval preset (default ``default``).
- ``KG_RAG_GLOBAL_LEVEL``: community level global search reads (default 0).
- ``OPENAI_API_KEY``, ``OPENAI_BASE_URL``, ``KG_RAG_CHAT_MODEL``: the chat model (any OpenAI-compatible server).
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


def _chat_model() -> Any:
    from kg_rag.langchain.chat import chat_model_configured, default_chat_model

    if not chat_model_configured():
        raise ConfigurationError("set OPENAI_API_KEY (and OPENAI_BASE_URL, KG_RAG_CHAT_MODEL) for the chat model")
    return default_chat_model(max_retries=2)


async def answer_graph(config: RunnableConfig) -> Any:
    """The retrieve -> answer graph over ``KG_RAG_INDEX`` (input ``{"question": ...}`` or ``{"messages": [...]}``;
    retrieval settings per run in ``config["configurable"]``; the output carries the answer, the documents shown
    and the citations). Built off the event loop (see the module docstring)."""
    return await asyncio.to_thread(make_answer_graph)


async def global_search_graph(config: RunnableConfig) -> Any:
    """Map-reduce global search over the community reports of ``KG_RAG_INDEX`` (input ``{"question": ...}``).
    Built off the event loop (see the module docstring)."""
    return await asyncio.to_thread(make_global_search_graph)


def make_answer_graph() -> Any:
    """:func:`answer_graph`, synchronously (blocking: opens the index and makes the embeddings the first time)."""
    from kg_rag.langchain.answer import build_answer_graph

    retriever = retriever_from_env()
    return _cached(("answer", *_settings()), lambda: build_answer_graph(retriever, _chat_model()))


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
