"""``kg-rag demo``: the demo corpus indexed offline and asked directional questions."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from kg_rag.cli.common import stats_payload
from kg_rag.context import render_path
from kg_rag.demo import DEMO_QUESTIONS, write_demo_corpus


def _print_answer_or_context(retriever: Any, question: str, result: Any, llm: Any) -> None:
    if llm is None:
        print("  (no chat model configured: set OPENAI_API_KEY, and OPENAI_BASE_URL for a local server, to")
        print("   get an answer; this is the context the answer node would receive)")
        for line in result.context.splitlines():
            print("  | " + line)
        return
    from kg_rag.langchain.answer import build_answer_graph

    out = build_answer_graph(retriever, llm).invoke({"question": question})
    print(f"  answer: {out['answer']}")
    cited = ", ".join(str(c["chunk_id"]) for c in out["citations"])
    print(f"  sources: {cited}")


def cmd_demo(args: argparse.Namespace) -> int:
    """Write the demo corpus, index it with the local model, and answer a few directional questions."""
    from kg_rag.index.build import build_index
    from kg_rag.ingest.extraction_file import import_extraction_file
    from kg_rag.langchain.chat import chat_model_configured, default_chat_model
    from kg_rag.langchain.embeddings import make_embeddings
    from kg_rag.langchain.retriever import EntityBasedKGRAG
    from kg_rag.model.graph import KnowledgeGraph
    from kg_rag.store import DirectoryStore

    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="kg-rag-demo-"))
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
        sep = "&" if "?" in uri else "?"
        store: Any = PostgresStore(f"{uri}{sep}kg_schema=kg_rag_demo")
        where = f"PostgreSQL schema kg_rag_demo ({'server in ' + str(out / 'pgdata') if server else 'your server'})"
    else:
        store = DirectoryStore(out / "index")
        where = str(out / "index")
    try:
        with store.writing():
            store.save(index)
        stats = stats_payload(store.stats())
        print(f"demo corpus: {out / 'docs'} ({stats['documents']} documents); graph: {graph_file}")
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
        if server is not None:
            server.stop()
    return 0


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
    p.add_argument("--pg", default=None, help="postgresql:// URI for --store postgres")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_demo)
