"""The agent tools over MCP (``kg-rag mcp IDX``): retrieval, path finding and global search, served on stdio with
the official ``mcp`` SDK.

Each MCP tool *is* a LangChain tool: its name, description and input schema are the LangChain tool's own
(``args_schema``), and a call runs the LangChain tool, so an agent sees the same tools either way. A tool error
the model can act on (an unknown entity, an empty query) comes back as an MCP error result with its one-line
message; the artifact (documents, path steps, cited communities) travels as ``structuredContent``.

Arguments are checked before the tool runs, against the tool's own schema (which stays LangChain's): an argument
the tool does not take (``k`` on the search tool) is refused, not silently ignored, and a text longer than
:data:`MAX_TEXT_CHARS` (the bound on a question everywhere) is refused rather than embedded and searched.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from kg_rag.errors import InputError
from kg_rag.query.limits import MAX_QUESTION_CHARS

logger = logging.getLogger(__name__)

MAX_TEXT_CHARS = MAX_QUESTION_CHARS
"""Longest text a tool argument may hold (a question or a name, not a document): the question bound every entry
point shares (:mod:`kg_rag.query.limits`)."""


def agent_tools(retriever: Any, llm: Any | None = None, *, global_level: int = 0) -> list[Any]:
    """The tools served: knowledge-graph search and path finding; global search when ``llm`` is given and the
    retriever has no document filter (community reports summarise every document)."""
    from kg_rag.langchain.tools import make_path_tool, make_retriever_tool

    tools = [make_retriever_tool(retriever), make_path_tool(retriever)]
    if llm is not None and retriever.params.walk.filter is not None:
        logger.warning("global_search is not served: the retriever has a document filter (reports cover all)")
    elif llm is not None:
        from kg_rag.langchain.communities import make_global_search_tool

        tools.append(make_global_search_tool(retriever.backend, llm, level=global_level))
    return tools


def input_schema(tool: Any) -> dict[str, Any]:
    """The JSON schema of a LangChain tool's arguments, as LangChain derives it from ``args_schema``."""
    schema = tool.args_schema
    if isinstance(schema, dict):
        return dict(schema)
    return schema.model_json_schema()


def argument_problem(tool: Any, arguments: dict[str, Any]) -> str | None:
    """One line saying what is wrong with ``arguments`` for ``tool`` (``None`` when nothing): arguments its schema
    does not name, or a text over :data:`MAX_TEXT_CHARS` (missing or mistyped arguments are the tool's to say)."""
    known = list(input_schema(tool).get("properties") or {})
    unknown = [name for name in arguments if name not in known]
    if unknown:
        takes = ", ".join(known) or "no arguments"
        return f"{tool.name}: unknown argument {', '.join(map(repr, unknown))} (it takes {takes})"
    for name, value in arguments.items():
        texts = value if isinstance(value, list) else [value]
        longest = max((len(v) for v in texts if isinstance(v, str)), default=0)
        if longest > MAX_TEXT_CHARS:
            return f"{tool.name}: {name} is {longest} characters long; at most {MAX_TEXT_CHARS} are accepted"
    return None


def _jsonable(value: Any) -> Any:
    from langchain_core.documents import Document

    if isinstance(value, Document):
        return {"id": value.id, "page_content": value.page_content, "metadata": _jsonable(value.metadata)}
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def build_server(tools: list[Any] | Callable[[], list[Any]], name: str = "kg-rag") -> Any:
    """An MCP low-level ``Server`` exposing ``tools`` (LangChain tools). ``tools`` may be a zero-argument function
    that makes them: the server answers ``initialize`` without it, and the first tool list or call runs it (once,
    in a worker thread) and waits for it; if it fails, its error is what those requests answer."""
    from mcp import types
    from mcp.server.lowlevel import Server

    made: list[Future] = []
    if not callable(tools):
        made.append(Future())
        made[0].set_result(list(tools))
    lock = threading.Lock()

    async def served() -> dict[str, Any]:
        with lock:  # the first request starts the work; later ones wait for the same result
            if not made:
                assert callable(tools)  # a list of tools was made above
                made.append(ThreadPoolExecutor(1, thread_name_prefix="kg-rag-mcp-tools").submit(_made, tools))
        return {t.name: t for t in await asyncio.wrap_future(made[0])}

    server = Server(name)

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        return [
            types.Tool(name=t.name, description=t.description, inputSchema=input_schema(t))
            for t in (await served()).values()
        ]

    @server.call_tool()
    async def call_tool(tool_name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        by_name = await served()
        tool = by_name.get(tool_name)
        if tool is None:
            raise InputError(f"unknown tool {tool_name!r}; this server has {', '.join(by_name)}")
        problem = argument_problem(tool, arguments or {})
        if problem:
            return types.CallToolResult(content=[types.TextContent(type="text", text=problem)], isError=True)
        message = await tool.ainvoke({"type": "tool_call", "name": tool_name, "args": arguments, "id": "mcp"})
        text = message.content if isinstance(message.content, str) else str(message.content)
        error = getattr(message, "status", "success") == "error"
        artifact = getattr(message, "artifact", None)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structuredContent=None if error or artifact is None else {"artifact": _jsonable(artifact)},
            isError=error,
        )

    return server


def _made(make: Callable[[], list[Any]]) -> list[Any]:
    try:
        return list(make())
    except Exception as exc:
        logger.error("the MCP tools could not be made: %s", str(exc).splitlines()[0] if str(exc) else exc)
        raise


async def run_stdio(server: Any) -> None:
    """Serve on stdin/stdout until the client closes the stream. The protocol runs on duplicates of the two file
    descriptors, so closing them at the end leaves ``sys.stdout`` usable (the CLI flushes it on exit)."""
    import io
    import os

    import anyio
    from mcp.server.stdio import stdio_server

    stdin = anyio.wrap_file(io.TextIOWrapper(os.fdopen(os.dup(0), "rb"), encoding="utf-8", errors="replace"))
    stdout = anyio.wrap_file(io.TextIOWrapper(os.fdopen(os.dup(1), "wb"), encoding="utf-8"))
    try:
        async with stdio_server(stdin, stdout) as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        for stream in (stdin, stdout):
            await stream.aclose()
