"""``kg-rag query`` when the chat model fails: the retrieval is still printed (``--json``: ``"answer": null`` and a
one-line ``answer_error``; text: the context, then the error on stderr), and the exit status is 1."""

from __future__ import annotations

import json

import pytest

from kg_rag.cli import main
from kg_rag.store import DirectoryStore

from ..serving_support import BOW, free_port

Q = "Who does Lars Eriksen report to?"


@pytest.fixture
def unreachable_chat_model(monkeypatch):
    """A chat model configured at a port nothing listens on (connection refused)."""
    url = f"http://127.0.0.1:{free_port()}/v1"
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    monkeypatch.setenv("KG_RAG_CHAT_MODEL", "fake-model")
    return url


@pytest.fixture
def idx(demo_index, tmp_path):
    DirectoryStore(tmp_path / "idx").save(demo_index)
    return str(tmp_path / "idx")


def test_json_keeps_the_retrieval_when_the_chat_model_fails(unreachable_chat_model, idx, capsys):
    assert main(["query", idx, Q, "--json", "--embeddings", BOW]) == 1
    captured = capsys.readouterr()
    payload = json.loads(captured.out)
    assert payload["chunks"] and payload["context"]  # nothing retrieved is lost
    assert payload["answer"] is None and payload["citations"] == []
    error = payload["answer_error"]
    assert "\n" not in error and "Connection" in error
    # the error names the model, its provider and the URL it tried: which server was down
    assert error.startswith(f"chat model openai:fake-model at {unreachable_chat_model}") and "failed" in error


def test_text_prints_the_context_then_one_error_line(unreachable_chat_model, idx, capsys):
    assert main(["query", idx, Q, "--embeddings", BOW]) == 1
    captured = capsys.readouterr()
    assert "Lars Eriksen" in captured.out and "answer:" not in captured.out
    errors = [line for line in captured.err.splitlines() if "error" in line]
    assert len(errors) == 1 and errors[0].startswith("kg-rag: error: no answer: chat model openai:fake-model at ")
    assert unreachable_chat_model in errors[0]
    assert captured.err.rstrip().endswith(errors[0])  # the last line, after the diagnostics
