"""Calling any LangChain chat model: structured output with a JSON fallback for models without it
(:func:`structured_output`), and one line naming a model, its provider and URL when a call fails
(:func:`describe_chat_model`). No LangChain import until a fallback is made, so the extractors (``ingest``) and
the LangChain bindings (``langchain``) both use it from below."""

from __future__ import annotations

import json
import os
import re
from typing import Any

from kg_rag.errors import InputError


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
                raise InputError(f"the chat model's reply is not a JSON {schema.__name__}: {_first_line(exc)}") from exc
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
    raise InputError("no JSON object in the reply")
