"""``kg-rag query``: retrieve for a question and print the context (and an answer when a chat model is set)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from kg_rag.cli.common import (
    CHAT_MODEL_HELP,
    CLIError,
    add_filter_arguments,
    check_location,
    count_at_least,
    document_filter,
    query_embeddings,
    shown_id,
    split_list,
)


def cmd_query(args: argparse.Namespace) -> int:
    from kg_rag.query.engine import QueryEngine
    from kg_rag.query.history import validate_query
    from kg_rag.query.params import get_preset
    from kg_rag.store import open_store

    validate_query(args.question)  # before loading anything
    check_location(args.index)
    params = get_preset(args.preset)
    overrides: dict[str, Any] = {}
    for name in ("max_hops", "k", "direction", "strategy", "max_context_tokens"):
        value = getattr(args, name)
        if value is not None:
            overrides[name] = value
    if args.edge_types:
        overrides["edge_types"] = split_list(args.edge_types)
        if not overrides["edge_types"]:  # e.g. an unset shell variable: "--edge-types $T"
            raise CLIError("--edge-types names no relation type")
    if args.exclude_edge_types:
        overrides["exclude_edge_types"] = split_list(args.exclude_edge_types)
    doc_filter = document_filter(args)
    if doc_filter:
        overrides["filter"] = doc_filter
    # the core engine, not the LangChain retriever: a one-off query imports no LangChain unless it answers
    backend = open_store(args.index).backend()
    embeddings = query_embeddings(args.embeddings, backend.info().embedding_model, args.index)
    engine = QueryEngine(backend, embeddings, params)
    _check_types(backend, overrides, args.index)
    for flag in ("include_entities", "exclude_entities"):
        if getattr(args, flag):
            overrides[flag] = entity_names(getattr(args, flag), backend)
    result = engine.retrieve(args.question, **overrides)
    from kg_rag.langchain.chat import NO_CHAT_MODEL, chat_model_configured  # reads the environment only

    answering = not args.no_answer and chat_model_configured(args.chat_model)
    if not args.no_answer and not answering:  # say why no answer follows the context (stderr: stdout stays data)
        print(
            f"kg-rag: no answer: {NO_CHAT_MODEL} (--no-answer prints the context alone without this note)",
            file=sys.stderr,
        )
    if args.json:
        payload = _payload(result)
        if answering:  # written by the configured chat model (--no-answer leaves it out)
            answer, error = _answer(args, result)
            payload["answer"] = answer["answer"] if answer else None
            payload["citations"] = answer["citations"] if answer else []
            if error:
                payload["answer_error"] = error
        print(json.dumps(payload, indent=1, ensure_ascii=False))
        return 1 if answering and error else 0
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(result.context)
    print()
    sys.stdout.flush()  # the context is out before the chat model is called: a failing model loses nothing
    error = None
    if answering:
        answer, error = _answer(args, result)
        if answer is not None:
            print(f"answer: {answer['answer']}")
            print()
    # diagnostics go to stderr, so stdout (the context and the answer) can be piped on as it is
    # a strategy's score is its own; chain's is the chunk's relevance (dense cosine + lexical match) plus the
    # graph's boost, never above the score of the chunk before it, so the list reads in order
    print(
        "top chunks (score, never above the one before: under chain the dense cosine + the lexical match + the"
        " graph's boost; beside it the graph's boost and the dense cosine):",
        file=sys.stderr,
    )
    for c in result.chunks:
        shown = shown_id(c.id)  # a chunk id holds its document's id: quoted when it is not one plain token
        print(f"  {c.score:.4f}  {shown}  (graph {c.graph_score:.4f}, dense {c.dense_score:.4f})", file=sys.stderr)
    if args.explain:
        from kg_rag.query.stages import describe

        print("stages (ran, with their times; skipped, with why):", file=sys.stderr)
        for line in describe(result):
            print(line, file=sys.stderr)
    else:
        print(f"retrieval {result.timings_ms.get('total', 0):.1f} ms (excluding query embedding)", file=sys.stderr)
    if error:
        print(f"kg-rag: error: no answer: {error}", file=sys.stderr)
        return 1
    return 0


def _check_types(backend: Any, overrides: dict[str, Any], index: str) -> None:
    """A relation type the index does not have is a typo or another index's vocabulary: refused in one line (the
    query itself would only warn, and an allow list of unknown types leaves no graph at all)."""
    from kg_rag.query.stages import unknown_relation_types

    problems = []
    with backend.reader() as view:
        for name in ("edge_types", "exclude_edge_types"):
            unknown = unknown_relation_types(view, overrides.get(name))
            if unknown:
                flag = "--" + name.replace("_", "-")
                problems.append(f"{flag}: no relation of type {', '.join(map(repr, unknown))} in this index")
    if problems:
        raise CLIError("; ".join(problems) + f" (kg-rag stats {index} --types lists them)")


def _answer(args: argparse.Namespace, result: Any) -> tuple[dict[str, Any] | None, str | None]:
    """``(answer, None)``, or ``(None, one line)`` when the chat model fails: the retrieval is still printed."""
    from kg_rag.cli.common import one_line
    from kg_rag.langchain.answer import AnswerGenerationError, answer_from_result
    from kg_rag.langchain.chat import default_chat_model

    try:  # one retrieval: the answer is written from this result
        return answer_from_result(default_chat_model(args.chat_model, max_retries=2), args.question, result), None
    except AnswerGenerationError as exc:
        return None, one_line(exc)


def _payload(result: Any) -> dict[str, Any]:
    from dataclasses import asdict

    from kg_rag.context import render_path

    return {
        "query": result.query,
        "context": result.context,
        "chunks": [{k: v for k, v in asdict(c).items()} for c in result.chunks],
        "entities": [asdict(e) for e in result.entities],
        "paths": [render_path(result.names, pa) for pa in result.paths],
        "warnings": result.warnings,
        "relations": [asdict(r) for r in result.relations],
        "communities": [  # the reports the context shows (a small budget may cut some)
            {"id": c.id, "level": c.level, "title": c.title, "rating": c.rating, "entities": c.entities}
            for c in result.communities
            if c.id in set(result.formatted.communities)
        ],
        "section_tokens": result.section_tokens,
        "timings_ms": result.timings_ms,
        "stages": [{"name": r.name, "ms": r.ms, "skipped": r.skipped or None} for r in result.stages],
    }


def entity_names(values: list[str], backend: Any) -> list[str]:
    """Entity names from ``--include-entities`` / ``--exclude-entities``: a value that is itself the name of an
    entity of the index is one name, commas and all ("Washington, D.C."); any other value is a comma-separated
    list, in which a name with a comma can be written in double quotes ('"Stockholm, Sweden",Oslo')."""
    import csv

    from kg_rag.model.names import canonical_key

    with backend.reader() as view:
        known = view.lookup_entities([canonical_key(v) for v in values if v.strip()])
    names: list[str] = []
    for value in values:
        if not value.strip():
            continue
        if canonical_key(value) in known:
            names.append(value.strip())
            continue
        for row in csv.reader([value], skipinitialspace=True):
            names += [v.strip() for v in row if v.strip()]
    return names


def add_parsers(sub) -> None:
    p = sub.add_parser("query", help="retrieve for a question and print the formatted context")
    p.add_argument("index", help="index directory or postgresql:// URI")
    p.add_argument("question", help="the question")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument(
        "--explain",
        action="store_true",
        help="print the pipeline's stages: those that ran with their times, those skipped with why (stderr)",
    )
    p.add_argument("--preset", default="default", help="named retrieval settings: default | seed003")
    p.add_argument("--embeddings", default=None, help="query embeddings (default: the model the index records)")
    p.add_argument("--edge-types", action="append", help="only traverse these relation types (comma-separated)")
    p.add_argument("--exclude-edge-types", action="append", help="never traverse these relation types")
    p.add_argument(
        "--include-entities",
        action="append",
        help="always start from these entities: comma-separated names, or one name per flag; a name that holds a"
        " comma is taken whole, or can be quoted: '\"Stockholm, Sweden\",Oslo'",
    )
    p.add_argument(
        "--exclude-entities",
        action="append",
        help="never show or traverse these entities (names as for --include-entities)",
    )
    add_filter_arguments(p)
    p.add_argument(
        "--max-hops",
        type=count_at_least(0),
        default=None,
        help="longest walk: expansion, chunk chains, paths (default: 2)",
    )
    p.add_argument(
        "--direction",
        choices=["out", "in", "both"],
        default=None,
        help="walk edges source->target (out), target->source (in) or both (default)",
    )
    p.add_argument("--strategy", default=None, help="chunk ranking: chain (default) | frequency | path | ppr")
    p.add_argument("--k", type=count_at_least(1), default=None, help="chunks to return")
    p.add_argument(
        "--max-context-tokens",
        type=count_at_least(50),
        default=None,
        help="context budget in tokens, at least 50 (default: 4000)",
    )
    p.add_argument(
        "--no-answer",
        action="store_true",
        help="do not call the chat model (by default, when a chat model is configured, query also"
        " answers the question; with --json the answer and its citations are in the output)",
    )
    p.add_argument("--chat-model", default=None, help=CHAT_MODEL_HELP)
    p.set_defaults(func=cmd_query)
