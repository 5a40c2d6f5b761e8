"""Nothing to configure to try the LangGraph server: ``langgraph.json`` serves a retrieval-only graph, and the
answer graph without a chat model returns the context and says why (the factories ``langgraph dev`` calls,
run in process with no chat-model variable set)."""

from __future__ import annotations

import asyncio
import json

import pytest

from ..conftest import REPO
from ..serving_support import BOW

QUESTION = "What superseded Directive 2019-03?"
EDGE = "Directive 2019-03 <-[SUPERSEDES]- Directive 2023-07"


@pytest.fixture
def no_key(served_index, monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "KG_RAG_CHAT_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("KG_RAG_INDEX", str(served_index))
    monkeypatch.setenv("KG_RAG_EMBEDDINGS", BOW)


def test_langgraph_json_serves_a_retrieval_graph():
    graphs = json.loads((REPO / "langgraph.json").read_text())["graphs"]
    assert graphs["kg_rag_retrieve"] == "kg_rag.langchain.serving:retrieval_graph"


def test_the_retrieval_graph_gives_context_paths_and_sources(no_key):
    from kg_rag.langchain.serving import retrieval_graph

    graph = asyncio.run(retrieval_graph({}))
    out = graph.invoke({"question": QUESTION}, {"configurable": {"k": 2}})
    assert set(out) >= {"question", "context", "paths", "sources"}
    assert EDGE in out["context"] and any(EDGE in p for p in out["paths"])
    assert [s["n"] for s in out["sources"]] == [1, 2]  # k=2 from configurable, numbered as the context numbers them
    first = out["sources"][0]
    assert f"[1] chunk={first['chunk_id']}" in out["context"] and first["text"] and first["doc_id"]
    assert asyncio.run(graph.ainvoke({"question": QUESTION}))["paths"] == graph.invoke({"question": QUESTION})["paths"]
    schema = graph.get_input_jsonschema()
    assert "question" in schema["properties"] and "context" not in schema["properties"]


def test_the_answer_graph_without_a_model_returns_the_context_and_says_why(no_key):
    from kg_rag.langchain.serving import answer_graph

    out = asyncio.run(answer_graph({})).invoke({"question": QUESTION})
    assert out["answer"] is None and out["citations"] == []
    assert "no chat model configured" in out["no_answer"] and "KG_RAG_CHAT_MODEL" in out["no_answer"]
    assert EDGE in out["context"] and out["documents"] and out["paths"]
    said = out["messages"][-1].content  # what a chat UI shows: the reason, then the context
    assert said.startswith("No answer: no chat model configured") and EDGE in said


def test_global_search_still_needs_a_model_and_says_which(no_key):
    from kg_rag.errors import ConfigurationError
    from kg_rag.langchain.serving import make_global_search_graph

    with pytest.raises(ConfigurationError, match="KG_RAG_CHAT_MODEL"):
        make_global_search_graph()
