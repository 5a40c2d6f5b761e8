"""Directed path finding between two entities ("how is X connected to Y?").

Breadth-first through the backend, collecting every shortest path up to ``max_length`` edges (then up to
``limit`` of them). ``direction="directed"`` follows edges source -> target only; ``"any"`` may also walk an
edge backwards, which the rendering shows as ``<-[TYPE]-`` — never inverted; ``"in"`` walks edges backwards
only (a retriever restricted to ``direction="in"``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from kg_rag.query.senses import same_thing
from kg_rag.query.types import GraphPath, PathStep
from kg_rag.store.base import EdgeFilter, QueryBackend

I64 = np.int64
Step = tuple[int, int, int, str, bool]


def find_paths(
    view: QueryBackend,
    source: int,
    target: int,
    *,
    relation_types: Sequence[str] | None = None,
    max_length: int = 4,
    direction: str = "any",
    limit: int = 5,
    use_synonyms: bool = True,
    exclude_types: Sequence[str] = (),
    blocked: Iterable[int] = (),
) -> tuple[list[GraphPath], dict[str, str]]:
    """Shortest paths from entity handle ``source`` to ``target``; returns the paths and key -> name. A path never
    joins two relations at an entity when they are about different things of that name
    (:func:`~kg_rag.query.senses.same_thing`: ``Frankfurt <-[LOCATED_IN]- Consulate General of the United States
    -[LOCATED_IN]-> Shanghai`` joins two consulates).

    ``exclude_types`` (a deny-list of relation types) and ``blocked`` (entity handles never entered) let callers
    apply a retriever's filters to the walk."""
    if direction not in ("directed", "any", "in"):
        raise ValueError("direction must be 'directed', 'any' or 'in'")
    if not 1 <= max_length <= 8:
        raise ValueError("max_length must be between 1 and 8")
    if limit < 1:
        raise ValueError("limit must be >= 1")
    names: dict[str, str] = {}
    if source == target:
        rec = view.entities(np.asarray([source], dtype=I64))[0]
        if rec is None:
            return [], names
        names[rec.key] = rec.name
        return [GraphPath(rec.key, [])], names
    edge_filter = EdgeFilter.build(relation_types, exclude_types, "both", use_synonyms, blocked)
    level = {source: 0}
    parents: dict[int, list[tuple[int, int, int, int, str, bool]]] = {}  # node -> [(edge, prev, src, dst, type, fwd)]
    frontier = [source]
    for depth in range(1, max_length + 1):
        edges = view.edges_of(np.asarray(frontier, dtype=I64), edge_filter)
        in_frontier = set(frontier)
        nxt: list[int] = []
        for i in range(len(edges)):
            a, b, e = int(edges.src[i]), int(edges.dst[i]), int(edges.ids[i])
            moves = []
            if direction != "in" and a in in_frontier:
                moves.append((a, b, True))
            if direction != "directed" and b in in_frontier:
                moves.append((b, a, False))
            for prev, node, fwd in moves:
                if level.get(node, depth) != depth:
                    continue
                if node not in level:
                    level[node] = depth
                    nxt.append(node)
                parents.setdefault(node, []).append((e, prev, a, b, edges.type_of(i), fwd))
        if target in level or not nxt:
            break
        frontier = sorted(set(nxt))
    if target not in level:
        return [], names
    found: list[list[Step]] = []
    wanted = 4 * limit  # some may join two things of one name (see below): enumerate more, keep ``limit``

    def walk(node: int, suffix: list[Step]) -> None:
        if len(found) >= wanted:
            return
        if node == source:
            found.append(list(reversed(suffix)))
            return
        for edge, prev, a, b, rtype, fwd in parents.get(node, []):
            if level.get(prev) != level[node] - 1:
                continue
            walk(prev, [*suffix, (edge, a, b, rtype, fwd)])

    walk(target, [])
    found = _same_things(view, found)[:limit]
    edge_ids = sorted({s[0] for steps in found for s in steps})
    node_ids = sorted({x for steps in found for s in steps for x in (s[1], s[2])})
    rels = dict(zip(edge_ids, view.relations(np.asarray(edge_ids, dtype=I64))))
    ents = dict(zip(node_ids, view.entities(np.asarray(node_ids, dtype=I64))))
    paths = []
    for steps in found:
        if any(rels.get(s[0]) is None or ents.get(s[1]) is None or ents.get(s[2]) is None for s in steps):
            continue
        built = [
            PathStep(rels[e].id, ents[a].key, ents[b].key, rtype, fwd)  # type: ignore[union-attr]
            for e, a, b, rtype, fwd in steps
        ]
        start = ents[source]
        paths.append(GraphPath(start.key, built))  # type: ignore[union-attr]
    for e in ents.values():
        if e is not None:
            names[e.key] = e.name
    return paths, names


def _same_things(view: QueryBackend, found: list[list[Step]]) -> list[list[Step]]:
    """The paths whose consecutive steps are about the same thing where they meet."""
    steps = [s for path in found for s in path[:-1]] + [s for path in found for s in path[1:]]
    if not found or len(steps) == 0:
        return found
    edges = {s[0]: (s[1], s[2]) for path in found for s in path}
    order = sorted(edges)
    at = {e: i for i, e in enumerate(order)}
    joins = same_thing(
        view,
        np.asarray(order, dtype=I64),
        np.asarray([edges[e][0] for e in order], dtype=I64),
        np.asarray([edges[e][1] for e in order], dtype=I64),
    )
    kept = []
    for path in found:
        meet = [(a, b, a[2] if a[4] else a[1]) for a, b in zip(path, path[1:])]  # where step a ends
        if all(joins(at[a[0]], at[b[0]], node) for a, b, node in meet):
            kept.append(path)
    return kept
