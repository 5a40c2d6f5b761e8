"""The ``kg-rag`` command line: ``index``, ``stats``, ``delete``, ``query``, ``eval``, ``demo``.

Every expected failure (bad path, bad file, missing configuration) prints one line to stderr and exits
with status 2 — no traceback. ``-v`` shows progress logging; ``--debug`` shows tracebacks.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
from pathlib import Path
from typing import Any

from kg_rag.context import render_path
from kg_rag.demo import DEMO_QUESTIONS, write_demo_corpus
from kg_rag.errors import KGRagError

logger = logging.getLogger("kg_rag.cli")


class CLIError(Exception):
    """A user-facing error: printed as one line, exit status 2."""


# --------------------------------------------------------------------------- index
def _load_existing(out: Path):
    from kg_rag.storage import DirectoryStore

    store = DirectoryStore(out)
    if not store.exists():
        return None
    try:
        return store.load()
    except (KGRagError, ValueError) as exc:
        logger.warning("existing index at %s is unreadable (%s); building from scratch", out, exc)
        return None


def cmd_index(args: argparse.Namespace) -> int:
    from kg_rag.embeddings import make_embeddings
    from kg_rag.graph import KnowledgeGraph
    from kg_rag.index import build_index
    from kg_rag.ingest.report import IngestReport
    from kg_rag.storage import save_index

    sources = [bool(args.openie or args.corpus), bool(args.docs), bool(args.extractions)]
    if sum(sources) != 1:
        raise CLIError("give exactly one input: --openie/--corpus, --docs, or --extractions")
    progress = not args.quiet
    llm = None
    if args.docs and not args.no_extract:  # fail fast, before any work, when no chat model is configured
        from kg_rag.llm import default_chat_model

        llm = default_chat_model(args.chat_model)
    embeddings = make_embeddings(args.embeddings)

    out = Path(args.out)
    old = _load_existing(out)
    if args.update and old is None:
        raise CLIError(f"{out}: --update needs an existing index there")
    kg = old.kg if args.update else KnowledgeGraph()
    report = old.report if args.update else IngestReport()

    if args.openie or args.corpus:
        from kg_rag.ingest.openie import import_openie

        import_openie(kg, args.openie or {"docs": []}, args.corpus, report=report, progress=progress)
    elif args.extractions:
        from kg_rag.ingest.extraction_file import import_extraction_file

        import_extraction_file(kg, args.extractions, report=report)
    else:
        from kg_rag.ingest.documents import load_documents, split_documents
        from kg_rag.ingest.extract import LLMExtractor

        documents = load_documents(args.docs)
        chunks = split_documents(documents, chunk_size=args.chunk_size, chunk_overlap=args.chunk_overlap)
        for doc_id in dict.fromkeys(c.doc_id for c in chunks):
            kg.remove_document(doc_id)  # re-indexing a document replaces it
        if args.no_extract:
            for chunk in chunks:
                kg.add_chunk(chunk)
            report.added["chunks"] += len(chunks)
        else:
            extractor = LLMExtractor(llm, max_concurrency=args.max_concurrency)
            extractor.ingest(kg, chunks, report, progress=progress)

    cache = old.cache() if old is not None else None
    index = build_index(
        kg, embeddings, type_prefix=not args.no_type_prefix, cache=cache, report=report, progress=progress
    )
    if args.synonym_threshold is not None:
        from kg_rag.resolution import link_synonyms

        link_synonyms(index, args.synonym_threshold)
    save_index(index, out)
    stats = index.stats()
    print(
        f"indexed {stats['chunks']} chunks, {stats['entities']} entities, {stats['relations']} relations "
        f"({len(stats['relation_types'])} types) into {out}"
    )
    if report.skipped:
        print("skipped: " + ", ".join(f"{k}={v}" for k, v in sorted(report.skipped.items())))
    if report.failures:
        print(f"extraction failed for {len(report.failures)} chunks (kept; re-run with --update to retry)")
    return 0


# --------------------------------------------------------------------------- stats / delete
def _stats_payload(index: Any) -> dict[str, Any]:
    s = index.stats()
    keys = ("chunks", "documents", "entities", "relations", "relation_types", "skipped")
    payload = {k: s[k] for k in keys}
    payload.update({k: s[k] for k in ("synonym_links", "extraction_failures", "embedding_model", "dim")})
    return payload


def cmd_stats(args: argparse.Namespace) -> int:
    from kg_rag.storage import load_index

    payload = _stats_payload(load_index(args.index, verify=not args.no_verify))
    if args.json:
        print(json.dumps(payload, indent=1))
        return 0
    for key in ("chunks", "documents", "entities", "relations", "synonym_links", "extraction_failures"):
        print(f"{key:20s} {payload[key]}")
    print(f"{'embedding_model':20s} {payload['embedding_model']} (dim {payload['dim']})")
    print("relation_types:")
    for name, count in list(payload["relation_types"].items())[: args.top]:
        print(f"  {name:24s} {count}")
    if payload["skipped"]:
        print("skipped:")
        for name, count in payload["skipped"].items():
            print(f"  {name:24s} {count}")
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    from kg_rag.embeddings import make_embeddings
    from kg_rag.storage import load_index, save_index

    index = load_index(args.index)
    removed = {"chunks": 0, "relations": 0, "entities": 0}
    for doc_id in args.doc:
        for k, v in index.kg.remove_document(doc_id).items():
            removed[k] += v
    if not removed["chunks"]:
        raise CLIError(f"no document with id {', '.join(args.doc)} in {args.index}")
    index = index.refresh(make_embeddings(args.embeddings))  # all text cached: nothing is re-embedded
    save_index(index, args.index)
    print("removed " + ", ".join(f"{v} {k}" for k, v in removed.items()))
    return 0


# --------------------------------------------------------------------------- query
def _split_list(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [v.strip() for item in values for v in item.split(",") if v.strip()]


def cmd_query(args: argparse.Namespace) -> int:
    from kg_rag.embeddings import make_embeddings
    from kg_rag.retrieve import validate_query
    from kg_rag.retriever import EntityBasedKGRAG

    validate_query(args.question)  # before loading anything
    retriever = EntityBasedKGRAG.from_index(args.index, make_embeddings(args.embeddings), preset=args.preset)
    overrides: dict[str, Any] = {}
    for name in ("max_hops", "k", "direction", "strategy", "max_context_tokens"):
        value = getattr(args, name)
        if value is not None:
            overrides[name] = value
    if args.edge_types:
        overrides["edge_types"] = _split_list(args.edge_types)
    if args.exclude_edge_types:
        overrides["exclude_edge_types"] = _split_list(args.exclude_edge_types)
    result = retriever.retrieve(args.question, **overrides)
    if args.json:
        from dataclasses import asdict

        payload = {
            "query": result.query,
            "context": result.context,
            "chunks": [{k: v for k, v in asdict(c).items()} for c in result.chunks],
            "entities": [asdict(e) for e in result.entities],
            "paths": [render_path(retriever.knowledge_graph, pa) for pa in result.paths],
            "relations": [asdict(r) for r in result.relations],
            "section_tokens": result.section_tokens,
            "timings_ms": result.timings_ms,
        }
        print(json.dumps(payload, indent=1, ensure_ascii=False))
        return 0
    from kg_rag.llm import chat_model_configured, default_chat_model

    print(result.context)
    print()
    if not args.no_answer and chat_model_configured():
        from kg_rag.answer import build_answer_graph

        answer = build_answer_graph(retriever, default_chat_model(), retrieval_kwargs=overrides).invoke(
            {"question": args.question}
        )
        print(f"answer: {answer['answer']}")
        print()
    print("top chunks:")
    for c in result.chunks:
        print(f"  {c.score:.4f}  {c.id}  (graph {c.graph_score:.4f}, dense {c.dense_score:.4f})")
    print(f"retrieval {result.timings_ms.get('total', 0):.1f} ms (excluding query embedding)")
    return 0


# --------------------------------------------------------------------------- eval
def cmd_eval(args: argparse.Namespace) -> int:
    from kg_rag.embeddings import make_embeddings
    from kg_rag.eval.datasets import load_musique_questions
    from kg_rag.eval.methods import load_method_specs
    from kg_rag.eval.runner import evaluate
    from kg_rag.storage import load_index

    try:
        ks = [int(k) for k in args.k.split(",") if k.strip()]
    except ValueError as exc:
        raise CLIError(f"--k takes comma-separated integers, got {args.k!r}") from exc
    specs = load_method_specs(args.methods_dir)
    names = list(specs) if args.methods == "all" else [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = [n for n in names if n not in specs]
    if unknown:
        raise CLIError(f"unknown method(s) {', '.join(unknown)}; known: {', '.join(sorted(specs))}")
    index = load_index(args.index)
    dataset = args.dataset or ("sec10q" if str(args.questions).lower().endswith(".csv") else "musique")
    if dataset == "sec10q":
        from kg_rag.eval.datasets import load_sec10q_questions

        questions = load_sec10q_questions(args.questions, index.kg, limit=args.limit)
    else:
        questions = load_musique_questions(args.questions, index.kg, limit=args.limit)
    embeddings = make_embeddings(args.embeddings)
    report = evaluate(questions, index, embeddings, [specs[n] for n in names], ks, progress=not args.quiet)
    report["index"] = str(args.index)
    report["questions_file"] = str(args.questions)
    report["embedding_model"] = index.embedding_model
    report["dataset"] = dataset
    if args.out:
        from kg_rag.storage import atomic_write_bytes

        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(Path(args.out), (json.dumps(report, indent=1) + "\n").encode())
    cols = [f"recall@{k}" for k in ks] + [f"answer_in_context@{max(ks)}", "mrr", "latency_ms_p50", "latency_ms_p95"]
    print(f"{'method':18s}" + "".join(f"{c:>22s}" for c in cols))
    for name, m in report["methods"].items():
        print(f"{name:18s}" + "".join(f"{m[c]:22.3f}" if m.get(c) is not None else f"{'-':>22s}" for c in cols))
    return 0


# --------------------------------------------------------------------------- bench
def _parse_sizes(text: str) -> list[tuple[int, int]]:
    try:
        sizes = [tuple(int(x) for x in part.split(":")) for part in text.split(",") if part.strip()]
    except ValueError as exc:
        raise CLIError(f"--sizes takes ENTITIES:EDGES pairs separated by commas, got {text!r}") from exc
    if not sizes or any(len(s) != 2 or s[0] < 2 or s[1] < 1 for s in sizes):
        raise CLIError(f"--sizes takes ENTITIES:EDGES pairs separated by commas, got {text!r}")
    return sizes  # type: ignore[return-value]


def cmd_bench(args: argparse.Namespace) -> int:
    from kg_rag.bench import markdown_table, run_benchmark

    sizes = _parse_sizes(args.sizes) if args.sizes else [(args.entities, args.edges)]
    if any(e < 2 or m < 1 for e, m in sizes) or args.queries < 1:
        raise CLIError("--entities must be >= 2, --edges >= 1, --queries >= 1")
    strategies = tuple(s.strip() for s in args.strategies.split(",") if s.strip())
    results = []
    for entities, edges in sizes:
        results.append(
            run_benchmark(
                entities,
                edges,
                n_queries=args.queries,
                dim=args.dim,
                strategies=strategies,
                seed003_queries=args.seed003_queries,
            )
        )
        if args.out:
            out = Path(args.out)
            out.mkdir(parents=True, exist_ok=True)
            (out / f"bench-{entities}-{edges}.json").write_text(json.dumps(results[-1], indent=1) + "\n")
    if args.json:
        print(json.dumps(results[0] if len(results) == 1 else results, indent=1))
    elif len(results) > 1:
        print(markdown_table(results))
    else:
        for key, value in results[0].items():
            print(f"{key:36s} {value}")
    return 0


# --------------------------------------------------------------------------- demo
def _print_answer_or_context(retriever: Any, question: str, result: Any, llm: Any) -> None:
    if llm is None:
        print("  (no chat model configured: set OPENAI_API_KEY, and OPENAI_BASE_URL for a local server, to")
        print("   get an answer; this is the context the answer node would receive)")
        for line in result.context.splitlines():
            print("  | " + line)
        return
    from kg_rag.answer import build_answer_graph

    out = build_answer_graph(retriever, llm).invoke({"question": question})
    print(f"  answer: {out['answer']}")
    cited = ", ".join(str(c["chunk_id"]) for c in out["citations"])
    print(f"  sources: {cited}")


def cmd_demo(args: argparse.Namespace) -> int:
    """Write the demo corpus, index it with the local model, and answer a few directional questions."""
    from kg_rag.embeddings import make_embeddings
    from kg_rag.graph import KnowledgeGraph
    from kg_rag.index import build_index
    from kg_rag.ingest.extraction_file import import_extraction_file
    from kg_rag.llm import chat_model_configured, default_chat_model
    from kg_rag.retriever import EntityBasedKGRAG
    from kg_rag.storage import load_index, save_index

    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="kg-rag-demo-"))
    graph_file = write_demo_corpus(out)
    kg = KnowledgeGraph()
    report = import_extraction_file(kg, graph_file)
    embeddings = make_embeddings(args.embeddings)
    save_index(build_index(kg, embeddings, report=report, progress=not args.quiet), out / "index")
    index = load_index(out / "index")
    stats = _stats_payload(index)
    print(f"demo corpus: {out / 'docs'} ({stats['documents']} documents); graph: {graph_file}")
    print(
        f"index: {out / 'index'} — {stats['entities']} entities, {stats['relations']} relations, "
        f"{len(stats['relation_types'])} relation types"
    )
    retriever = EntityBasedKGRAG(index=index, embeddings=embeddings, k=3)
    llm = default_chat_model() if chat_model_configured() else None
    for question in DEMO_QUESTIONS:
        result = retriever.retrieve(question, max_context_tokens=1200)
        print()
        print(f"Q: {question}")
        print("  directed typed paths:")
        for path in result.paths[:6]:
            print(f"    {render_path(index.kg, path)}")
        print("  top chunks:")
        for c in result.chunks:
            title = c.metadata.get("title", "")
            print(f"    {c.score:7.3f}  {c.id}  {title}")
        _print_answer_or_context(retriever, question, result, llm)
    return 0


# --------------------------------------------------------------------------- main
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kg-rag", description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress (INFO)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("index", help="build (or --update) an index directory")
    p.add_argument("--openie", help="OpenIE JSON in HippoRAG format (docs[*].extracted_triples)")
    p.add_argument("--corpus", help="corpus JSON [{title, text}] matching --openie")
    p.add_argument("--docs", help="file or folder of .txt/.md/.pdf to extract with the configured chat model")
    p.add_argument("--extractions", help="saved extraction file (kg-rag-extractions format)")
    p.add_argument("--out", required=True, help="index directory to write")
    p.add_argument("--update", action="store_true", help="add to the index at --out instead of replacing it")
    p.add_argument(
        "--no-extract",
        action="store_true",
        help="with --docs: chunk and embed only, no LLM extraction (dense/BM25 baselines)",
    )
    p.add_argument("--embeddings", default="local", help="local (default) | openai[:MODEL] | fake[:DIM] | module:attr")
    p.add_argument("--no-type-prefix", action="store_true", help="embed entities without their [TYPE]")
    p.add_argument("--synonym-threshold", type=float, default=None, help="link entities with cosine >= this")
    p.add_argument("--chat-model", default=None, help="chat model name (default: $KG_RAG_CHAT_MODEL)")
    p.add_argument("--chunk-size", type=int, default=512, help="tokens per chunk (default 512)")
    p.add_argument("--chunk-overlap", type=int, default=24, help="token overlap (default 24)")
    p.add_argument("--max-concurrency", type=int, default=4, help="parallel extraction calls (default 4)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("stats", help="print counts of an index")
    p.add_argument("index", help="index directory")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--top", type=int, default=20, help="relation types to list")
    p.add_argument("--no-verify", action="store_true", help="skip sha256 checks of the files")
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser("delete", help="remove documents from an index")
    p.add_argument("index", help="index directory")
    p.add_argument("--doc", action="append", required=True, help="document id (repeatable)")
    p.add_argument("--embeddings", default="local", help="the embeddings the index was built with")
    p.set_defaults(func=cmd_delete)

    p = sub.add_parser("query", help="retrieve for a question and print the formatted context")
    p.add_argument("index", help="index directory")
    p.add_argument("question", help="the question")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--preset", default="default", help="default | seed003")
    p.add_argument("--embeddings", default="local", help="the embeddings the index was built with")
    p.add_argument("--edge-types", action="append", help="only traverse these relation types (comma-separated)")
    p.add_argument("--exclude-edge-types", action="append", help="never traverse these relation types")
    p.add_argument("--max-hops", type=int, default=None)
    p.add_argument("--direction", choices=["out", "in", "both"], default=None)
    p.add_argument("--strategy", default=None, help="frequency | path | ppr")
    p.add_argument("--k", type=int, default=None, help="chunks to return")
    p.add_argument("--max-context-tokens", type=int, default=None)
    p.add_argument("--no-answer", action="store_true", help="do not call the chat model even if one is configured")
    p.set_defaults(func=cmd_query)

    p = sub.add_parser("eval", help="compare retrieval methods on a question set")
    p.add_argument("--questions", required=True, help="questions JSON (MuSiQue/HippoRAG format)")
    p.add_argument("--index", required=True, help="index built from the matching corpus")
    p.add_argument("--methods", default="dense,bm25,seed003,kg-rag", help="comma-separated names, or 'all'")
    p.add_argument("--methods-dir", default="methods", help="folder of method configs (*.json)")
    p.add_argument("--k", default="2,5", help="cut-offs, comma-separated")
    p.add_argument("--out", help="write the results JSON here")
    p.add_argument("--limit", type=int, default=None, help="only the first N questions")
    p.add_argument(
        "--dataset",
        choices=["musique", "sec10q"],
        default=None,
        help="question format (default: sec10q for .csv, else musique)",
    )
    p.add_argument("--embeddings", default="local", help="the embeddings the index was built with")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("bench", help="speed/memory benchmark on a synthetic graph, vs the seed-003 algorithm")
    p.add_argument("--entities", type=int, default=10_000)
    p.add_argument("--edges", type=int, default=100_000)
    p.add_argument("--queries", type=int, default=50)
    p.add_argument("--dim", type=int, default=384, help="embedding dimension of the random vectors")
    p.add_argument("--strategies", default="chain,frequency,path,ppr", help="first one is the reported preset")
    p.add_argument("--seed003-queries", type=int, default=None, help="time the slow reference on fewer queries")
    p.add_argument(
        "--sizes",
        default=None,
        help="several graphs in one run, e.g. 1900:17000,10000:100000,100000:1000000 (prints a table)",
    )
    p.add_argument("--out", default=None, help="folder to write one bench-ENTITIES-EDGES.json per size")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("demo", help="write, index and query the demo corpus (answers when a chat model is set)")
    p.add_argument("--out", help="where to write the demo corpus and index (default: a temporary folder)")
    p.add_argument("--embeddings", default="local", help="local (default) | fake[:DIM] | ...")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("kg-rag: interrupted", file=sys.stderr)
        return 130
    except (CLIError, KGRagError, ValueError, OSError) as exc:
        if args.debug:
            raise
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if isinstance(exc, FileNotFoundError) and exc.filename and str(exc.filename) not in msg:
            msg = f"{exc.filename}: {exc.strerror or 'no such file'}"
        print(f"kg-rag: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
