"""``kg-rag mcp IDX`` over stdio: driven by the MCP SDK's client session, and loaded through
langchain-mcp-adapters into ``create_agent`` with a tool-calling fake model. The tool schemas are the LangChain
tools' own."""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from ..conftest import ScriptedChatModel
from ..serving_support import BOW

mcp = pytest.importorskip("mcp", reason="MCP needs the serve extra")

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

QUESTION = "What superseded Directive 2019-03?"
EDGE = "Directive 2023-07 -[SUPERSEDES]-> Directive 2019-03"
READ_BACK = "Directive 2019-03 <-[SUPERSEDES]- Directive 2023-07"  # the same edge, read from its target


@pytest.fixture(scope="module")
def chat_env():
    """The local OpenAI-compatible server as the chat model of the MCP server process (for global_search)."""
    from ..openai_server import FakeOpenAI

    chat = FakeOpenAI().start()
    yield {"OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": chat.base_url, "KG_RAG_CHAT_MODEL": "fake-model"}
    chat.stop()


def server_command(index) -> tuple[str, list[str]]:
    return sys.executable, ["-m", "kg_rag.cli", "mcp", str(index), "--embeddings", BOW]


def langchain_schemas(index) -> dict[str, dict]:
    """The JSON schemas of the LangChain tools kg-rag builds for the same index."""
    from kg_rag import EntityBasedKGRAG
    from kg_rag.langchain.mcp import agent_tools, input_schema
    from kg_rag.testing import BagOfWordsEmbeddings

    retriever = EntityBasedKGRAG.from_index(index, BagOfWordsEmbeddings())
    return {t.name: input_schema(t) for t in agent_tools(retriever, ScriptedChatModel(responder=dict))}


def first_arg(schema: dict) -> str:
    return schema["required"][0]


async def test_mcp_sdk_client_session(served_index, chat_env):
    command, args = server_command(served_index)
    params = StdioServerParameters(command=command, args=args, env={**os.environ, **chat_env})
    expected = langchain_schemas(served_index)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = {t.name: t for t in (await session.list_tools()).tools}
        assert set(listed) == {"knowledge_graph_search", "find_connection", "global_search"}
        for name, tool in listed.items():
            assert tool.inputSchema == expected[name], name  # the LangChain tool's schema, not a restatement

        search = await session.call_tool(
            "knowledge_graph_search", {first_arg(expected["knowledge_graph_search"]): QUESTION}
        )
        assert not search.isError
        assert READ_BACK in search.content[0].text
        docs = search.structuredContent["artifact"]
        assert "doc-01" in {d["metadata"]["chunk_id"] for d in docs}  # the passage that states the edge

        path = await session.call_tool(
            "find_connection", {"source": "Directive 2023-07", "target": "Directive 2019-03", "direction": "out"}
        )
        assert not path.isError and EDGE in path.content[0].text
        steps = path.structuredContent["artifact"][0]["steps"]
        assert (steps[0]["source"], steps[0]["target"]) == ("directive 2023-07", "directive 2019-03")
        backwards = await session.call_tool(
            "find_connection", {"source": "Directive 2019-03", "target": "Directive 2023-07", "direction": "out"}
        )
        assert "No path" in backwards.content[0].text  # direction is meaning: no edge leads that way

        unknown = await session.call_tool("find_connection", {"source": "Zzyzx Qwerty", "target": "Directive 2019-03"})
        assert unknown.isError and "no entity named 'Zzyzx Qwerty'" in unknown.content[0].text
        invalid = await session.call_tool("find_connection", {"source": "Directive 2019-03"})
        assert invalid.isError and "target" in invalid.content[0].text

        themes = await session.call_tool("global_search", {first_arg(expected["global_search"]): "Main themes?"})
        assert not themes.isError and "[c:" in themes.content[0].text


class ToolCallingFake(BaseChatModel):
    """A fake chat model with ``bind_tools``: searches the graph, then asks for a path, then answers with the
    first edge the last tool returned."""

    search_arg: str = "query"

    @property
    def _llm_type(self) -> str:
        return "tool-calling-fake"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ToolCallingFake:
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        tool_results = [m for m in messages if m.type == "tool"]
        if not tool_results:
            call = {"name": "knowledge_graph_search", "args": {self.search_arg: QUESTION}, "id": "c1"}
        elif len(tool_results) == 1:
            args = {"source": "Directive 2023-07", "target": "Directive 2019-03", "direction": "out"}
            call = {"name": "find_connection", "args": args, "id": "c2"}
        else:
            text = tool_results[-1].text  # the text of its content blocks
            edge = next((ln for ln in text.splitlines() if "-[" in ln and not ln.endswith(":")), "unknown")
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content=f"Answer: {edge}"))])
        msg = AIMessage(content="", tool_calls=[{**call, "type": "tool_call"}])
        return ChatResult(generations=[ChatGeneration(message=msg)])


async def test_langchain_mcp_adapters_into_create_agent(served_index):
    adapters = pytest.importorskip("langchain_mcp_adapters.client", reason="needs langchain-mcp-adapters (test extra)")
    from langchain.agents import create_agent

    command, args = server_command(served_index)
    client = adapters.MultiServerMCPClient(
        {"kg": {"command": command, "args": [*args, "--no-global"], "transport": "stdio", "env": dict(os.environ)}}
    )
    tools = await client.get_tools()
    assert {t.name for t in tools} == {"knowledge_graph_search", "find_connection"}
    schemas = langchain_schemas(served_index)
    search = next(t for t in tools if t.name == "knowledge_graph_search")
    agent = create_agent(model=ToolCallingFake(search_arg=first_arg(schemas["knowledge_graph_search"])), tools=tools)
    out = await agent.ainvoke({"messages": [("user", QUESTION)]})
    tool_messages = [m for m in out["messages"] if m.type == "tool"]
    assert [m.name for m in tool_messages] == ["knowledge_graph_search", "find_connection"]
    assert READ_BACK in str(tool_messages[0].content) and EDGE in str(tool_messages[1].content)
    assert out["messages"][-1].content == f"Answer: {EDGE}"
    assert search.args_schema["properties"] == schemas["knowledge_graph_search"]["properties"]
