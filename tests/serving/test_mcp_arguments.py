"""The MCP tools check their arguments against the LangChain tools' own schemas: an argument a tool does not take
is refused in one line (not silently ignored), and an over-long text is refused before anything is embedded."""

from __future__ import annotations

import pytest

mcp = pytest.importorskip("mcp", reason="MCP needs the serve extra")

from mcp.shared.memory import create_connected_server_and_client_session  # noqa: E402

from kg_rag import EntityBasedKGRAG  # noqa: E402
from kg_rag.langchain.mcp import MAX_TEXT_CHARS, agent_tools, build_server, input_schema  # noqa: E402
from kg_rag.testing import BagOfWordsEmbeddings  # noqa: E402

QUESTION = "What superseded Directive 2019-03?"


@pytest.fixture(scope="module")
def tools(served_index):
    return agent_tools(EntityBasedKGRAG.from_index(served_index, BagOfWordsEmbeddings()))


async def call(tools, name: str, arguments: dict):
    async with create_connected_server_and_client_session(build_server(tools)) as session:
        listed = {t.name: t.inputSchema for t in (await session.list_tools()).tools}
        assert listed == {t.name: input_schema(t) for t in tools}  # the schemas stay the LangChain tools' own
        return await session.call_tool(name, arguments)


async def test_an_unknown_argument_is_refused_in_one_line(tools):
    query = input_schema(tools[0])["required"][0]
    result = await call(tools, "knowledge_graph_search", {query: QUESTION, "k": 3})
    assert result.isError
    (text,) = [c.text for c in result.content]
    assert text == f"knowledge_graph_search: unknown argument 'k' (it takes {query})"
    ok = await call(tools, "knowledge_graph_search", {query: QUESTION})
    assert not ok.isError and "SUPERSEDES" in ok.content[0].text


async def test_an_over_long_query_is_refused_before_it_is_searched(tools):
    query = input_schema(tools[0])["required"][0]
    result = await call(tools, "knowledge_graph_search", {query: "why " * 250_000})  # 1 MB
    assert result.isError
    assert result.content[0].text == (
        f"knowledge_graph_search: {query} is 1000000 characters long; at most {MAX_TEXT_CHARS} are accepted"
    )
    names = await call(tools, "find_connection", {"source": "x" * 5000, "target": "Directive 2019-03"})
    assert names.isError and "source is 5000 characters long" in names.content[0].text
    assert not (await call(tools, "knowledge_graph_search", {query: "x" * MAX_TEXT_CHARS})).isError


def test_no_global_search_for_a_retriever_with_a_document_filter(served_index):
    """Community reports summarise every document, so a filtered retriever's tools leave global_search out."""
    from ..conftest import ScriptedChatModel

    llm = ScriptedChatModel(responder=dict)
    whole = EntityBasedKGRAG.from_index(served_index, BagOfWordsEmbeddings())
    scoped = EntityBasedKGRAG.from_index(served_index, BagOfWordsEmbeddings(), filter={"doc_id": ["a"]})
    assert "global_search" in [t.name for t in agent_tools(whole, llm)]
    assert [t.name for t in agent_tools(scoped, llm)] == ["knowledge_graph_search", "find_connection"]


async def test_initialize_does_not_wait_for_the_tools(tools):
    """``kg-rag mcp`` gives ``build_server`` a function that opens the index and makes the tools: the handshake is
    answered without it, the first tool request makes them once, and a failure is what the requests answer."""
    made = []

    def make():
        made.append(1)
        return tools

    async with create_connected_server_and_client_session(build_server(make)) as session:  # initialize done
        assert made == []
        assert {t.name for t in (await session.list_tools()).tools} == {t.name for t in tools}
        assert not (await session.call_tool("knowledge_graph_search", {"query": QUESTION})).isError
        assert made == [1]

    def broken():
        raise ValueError("unknown preset 'nope'; choose one of default, seed003")

    async with create_connected_server_and_client_session(build_server(broken)) as session:
        with pytest.raises(Exception, match="unknown preset 'nope'"):
            await session.list_tools()
