"""Issue 29: the extraction cost estimate (no model call) and failed calls in the extractor's usage."""

from __future__ import annotations

import asyncio

import pytest

from kg_rag import Chunk, KnowledgeGraph
from kg_rag.ingest import LLMExtractor
from kg_rag.ingest.cost import COMPLETION_PER_TEXT_TOKEN, encoding_for_model, estimate_extraction, offline_encoding
from kg_rag.ingest.extract import usage_summary
from kg_rag.ingest.extraction_schema import ExtractionSchema
from kg_rag.tokens import count_tokens

CHUNKS = [Chunk(f"c{i}", f"Order {i + 1} supersedes Order {i}. " * (i + 1), f"d{i}") for i in range(3)]
GOOD = {"entities": [], "relations": [{"source": "Order 1", "target": "Order 0", "type": "SUPERSEDES"}]}


def test_the_prompt_is_counted_exactly_and_the_completion_rate_is_stated():
    schema = ExtractionSchema(relation_types={"SUPERSEDES": "source replaces target"})
    estimate = estimate_extraction(CHUNKS, schema=schema, model="gpt-4", max_retries=3)
    first, _ = schema.prompts()
    per_message = [sum(count_tokens(m.content) + 3 for m in first.format_messages(text=c.text)) + 3 for c in CHUNKS]
    schema_tokens = (estimate.prompt_tokens - sum(per_message)) / len(CHUNKS)
    assert schema_tokens == int(schema_tokens) and 300 < schema_tokens < 1000  # the same JSON schema every call
    text = sum(count_tokens(c.text) for c in CHUNKS)
    assert estimate.chunk_tokens == text
    assert estimate.completion_tokens == sum(round(COMPLETION_PER_TEXT_TOKEN * count_tokens(c.text)) for c in CHUNKS)
    assert (estimate.calls, estimate.max_calls, estimate.encoding, estimate.encoding_note) == (
        3,
        12,
        "cl100k_base",
        None,
    )

    gleaned = estimate_extraction(
        CHUNKS, schema=ExtractionSchema(gleaning=2), history={"calls": 10, "completion_tokens": 700}
    )
    assert gleaned.calls == 9 and gleaned.completion_tokens == 70 * 9
    assert "the mean of this index's 10 earlier extraction calls" in gleaned.completion_basis
    failed_only = estimate_extraction(CHUNKS, history={"calls": 4, "failed_calls": 4, "completion_tokens": 0})
    assert "x the chunk's tokens" in failed_only.completion_basis


def test_the_tokeniser_is_the_models_own_when_it_is_here_and_nothing_is_downloaded(tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # an empty cache
    import requests

    def no_network(*args, **kwargs):
        raise AssertionError("a dry run must not download")

    monkeypatch.setattr(requests, "get", no_network)
    assert offline_encoding("o200k_base") is None
    name, note = encoding_for_model("gpt-4o-mini")
    assert name == "cl100k_base" and "gpt-4o-mini's own o200k_base is not on this machine" in note
    assert encoding_for_model("gpt-3.5-turbo") == ("cl100k_base", None)
    name, note = encoding_for_model("my-local-llama")
    assert name == "cl100k_base" and "not an OpenAI model tiktoken knows" in note


def test_failed_calls_are_counted_with_their_retries(scripted_llm):
    attempts: dict[str, int] = {}

    def responder(text: str) -> dict:
        attempts[text] = attempts.get(text, 0) + 1
        if "Order 1 supersedes" in text and "Order 2" not in text and attempts[text] == 1:
            raise RuntimeError("HTTP 500")  # fails once, then succeeds
        if "Order 3" in text:
            return {"relations": [{"source": "Order 3"}]}  # never parses
        return GOOD

    run = LLMExtractor(scripted_llm(responder), max_retries=1, retry_initial_wait=0).extract(CHUNKS)
    assert set(run.results) == {"c0", "c1"} and set(run.failures) == {"c2"}
    # c0: 1 failed + 1 ok; c1: 1 ok; c2: 2 answers that did not parse
    assert (run.usage.calls, run.usage.failed) == (5, 3)
    assert usage_summary(run.usage.to_dict(), 3).startswith("5 chat calls (3 failed), ")

    async_run = asyncio.run(
        LLMExtractor(
            scripted_llm(lambda t: GOOD if "Order 3" not in t else {"relations": [{}]}),
            max_retries=2,
            retry_initial_wait=0,
        ).aextract(CHUNKS)
    )
    assert (async_run.usage.calls, async_run.usage.failed) == (5, 3)


def test_a_failed_run_is_in_the_report_usage(scripted_llm):
    def responder(text: str) -> dict:
        raise RuntimeError("down")

    report = LLMExtractor(scripted_llm(responder), max_retries=2, retry_initial_wait=0).ingest(KnowledgeGraph(), CHUNKS)
    assert report.usage["calls"] == 9 and report.usage["failed_calls"] == 9
    assert usage_summary(report.usage, 3).startswith("9 chat calls (9 failed), 0 prompt")


@pytest.mark.parametrize("model", ["gpt-4o-mini", "gpt-4"])
def test_estimate_lines_name_the_model_and_the_basis(model):
    lines = estimate_extraction(CHUNKS, model=model).lines()
    assert lines[0].startswith("chunks to extract: 3 (") and f"estimated tokens for {model}:" in lines[2]
    assert "completion (estimate:" in lines[2] and lines[3].startswith("tokeniser: tiktoken cl100k_base")
