"""``kg-rag entities``: entity resolution by hand — merge two entities, split a merge, list the merges.

A merge or split is recorded with the index, so re-indexing and updates decide the same (see
:mod:`kg_rag.model.resolution`)."""

from __future__ import annotations

import argparse

from kg_rag.cli.common import existing_store, index_embeddings, seconds


def cmd_entities(args: argparse.Namespace) -> int:
    from kg_rag.indexing import IndexWriter

    with IndexWriter(existing_store(args.index), wait=args.wait) as writer:
        if args.action == "list":
            merges = writer.entity_merges()
            for m in merges:
                print(f"{m.name}\t-> {m.into_name}\t({m.how})")
            apart = writer.decisions().apart
            for a, b in sorted(apart):
                print(f"{a}\t<> {b}\t(kept apart)")
            if not merges and not apart:
                print("no entity was merged into another")
            return 0
        meta = writer.store.check()
        writer.embeddings = index_embeddings(args.embeddings, meta.embedding_model, args.index)
        if args.action == "merge":
            merge = writer.merge_entities(args.keep, args.other)
            print(f"merged {merge.name!r} into {merge.into_name!r}; re-indexing and updates keep them one entity")
        else:
            moved = writer.split_entities(args.keep, args.other)
            print(
                f"split {args.other!r} from {args.keep!r} ({moved['mentions']} mentions, {moved['evidence']} "
                "relation evidence records moved back); they are kept apart from now on"
            )
    return 0


def add_parsers(sub) -> None:
    p = sub.add_parser("entities", help="merge two entities, split a merge, or list the merges (recorded)")
    actions = p.add_subparsers(dest="action", required=True)
    for action, text in (
        ("merge", "merge OTHER into KEEP (KEEP's name stays); re-indexing and updates merge them again"),
        ("split", "undo the merge of OTHER into KEEP; the two are never merged again automatically"),
    ):
        q = actions.add_parser(action, help=text)
        q.add_argument("index", help="index directory or postgresql:// URI")
        q.add_argument("keep", help="the entity that stays (its name or key)")
        q.add_argument("other", help="the entity merged into it, or to split from it")
        q.add_argument("--embeddings", default=None, help="the index's embedding model (default: the one it records)")
        q.add_argument("--wait", type=seconds, default=None, help="seconds to wait for another writer (default 60)")
        q.set_defaults(func=cmd_entities)
    q = actions.add_parser("list", help="the merges the index records (automatic and by hand) and the splits")
    q.add_argument("index", help="index directory or postgresql:// URI")
    q.add_argument("--wait", type=seconds, default=None, help="seconds to wait for another writer (default 60)")
    q.set_defaults(func=cmd_entities)
