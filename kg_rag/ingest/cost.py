"""What an extraction run will cost, before it runs: chunks, chat calls and tokens, with no call to the model.

* **Calls**: one per chunk, plus one per chunk for each gleaning pass; the worst case adds every retry
  (``calls x (1 + max_retries)``).
* **Prompt tokens** are counted, not guessed: the messages each call sends (the system prompt with the schema's
  vocabulary, the chunk in its frame) are rendered exactly as the extractor renders them and tokenised with
  tiktoken, plus the chat format's framing (3 tokens per message and 3 to prime the reply, as OpenAI documents
  for its chat models) and the structured-output JSON schema sent with every call. A gleaning call also sends
  the first pass's answer, which is estimated like a completion.
* **Completion tokens** are an estimate. When the index already holds extraction runs, the mean completion of
  its earlier successful calls is used (measured on this index, with whatever model produced it). Otherwise
  :data:`COMPLETION_PER_TEXT_TOKEN` x the chunk's tokens: the density of a real LLM extraction (an OpenIE run
  of a GPT model over benchmark passages) written out in kg-rag's answer schema (compact JSON: each entity with
  its type, each relation with a type, a description and an evidence quote; derived in
  evaluation/design-figures.md). Models that extract less, or chunks with fewer facts per token, cost less;
  treat it as a planning figure, not a quote. Gleaning calls are estimated like first passes (an upper bound:
  they return only what was missed).
* **Tokeniser**: the chosen model's own tiktoken encoding when it is on this machine (tiktoken's cache; never
  downloaded during a dry run), else ``cl100k_base``, which kg-rag ships, with a note: newer OpenAI models use
  ``o200k_base``, which usually needs a few percent fewer tokens for English text.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, cast

from kg_rag.ingest.extraction_schema import ExtractionSchema, extraction_text
from kg_rag.model import Chunk
from kg_rag.tokens import ENCODING_NAME, get_encoding

COMPLETION_PER_TEXT_TOKEN = 5.0
"""Completion tokens per chunk-text token when the index has no measured extraction yet (see the module)."""
TOKENS_PER_MESSAGE = 3
REPLY_PRIMING = 3
_lock = threading.Lock()


@dataclass
class ExtractionEstimate:
    """Chunks, calls and tokens an extraction run would take (see the module docstring for how)."""

    model: str
    encoding: str
    """The tiktoken encoding the counts were made with."""
    encoding_note: str | None
    chunks: int
    chunk_tokens: int
    calls: int
    max_calls: int
    """``calls`` with every retry used."""
    prompt_tokens: int
    completion_tokens: int
    completion_basis: str
    gleaning: int
    max_retries: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def lines(self) -> list[str]:
        """What ``kg-rag index --dry-run`` prints."""
        passes = f" (1 extraction + {self.gleaning} gleaning per chunk)" if self.gleaning else ""
        retries = f"{self.max_retries} time{'s' if self.max_retries != 1 else ''}"
        return [
            f"chunks to extract: {_n(self.chunks)} ({_n(self.chunk_tokens)} tokens of text)",
            f"llm calls: {_n(self.calls)}{passes}; at most {_n(self.max_calls)} if every call is retried {retries}",
            f"estimated tokens for {self.model}: {_n(self.prompt_tokens)} prompt (counted) + "
            f"~{_n(self.completion_tokens)} completion ({self.completion_basis})",
            f"tokeniser: tiktoken {self.encoding}" + (f" ({self.encoding_note})" if self.encoding_note else ""),
        ]


def _n(value: int) -> str:
    """``61 200``: thousands separated by a space, as the rest of kg-rag's output writes them."""
    return f"{value:,}".replace(",", " ")


def estimate_extraction(
    chunks: Sequence[Chunk],
    *,
    schema: ExtractionSchema | None = None,
    model: str = "gpt-4o-mini",
    max_retries: int = 2,
    history: Mapping[str, int] | None = None,
    encoding: str | None = None,
) -> ExtractionEstimate:
    """Estimate extracting ``chunks`` under ``schema`` with ``model``; no model is called.

    ``history``: an index's recorded extraction usage (``IngestReport.usage``); when it holds successful
    calls, their mean completion is the completion estimate. ``encoding`` forces a tiktoken encoding name.
    """
    schema = schema if schema is not None else ExtractionSchema()
    name, note = (encoding, None) if encoding else encoding_for_model(model)
    enc = offline_encoding(name) or get_encoding(name)  # a named encoding not on this machine: tiktoken fetches it

    def count(text: str) -> int:
        return len(enc.encode(text, disallowed_special=()))

    first, glean = schema.prompts()
    system = count(schema.rendered_system_prompt())
    overhead = count(json.dumps(_response_schema())) + 2 * TOKENS_PER_MESSAGE + REPLY_PRIMING
    per_call_completion, basis = _completion_rate(history)
    prompt = completion = text_tokens = 0
    for chunk in chunks:
        text = count(chunk.text)
        text_tokens += text
        human = count(first.messages[1].format(text=extraction_text(chunk.text)).content)
        prompt += system + human + overhead
        answer = per_call_completion if per_call_completion is not None else round(COMPLETION_PER_TEXT_TOKEN * text)
        completion += answer * (1 + schema.gleaning)
        if schema.gleaning:
            frame = count(glean.messages[1].format(text=extraction_text(chunk.text), previous="").content)
            prompt += schema.gleaning * (system + frame + answer + overhead)
    calls = len(chunks) * (1 + schema.gleaning)
    return ExtractionEstimate(
        model=model,
        encoding=name,
        encoding_note=note,
        chunks=len(chunks),
        chunk_tokens=text_tokens,
        calls=calls,
        max_calls=calls * (1 + max_retries),
        prompt_tokens=prompt,
        completion_tokens=completion,
        completion_basis=basis,
        gleaning=schema.gleaning,
        max_retries=max_retries,
    )


def _completion_rate(history: Mapping[str, int] | None) -> tuple[int | None, str]:
    history = history or {}
    answered = int(history.get("calls", 0)) - int(history.get("failed_calls", 0))
    completion = int(history.get("completion_tokens", 0))
    if answered > 0 and completion > 0:
        mean = round(completion / answered)
        return mean, f"estimate: {mean} per call, the mean of this index's {answered} earlier extraction calls"
    return None, (
        f"estimate: {COMPLETION_PER_TEXT_TOKEN:g} x the chunk's tokens, the density of a real LLM extraction "
        "written in kg-rag's answer schema"
    )


def _response_schema() -> dict[str, Any]:
    """The structured-output schema sent with each call: exactly what the OpenAI client sends when it is
    installed (the strict JSON schema of its ``response_format``), else the pydantic JSON schema."""
    from kg_rag.ingest.extract import ExtractionResult

    try:
        from openai.lib._parsing._completions import type_to_response_format_param

        # typed for any input (it may return Omit); for a pydantic model it is the json_schema mapping
        return dict(cast(Mapping[str, Any], type_to_response_format_param(ExtractionResult)))
    except Exception:  # noqa: BLE001 - another client, or the helper moved: the plain schema is close
        schema = ExtractionResult.model_json_schema()
        return {"type": "json_schema", "json_schema": {"name": "ExtractionResult", "schema": schema}}


def encoding_for_model(model: str) -> tuple[str, str | None]:
    """``(encoding name, note)``: the model's own tiktoken encoding when it is on this machine, else the shipped
    ``cl100k_base`` and a note saying why. Never downloads."""
    import tiktoken

    try:
        own = tiktoken.encoding_name_for_model(model)
    except KeyError:
        return ENCODING_NAME, f"{model} is not an OpenAI model tiktoken knows; counts are approximate"
    if own == ENCODING_NAME or offline_encoding(own) is not None:
        return own, None
    return ENCODING_NAME, (
        f"{model}'s own {own} is not on this machine and a dry run downloads nothing; {own} usually needs a few "
        "percent fewer tokens for English text"
    )


def offline_encoding(name: str) -> Any:
    """tiktoken's encoding ``name`` when its BPE file is already in tiktoken's cache, else ``None``: the file
    is read through tiktoken's own cache lookup with downloading switched off."""
    if name == ENCODING_NAME:
        return get_encoding(name)
    try:
        import tiktoken
        import tiktoken.load as load
        from tiktoken_ext.openai_public import ENCODING_CONSTRUCTORS
    except ImportError:
        return None
    constructor = ENCODING_CONSTRUCTORS.get(name)
    if constructor is None:
        return None

    def no_download(blobpath: str) -> bytes:
        if "://" in blobpath:
            raise _NotCached(blobpath)
        with open(blobpath, "rb") as f:
            return f.read()

    with _lock:
        original = load.read_file
        load.read_file = no_download
        try:
            spec = constructor()
        except Exception:  # noqa: BLE001 - not cached, or a damaged cache file: no encoding, no network
            return None
        finally:
            load.read_file = original
    return tiktoken.Encoding(**spec)


class _NotCached(Exception):
    pass
