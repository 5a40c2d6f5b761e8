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
names the model, its provider and the URL it tried (:func:`describe_chat_model`).
"""

from __future__ import annotations

import importlib
import json
import math
import os
import re
from dataclasses import dataclass
from importlib.util import find_spec
from typing import Any

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


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def describe_chat_model(llm: Any) -> str:
    """``provider:model at URL`` for a chat model, as far as it says (LangChain's tracing parameters give the
    provider and model; the URL is the client's base URL or the provider's default) — what an error of a chat
    call should name, so a user sees which server was down."""
    provider = model = None
    try:
        params = llm._get_ls_params()
        provider, model = params.get("ls_provider"), params.get("ls_model_name")
    except Exception:  # noqa: BLE001 - any model, even one without LangSmith parameters, can be described
        pass
    provider = provider or type(llm).__name__
    model = model or getattr(llm, "model_name", None) or getattr(llm, "model", None)
    label = f"{provider}:{model}" if model else str(provider)
    url = chat_model_url(llm)
    return f"{label} at {url}" if url else label


def chat_model_url(llm: Any) -> str | None:
    """The URL a chat model sends its requests to, when it says (``None`` for an in-process model)."""
    for attr in ("openai_api_base", "base_url", "anthropic_api_url", "azure_endpoint", "endpoint_url", "api_base"):
        value = getattr(llm, attr, None)
        if isinstance(value, str) and value:
            return value
    for attr in ("root_client", "client", "_client"):
        base = getattr(getattr(llm, attr, None), "base_url", None)
        if base:
            return str(base)
    if type(llm).__name__ == "ChatOllama":
        return os.environ.get("OLLAMA_HOST") or "http://localhost:11434"  # the ollama client's own default
    return None


def chat_failure(llm: Any, exc: BaseException) -> str:
    """One line for a failed chat call: the model, its provider and URL, and the error."""
    return f"chat model {describe_chat_model(llm)} failed: {type(exc).__name__}: {_first_line(exc)}"


def structured_output(llm: Any, schema: Any, *, include_raw: bool = False, **kwargs: Any) -> Any:
    """``llm.with_structured_output(schema, include_raw=...)``, or, for a model that has none (no tool calling,
    no JSON mode), a JSON fallback with the same output: the messages get one more asking for a JSON object of
    ``schema``'s JSON schema, and the reply's first JSON object is validated against ``schema`` (a pydantic
    model). With ``include_raw`` either gives ``{"raw", "parsed", "parsing_error"}``."""
    try:
        return llm.with_structured_output(schema, include_raw=include_raw, **kwargs)
    except NotImplementedError:
        return json_output(llm, schema, include_raw=include_raw)


def json_output(llm: Any, schema: Any, *, include_raw: bool = False) -> Any:
    """The JSON fallback of :func:`structured_output` (a Runnable, sync and async)."""
    from langchain_core.messages import HumanMessage, convert_to_messages
    from langchain_core.prompt_values import PromptValue
    from langchain_core.runnables import RunnableLambda

    instruction = HumanMessage(
        content="Reply with one JSON object and nothing else, matching this JSON schema:\n"
        + json.dumps(schema.model_json_schema(), ensure_ascii=False)
    )

    def messages(value: Any) -> list[Any]:
        if isinstance(value, PromptValue):
            value = value.to_messages()
        elif isinstance(value, str):
            value = [HumanMessage(content=value)]
        return [*convert_to_messages(value), instruction]

    def result(raw: Any) -> Any:
        try:
            parsed, error = schema.model_validate(_json_object(_text(raw))), None
        except Exception as exc:  # noqa: BLE001 - a reply that is not the object asked for
            if not include_raw:
                raise ValueError(f"the chat model's reply is not a JSON {schema.__name__}: {_first_line(exc)}") from exc
            parsed, error = None, exc
        return {"raw": raw, "parsed": parsed, "parsing_error": error} if include_raw else parsed

    def run(value: Any, config: Any = None) -> Any:
        return result(llm.invoke(messages(value), config))

    async def arun(value: Any, config: Any = None) -> Any:
        return result(await llm.ainvoke(messages(value), config))

    return RunnableLambda(run, afunc=arun, name=f"{schema.__name__} as JSON")


def _text(message: Any) -> str:
    content = getattr(message, "content", message)
    if isinstance(content, list):
        return "".join(
            b if isinstance(b, str) else str(b.get("text", "")) for b in content if isinstance(b, (str, dict))
        )
    return str(content or "")


def _json_object(text: str) -> Any:
    """The first JSON object in ``text`` (a reply may wrap it in a code fence or a sentence)."""
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            return decoder.raw_decode(text, match.start())[0]
        except json.JSONDecodeError:
            continue
    raise ValueError("no JSON object in the reply")
