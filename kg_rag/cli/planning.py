"""What ``kg-rag index`` will do, said before it does it: the schema file, the re-index guard, the files it
does not read, and ``--dry-run`` (documents, chunks, chat calls and tokens, with no call and no write)."""

from __future__ import annotations

import argparse
import os
from typing import Any

from kg_rag.cli.common import CLIError

NO_MODEL_NOTICE = (
    "note: no chat model configured (OPENAI_API_KEY): extracting with the NLP extractor (spaCy, no LLM); "
    "--extractor llm needs a chat model, --no-extract indexes chunks only"
)


def extractor_kind(args: argparse.Namespace) -> str | None:
    """Which extractor the run uses: ``"llm"``, ``"nlp"`` or ``None`` (no extraction). ``--extractor`` decides;
    without it, ``--docs`` uses the chat model ``--chat-model`` names or the configured one (a dry run then estimates
    its cost with no key), and the NLP extractor when there is none (with a notice:
    a first run without a key still gets a typed graph), and a ``--corpus`` without ``--openie`` uses the NLP
    extractor (it never starts paying for chat calls unasked). Refused before any work: ``--extractor`` where
    nothing is extracted, and the NLP extractor when spaCy or its pipeline is missing (naming every route)."""
    extracts = bool(args.docs) or bool(args.corpus and not args.openie)
    named_model = bool(args.chat_model)
    if args.extractor and not extracts:
        raise CLIError("--extractor is for --docs and for --corpus without --openie (other inputs hold their graph)")
    if args.extractor and args.no_extract:
        raise CLIError("--extractor has no effect with --no-extract: drop one of them")
    if args.no_extract and not extracts:
        raise CLIError("--no-extract is for --docs and for --corpus without --openie")
    if not extracts or args.no_extract:
        return None
    if args.extractor:
        kind = args.extractor
    else:
        from kg_rag.langchain.chat import chat_model_configured

        kind = "llm" if args.docs and (named_model or chat_model_configured()) else "nlp"  # a model named: wanted
    if kind == "nlp":
        if args.schema and not args.extractor:
            raise CLIError(
                "--schema is for a chat model, and none is configured: set KG_RAG_CHAT_MODEL or OPENAI_API_KEY "
                "(docs/chat-models.md), or drop --schema to extract with the NLP extractor"
            )
        if args.schema:
            raise CLIError("--schema is for the LLM extractor (--extractor llm); the NLP extractor reads the grammar")
        _check_nlp(args)
    return kind


def _check_nlp(args: argparse.Namespace) -> None:
    """The NLP extractor's pipeline, loaded now so that a missing spaCy fails before any work, naming the routes."""
    from kg_rag.errors import ConfigurationError
    from kg_rag.ingest.nlp.loading import load_pipeline

    try:
        load_pipeline(args.spacy_model)
    except ConfigurationError as exc:
        if args.extractor == "nlp":
            raise CLIError(str(exc)) from None
        routes = "--extractions FILE (a saved extraction), " if args.docs else ""
        raise CLIError(
            f"no chat model configured and the NLP extractor cannot run ({exc}); choose --extractor nlp after that "
            f"install, --extractor llm with OPENAI_API_KEY set, {routes}or --no-extract (chunks only, no graph)"
        ) from None


def make_extractor(args: argparse.Namespace, kind: str | None, schema: Any) -> Any:
    """The extractor ``kind`` names, configured from the flags (``None`` for no extraction)."""
    if kind is None:
        return None
    if kind == "nlp":
        from kg_rag.ingest.nlp import NLPExtractor

        if not args.extractor:
            print(NO_MODEL_NOTICE if args.docs else "note: extracting with the NLP extractor (spaCy, no LLM)")
        return NLPExtractor(args.spacy_model, workers=args.workers)
    from kg_rag.ingest.extract import LLMExtractor
    from kg_rag.langchain.chat import default_chat_model

    return LLMExtractor(
        default_chat_model(args.chat_model, timeout=args.llm_timeout),
        max_concurrency=args.max_concurrency,
        max_retries=args.llm_retries,
        **(schema.extractor_kwargs() if schema is not None else {}),
    )


def check_planning_args(args: argparse.Namespace) -> Any:
    """Flags that only mean something together, checked before any work; returns the extraction schema read
    from ``--schema`` (``None`` without it)."""
    if args.schema and not args.docs:
        raise CLIError("--schema is for --docs (the only input a chat model extracts)")
    if args.schema and args.no_extract:
        raise CLIError("--schema has no effect with --no-extract: drop one of them")
    if args.llm_timeout is not None:  # a bad value is refused whichever extractor runs
        from kg_rag.langchain.chat import llm_timeout

        llm_timeout(args.llm_timeout)
    if args.delete_others and args.update:
        raise CLIError("--delete-others is for a rebuild without --update (--update deletes nothing)")
    if args.dry_run and not args.docs:
        raise CLIError(
            "--dry-run estimates the extraction of --docs; --openie, --corpus and --extractions call no chat model"
        )
    if args.encoding is not None:
        if not args.docs:
            raise CLIError("--encoding is for --docs (JSON inputs are UTF-8)")
        from kg_rag.ingest.documents import check_encoding

        try:
            check_encoding(args.encoding)
        except ValueError as exc:
            raise CLIError(f"--encoding: {exc}") from None
    if not args.schema:
        return None
    from kg_rag.ingest.extraction_schema import load_schema

    return load_schema(args.schema)


def load_input_documents(args: argparse.Namespace, report: Any) -> list[Any]:
    """``--docs``' documents; the files not read are counted into ``report`` and printed with their names, before
    anything is extracted."""
    from kg_rag.ingest.documents import load_documents
    from kg_rag.model.report import IngestReport

    loaded = IngestReport()
    documents = load_documents(
        args.docs, prefix=args.doc_prefix, follow_links=args.follow_links, report=loaded, encoding=args.encoding
    )
    for line in loaded.file_lines():
        print(line)
    report.merge(loaded)
    return documents


def guard_documents(args: argparse.Namespace, stored: list[dict[str, Any]], documents: list[Any]) -> Any:
    """Refuse (one line naming them) a rebuild from ``--docs`` that would delete documents of other sources,
    unless ``--delete-others``; ``stored``: the index's document records. Returns the
    :class:`~kg_rag.ingest.reindex.Deletions`."""
    from kg_rag.ingest.documents import document_ids_scope

    incoming = [str((d.metadata or {}).get("doc_id")) for d in documents]
    return _check(args, stored, incoming, document_ids_scope(args.docs, args.doc_prefix), args.docs)


def guard_import(args: argparse.Namespace, stored: list[dict[str, Any]], built: Any) -> Any:
    """The same guard for a rebuild from ``--corpus``/``--openie`` or ``--extractions``: a stored document
    belongs to the input when it records that file's path."""
    from kg_rag.ingest.reindex import file_scope

    owns = file_scope(stored, args.corpus, args.openie, args.extractions)
    what = args.extractions or args.corpus or args.openie
    return _check(args, stored, built.documents(), owns, what)


def _check(args: argparse.Namespace, stored: list[dict[str, Any]], incoming: list[str], owns: Any, what: str) -> Any:
    from kg_rag.ingest.reindex import ReindexRefused, check_reindex

    try:
        return check_reindex(
            [str(r["id"]) for r in stored], incoming, owns, confirmed=args.delete_others, where=args.out, what=what
        )
    except ReindexRefused as exc:
        raise CLIError(str(exc)) from None


def chat_model_name(args: argparse.Namespace) -> str:
    from kg_rag.langchain.chat import DEFAULT_CHAT_MODEL

    return args.chat_model or os.environ.get("KG_RAG_CHAT_MODEL") or DEFAULT_CHAT_MODEL


def dry_run(args: argparse.Namespace, schema: Any, kind: str | None = "llm") -> int:
    """Load and plan exactly as the run would (the index at ``--out`` read, not locked or written), print what it
    would extract and what that costs, and stop. No chat model is needed or called. Exits 2 when the run
    itself would be refused: before the estimate for a target that cannot take an index or a bad
    ``--llm-timeout``, after it for the re-index guard."""
    from kg_rag.indexing import GraphTarget, IndexJob, IndexWriter, StoreTarget
    from kg_rag.ingest.cost import estimate_extraction
    from kg_rag.ingest.extraction_schema import ExtractionSchema
    from kg_rag.ingest.reindex import named
    from kg_rag.model.graph import KnowledgeGraph
    from kg_rag.model.report import IngestReport

    if kind == "llm":
        from kg_rag.langchain.chat import llm_timeout

        llm_timeout(args.llm_timeout)  # the run refuses a bad timeout before any work
    old = _read_existing(args)  # the store, or None (planning reads only the chunks of these documents)
    records = old.documents() if old is not None else []
    report = old.read_report() if old is not None else IngestReport()
    print("dry run: nothing is sent to a chat model and nothing is written")
    documents = load_input_documents(args, IngestReport())
    extract = kind is not None
    schema = schema or ExtractionSchema()
    key = schema.key()
    if kind == "nlp":
        from kg_rag.ingest.nlp import NLPSettings
        from kg_rag.ingest.nlp.loading import load_pipeline, pipeline_id

        key = NLPSettings(pipeline_id(load_pipeline(args.spacy_model))).key()
    job = IndexJob(
        documents,
        chunk_size=args.chunk_size,
        chunk_overlap=args.chunk_overlap,
        sync=not args.update,
        extract=extract,
        schema_key=key,
    )  # the run's job, stopped after its first step
    plan = job.plan(StoreTarget(IndexWriter(old)) if old is not None else GraphTarget(KnowledgeGraph(), report))
    stored = {str(r["id"]) for r in records}
    new = [d for d in plan.changed if d not in stored]
    again = len(plan.changed) - len(new)
    line = f"documents: {len(new)} new, {again} changed, {len(plan.changes.unchanged)} unchanged"
    if again:
        line += " (changed: new content, or indexed with another chunking or schema)"
    if plan.changes.removed:
        line += f"; {len(plan.changes.removed)} to delete: {named(plan.changes.removed)}"
    print(line)
    if not extract:
        print(f"chunks: {sum(map(len, plan.changed.values()))} to embed; no chat calls (--no-extract)")
    elif kind == "nlp":
        print(f"chunks to extract: {len(plan.to_extract)} with the NLP extractor; no chat calls")
    else:
        estimate = estimate_extraction(
            plan.to_extract,
            schema=schema,
            model=chat_model_name(args),
            max_retries=args.llm_retries,
            history=report.usage,
        )
        if not plan.to_extract:
            print("chunks to extract: 0; no chat calls")
        else:
            for text in estimate.lines():
                print(text)
            if plan.retry:
                print(f"(the chunks include {len(plan.retry)} whose extraction failed earlier, tried again)")
    if old is not None and not args.update and documents:  # no document at all: the run refuses that instead
        guard_documents(args, records, documents)
    return 0


def _read_existing(args: argparse.Namespace) -> Any:
    from kg_rag.errors import KGRagError
    from kg_rag.store import open_store

    store = open_store(args.out)
    if not store.exists():
        if args.update:
            raise CLIError(f"{args.out}: --update needs an existing index there")
        try:
            store.check_target()  # a folder of other files: the run refuses to write there
        except ValueError as exc:
            raise CLIError(str(exc)) from None
        return None
    try:
        store.check()
        return store
    except (KGRagError, ValueError) as exc:
        if args.update:
            raise CLIError(f"{args.out}: the index to update is unreadable ({exc})") from exc
        print(f"note: the index at {args.out} is unreadable ({exc}); the run would build it from scratch")
        return None
