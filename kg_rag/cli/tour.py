"""``kg-rag demo``: the demo corpus indexed offline and asked directional questions."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from kg_rag.cli.common import CLIError, stats_payload

DEMO_SCHEMA = "kg_rag_demo"
"""Where the demo writes in PostgreSQL unless the URI names a ``kg_schema``: not ``kg_rag``, the default schema of
``kg-rag index --out URI``, so trying the demo never replaces a real index."""


def _demo_uri(uri: str) -> tuple[str, str]:
    """``(uri, schema)`` the demo writes to: the URI's own ``kg_schema`` when it names one (as every other command
    honours it), else :data:`DEMO_SCHEMA`."""
    from kg_rag.store.postgres.store import parse_location

    named = dict(parse_qsl(urlsplit(uri).query, keep_blank_values=True)).get("kg_schema")
    if not named:
        uri = f"{uri}{'&' if '?' in uri else '?'}kg_schema={DEMO_SCHEMA}"
    return uri, parse_location(uri)[1]  # also checks the schema name before any work is done


def _check_store_args(args: argparse.Namespace) -> None:
    """``--pg`` only means something with ``--store postgres`` (as for ``kg-rag bench``): refuse it rather than
    silently write the index to a folder."""
    from kg_rag.store import is_database_uri

    if args.pg is None:
        return
    if args.store != "postgres":
        raise CLIError("--pg is for --store postgres: add --store postgres, or drop --pg")
    if not is_database_uri(args.pg):
        raise CLIError(f"--pg takes a postgresql:// URI, got {args.pg!r}")
    _demo_uri(args.pg)


def _print_answer_or_context(retriever: Any, question: str, result: Any, llm: Any) -> None:
    if llm is None:
        print("  (no chat model configured: set KG_RAG_CHAT_MODEL (ollama:qwen2.5, ...) or OPENAI_API_KEY to get an")
        print("   answer; this is the context the answer node would receive)")
        for line in result.context.splitlines():
            print("  | " + line)
        return
    from kg_rag.langchain.answer import build_answer_graph

    out = build_answer_graph(retriever, llm).invoke({"question": question})
    print(f"  answer: {out['answer']}")
    cited = ", ".join(str(c["chunk_id"]) for c in out["citations"])
    print(f"  sources: {cited}")


def cmd_demo(args: argparse.Namespace) -> int:
    """Write the demo corpus, index it with the local model, and answer a few directional questions. Without
    ``--out`` everything goes to a temporary folder that is removed when the demo ends (also on an error)."""
    _check_store_args(args)
    if args.out:
        return _run_demo(args, Path(args.out), kept=True)
    with tempfile.TemporaryDirectory(prefix="kg-rag-demo-", ignore_cleanup_errors=True) as folder:
        return _run_demo(args, Path(folder), kept=False)


def _run_demo(args: argparse.Namespace, out: Path, *, kept: bool) -> int:
    from kg_rag.context import render_path
    from kg_rag.demo import DEMO_QUESTIONS, write_demo_corpus
    from kg_rag.index.build import build_index
    from kg_rag.ingest.extraction_file import import_extraction_file
    from kg_rag.langchain.chat import chat_model_configured, default_chat_model
    from kg_rag.langchain.embeddings import make_embeddings
    from kg_rag.langchain.retriever import EntityBasedKGRAG
    from kg_rag.model.graph import KnowledgeGraph
    from kg_rag.store import DirectoryStore

    graph_file = write_demo_corpus(out)
    kg = KnowledgeGraph()
    report = import_extraction_file(kg, graph_file)
    embeddings = make_embeddings(args.embeddings)
    index = build_index(kg, embeddings, report=report, progress=not args.quiet)
    from kg_rag.communities import refresh_communities
    from kg_rag.langchain.chat import chat_model_configured as _configured

    reporter = None
    if _configured():
        from kg_rag.langchain.communities import LLMReporter

        reporter = LLMReporter(default_chat_model())
    index.communities, community_stats = refresh_communities(kg, reporter=reporter)
    server = None
    if args.store == "postgres":
        from kg_rag.store.postgres import PostgresStore

        uri = args.pg
        if uri is None:
            from kg_rag.store.postgres.embedded import EmbeddedPostgres

            server = EmbeddedPostgres(out / "pgdata")
            uri = server.start()
        uri, schema = _demo_uri(uri)
        store: Any = PostgresStore(uri)
        where = f"PostgreSQL schema {schema} ({'server in ' + str(out / 'pgdata') if server else 'your server'})"
    else:
        store = DirectoryStore(out / "index")
        where = str(out / "index")
    retriever = None
    try:
        with store.writing():
            store.save(index)
        stats = stats_payload(store.stats())
        print(f"demo corpus: {out / 'docs'} ({stats['documents']} documents); graph: {graph_file}")
        if not kept:
            print("(a temporary folder, removed when the demo ends; --out DIR keeps the corpus and the index)")
        print(
            f"index: {where} — {stats['entities']} entities, {stats['relations']} relations, "
            f"{len(stats['relation_types'])} relation types, {community_stats.communities} communities "
            f"({'reports by the chat model' if reporter else 'extractive reports: no chat model configured'})"
        )
        retriever = EntityBasedKGRAG(backend=store.backend(), embeddings=embeddings, k=3)
        llm = default_chat_model(max_retries=2) if chat_model_configured() else None
        for question in DEMO_QUESTIONS:
            result = retriever.retrieve(question, max_context_tokens=1200)
            print()
            print(f"Q: {question}")
            print("  directed typed paths:")
            for path in result.paths[:6]:
                print(f"    {render_path(result.names, path)}")
            print("  top chunks:")
            for c in result.chunks:
                title = c.metadata.get("title", "")
                print(f"    {c.score:7.3f}  {c.id}  {title}")
            _print_answer_or_context(retriever, question, result, llm)
    finally:
        if retriever is not None:
            _close(retriever)
        if server is not None:
            server.stop()
    return 0


def _close(retriever: Any) -> None:
    """Let go of the index before its temporary folder is removed (a database connection, open files)."""
    close = getattr(getattr(retriever, "backend", None), "close", None)
    if callable(close):
        close()


def add_parsers(sub) -> None:
    p = sub.add_parser("demo", help="write, index and query the demo corpus (answers when a chat model is set)")
    p.add_argument("--out", help="where to write the demo corpus and index (default: a temporary folder)")
    p.add_argument("--embeddings", default="local", help="local (default) | fake[:DIM] | ...")
    p.add_argument(
        "--store",
        choices=["directory", "postgres"],
        default="directory",
        help="where the index lives (postgres: --pg URI, or a local server started in OUT/pgdata for the run)",
    )
    p.add_argument(
        "--pg",
        default=None,
        help=f"postgresql:// URI for --store postgres; the index replaces what is in the URI's ?kg_schema=NAME "
        f"(default {DEMO_SCHEMA})",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_demo)
