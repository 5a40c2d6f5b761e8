"""The agent tools (``kg_rag/langchain/tools.py``): bad model arguments come back as error ToolMessages, the path tool
honours the retriever's filters, a run's ``configurable`` reaches both tools, LangChain's standard tool suites."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_tests.integration_tests import ToolsIntegrationTests
from langchain_tests.unit_tests import ToolsUnitTests

from kg_rag import EntityBasedKGRAG, QueryParams, build_index
from kg_rag.langchain.tools import build_agent, make_path_tool, make_retriever_tool
from kg_rag.testing import BagOfWordsEmbeddings

from ..conftest import DEMO_CORPUS

LARS_TO_MARIA = "Lars Eriksen -[REPORTS_TO]-> Priya Nair -[REPORTS_TO]-> Daniel Okafor -[REPORTS_TO]-> Maria Chen"


class ToolFake(GenericFakeChatModel):
    """A scripted chat model an agent can bind tools to."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ToolFake:
        return self


def _agent(retriever: EntityBasedKGRAG, *calls: dict) -> Any:
    script = [AIMessage("", tool_calls=[{**c, "id": f"c{i}"} for i, c in enumerate(calls)]), AIMessage("done")]
    return build_agent(retriever, ToolFake(messages=iter(script)))


def _tool_messages(reply: dict) -> list[ToolMessage]:
    return [m for m in reply["messages"] if isinstance(m, ToolMessage)]


def _call(tool: Any, **args: Any) -> ToolMessage:
    return tool.invoke({"type": "tool_call", "id": "1", "name": tool.name, "args": args})


@pytest.fixture
def make_retriever(demo_index, bow_embeddings):
    def make(**params: Any) -> EntityBasedKGRAG:
        return EntityBasedKGRAG(index=demo_index, embeddings=bow_embeddings, k=3, params=QueryParams(**params))

    return make


# ------------------------------------------------------------------ 1. bad model arguments do not end the run
@pytest.mark.parametrize("query", ["", "  ", "\n\t", "\x00\x01"])
def test_empty_query_from_the_model_is_an_error_message_and_the_run_completes(make_retriever, query):
    reply = _agent(make_retriever(), {"name": "knowledge_graph_search", "args": {"query": query}}).invoke(
        {"messages": [("user", "x")]}
    )
    (msg,) = _tool_messages(reply)
    assert msg.status == "error" and msg.content == "query is empty: pass a question or keywords"
    assert reply["messages"][-1].content == "done"


def test_empty_query_async_and_direct_tool_call(make_retriever):
    r = make_retriever()
    reply = asyncio.run(
        _agent(r, {"name": "knowledge_graph_search", "args": {"query": " "}}).ainvoke({"messages": [("user", "x")]})
    )
    assert [m.status for m in _tool_messages(reply)] == ["error"] and reply["messages"][-1].content == "done"
    tool = make_retriever_tool(r)
    direct = _call(tool, query="   ")
    assert direct.status == "error" and "query is empty" in direct.content
    assert asyncio.run(tool.ainvoke({"query": ""})) == "query is empty: pass a question or keywords"


def test_a_bad_configurable_setting_is_the_callers_error_and_still_raises(make_retriever):
    tool = make_retriever_tool(make_retriever())
    with pytest.raises(ValueError, match="top_k_chunks"):
        tool.invoke({"query": "Project Atlas"}, config={"configurable": {"k": 0}})
    with pytest.raises(ValueError, match="direction"):
        make_path_tool(make_retriever()).invoke(
            {"source": "Lars Eriksen", "target": "Maria Chen"}, config={"configurable": {"direction": "up"}}
        )


def test_unknown_entity_in_the_path_tool_is_an_error_message(make_retriever):
    reply = _agent(
        make_retriever(), {"name": "find_connection", "args": {"source": "Nobody At All Xyz", "target": "Maria Chen"}}
    ).invoke({"messages": [("user", "x")]})
    (msg,) = _tool_messages(reply)
    assert msg.status == "error" and msg.content == "no entity named 'Nobody At All Xyz' in the knowledge graph"
    assert reply["messages"][-1].content == "done"


# ------------------------------------------------------------------ 2. the path tool honours the retriever's filters
def test_path_tool_honours_edge_types_and_exclude_entities(make_retriever):
    unfiltered = make_path_tool(make_retriever())
    council = unfiltered.invoke({"source": "Lars Eriksen", "target": "Security Council"})
    assert "-[MANAGES]->" in council and "-[OWNS]->" in council
    assert LARS_TO_MARIA in unfiltered.invoke({"source": "Lars Eriksen", "target": "Maria Chen"})

    tool = make_path_tool(make_retriever(exclude_entities=("Priya Nair",), edge_types=("REPORTS_TO",)))
    council = _call(tool, source="Lars Eriksen", target="Security Council")
    assert council.status == "success" and council.artifact == []
    assert council.content == (
        "No path from Lars Eriksen to Security Council within 4 edges using REPORTS_TO (avoiding excluded entities)."
    )
    maria = _call(tool, source="Lars Eriksen", target="Maria Chen")
    assert maria.content.startswith("No path") and "Priya" not in maria.content and maria.artifact == []
    allowed = _call(tool, source="Daniel Okafor", target="Maria Chen")
    assert allowed.content.endswith("\nDaniel Okafor -[REPORTS_TO]-> Maria Chen\n</context>")
    assert [s["relation_type"] for s in allowed.artifact[0]["steps"]] == ["REPORTS_TO"]


def test_path_tool_refuses_excluded_endpoints_and_relation_types_outside_the_filters(make_retriever):
    tool = make_path_tool(make_retriever(exclude_entities=("Priya Nair",), edge_types=("REPORTS_TO",)))
    excluded = _call(tool, source="Priya Nair", target="Maria Chen")
    assert (
        excluded.status == "error" and excluded.content == "'Priya Nair' is excluded from this knowledge graph search"
    )
    outside = _call(tool, source="Lars Eriksen", target="Maria Chen", relation_types=["MANAGES", "OWNS"])
    assert outside.status == "error"
    assert outside.content == "relation types MANAGES, OWNS may not be followed in this search (allowed: REPORTS_TO)"
    within = _call(tool, source="Daniel Okafor", target="Maria Chen", relation_types=["reports to", "MANAGES"])
    assert within.status == "success" and "Daniel Okafor -[REPORTS_TO]-> Maria Chen" in within.content


def test_path_tool_honours_exclude_edge_types(make_retriever):
    tool = make_path_tool(make_retriever(exclude_edge_types=("REPORTS_TO",)))
    assert tool.invoke({"source": "Lars Eriksen", "target": "Maria Chen"}) == (
        "No path from Lars Eriksen to Maria Chen within 4 edges (not using REPORTS_TO)."
    )
    denied = _call(tool, source="Lars Eriksen", target="Maria Chen", relation_types=["REPORTS_TO"])
    assert denied.status == "error" and "they are excluded" in denied.content
    around = _call(
        make_path_tool(make_retriever(exclude_edge_types=("OWNS",))),
        source="Lars Eriksen",
        target="Security Council",
        max_length=8,
    )
    assert around.artifact and "-[OWNS]->" not in around.content  # the unfiltered shortest path goes through OWNS
    assert all(s["relation_type"] != "OWNS" for a in around.artifact for s in a["steps"])


def test_path_tool_honours_direction(make_retriever):
    out = make_path_tool(make_retriever(direction="out"))
    assert LARS_TO_MARIA in out.invoke({"source": "Lars Eriksen", "target": "Maria Chen"})
    assert out.invoke({"source": "Maria Chen", "target": "Lars Eriksen"}) == (
        "No path from Maria Chen to Lars Eriksen within 4 edges (edges read forwards only)."
    )
    backwards = make_path_tool(make_retriever(direction="in"))
    assert "Maria Chen <-[REPORTS_TO]- Daniel Okafor <-[REPORTS_TO]- Priya Nair <-[REPORTS_TO]- Lars Eriksen" in (
        backwards.invoke({"source": "Maria Chen", "target": "Lars Eriksen"})
    )
    assert backwards.invoke({"source": "Lars Eriksen", "target": "Maria Chen"}).startswith("No path")
    forwards_only = _call(backwards, source="Maria Chen", target="Lars Eriksen", direction="out")
    assert forwards_only.status == "error" and "ask for direction 'in' or 'both'" in forwards_only.content


# ------------------------------------------------------------------ 3. the run's config reaches the tools
def test_agent_configurable_k_reaches_the_search_tool(make_retriever):
    def run(config: dict | None, use_async: bool = False) -> int:
        agent = _agent(make_retriever(), {"name": "knowledge_graph_search", "args": {"query": "Lars Eriksen"}})
        request = {"messages": [("user", "q")]}
        reply = asyncio.run(agent.ainvoke(request, config)) if use_async else agent.invoke(request, config)
        (msg,) = _tool_messages(reply)
        return len(msg.artifact)

    assert run(None) == 3
    assert run({"configurable": {"k": 1}}) == 1
    assert run({"configurable": {"k": 1}}, use_async=True) == 1
    assert run({"configurable": {"top_k_chunks": 2, "thread_id": "t1"}}) == 2


def test_agent_configurable_filters_reach_the_path_tool(make_retriever):
    def connection(config: dict | None) -> str:
        agent = _agent(
            make_retriever(), {"name": "find_connection", "args": {"source": "Lars Eriksen", "target": "Maria Chen"}}
        )
        (msg,) = _tool_messages(agent.invoke({"messages": [("user", "q")]}, config))
        return msg.content

    assert LARS_TO_MARIA in connection(None)
    excluded = connection({"configurable": {"exclude_entities": ["Priya Nair"], "edge_types": ["REPORTS_TO"]}})
    assert excluded.startswith("No path") and "Priya" not in excluded
    # and a per-call setting can lift a filter the retriever was built with
    tool = make_path_tool(make_retriever(exclude_entities=("Priya Nair",)))
    assert LARS_TO_MARIA in tool.invoke(
        {"source": "Lars Eriksen", "target": "Maria Chen"}, config={"configurable": {"exclude_entities": []}}
    )


class _Runs(BaseCallbackHandler):
    def __init__(self) -> None:
        self.tools: list[Any] = []
        self.retrievers: list[tuple[Any, list[str]]] = []

    def on_tool_start(self, serialized: Any, input_str: str, *, run_id: Any, **kwargs: Any) -> None:
        self.tools.append(run_id)

    def on_retriever_start(self, serialized: Any, query: str, *, run_id: Any, parent_run_id: Any = None, **kw) -> None:
        self.retrievers.append((parent_run_id, kw.get("tags") or []))


def test_search_tool_keeps_the_retriever_run_under_the_tool_run_with_the_callers_tags(make_retriever):
    runs = _Runs()
    tool = make_retriever_tool(make_retriever())
    docs = asyncio.run(
        tool.ainvoke(
            {"type": "tool_call", "id": "1", "name": tool.name, "args": {"query": "Project Atlas"}},
            config={"callbacks": [runs], "tags": ["mine"], "configurable": {"k": 2}},
        )
    ).artifact
    assert len(docs) == 2
    assert runs.tools and [parent for parent, _ in runs.retrievers] == runs.tools
    assert all("mine" in tags for _, tags in runs.retrievers)


@pytest.fixture
def retriever(demo_index, bow_embeddings):
    return EntityBasedKGRAG(index=demo_index, embeddings=bow_embeddings, k=3)


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
