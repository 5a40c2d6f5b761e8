"""Chat models by one string (``kg_rag/langchain/chat.py``): ``provider:model`` through LangChain's
``init_chat_model``, ``module:attr``, a bare name for an OpenAI-compatible server; the JSON fallback for models
without structured output; errors that name the model, its provider and its URL."""

from __future__ import annotations

import json

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from kg_rag import Chunk, KnowledgeGraph
from kg_rag.chat_calls import describe_chat_model
from kg_rag.cli import main
from kg_rag.errors import ConfigurationError
from kg_rag.ingest.extract import LLMExtractor
from kg_rag.langchain.chat import (
    PROVIDERS,
    chat_model_configured,
    chat_model_spec,
    default_chat_model,
)

from ..serving_support import BOW

Q = "Who does Lars Eriksen report to?"


class JsonOnlyModel(FakeListChatModel):
    """A chat model with no structured output (no tool calling, no JSON mode): it only writes text."""

    def with_structured_output(self, schema, **kwargs):
        raise NotImplementedError("no structured output")


def fake_chat_model():
    """A zero-argument factory, named as ``module:attr``."""
    return FakeListChatModel(responses=["Priya Nair [1]"])


@pytest.fixture
def no_env(monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "KG_RAG_CHAT_MODEL"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    ("text", "provider", "model"),
    [
        ("openai:gpt-4o-mini", "openai", "gpt-4o-mini"),
        ("ollama:qwen2.5", "ollama", "qwen2.5"),
        ("ollama:llama3.1:8b", "ollama", "llama3.1:8b"),
        ("anthropic:claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5"),
        ("myapp.models:chat_model", "module", "myapp.models:chat_model"),
        ("gpt-4o-mini", "openai", "gpt-4o-mini"),
        ("Qwen/Qwen2.5-7B-Instruct", "openai", "Qwen/Qwen2.5-7B-Instruct"),
        ("qwen2.5:7b", "openai", "qwen2.5:7b"),  # an Ollama tag on its OpenAI-compatible endpoint, as before
    ],
)
def test_one_string_names_the_model(text, provider, model):
    spec = chat_model_spec(text)
    assert (spec.provider, spec.model) == (provider, model)


def test_every_provider_is_one_init_chat_model_knows():
    from langchain.chat_models.base import _BUILTIN_PROVIDERS

    assert PROVIDERS <= set(_BUILTIN_PROVIDERS)


def test_configured_without_an_openai_key_when_another_provider_is_named(no_env, monkeypatch):
    assert not chat_model_configured()
    assert chat_model_configured("ollama:qwen2.5") and chat_model_configured("myapp.models:chat_model")
    monkeypatch.setenv("KG_RAG_CHAT_MODEL", "ollama:qwen2.5")
    assert chat_model_configured()
    with pytest.raises(ConfigurationError, match="names the provider ollama but no model"):
        chat_model_spec("ollama:")


def test_a_provider_string_goes_through_init_chat_model(openai_server):
    """``openai:NAME`` is LangChain's ``init_chat_model``; it reaches the server ``OPENAI_BASE_URL`` names."""
    llm = default_chat_model("openai:fake-model")
    assert describe_chat_model(llm).startswith(f"openai:fake-model at {openai_server.base_url}")
    assert llm.invoke("Say hello").content
    assert openai_server.requests[-1]["model"] == "fake-model"


def test_a_missing_provider_package_is_named(no_env):
    try:
        import langchain_ollama  # noqa: F401
    except ImportError:
        with pytest.raises(ConfigurationError, match=r"pip install langchain-ollama"):
            default_chat_model("ollama:qwen2.5")
    else:
        assert describe_chat_model(default_chat_model("ollama:qwen2.5")).startswith("ollama:qwen2.5")


def test_module_attr_names_your_own_model(no_env, demo_idx_path, capsys):
    """``--chat-model module:attr`` answers without any key."""
    spec = f"{__name__}:fake_chat_model"
    assert chat_model_configured(spec)
    assert main(["query", demo_idx_path, Q, "--embeddings", BOW, "--chat-model", spec]) == 0
    out = capsys.readouterr().out
    assert "answer: Priya Nair [1]" in out
    with pytest.raises(ConfigurationError, match="cannot import chat model 'nowhere.at_all:model'"):
        default_chat_model("nowhere.at_all:model")


def test_the_json_fallback_extracts_with_a_model_without_structured_output():
    reply = {
        "entities": [{"name": "Statute 2021", "type": "LAW"}, {"name": "Regulation 2020", "type": "LAW"}],
        "relations": [
            {"source": "Statute 2021", "target": "Regulation 2020", "type": "REVOKES", "evidence": "revokes"}
        ],
    }
    llm = JsonOnlyModel(responses=["Here it is:\n```json\n" + json.dumps(reply) + "\n```"])
    kg = KnowledgeGraph()
    report = LLMExtractor(llm, retry_initial_wait=0).ingest(
        kg, [Chunk("c1", "Statute 2021 revokes Regulation 2020.", "laws")]
    )
    assert not report.failures
    assert kg.find_relations("Statute 2021", "Regulation 2020", "REVOKES")


def test_the_json_fallback_gives_a_chain_of_thought_answer(demo_index, bow_embeddings):
    from kg_rag import EntityBasedKGRAG, build_answer_graph

    retriever = EntityBasedKGRAG(index=demo_index, embeddings=bow_embeddings, k=2)
    llm = JsonOnlyModel(responses=['{"reasoning": "doc-04 says so", "answer": "Priya Nair [1]"}'])
    out = build_answer_graph(retriever, llm, chain_of_thought=True).invoke({"question": Q})
    assert out["answer"] == "Priya Nair [1]" and out["reasoning"] == "doc-04 says so" and out["citations"]


@pytest.fixture
def demo_idx_path(demo_index, tmp_path) -> str:
    from kg_rag.store import DirectoryStore

    DirectoryStore(tmp_path / "idx").save(demo_index)
    return str(tmp_path / "idx")
