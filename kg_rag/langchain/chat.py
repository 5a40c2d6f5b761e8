"""Chat-model configuration: any LangChain chat model, named by one string.

``KG_RAG_CHAT_MODEL`` (or a command's ``--chat-model``) names the model, in one of three forms:

- ``provider:model`` — a provider of LangChain's ``init_chat_model`` (``openai:gpt-4o-mini``, ``ollama:qwen2.5``,
  ``anthropic:claude-sonnet-4-5``, ``mistralai:...``); the provider's own package and variables apply
  (``langchain-ollama`` and ``OLLAMA_HOST``, ``langchain-anthropic`` and ``ANTHROPIC_API_KEY``, ...).
- ``module:attr`` — a chat model, its class, or a zero-argument factory importable from your code.
- a bare name (``gpt-4o-mini``, ``Qwen/Qwen2.5-7B-Instruct``) — a model of the OpenAI-compatible server that
  ``OPENAI_BASE_URL`` names (OpenAI itself when unset; ``OPENAI_API_KEY`` is required, any value for a local
  server), as before.

Nothing here imports LangChain until a model is made, so commands can ask :func:`chat_model_configured` for free.
Models without native structured output get a JSON fallback (:func:`structured_output`); an error of a chat call
names the model, its provider and the URL it tried (:func:`describe_chat_model`); both are in
:mod:`kg_rag.chat_calls`, below the extractors that call them.
"""

from __future__ import annotations

import importlib
import math
import os
import re
from dataclasses import dataclass
from importlib.util import find_spec
from typing import Any

from kg_rag.chat_calls import _first_line
from kg_rag.errors import ConfigurationError

DEFAULT_CHAT_MODEL = "gpt-4o-mini"
CHAT_MODEL_ENV = "KG_RAG_CHAT_MODEL"
DEFAULT_TIMEOUT = 60.0
"""Seconds one chat call may take (``KG_RAG_LLM_TIMEOUT`` overrides it)."""

PROVIDERS = frozenset(
    """anthropic anthropic_bedrock azure_ai azure_openai baseten bedrock bedrock_converse cohere deepseek fireworks
    google_anthropic_vertex google_genai google_vertexai groq huggingface ibm litellm meta mistralai nvidia ollama
    openai openrouter perplexity together upstage xai""".split()
)
"""The providers of LangChain's ``init_chat_model`` (a test checks each is one LangChain knows)."""
_TIMEOUT_KWARGS = frozenset("openai azure_openai anthropic groq mistralai deepseek xai fireworks together".split())
"""Providers whose chat model takes ``timeout`` and ``max_retries``; Ollama takes the timeout in ``client_kwargs``."""
_DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")

NO_CHAT_MODEL = (
    "no chat model configured: set KG_RAG_CHAT_MODEL to a provider:model (ollama:qwen2.5, anthropic:...) or "
    "module:attr, or OPENAI_API_KEY for OpenAI (with OPENAI_BASE_URL for a local OpenAI-compatible server)"
)


@dataclass(frozen=True)
class ChatModelSpec:
    """A parsed chat-model string: ``provider`` (``openai``, ``ollama``, ... or ``module``) and ``model`` (the
    model's name, or ``module:attr``)."""

    provider: str
    model: str
    text: str

    @property
    def openai_compatible(self) -> bool:
        return self.provider == "openai"


def chat_model_spec(model: str | None = None) -> ChatModelSpec:
    """``model``, else ``KG_RAG_CHAT_MODEL``, else ``gpt-4o-mini``, parsed (see the module docstring)."""
    text = (model if model is not None else os.environ.get(CHAT_MODEL_ENV, "")).strip() or DEFAULT_CHAT_MODEL
    prefix, sep, rest = text.partition(":")
    if sep and prefix in PROVIDERS:
        if not rest.strip():
            raise ConfigurationError(f"chat model {text!r} names the provider {prefix} but no model ({prefix}:NAME)")
        return ChatModelSpec(prefix, rest.strip(), text)
    if sep and _DOTTED.match(prefix) and _DOTTED.match(rest):
        return ChatModelSpec("module", text, text)
    return ChatModelSpec("openai", text, text)


def chat_model_configured(model: str | None = None) -> bool:
    """Whether a chat model is named: an OpenAI-compatible one needs ``OPENAI_API_KEY``; another provider's or
    your own model is configured by naming it (its own keys are checked when it is made)."""
    spec = chat_model_spec(model)
    return bool(os.environ.get("OPENAI_API_KEY")) if spec.openai_compatible else True


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
    """The chat model ``model`` (else ``KG_RAG_CHAT_MODEL``) names, at temperature 0: ``ChatOpenAI`` for a bare
    name (from ``OPENAI_API_KEY`` and ``OPENAI_BASE_URL``: vLLM, llama.cpp, Ollama's ``/v1``, ...), LangChain's
    ``init_chat_model`` for ``provider:model``, your object for ``module:attr``. Raises
    :class:`ConfigurationError` (one line naming the model and provider) when it cannot be made.

    ``timeout`` bounds each call (default :func:`llm_timeout`). ``max_retries`` is 0 because kg-rag's
    extractor has its own retry layer with backoff; stacking the client's retries on it multiplied the time
    a hanging call could take (9 attempts x 60 s).
    """
    seconds = llm_timeout(timeout)
    spec = chat_model_spec(model)
    if spec.provider == "module":
        return _imported_chat_model(spec.model)
    if spec.openai_compatible and not os.environ.get("OPENAI_API_KEY"):
        raise ConfigurationError(f"chat model {spec.text}: {NO_CHAT_MODEL}")
    if spec.openai_compatible and spec.model == spec.text:  # a bare name: as before, without init_chat_model
        from langchain_openai import ChatOpenAI

        return ChatOpenAI(model=spec.model, temperature=0, timeout=seconds, max_retries=max_retries)
    kwargs: dict[str, Any] = {"temperature": 0}
    if spec.provider in _TIMEOUT_KWARGS:
        kwargs.update(timeout=seconds, max_retries=max_retries)
    elif spec.provider == "ollama":
        kwargs["client_kwargs"] = {"timeout": seconds}
    package = _provider_package(spec.provider)
    if find_spec(package) is None:
        raise ConfigurationError(
            f"chat model {spec.text}: the {spec.provider} provider needs the {package.replace('_', '-')} package "
            f"(pip install {package.replace('_', '-')})"
        )
    try:
        from langchain.chat_models import init_chat_model

        return init_chat_model(spec.model, model_provider=spec.provider, **kwargs)
    except Exception as exc:  # noqa: BLE001 - the provider's own validation (a missing key, a bad option)
        raise ConfigurationError(f"chat model {spec.text} ({spec.provider}): {_first_line(exc)}") from exc


def _provider_package(provider: str) -> str:
    """The package that holds a provider's chat model (``langchain_ollama`` for ``ollama``), as LangChain maps it."""
    try:
        from langchain.chat_models.base import _BUILTIN_PROVIDERS  # provider -> (module, class, ...)

        return str(_BUILTIN_PROVIDERS[provider][0]).split(".")[0]
    except (ImportError, KeyError, TypeError, IndexError):  # another LangChain release: its usual name
        return "langchain_" + provider


def _imported_chat_model(text: str) -> Any:
    module, _, attr = text.partition(":")
    try:
        obj: Any = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigurationError(
            f"cannot import chat model {text!r} ({_first_line(exc)}); a model of an OpenAI-compatible server is "
            f"written openai:{text}"
        ) from exc
    if isinstance(obj, type) or (callable(obj) and not hasattr(obj, "invoke")):
        try:
            obj = obj()  # a class or zero-argument factory
        except Exception as exc:  # noqa: BLE001 - any failure of user code is a configuration error
            raise ConfigurationError(f"chat model {text!r}: {type(exc).__name__}: {_first_line(exc)}") from exc
    if not hasattr(obj, "invoke"):
        raise ConfigurationError(f"{text!r} is not a LangChain chat model (it has no invoke())")
    return obj
