"""``kg-rag index``: building an index, or updating one, from documents, OpenIE triples or an extraction file
(``stats``, ``delete``, ``copy`` and ``retype`` are in :mod:`kg_rag.cli.maintenance`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from kg_rag.cli.common import (
    CHAT_MODEL_HELP,
    CLIError,
    count_at_least,
    counted,
    index_embeddings,
    logger,
    seconds,
    type_vocabulary,
)
from kg_rag.errors import KGRagError


def _existing(writer: Any, *, required: bool) -> Any:
    """The :class:`IndexMeta` of the index at the writer's store; an unreadable one is an error when it is to
    be updated, else it is replaced (``None``)."""
    if not writer.exists():
        return None
    try:
        return writer.store.check()
    except (KGRagError, ValueError) as exc:
        if required:
            raise CLIError(f"{writer.store}: the index to update is unreadable ({exc})") from exc
        logger.warning("existing index at %s is unreadable (%s); building from scratch", writer.store, exc)
        return None


def _refuse_empty(has_chunks: bool, skipped: int, out: str, old: Any) -> None:
    """A rebuild from input that yielded no document would replace the index with an empty one: refuse."""
    if has_chunks:
        return
    what = f"{out} was not changed" if old is not None else "nothing was written"
    raise CLIError(f"no document could be read from the input ({counted(skipped, 'item')} skipped); {what}")


def cmd_index(args: argparse.Namespace) -> int:
    from kg_rag.langchain.embeddings import make_embeddings

    sources = [bool(args.openie or args.corpus), bool(args.docs), bool(args.extractions)]
    if sum(sources) != 1:
        raise CLIError("give exactly one input: --openie/--corpus, --docs, or --extractions")
    for flag in ("openie", "corpus", "extractions"):
        path = getattr(args, flag)
        if path and not Path(path).is_file():
            what = "no such file" if not Path(path).exists() else "not a regular file"
            raise CLIError(f"--{flag} {path}: {what}")
    if args.synonym_threshold is not None and not 0.0 < args.synonym_threshold <= 1.0:  # before any work
        raise CLIError(f"--synonym-threshold must be in (0, 1], got {args.synonym_threshold}")
    if args.docs and args.chunk_overlap >= args.chunk_size:  # the chunker's limit, checked before documents load
        raise CLIError(
            f"--chunk-overlap must be smaller than --chunk-size, got {args.chunk_overlap} >= {args.chunk_size}"
        )
    if not args.out.strip():
        raise CLIError("--out is empty")
    if args.docs and not Path(args.docs).exists():
        raise CLIError(f"--docs {args.docs}: no such file or folder")
    from kg_rag.cli.planning import check_planning_args, dry_run, extractor_kind, make_extractor

    schema = check_planning_args(args)
    kind = extractor_kind(args)
    if args.dry_run:
        return dry_run(args, schema, kind)
    inputs = _read_inputs(args, kind)
    progress = not args.quiet
    extractor = make_extractor(args, kind, schema)  # fails fast, before any work, without a chat model
    # an index already there keeps its own model unless another is named (--update: must be the same one);
    # that is decided once it is loaded, under the writer lock. A new index defaults to local.
    embeddings = make_embeddings(args.embeddings) if args.embeddings and not args.update else None

    from kg_rag.indexing import IndexWriter
    from kg_rag.store import open_store

    with IndexWriter(open_store(args.out), wait=args.wait, progress=progress) as writer:
        return _index_locked(args, writer, embeddings, extractor, inputs)


def _read_inputs(args: argparse.Namespace, kind: str | None) -> dict[str, Any]:
    """Read and check the JSON inputs before ``--out`` is created and locked, so that a bad file, or an OpenIE
    file that matches none of the corpus, fails without leaving a folder behind; the import uses what was read."""
    from kg_rag.jsonio import load_json

    data = {flag: load_json(getattr(args, flag)) for flag in ("openie", "corpus", "extractions") if getattr(args, flag)}
    if "openie" in data or "corpus" in data:
        from kg_rag.ingest.openie import check_corpus_match

        names = {"openie_name": args.openie or "openie", "corpus_name": args.corpus or "corpus"}
        check_corpus_match(data.get("openie", {"docs": []}), data.get("corpus"), **names)
        if "openie" not in data and kind is None:  # said before the passages are embedded, most of the run
            print(
                "warning: --corpus with --no-extract: the passages are indexed with no graph (no entities "
                "or relations); drop --no-extract to extract one (--extractor nlp), or give OpenIE triples with "
                "--openie",
                file=sys.stderr,
            )
    if "extractions" in data:
        from kg_rag.ingest.extraction_file import check_extraction_payload

        check_extraction_payload(data["extractions"], args.extractions)
    return data


def _index_locked(args, writer, embeddings, extractor, inputs: dict[str, Any]) -> int:
    """The index command once the writer lock is held: an update (and a ``--docs`` re-index) changes only the
    documents that changed, through the writer; a rebuild (``--openie``/``--extractions`` without ``--update``,
    or the first index) builds the graph in memory and saves it whole."""
    from kg_rag.langchain.embeddings import make_embeddings
    from kg_rag.model.report import IngestReport

    out = args.out
    old = _existing(writer, required=args.update)
    if args.update and old is None:
        raise CLIError(f"{out}: --update needs an existing index there")
    if embeddings is None:
        embeddings = index_embeddings(args.embeddings, old.embedding_model, out) if old is not None else None
    writer.embeddings = embeddings or make_embeddings("local")
    report = IngestReport()  # this run's: what it skipped, failed and spent
    if args.docs:
        outcome = _index_docs(args, writer, extractor, report, old)
        if isinstance(outcome, int):
            return outcome
        changes = outcome
    else:
        changes = None
        _index_file(args, writer, inputs, report, old, extractor)
    if old is not None and old.communities and writer.meta().communities is None:
        print(
            f"kg-rag: note: the rebuild starts a new graph, so the old index's {old.communities} communities "
            f"were not kept; run kg-rag communities {out} (with --update they are kept)",
            file=sys.stderr,
        )
    stats = writer.store.stats()
    print(
        f"indexed {counted(stats['chunks'], 'chunk')}, {counted(stats['entities'], 'entity', 'entities')}, "
        f"{counted(stats['relations'], 'relation')} "
        f"({counted(type_vocabulary(stats['relation_types']), 'type')} besides RELATED) into {out}"
    )
    skipped = dict(report.skipped)
    if args.docs:  # the files not read were named, with their reason, before any extraction
        from kg_rag.model.report import FILE_REASONS

        skipped = {k: v for k, v in skipped.items() if k not in FILE_REASONS}
    if any(skipped.values()):  # this run's; `kg-rag stats` shows the index's running totals
        print("skipped: " + ", ".join(f"{k}={v}" for k, v in sorted(skipped.items()) if v))
    if changes is not None and changes.failed:
        print(
            f"kg-rag: extraction failed for {counted(changes.chunks_failed, 'chunk')}; "
            "re-run the same command to retry them",
            file=sys.stderr,
        )
        return 1
    if args.extractions and report.failures:  # said, not only counted in `stats`: the file needs fixing
        from kg_rag.ingest.reindex import named

        failed = sorted(report.failures)
        print(
            f"kg-rag: {counted(len(failed), 'document')} of {args.extractions} had an invalid extraction and "
            f"{'was' if len(failed) == 1 else 'were'} indexed without a graph: {named(failed)} "
            f"({report.failures[failed[0]]})",
            file=sys.stderr,
        )
        return 1
    return 0


def _index_docs(args, writer, extractor, report, old) -> Any:
    """``--docs``: one :class:`~kg_rag.indexing.IndexJob`. Documents carry content hashes, so unchanged ones are
    kept from the stored index, not redone; without ``--update`` the index then holds exactly these documents (a
    rebuild that would delete documents of other sources is refused first, unless ``--delete-others``). A new
    index (or one replacing an unreadable one) is built whole from the change. Returns the changes, or an exit
    code when nothing was written."""
    from kg_rag.cli.planning import guard_documents, load_input_documents
    from kg_rag.indexing import IndexJob, StoreTarget

    documents = load_input_documents(args, report)
    skipped = sum(report.skipped.values())
    if not documents and not args.update:  # before any extraction: nothing to extract, nothing to replace
        _refuse_empty(False, skipped, args.out, old)

    def guard(plan: Any) -> None:  # before any chat call: a refused run costs nothing
        if old is not None and not args.update and documents:
            guard_documents(args, writer.documents(), documents)
        if old is not None:
            _refuse_empty(args.update or bool(plan.docs), skipped, args.out, old)

    def build(kg: Any, run_report: Any) -> Any:
        _refuse_empty(bool(kg.chunks), skipped, args.out, old)
        return _built(args, writer, kg, run_report)

    job = IndexJob(
        documents,
        extractor,
        chunk_size=args.chunk_size,
        chunk_overlap=args.chunk_overlap,
        sync=not args.update,
        progress=writer.progress,
    )
    target = StoreTarget(
        writer,
        type_prefix=not args.no_type_prefix,
        synonym_threshold=args.synonym_threshold,
        run_report=report,
        new=old is None,
        build=build,
    )
    changes = job.run(
        target, guard=guard, review=lambda changes: not _print_changes(args, changes, extractor, report, old)
    )
    return 1 if changes.all_failed else changes


def _print_changes(args, changes, extractor, report, old) -> bool:
    """Print what the run changes; returns whether every extraction failed (then nothing of it is saved)."""
    kept = not changes.all_failed
    print(changes.summary(kept=kept))
    for line in changes.failure_lines(kept=kept):
        print(f"  {line}")
    if changes.removed and kept:
        from kg_rag.ingest.reindex import named

        print(f"  deleted {named(changes.removed)}")
    if extractor is not None and getattr(extractor, "calls_model", True):
        from kg_rag.ingest.extract import usage_summary

        print("llm usage: " + usage_summary(report.usage, changes.chunks_extracted + changes.chunks_failed))
    elif extractor is not None:
        print(f"nlp extraction: {extractor.model_name}, no chat calls")
    if not kept:
        what = f"{args.out} was not changed" if old is not None else "no index was written"
        model = getattr(extractor, "chat_model", None)
        print(f"kg-rag: every extraction failed{f' (chat model {model})' if model else ''}; {what}", file=sys.stderr)
    return not kept


def _index_file(args, writer, inputs, report, old, extractor=None) -> None:
    """``--openie``/``--corpus`` and ``--extractions``: a rebuild is built in memory and saved whole; an update
    of an extraction file replaces its documents row by row; an OpenIE update re-types the whole corpus, so it
    edits the whole graph."""
    from kg_rag.model.graph import KnowledgeGraph

    if args.openie or args.corpus:
        from kg_rag.ingest.openie import import_openie

        names = (args.openie or "openie", args.corpus or "corpus")
        openie = inputs.get("openie", {"docs": []})

        def run(kg: KnowledgeGraph, into: Any) -> None:
            if extractor is not None:  # --corpus without --openie: the passages' graph is extracted here
                from kg_rag.ingest.corpus import import_corpus

                import_corpus(kg, inputs["corpus"], extractor, report=into, progress=writer.progress, name=names[1])
                return
            import_openie(kg, openie, inputs.get("corpus"), report=into, progress=writer.progress, names=names)

        if args.update:

            def edit(index: Any) -> None:
                before = index.report.to_dict()
                run(index.kg, index.report)
                report.skipped.update(_grown(before["skipped"], index.report.skipped))

            writer.edit(edit, synonym_threshold=args.synonym_threshold)
            return
        kg = KnowledgeGraph()
        run(kg, report)
    else:
        from kg_rag.ingest.extraction_file import import_extraction_file

        kg = KnowledgeGraph()
        import_extraction_file(kg, inputs["extractions"], report=report, source=args.extractions)
        if args.update:
            from kg_rag.model.change import GraphChange

            change = GraphChange(report=report).replace(kg)
            writer.apply(change, type_prefix=not args.no_type_prefix, synonym_threshold=args.synonym_threshold)
            return
    _refuse_empty(bool(kg.chunks), sum(report.skipped.values()), args.out, old)
    if old is not None:  # a rebuild: refused when it would delete documents of other sources
        from kg_rag.cli.planning import guard_import

        guard_import(args, writer.documents(), kg)
    writer.save(_built(args, writer, kg, report))


def _grown(before: dict[str, int], after: Any) -> dict[str, int]:
    return {k: v - before.get(k, 0) for k, v in after.items() if v - before.get(k, 0)}


def _built(args, writer, kg, report) -> Any:
    """A new index of ``kg`` (embedded, its entities resolved, synonym links when asked)."""
    from kg_rag.index.build import build_index
    from kg_rag.index.resolution import resolve_index

    index = build_index(
        kg, writer.embeddings, type_prefix=not args.no_type_prefix, report=report, progress=writer.progress
    )
    # spelling variants of one thing become one entity (unless --no-resolve); decisions taken by hand always hold
    index, merged = resolve_index(
        index, writer.embeddings, writer.decisions(), auto=not args.no_resolve, progress=writer.progress
    )
    if merged["auto"] or merged["manual"]:
        total = counted(merged["auto"] + merged["manual"], "entity", "entities")
        print(f"merged {total} into others ({merged['manual']} by hand); `kg-rag entities list {args.out}` names them")
    if args.synonym_threshold is not None:
        from kg_rag.index.synonyms import link_synonyms

        link_synonyms(index, args.synonym_threshold)
    return index


def add_parsers(sub) -> None:
    p = sub.add_parser("index", help="build (or --update) an index directory")
    p.add_argument("--openie", help="OpenIE JSON in HippoRAG format (docs[*].extracted_triples)")
    p.add_argument("--corpus", help="corpus JSON [{title, text}] matching --openie")
    p.add_argument(
        "--docs",
        help="file or folder to extract (with the configured chat model, or without one: see --extractor): "
        ".txt/.md/.rst, .pdf (pypdf), .html (BeautifulSoup + markdownify), .docx (python-docx), .csv/.tsv; other "
        "files are counted and named",
    )
    p.add_argument(
        "--schema",
        default=None,
        help="with --docs: extraction schema file (.yaml/.toml/.json): entity_types, relation_types with their "
        "meanings, system_prompt (see the README)",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="with --docs: print the documents, chunks, chat calls and estimated tokens, then stop (no chat call, "
        "nothing written)",
    )
    p.add_argument(
        "--delete-others",
        action="store_true",
        help="without --update: let the rebuild delete documents of other sources (refused, naming them, otherwise)",
    )
    p.add_argument("--extractions", help="saved extraction file (kg-rag-extractions format)")
    p.add_argument("--out", required=True, help="index directory (or postgresql:// URI) to write")
    p.add_argument("--wait", type=seconds, default=None, help="seconds to wait for another writer (default 60)")
    p.add_argument(
        "--update",
        action="store_true",
        help="add to (or replace documents in) the index at --out; without it the index holds exactly this input",
    )
    p.add_argument(
        "--no-extract",
        action="store_true",
        help="with --docs or --corpus: chunk and embed only, no graph (dense/BM25 baselines)",
    )
    p.add_argument(
        "--extractor",
        choices=("llm", "nlp"),
        default=None,
        help="with --docs or --corpus: llm (a chat model) or nlp (spaCy's parse, no LLM; the `nlp` extra). Default: "
        "llm for --docs when a chat model is configured, else nlp",
    )
    p.add_argument(
        "--spacy-model",
        default=None,
        metavar="NAME",
        help="with --extractor nlp: the spaCy pipeline (default $KG_RAG_SPACY_MODEL, else en_core_web_sm, else the "
        "copy the nlp extra installs)",
    )
    p.add_argument(
        "--workers",
        type=count_at_least(1),
        default=1,
        help="with --extractor nlp: parsing processes (default 1)",
    )
    p.add_argument(
        "--embeddings",
        default=None,
        help="local | openai[:MODEL] | fake[:DIM] | module:attr (default: the model of the index already at --out, "
        "else local)",
    )
    p.add_argument("--no-type-prefix", action="store_true", help="embed entities without their [TYPE]")
    p.add_argument("--synonym-threshold", type=float, default=None, help="link entities with cosine >= this")
    p.add_argument(
        "--no-resolve",
        action="store_true",
        help="keep spelling variants of one name apart (by default U.S., USA and United States become one entity "
        "when the evidence agrees; merges and splits made by hand hold either way)",
    )
    p.add_argument("--chat-model", default=None, help=CHAT_MODEL_HELP)
    p.add_argument("--chunk-size", type=count_at_least(1), default=512, help="tokens per chunk (default 512)")
    p.add_argument("--chunk-overlap", type=count_at_least(0), default=24, help="token overlap (default 24)")
    p.add_argument("--max-concurrency", type=count_at_least(1), default=4, help="parallel extraction calls (default 4)")
    p.add_argument(
        "--llm-timeout",
        type=float,
        default=None,
        help="seconds one chat call may take (default $KG_RAG_LLM_TIMEOUT or 60)",
    )
    p.add_argument(
        "--llm-retries", type=count_at_least(0), default=2, help="extra attempts per chunk, with backoff (default 2)"
    )
    p.add_argument(
        "--doc-prefix",
        default=None,
        help="with --docs: id prefix for its documents (default: the folder's name, e.g. policies/old.md)",
    )
    p.add_argument(
        "--follow-links", action="store_true", help="with --docs: follow symbolic links that lead out of the folder"
    )
    p.add_argument(
        "--encoding",
        default=None,
        metavar="ENC",
        help="with --docs: decode text, CSV and HTML files with this encoding (e.g. cp1252), strictly; by default "
        "UTF-8, else a guessed encoding, named per file",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_index)
