"""How often one name joins different things in a graph: ``python -m kg_rag.eval.senses INDEX``.

Counts, over every relation of an index, the places where a path could join two relations at an entity whose
passages say they are about different things (see :func:`kg_rag.query.senses.same_thing`): passages titled
apart (``Rochester, New York`` / ``Rochester, Iowa``) or a common noun ("clock tower") met in two passages.
Paths no longer make these joins; the counts say how often the merged names would have made them.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from typing import Any

import numpy as np

from kg_rag.query.senses import same_thing
from kg_rag.store.base import EdgeFilter, QueryBackend

I64 = np.int64


def same_name_joins(view: QueryBackend, relation_type: str = "LOCATED_IN") -> dict[str, Any]:
    """Joins between relations from different passages at one entity, and how many of them are about different
    things; ``relation_type``: also count the entities that are the source of two relations of that type
    (``LOCATED_IN`` two places) whose passages disagree, with examples."""
    handles = np.asarray([h for h, _ in view.iter_chunks()], dtype=I64)
    pairs, edges = view.chunk_relations(handles, EdgeFilter())
    keep = np.flatnonzero(~edges.synonym)
    edges = edges.take(keep)
    joins = same_thing(view, edges.ids, edges.src, edges.dst)
    passages: dict[int, set[int]] = defaultdict(set)
    position = {int(e): i for i, e in enumerate(edges.ids.tolist())}
    for c, e in zip(pairs.left.tolist(), pairs.right.tolist()):
        if e in position:
            passages[position[e]].add(c)
    at: dict[int, list[int]] = defaultdict(list)
    for i, (a, b) in enumerate(zip(edges.src.tolist(), edges.dst.tolist())):
        at[a].append(i)
        at[b].append(i)
    cross = apart = 0
    entities: set[int] = set()
    typed: dict[int, list[tuple[int, int]]] = {}
    for node, rels in at.items():
        for x in range(len(rels)):
            for y in range(x + 1, len(rels)):
                i, j = rels[x], rels[y]
                if passages[i] & passages[j]:
                    continue
                cross += 1
                if not joins(i, j, node):
                    apart += 1
                    entities.add(node)
                    if (
                        edges.type_of(i) == edges.type_of(j) == relation_type
                        and int(edges.src[i]) == int(edges.src[j]) == node
                        and int(edges.dst[i]) != int(edges.dst[j])
                    ):
                        typed.setdefault(node, []).append((i, j))
    names = {h: e.name for h, e in zip(sorted(typed), view.entities(np.asarray(sorted(typed), dtype=I64))) if e}
    targets = sorted({int(edges.dst[k]) for v in typed.values() for ij in v for k in ij})
    target_names = {h: e.name for h, e in zip(targets, view.entities(np.asarray(targets, dtype=I64))) if e}
    examples = [
        f"{target_names.get(int(edges.dst[i]))} <-[{relation_type}]- {names.get(n)} -[{relation_type}]-> "
        f"{target_names.get(int(edges.dst[j]))}"
        for n, v in sorted(typed.items(), key=lambda kv: names.get(kv[0], ""))
        for i, j in v[:1]
    ]
    return {
        "cross_passage_joins": cross,
        "joins_of_different_things": apart,
        "entities_joining_different_things": len(entities),
        f"entities_{relation_type.lower()}_two_things": len(typed),
        "examples": examples,
    }


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    if len(args) != 1:
        sys.stderr.write("usage: python -m kg_rag.eval.senses INDEX\n")
        return 2
    from kg_rag.store import open_store

    store = open_store(args[0])
    if not store.exists():
        sys.stderr.write(f"{args[0]}: no kg-rag index there\n")
        return 2
    backend = store.backend()
    with backend.reader() as view:
        sys.stdout.write(json.dumps(same_name_joins(view), indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
