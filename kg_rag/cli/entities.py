"""``kg-rag entities``: entity resolution by hand — merge two entities, split a merge, list the merges; and
``kg-rag relations``: what the graph says, as directed rows a reader can check against the documents.

A merge or split is recorded with the index, so re-indexing and updates decide the same (see
:mod:`kg_rag.model.resolution`)."""

from __future__ import annotations

import argparse
import difflib
import json
import sys

from kg_rag.cli.common import CLIError, existing_store, index_embeddings, seconds


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
                print("no entity was merged into another (kg-rag relations INDEX lists what the graph says)")
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


def cmd_relations(args: argparse.Namespace) -> int:
    """Print the graph's relations, each as stored (source -[TYPE]-> target), with the words that stated it."""
    from kg_rag.model.names import canonical_key, upper_snake
    from kg_rag.model.records import SYNONYM_KIND

    if args.limit < 0:
        raise CLIError(f"--limit must be 0 or more, got {args.limit}")
    store = existing_store(args.index)
    kg = store.load().kg  # read only
    keys: set[str] | None = None
    if args.entity is not None:
        entity = kg.get_entity(args.entity)
        if entity is None:  # a name entity resolution merged into another stands for that one
            key = canonical_key(args.entity)
            merged = next((m for m in store.read_report().resolution.merges.values() if m.key == key), None)
            entity = kg.get_entity(merged.into) if merged is not None else None
        if entity is None:
            raise CLIError(f"no entity named {args.entity!r} in {args.index}")
        keys = {entity.key} | {  # the names entity resolution linked to it are the same thing
            r.target for r in kg.relations(include_synonyms=True) if r.kind == SYNONYM_KIND and r.source == entity.key
        }
    wanted = upper_snake(args.type) if args.type else None
    name = {key: kg.graph.nodes[key].get("name", key) for key in kg.graph.nodes}
    found = 0
    for rel in sorted(kg.relations(), key=lambda r: (name[r.source].casefold(), r.relation_type, name[r.target])):
        if (wanted and rel.relation_type != wanted) or (keys is not None and not {rel.source, rel.target} & keys):
            continue
        found += 1
        if found > args.limit:
            continue
        if args.json:
            row = {"source": name[rel.source], "type": rel.relation_type, "target": name[rel.target]}
            row |= {"predicate": rel.predicate, "evidence": rel.evidence_quote, "documents": rel.doc_ids}
            print(json.dumps(row, ensure_ascii=False))
        else:
            said = f'  "{rel.evidence_quote}"' if rel.evidence_quote and args.evidence else ""
            print(f"{name[rel.source]} -[{rel.relation_type}]-> {name[rel.target]}{said}")
    more = f"; the first {args.limit} shown (--limit)" if found > args.limit else ""
    summary = f"{found} relation{'' if found == 1 else 's'}{more}"
    if wanted and not found:
        types = sorted({r.relation_type for r in kg.relations()})
        near = difflib.get_close_matches(wanted, types, n=3)
        summary += f"; no relation is of type {wanted}" + (f" (did you mean {', '.join(near)}?)" if near else "")
    print(summary, file=sys.stderr if args.json else sys.stdout)
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

    p = sub.add_parser(
        "relations",
        help="list the graph's relations (source -[TYPE]-> target), of one entity or type",
        description="Print the relations the index holds, each in its stored direction, sorted by source. "
        "--entity keeps the relations that touch one entity (by name; the names entity resolution merged with it "
        "count as the same thing), --type those of one type.",
    )
    p.add_argument("index", help="index directory or postgresql:// URI")
    p.add_argument("--entity", default=None, help="only relations touching this entity (its name)")
    p.add_argument("--type", default=None, help="only relations of this type (e.g. SUPERSEDED_BY)")
    p.add_argument("--limit", type=int, default=200, help="print at most this many (default 200)")
    p.add_argument("--evidence", action="store_true", help="print the sentence that stated each relation")
    p.add_argument("--json", action="store_true", help="one JSON object per line (names, type, predicate, evidence)")
    p.set_defaults(func=cmd_relations)
