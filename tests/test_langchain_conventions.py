"""Issue 14: kg-rag behaves like a well-kept LangChain/LangGraph integration — per-call config, callbacks and run
names, async everywhere, LangChain's standard tool suites, citations that mean something."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_tests.integration_tests import ToolsIntegrationTests
from langchain_tests.unit_tests import ToolsUnitTests

from kg_rag import EntityBasedKGRAG, abuild_index, build_answer_graph, build_index
from kg_rag.langchain.tools import make_path_tool, make_retriever_tool
from kg_rag.testing import BagOfWordsEmbeddings

from .conftest import DEMO_CORPUS

QUESTION = "Who does Lars Eriksen report to?"


@pytest.fixture
def retriever(demo_index, bow_embeddings):
    return EntityBasedKGRAG(index=demo_index, embeddings=bow_embeddings, k=3)


class Recorder(BaseCallbackHandler):
    """Names of every run started, by kind."""

    def __init__(self) -> None:
        self.runs: list[tuple[str, str]] = []
        self.tags: list[list[str]] = []

    def on_retriever_start(self, serialized, query, **kwargs: Any) -> None:
        self.runs.append(("retriever", kwargs.get("name") or ""))

    def on_chain_start(self, serialized, inputs, **kwargs: Any) -> None:
        self.runs.append(("chain", kwargs.get("name") or ""))
        self.tags.append(list(kwargs.get("tags") or []))

    def on_chat_model_start(self, serialized, messages, **kwargs: Any) -> None:
        self.runs.append(("chat", kwargs.get("name") or ""))
        self.tags.append(list(kwargs.get("tags") or []))

    def on_llm_start(self, serialized, prompts, **kwargs: Any) -> None:
        self.runs.append(("llm", kwargs.get("name") or ""))


# ------------------------------------------------------------------------------------------- retriever
def test_per_call_settings_through_runnable_config(retriever):
    assert len(retriever.invoke(QUESTION)) == 3
    assert len(retriever.invoke(QUESTION, config={"configurable": {"k": 1}})) == 1
    assert len(retriever.invoke(QUESTION, config={"configurable": {"k": 1, "thread_id": "t-1"}})) == 1  # not ours
    assert len(retriever.invoke(QUESTION, config={"configurable": {"k": 1}}, k=2)) == 2  # keyword arguments win
    only = retriever.invoke(QUESTION, config={"configurable": {"edge_types": ["MANAGES"], "k": 5}})
    assert all("REPORTS_TO" not in p for d in only for p in d.metadata["paths"])
    assert len(asyncio.run(retriever.ainvoke(QUESTION, config={"configurable": {"k": 2}}))) == 2
    assert len(retriever.batch([QUESTION, QUESTION], config={"configurable": {"k": 1}})[0]) == 1
    with pytest.raises(ValueError, match="top_k_chunks"):
        retriever.invoke(QUESTION, config={"configurable": {"k": 0}})


def test_retrieve_is_a_traced_retriever_run(retriever):
    recorder = Recorder()
    result = retriever.retrieve(QUESTION, config={"callbacks": [recorder], "run_name": "my search"})
    assert ("retriever", "my search") in recorder.runs and result.context
    recorder = Recorder()
    asyncio.run(retriever.aretrieve(QUESTION, config={"callbacks": [recorder]}))
    assert ("retriever", "EntityBasedKGRAG") in recorder.runs


def test_documents_come_back_best_score_first(retriever):
    for strategy in ("chain", "frequency", "path", "ppr"):
        scores = [
            d.metadata["score"]
            for d in retriever.invoke("Which directive replaced Directive 2019-03?", strategy=strategy, k=5)
        ]
        assert scores == sorted(scores, reverse=True), strategy


def test_async_graph_work_runs_off_the_event_loop(retriever, monkeypatch):
    threads = []
    engine = retriever.engine
    real = engine.retrieve_by_vector

    def spy(*args, **kwargs):
        threads.append(threading.current_thread())
        return real(*args, **kwargs)

    monkeypatch.setattr(engine, "retrieve_by_vector", spy)

    async def main():
        loop_thread = threading.current_thread()
        await asyncio.gather(*(retriever.ainvoke(QUESTION) for _ in range(4)))
        return loop_thread

    loop_thread = asyncio.run(main())
    assert len(threads) == 4 and all(t is not loop_thread for t in threads)


def test_async_build_index_matches_sync_and_uses_aembed_documents():
    from kg_rag import KnowledgeGraph
    from kg_rag.ingest.extraction_file import import_extraction_file

    class AsyncCounting(BagOfWordsEmbeddings):
        calls = 0

        async def aembed_documents(self, texts):
            AsyncCounting.calls += 1
            return self.embed_documents(texts)

    kg = KnowledgeGraph()
    import_extraction_file(kg, DEMO_CORPUS)
    sync = build_index(kg, BagOfWordsEmbeddings())
    emb = AsyncCounting()
    index = asyncio.run(abuild_index(kg, emb))
    assert AsyncCounting.calls == 3  # entities, facts, chunks
    for table in ("entities", "facts", "chunks"):
        assert getattr(index, table).ids == getattr(sync, table).ids
        assert (getattr(index, table).vectors == getattr(sync, table).vectors).all()


# ------------------------------------------------------------------------------------------- answer graph
def test_answer_graph_schema_names_callbacks_and_per_call_settings(retriever):
    graph = build_answer_graph(retriever, FakeListChatModel(responses=["Priya Nair [1]"] * 4))
    schema = graph.get_input_jsonschema()
    assert "question" in schema["properties"]
    assert graph.get_name() == "kg-rag answer graph"
    recorder = Recorder()
    out = graph.invoke({"question": QUESTION}, config={"callbacks": [recorder], "configurable": {"k": 1}})
    assert len(out["documents"]) == 1  # retrieval settings per invocation
    names = [n for _, n in recorder.runs]
    assert "kg-rag answer graph" in names and "kg-rag retrieve" in names and "kg-rag answer" in names
    assert ("retriever", "EntityBasedKGRAG") in recorder.runs  # the retriever's own run, inside the node
    out = graph.invoke({"question": QUESTION})
    assert len(out["documents"]) == 3


def test_citations_are_the_sources_the_answer_used(retriever):
    def answer(text: str) -> dict:
        graph = build_answer_graph(retriever, FakeListChatModel(responses=[text]))
        return graph.invoke({"question": QUESTION})

    declined = answer("I do not know.")
    assert declined["citations"] == []
    cited = answer("Lars Eriksen reports to Priya Nair [2].")
    assert [c["chunk_id"] for c in cited["citations"]] == [cited["documents"][1].metadata["chunk_id"]]
    plain = answer("Priya Nair")
    used = [d.metadata["chunk_id"] for d in plain["documents"] if "Priya Nair" in d.metadata["text"]]
    assert [c["chunk_id"] for c in plain["citations"]] == used and used


def test_extraction_calls_carry_the_callers_config_and_run_names(scripted_llm):
    from kg_rag import Chunk
    from kg_rag.ingest import LLMExtractor

    llm = scripted_llm(lambda text: {"entities": [], "relations": []})
    recorder = Recorder()
    chunks = [Chunk(f"c{i}", f"Order {i} supersedes Order {i + 1}.", "d") for i in range(3)]
    LLMExtractor(llm, retry_initial_wait=0).extract(chunks, config={"callbacks": [recorder], "tags": ["mine"]})
    assert [n for kind, n in recorder.runs if kind == "chain"].count("kg-rag extraction") == 3
    assert sum(1 for kind, _ in recorder.runs if kind == "chat") == 3
    assert all("mine" in tags for tags in recorder.tags)


# ------------------------------------------------------------------------------------------- tools
def test_path_tool_has_a_coroutine(retriever):
    tool = make_path_tool(retriever)
    assert tool.coroutine is not None
    out = asyncio.run(tool.ainvoke({"source": "Lars Eriksen", "target": "Maria Chen"}))
    assert "Lars Eriksen -[REPORTS_TO]-> Priya Nair" in out


_EMB = BagOfWordsEmbeddings()


def _demo_retriever() -> EntityBasedKGRAG:
    from kg_rag import KnowledgeGraph
    from kg_rag.ingest.extraction_file import import_extraction_file

    kg = KnowledgeGraph()
    import_extraction_file(kg, DEMO_CORPUS)
    return EntityBasedKGRAG(index=build_index(kg, _EMB), embeddings=_EMB, k=2)


_RETRIEVER = _demo_retriever()


class TestRetrieverToolUnit(ToolsUnitTests):
    @property
    def tool_constructor(self):
        return make_retriever_tool(_RETRIEVER)

    @property
    def tool_invoke_params_example(self) -> dict:
        return {"query": "Which directive replaced Directive 2019-03?"}


class TestRetrieverToolIntegration(ToolsIntegrationTests):
    @property
    def tool_constructor(self):
        return make_retriever_tool(_RETRIEVER)

    @property
    def tool_invoke_params_example(self) -> dict:
        return {"query": "Which directive replaced Directive 2019-03?"}


class TestPathToolUnit(ToolsUnitTests):
    @property
    def tool_constructor(self):
        return make_path_tool(_RETRIEVER)

    @property
    def tool_invoke_params_example(self) -> dict:
        return {"source": "Lars Eriksen", "target": "Maria Chen", "relation_types": ["REPORTS_TO"]}


class TestPathToolIntegration(ToolsIntegrationTests):
    @property
    def tool_constructor(self):
        return make_path_tool(_RETRIEVER)

    @property
    def tool_invoke_params_example(self) -> dict:
        return {"source": "Lars Eriksen", "target": "Maria Chen", "relation_types": ["REPORTS_TO"]}
