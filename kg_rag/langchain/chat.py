"""Chat-model configuration: ``ChatOpenAI`` against any OpenAI-compatible server, from the environment."""

from __future__ import annotations

import math
import os
from typing import Any

from kg_rag.errors import ConfigurationError

DEFAULT_CHAT_MODEL = "gpt-4o-mini"
DEFAULT_TIMEOUT = 60.0
"""Seconds one chat call may take (``KG_RAG_LLM_TIMEOUT`` overrides it)."""


def chat_model_configured() -> bool:
    return bool(os.environ.get("OPENAI_API_KEY"))


def llm_timeout(value: float | str | None = None) -> float:
    """The per-call timeout: ``value``, else ``KG_RAG_LLM_TIMEOUT``, else 60 s (a positive finite number)."""
    raw = value if value is not None else os.environ.get("KG_RAG_LLM_TIMEOUT")
    if raw is None or raw == "":
        return DEFAULT_TIMEOUT
    try:
        seconds = float(raw)
    except (TypeError, ValueError):
        raise ConfigurationError(f"LLM timeout must be a number of seconds, got {raw!r}") from None
    if not math.isfinite(seconds) or seconds <= 0:
        raise ConfigurationError(f"LLM timeout must be a positive number of seconds, got {raw!r}")
    return seconds


def default_chat_model(model: str | None = None, *, timeout: float | None = None, max_retries: int = 0) -> Any:
    """``ChatOpenAI`` from ``OPENAI_API_KEY``, ``OPENAI_BASE_URL`` (vLLM, Ollama, llama.cpp, ...) and
    ``KG_RAG_CHAT_MODEL`` (or ``model``). Raises :class:`ConfigurationError` when no key is set.

    ``timeout`` bounds each call (default :func:`llm_timeout`). ``max_retries`` is 0 because kg-rag's
    extractor has its own retry layer with backoff; stacking the client's retries on it multiplied the time
    a hanging call could take (9 attempts x 60 s).
    """
    seconds = llm_timeout(timeout)
    if not chat_model_configured():
        raise ConfigurationError(
            "no chat model configured: set OPENAI_API_KEY (and OPENAI_BASE_URL for a local "
            "OpenAI-compatible server, KG_RAG_CHAT_MODEL for the model name)"
        )
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=model or os.environ.get("KG_RAG_CHAT_MODEL", DEFAULT_CHAT_MODEL),
        temperature=0,
        timeout=seconds,
        max_retries=max_retries,
    )
