"""Directed path finding between two entities ("how is X connected to Y?"), under a query's filters.

Breadth-first through the backend, collecting every shortest path up to ``max_length`` edges (then up to
``limit`` of them). Direction has the vocabulary of the walk settings: ``"out"`` follows edges source -> target
only; ``"in"`` walks edges backwards only; ``"both"`` may walk an edge either way — a backward step is rendered
``<-[TYPE]-``, never inverted. :func:`connect` is what the path tool (and MCP) runs: it resolves the two names,
narrows the walk to what the settings allow, and says in one line what the model can fix.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from kg_rag.errors import InputError
from kg_rag.model.names import canonical_key, upper_snake
from kg_rag.model.notation import quote_name
from kg_rag.model.results import GraphPath, PathStep
from kg_rag.query.limits import suggest_entities, unknown_name
from kg_rag.query.params import WalkSettings
from kg_rag.query.seeds import resolve_names
from kg_rag.query.senses import same_thing
from kg_rag.store.base import EdgeFilter, QueryBackend
from kg_rag.store.scope import ScopedView

DIRECTIONS = ("out", "in", "both")

I64 = np.int64
Step = tuple[int, int, int, str, bool]


def find_paths(
    view: QueryBackend,
    source: int,
    target: int,
    *,
    relation_types: Sequence[str] | None = None,
    max_length: int = 4,
    direction: str = "both",
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
    if direction not in DIRECTIONS:
        raise InputError("direction must be 'out', 'in' or 'both'")
    if not 1 <= max_length <= 8:
        raise InputError("max_length must be between 1 and 8")
    if limit < 1:
        raise InputError("limit must be >= 1")
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
            if direction != "out" and b in in_frontier:
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
        first = ents[source]
        paths.append(GraphPath(first.key, built))  # type: ignore[union-attr]
    for entity in ents.values():
        if entity is not None:
            names[entity.key] = entity.name
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


class PathError(InputError):
    """An argument the caller (a model, through a tool) can correct: an unknown or excluded entity, a relation
    type or direction the search may not follow."""


def resolve_entity(
    view: QueryBackend,
    name: str,
    embed: Callable[[str], np.ndarray] | None = None,
    where: str = "the knowledge graph",
) -> tuple[int, str]:
    """Handle and display name of the entity ``name`` names (its canonical name). Another name is never taken
    for it: an unknown one raises :class:`PathError` with the entities nearest to it (by ``embed``, the query
    embedding function) as suggestions, the rule every entry point follows (:mod:`kg_rag.query.limits`)."""
    key = canonical_key(name)
    handle = view.lookup_entities([key]).get(key)
    if handle is not None:
        rec = view.entities(np.asarray([handle], dtype=I64))[0]
        if rec is not None:
            return handle, rec.name
    raise PathError(unknown_name(name, suggest_entities(view, name, embed), where))


def walk_direction(asked: str, allowed: str) -> str:
    """The direction a walk may take: what was asked, within what the settings allow."""
    if asked not in DIRECTIONS:
        raise PathError(f"direction must be 'out', 'in' or 'both', got {asked!r}")
    forward = asked in ("out", "both") and allowed in ("out", "both")
    backward = asked in ("in", "both") and allowed in ("in", "both")
    if not (forward or backward):
        raise PathError(f"this search only follows edges {allowed!r}: ask for direction {allowed!r} or 'both'")
    return "both" if forward and backward else "out" if forward else "in"


def allowed_types(asked: Sequence[str] | None, edge_types: Sequence[str] | None, exclude: Sequence[str]) -> list | None:
    """Relation types a walk may follow: those asked for within the allow- and deny-lists (``None``: any type
    the deny-list leaves)."""
    if not asked:
        return list(edge_types) if edge_types is not None else None
    allow = None if edge_types is None else {upper_snake(t) for t in edge_types}
    deny = {upper_snake(t) for t in exclude}
    kept = [t for t in asked if (allow is None or upper_snake(t) in allow) and upper_snake(t) not in deny]
    if not kept:
        limits = f"allowed: {', '.join(edge_types)}" if edge_types is not None else "they are excluded"
        raise PathError(f"relation types {', '.join(asked)} may not be followed in this search ({limits})")
    return kept


@dataclass
class Connection:
    """What :func:`connect` found: the paths (shortest first), display names, the ends as resolved, and the
    limits the walk ran under (to say why nothing was found)."""

    source: str
    target: str
    paths: list[GraphPath]
    names: dict[str, str]
    max_length: int
    direction: str
    types: list[str] | None
    excluded_types: tuple[str, ...] = ()
    blocked: bool = False

    def why_none(self) -> str:
        """One line saying that no path was found, and under which limits."""
        types = f" using {', '.join(self.types)}" if self.types is not None else ""
        limits = [f"not using {', '.join(self.excluded_types)}"] if self.excluded_types else []
        limits += ["avoiding excluded entities"] if self.blocked else []
        limits += {"out": ["edges read forwards only"], "in": ["edges read backwards only"]}.get(self.direction, [])
        under = f" ({'; '.join(limits)})" if limits else ""
        ends = f"{quote_name(self.source)} to {quote_name(self.target)}"
        return f"No path from {ends} within {self.max_length} edges{types}{under}."


def connect(
    view: QueryBackend,
    source: str,
    target: str,
    walk: WalkSettings,
    *,
    relation_types: Sequence[str] | None = None,
    max_length: int = 4,
    direction: str = "both",
    limit: int = 5,
    embed: Callable[[str], np.ndarray] | None = None,
) -> Connection:
    """Directed paths between two named entities under ``walk`` (a :class:`~kg_rag.query.params.WalkSettings`:
    its allow/deny types, excluded entities, direction and synonym setting). Raises :class:`PathError` for what
    the caller can correct; an excluded entity or relation type never shows up in a path. Under a document
    ``walk.filter`` the walk reads a :class:`~kg_rag.store.scope.ScopedView`, as retrieval does: only those
    documents' entities and relations."""
    where = "the knowledge graph"
    if walk.filter is not None:
        view, where = ScopedView(view, walk.filter), f"the documents of the filter {walk.filter}"
    way = walk_direction(direction, walk.direction)
    types = allowed_types(relation_types, walk.edge_types, walk.exclude_edge_types)
    s, s_name = resolve_entity(view, source, embed, where=where)
    t, t_name = resolve_entity(view, target, embed, where=where)
    blocked = set(resolve_names(view, walk.exclude_entities).values())
    for asked, handle in ((source, s), (target, t)):
        if handle in blocked:
            raise PathError(f"{asked!r} is excluded from this knowledge graph search")
    paths, names = find_paths(
        view,
        s,
        t,
        relation_types=types,
        max_length=max_length,
        direction=way,
        limit=limit,
        use_synonyms=walk.use_synonyms,
        exclude_types=walk.exclude_edge_types,
        blocked=blocked,
    )
    return Connection(
        s_name, t_name, paths, names, max_length, way, types, tuple(walk.exclude_edge_types), bool(blocked)
    )
