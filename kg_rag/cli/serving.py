"""``kg-rag serve`` (the graph explorer, a local web page) and ``kg-rag mcp`` (the agent tools over MCP stdio).
The LangGraph server needs no command of its own: ``langgraph dev`` reads ``langgraph.json``."""

from __future__ import annotations

import argparse
import contextlib
import sys

from kg_rag.cli.common import (
    CHAT_MODEL_HELP,
    CLIError,
    add_filter_arguments,
    check_location,
    document_filter,
    logger,
)

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def _retriever(args: argparse.Namespace):
    from kg_rag.langchain.embeddings import make_embeddings
    from kg_rag.langchain.retriever import EntityBasedKGRAG
    from kg_rag.query.params import get_preset

    doc_filter = document_filter(args)  # checked before the index opens
    check_location(args.index)
    get_preset(args.preset)
    embeddings = make_embeddings(args.embeddings) if args.embeddings else None
    settings = {"filter": doc_filter} if doc_filter else {}
    return EntityBasedKGRAG.from_index(args.index, embeddings, preset=args.preset, **settings)


def cmd_serve(args: argparse.Namespace) -> int:
    try:
        from kg_rag.explorer.app import serve, vis_network_dir

        vis_network_dir()
        import uvicorn  # noqa: F401 - checked before the index is opened
    except ImportError as exc:
        raise CLIError(f"{exc} (the explorer needs the serve extra: pip install 'kg-rag[serve]')") from exc
    retriever = _retriever(args)
    if args.host not in LOCAL_HOSTS:
        logger.warning(
            "serving on %s: the explorer has no authentication; put it behind a reverse proxy (requests for a host "
            "name other than 127.0.0.1, localhost and --host are refused unless named with --allow-host)",
            args.host,
        )
    print(f"kg-rag explorer for {args.index}: http://{args.host}:{args.port}/  (Ctrl-C stops it)", flush=True)
    level = "info" if args.verbose else "warning"
    serve(retriever, args.host, args.port, log_level=level, allowed_hosts=args.allow_host or ())
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    """Answer ``initialize`` at once and open the index (in a worker thread) for the first tool list or call: a
    client that starts a server per call (langchain-mcp-adapters) no longer waits for the index, the embedding
    model and LangChain before the handshake. A missing index or a malformed ``--filter`` is refused before the
    server starts (one line, status 2); what needs the index's code to check (the preset, the filter's keys) is
    checked when the tools are made, and a failure is the answer to the client's requests and one logged line."""
    import asyncio

    try:
        from kg_rag.langchain.mcp import build_server, run_stdio
    except ImportError as exc:
        raise CLIError(f"{exc} (MCP needs the serve extra: pip install 'kg-rag[serve]')") from exc
    document_filter(args, parse=False)
    check_location(args.index)

    def make_tools() -> list:
        from kg_rag.langchain.chat import NO_CHAT_MODEL, chat_model_configured, default_chat_model
        from kg_rag.langchain.mcp import agent_tools

        retriever = _retriever(args)
        llm = None
        if args.no_global:
            pass
        elif not retriever.backend.info().extra.get("communities"):
            logger.warning("global_search is not served: the index has no communities (run kg-rag communities)")
        elif not chat_model_configured(args.chat_model):
            logger.warning("global_search is not served: %s", NO_CHAT_MODEL)
        else:
            llm = default_chat_model(args.chat_model, max_retries=2)
        tools = agent_tools(retriever, llm, global_level=args.global_level)
        logger.info("serving %s over MCP stdio", ", ".join(t.name for t in tools))
        return tools

    with contextlib.redirect_stdout(sys.stderr):  # stdout is the protocol stream: nothing else may write there
        asyncio.run(run_stdio(build_server(make_tools)))
    return 0


def add_parsers(sub) -> None:
    from kg_rag.cli.common import count_at_least

    p = sub.add_parser(
        "serve",
        help="graph explorer: a local web page that draws what retrieval found",
        description="Serve the graph explorer on http://HOST:PORT/ (127.0.0.1 by default; no authentication, so "
        "put a reverse proxy in front of any other address). Read-only: nothing is written to the index.",
    )
    p.add_argument("index", help="index directory or postgresql:// URI")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    p.add_argument("--port", type=count_at_least(1), default=8765, help="port (default: 8765)")
    p.add_argument(
        "--allow-host",
        action="append",
        metavar="NAME",
        help="also answer requests for this host name (repeatable; '*' for any). Requests naming another host than "
        "127.0.0.1, localhost or --host are refused, so a web page cannot reach the explorer by DNS rebinding",
    )
    p.add_argument("--embeddings", default=None, help="query embeddings (default: the model the index records)")
    p.add_argument("--preset", default="default", help="retrieval preset: default | seed003")
    add_filter_arguments(p)
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser(
        "mcp",
        help="serve the agent tools (search, paths, global search) over MCP stdio",
        description="Run an MCP server on stdin/stdout with the knowledge_graph_search and find_connection tools, "
        "and global_search when the index has communities and a chat model is configured (--chat-model or "
        "KG_RAG_CHAT_MODEL; OPENAI_API_KEY for OpenAI-compatible servers). Tool schemas are the LangChain tools' own.",
    )
    p.add_argument("index", help="index directory or postgresql:// URI")
    p.add_argument("--embeddings", default=None, help="query embeddings (default: the model the index records)")
    p.add_argument("--preset", default="default", help="retrieval preset: default | seed003")
    p.add_argument("--global-level", type=count_at_least(0), default=0, help="community level for global_search")
    p.add_argument("--no-global", action="store_true", help="do not serve global_search")
    p.add_argument("--chat-model", default=None, help=CHAT_MODEL_HELP)
    add_filter_arguments(p)
    p.set_defaults(func=cmd_mcp)
