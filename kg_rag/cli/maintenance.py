"""``kg-rag stats``, ``delete``, ``copy`` and ``retype``: reading and maintaining an index that exists."""

from __future__ import annotations

import argparse
import json
from typing import Any

from kg_rag.cli.common import (
    CLIError,
    count_at_least,
    counted,
    existing_store,
    index_embeddings,
    seconds,
    stats_payload,
    type_vocabulary,
    typed_share,
)


def cmd_stats(args: argparse.Namespace) -> int:
    store = existing_store(args.index, verify=not args.no_verify)
    if args.docs:  # opening the generation checks its files
        return _print_documents(store, args.json)
    store.check()  # the counts come from the metadata, so a damaged index would look healthy: check it
    payload = stats_payload(store.stats())
    if args.json:
        print(json.dumps(payload, indent=1))
        return 0
    for key in ("chunks", "documents", "entities", "relations", "synonym_links", "extraction_failures"):
        print(f"{key:20s} {payload[key]}")
    if payload.get("communities") is not None:
        print(f"{'communities':20s} {payload['communities']} ({payload['stale_communities']} stale)")
    print(f"{'embedding_model':20s} {payload['embedding_model']} (dim {payload['dim']})")
    share = typed_share(payload["relation_types"])  # from the counts, as retype does (not the rounded JSON value)
    print(f"{'typed_share':20s} {'-' if share is None else f'{100 * share:.1f}%'} (not RELATED or a bare preposition)")
    print(f"{'type_vocabulary':20s} {payload['type_vocabulary']} relation types")
    types = list(payload["relation_types"].items())
    shown = types if args.types else types[: args.top]
    print("relation_types:" if args.types else f"relation_types (top {len(shown)}; --types lists all):")
    for name, count in shown:
        print(f"  {name:32s} {count}")
    if payload["skipped"]:
        print("skipped:")
        for name, count in payload["skipped"].items():
            print(f"  {name:24s} {count}")
    return 0


def _with_titles(store: Any, docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Documents without a title take their first chunk's ``title`` metadata (OpenIE imports keep the passage
    title only there)."""
    if all(d.get("title") for d in docs):
        return docs
    titles: dict[str, str] = {}
    with store.backend().reader() as view:
        for _, chunk in view.iter_chunks():
            title = (chunk.metadata or {}).get("title")
            if isinstance(title, str) and title.strip():
                titles.setdefault(chunk.doc_id, title)
    return [d if d.get("title") else {**d, "title": titles.get(str(d.get("id")))} for d in docs]


def _print_documents(store, as_json: bool) -> int:
    docs = sorted(store.documents(), key=lambda d: str(d.get("id")))
    if as_json:
        print(json.dumps(_with_titles(store, docs), indent=1, ensure_ascii=False))
        return 0
    for doc in docs:  # ids printed exactly as `delete --doc` takes them; repr() when they hold odd characters
        doc_id = str(doc.get("id"))
        shown = doc_id if doc_id.isprintable() and doc_id == doc_id.strip() else repr(doc_id)
        print(f"{shown}\t{counted(doc.get('chunks', '?'), 'chunk')}")
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    """Remove documents and everything they contributed; older generations no reader holds are removed too,
    so the deleted text is gone from disk (not only from the current generation)."""
    from kg_rag.indexing import IndexWriter

    with IndexWriter(existing_store(args.index), wait=args.wait) as writer:
        meta = writer.store.check()
        writer.embeddings = index_embeddings(args.embeddings, meta.embedding_model, args.index)
        known = {str(d["id"]) for d in writer.documents(args.doc)}
        missing = [d for d in dict.fromkeys(args.doc) if d not in known]
        if missing:
            shown = ", ".join(repr(d) for d in missing[:5]) + (" ..." if len(missing) > 5 else "")
            raise CLIError(f"{args.index}: no document {shown} (kg-rag stats {args.index} --docs lists the ids)")
        removed = writer.delete_documents(args.doc)
    print(
        f"removed {counted(len(set(args.doc)), 'document')}: {counted(removed['chunks'], 'chunk')}, "
        f"{counted(removed['relations'], 'relation')}, {counted(removed['entities'], 'entity', 'entities')}, "
        f"{counted(removed['descriptions'], 'description')}"
    )
    return 0


def cmd_copy(args: argparse.Namespace) -> int:
    """Copy an index between backends (directory <-> PostgreSQL, or to another place of the same kind)."""
    from kg_rag.indexing import IndexWriter
    from kg_rag.store import is_database_uri, open_store

    if not args.target.strip():
        raise CLIError("the target path is empty")
    source = existing_store(args.source)
    index = source.load()
    target = open_store(args.target)
    with IndexWriter(target, wait=args.wait) as writer:
        if target.exists():
            if not args.replace:
                raise CLIError(f"{args.target}: already holds an index (use --replace to overwrite it)")
            drop = getattr(target, "drop", None)
            if is_database_uri(args.target) and drop is not None:
                drop()  # a clean copy keeps the source's row numbers as handles
        writer.save(index)
    stats = index.stats()
    print(
        f"copied {counted(stats['chunks'], 'chunk')}, {counted(stats['entities'], 'entity', 'entities')}, "
        f"{counted(stats['relations'], 'relation')} from {source} to {target}"
    )
    return 0


def cmd_retype(args: argparse.Namespace) -> int:
    """Re-derive relation types (and ids) from the stored predicates; only changed texts are re-embedded."""
    from kg_rag.indexing import IndexWriter
    from kg_rag.model.relation_types import RelationTyper

    with IndexWriter(existing_store(args.index), wait=args.wait) as writer:
        meta = writer.store.check()
        writer.embeddings = index_embeddings(args.embeddings, meta.embedding_model, args.index)
        done = writer.retype(RelationTyper(min_support=args.min_support))
    before = typed_share(done["before"]["relation_types"]) or 0.0
    after = typed_share(done["after"]["relation_types"]) or 0.0
    vocabulary = type_vocabulary(done["after"]["relation_types"])
    print(
        f"retyped {counted(done['retyped'], 'relation')}, merged {counted(done['merged'], 'variant')}; "
        f"typed {100 * before:.1f}% -> {100 * after:.1f}%, {counted(vocabulary, 'type')} besides RELATED; "
        f"{counted(done['embedded'], 'text')} embedded"
    )
    return 0


def add_parsers(sub) -> None:
    p = sub.add_parser("stats", help="print counts of an index")
    p.add_argument("index", help="index directory or postgresql:// URI")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--top", type=count_at_least(0), default=20, help="relation types to list")
    listing = p.add_mutually_exclusive_group()  # each replaces the summary: asking for both would drop one
    listing.add_argument("--types", action="store_true", help="list every relation type with its count")
    listing.add_argument("--docs", action="store_true", help="list document ids (what delete --doc takes)")
    p.add_argument("--no-verify", action="store_true", help="skip sha256 checks of the files")
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser("delete", help="remove documents from an index")
    p.add_argument("index", help="index directory or postgresql:// URI")
    p.add_argument(
        "--doc", action="append", required=True, help="document id as `kg-rag stats IDX --docs` lists it (repeatable)"
    )
    p.add_argument("--wait", type=seconds, default=None, help="seconds to wait for another writer (default 60)")
    p.add_argument("--embeddings", default=None, help="the index's embedding model (default: the one it records)")
    p.set_defaults(func=cmd_delete)

    p = sub.add_parser("copy", help="copy an index between a directory and PostgreSQL (either way)")
    p.add_argument("source", help="index directory or postgresql:// URI to read")
    p.add_argument("target", help="index directory or postgresql:// URI to write")
    p.add_argument("--replace", action="store_true", help="overwrite an index already at the target")
    p.add_argument("--wait", type=seconds, default=None, help="seconds to wait for another writer (default 60)")
    p.set_defaults(func=cmd_copy)

    p = sub.add_parser("retype", help="re-type relations from their predicates (no re-embedding of unchanged text)")
    p.add_argument("index", help="index directory or postgresql:// URI")
    p.add_argument(
        "--min-support", type=count_at_least(1), default=3, help="relations a type needs before it is kept (3)"
    )
    p.add_argument("--embeddings", default=None, help="the index's embedding model (default: the one it records)")
    p.add_argument("--wait", type=seconds, default=None, help="seconds to wait for another writer (default 60)")
    p.set_defaults(func=cmd_retype)
