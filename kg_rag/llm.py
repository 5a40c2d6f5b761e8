"""Chat-model configuration: ``ChatOpenAI`` against any OpenAI-compatible server, from the environment."""

from __future__ import annotations

import os
from typing import Any

from kg_rag.errors import ConfigurationError

DEFAULT_CHAT_MODEL = "gpt-4o-mini"


def chat_model_configured() -> bool:
    return bool(os.environ.get("OPENAI_API_KEY"))


def default_chat_model(model: str | None = None, *, timeout: float = 60.0, max_retries: int = 2) -> Any:
    """``ChatOpenAI`` from ``OPENAI_API_KEY``, ``OPENAI_BASE_URL`` (vLLM, Ollama, llama.cpp, ...) and
    ``KG_RAG_CHAT_MODEL`` (or ``model``). Raises :class:`ConfigurationError` when no key is set."""
    if not chat_model_configured():
        raise ConfigurationError(
            "no chat model configured: set OPENAI_API_KEY (and OPENAI_BASE_URL for a local "
            "OpenAI-compatible server, KG_RAG_CHAT_MODEL for the model name)"
        )
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=model or os.environ.get("KG_RAG_CHAT_MODEL", DEFAULT_CHAT_MODEL),
        temperature=0,
        timeout=timeout,
        max_retries=max_retries,
    )
