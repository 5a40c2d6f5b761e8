"""Stage 4b, the paths: the directed paths the context shows — from the entities the question names, along the
most relevant chosen relations, and along a chain of an asked type past ``max_hops`` when the question asks where
it ends ("ultimately", "final")."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kg_rag.model.names import MONTHS
from kg_rag.model.predicates import tokens
from kg_rag.model.results import GraphPath, PathStep, RelationRow
from kg_rag.query.params import QueryParams
from kg_rag.query.seeds import Seeds
from kg_rag.query.select import PATH_STEP_FLOOR, ScoredRelations, ShownPaths, backwards_relations, relation_rows
from kg_rag.query.senses import same_thing
from kg_rag.query.workspace import Workspace
from kg_rag.store.base import EdgeSet

I64 = np.int64


def _asked_hops(edges: EdgeSet, asked: np.ndarray, steps: list[tuple[int, bool]]) -> int:
    """The asked steps of a path, but for a step that turns back along the type of the step before it: "Lakeland
    <-[LOCATED_IN]- Publix -[LOCATED_IN]-> Key West" goes sideways to a sibling, and answers no more of the question
    than its first step (a chain of one type in one sense, "ultimately", counts every link)."""
    out = 0
    for n, (i, fwd) in enumerate(steps):
        if not asked[i]:
            continue
        back = n > 0 and steps[n - 1][1] != fwd and edges.type_id[steps[n - 1][0]] == edges.type_id[i]
        out += not back
    return out


def _continues_chain(edges: EdgeSet, steps: list[tuple[int, bool]], i: int, forward: bool) -> bool:
    """Whether edge ``i`` walked ``forward`` extends the path's last step in the same type and sense."""
    return bool(steps) and steps[-1][1] == forward and edges.type_id[steps[-1][0]] == edges.type_id[i]


def path_anchors(ws: Workspace, seeds: Seeds, p: QueryParams) -> list[int]:
    """Where paths start: entities the question names that are specific enough to pin down evidence — those
    mentioned in at most twice as many chunks as the context holds. A generic name ("film", a country) in
    the question is no anchor: a path from it would start in whichever passage mentions it. When the
    question names no such entity, the specific entities it matches by meaning are the anchors, but no date or
    number the question writes no word of (it is not what the question is about). Entities the
    caller included are anchors whatever their specificity: the caller asked for paths from them."""
    named = np.fromiter(sorted(seeds.named), dtype=I64, count=len(seeds.named))
    if named.size:
        counts = ws.mention_counts(named)
        anchors = [
            int(h)
            for h, c in zip(named.tolist(), counts.tolist())
            if c <= p.specific_mentions or int(h) in seeds.included
        ]
        if anchors:
            return anchors
    # the question names no specific entity: start from the specific entities it matches by meaning, but not from
    # a date or a number it writes no word of that says which ("March 2021" for "what caused the decision ...")
    matched = np.fromiter(sorted(seeds.weights), dtype=I64, count=len(seeds.weights))
    if matched.size == 0:
        return []
    counts = ws.mention_counts(matched)
    matched = matched[counts <= p.specific_mentions]
    values = ws.are_values(matched)
    if values.any():
        words = set(tokens(ws.text))
        unwritten = {
            h
            for h, label in zip(matched[values].tolist(), ws.view.labels(matched[values]))
            if label is None or not words & _value_words(label[1])
        }
        matched = np.asarray([h for h in matched.tolist() if h not in unwritten], dtype=I64)
    return [int(h) for h in matched.tolist()]


def _value_words(name: str) -> set[str]:
    """The words that say which value a date or number is (``1990s``, ``march``), not its filler (``the``,
    ``early``, ``about``)."""
    return {w for w in tokens(name) if any(ch.isdigit() for ch in w) or w in MONTHS or w in SEASONS}


SEASONS = frozenset("spring summer autumn fall winter".split())

CHAIN_BOUND = 6
"""The most links of one asked relation type a path follows when the question asks for where that chain ends
("who does Lars *ultimately* report to"), past ``max_hops``."""

END_WORDS = frozenset(
    "ultimately ultimate eventually eventual finally final top topmost highest uppermost supreme overall".split()
)
"""Words by which a question asks for the end of a chain of one relation, not its first link."""


def asks_for_end(text: str) -> bool:
    """Whether the question asks where a chain of one relation ends (a word of :data:`END_WORDS`)."""
    return any(w in END_WORDS for w in tokens(text))


def relation_paths(
    ws: Workspace,
    chosen: ScoredRelations,
    anchors: Sequence[int],
    p: QueryParams,
    named: frozenset[int] | set[int] = frozenset(),
    bridges: frozenset[int] | set[int] = frozenset(),
) -> tuple[list[GraphPath], dict[int, tuple[str, str]], ShownPaths]:
    """Directed paths that start at an anchor (see :func:`path_anchors`), and what they show.

    A step is one of the most relevant chosen relations (at least ``PATH_STEP_FLOOR`` times the best), one of a type
    the question asks for, or one that crosses into another passage at a ``bridge`` (an entity two returned
    passages mention): the chain that answers goes from what the question names, through the relations it asks
    about, from one passage to the next. When the question asks where a chain of one relation ends ("who does
    Lars *ultimately* report to", :func:`asks_for_end`), a path whose last step is of an asked type follows that
    type on through the graph in the same sense past ``max_hops``, up to :data:`CHAIN_BOUND` steps: the later
    links are stated by passages that were not returned.

    A path *reaches a candidate answer* when it ends at an entity the question does not name, through a step of an
    asked type, after crossing into another passage, or at a bridge. Paths that reach one come first (those with
    more asked steps, those that end at an asked step rather than past it, those that cross more passages, the
    surest by their weakest step, the longest), and when one does, paths that reach none are not shown: one path
    to a candidate answer says more than ten about the question's own entities (when none does, see
    :func:`paths_and_rows`). A path is shown only when it adds
    a relation the paths before it did not show, and from where it branches off a path shown before it (each fact
    is stated once). A path walks an edge forwards or — when the query's direction allows — backwards; two
    relations are joined at an entity only when they are about the same thing there
    (:func:`~kg_rag.query.senses.same_thing`).
    """
    nothing: tuple[list[GraphPath], dict[int, tuple[str, str]], ShownPaths] = ([], {}, ShownPaths())
    if p.max_paths == 0 or p.max_hops == 0 or not len(chosen) or not anchors:
        return nothing
    top = float(chosen.score.max())
    asked_all = chosen.asked if chosen.asked is not None else np.zeros(len(chosen), dtype=bool)
    edges, score, asked, rank = chosen.edges, chosen.score, asked_all, chosen.chunk_rank
    sure = score >= PATH_STEP_FLOOR * top
    off = list(chosen.backwards.tolist()) if chosen.backwards is not None else [False] * len(edges)
    direction = ws.edge_filter.direction
    extend = asks_for_end(ws.text) and bool(asked.any())
    if extend:
        edges, score, sure, asked, rank = _chain_links(ws, edges, score, sure, asked, rank)
        off += backwards_relations(ws, edges.take(np.arange(len(off), len(edges), dtype=I64))).tolist()
    joins = same_thing(ws.view, edges.ids, edges.src, edges.dst)
    ranks = rank.tolist()
    adjacency: dict[int, list[tuple[int, int, bool]]] = {}
    for i, (a, b) in enumerate(zip(edges.src.tolist(), edges.dst.tolist())):
        if direction in ("out", "both"):
            adjacency.setdefault(a, []).append((i, b, True))
        if direction in ("in", "both"):
            adjacency.setdefault(b, []).append((i, a, False))

    def end(steps: list[tuple[int, bool]]) -> int:
        i, fwd = steps[-1]
        return int(edges.dst[i] if fwd else edges.src[i])

    def passages(steps: list[tuple[int, bool]]) -> int:
        return len({ranks[i] for i, _ in steps})

    def reaches(steps: list[tuple[int, bool]]) -> bool:
        e = end(steps)
        return e not in named and (bool(asked[steps[-1][0]]) or passages(steps) > 1 or e in bridges)

    found: list[tuple[float, list[tuple[int, bool]], int]] = []

    def walk(node: int, steps: list[tuple[int, bool]], visited: set[int], weakest: float, start: int) -> None:
        extended = False
        limit = CHAIN_BOUND if extend and steps and asked[steps[-1][0]] else p.max_hops
        if len(steps) < limit:
            for i, nxt, fwd in adjacency.get(node, ()):
                if nxt in visited or off[i]:  # "Who founded Publix?": no step along what Publix founded
                    continue
                if len(steps) >= p.max_hops and not _continues_chain(edges, steps, i, fwd):
                    continue  # past max_hops only a chain of one asked type goes on
                crossing = bool(steps) and node in bridges and ranks[i] != ranks[steps[-1][0]]
                if not (sure[i] or asked[i] or crossing):
                    continue
                if steps and not joins(steps[-1][0], i, node):
                    continue
                extended = True
                walk(nxt, [*steps, (i, fwd)], visited | {nxt}, min(weakest, float(score[i])), start)
        if steps and (not extended or reaches(steps)):  # a path may stop at a candidate answer
            found.append((weakest, steps, start))

    for a in dict.fromkeys(int(x) for x in anchors):
        walk(a, [], {a}, np.inf, a)
    found.sort(
        key=lambda item: (
            -reaches(item[1]),
            -_asked_hops(edges, asked, item[1]),
            -bool(asked[item[1][-1][0]]),  # ends at what the question asks for, not past it
            -passages(item[1]),
            -item[0],
            -len(item[1]),
            [int(edges.ids[i]) for i, _ in item[1]],
        )
    )
    reached = bool(found) and reaches(found[0][1])
    if reached:
        found = [f for f in found if reaches(f[1])]
    chosen_paths: list[tuple[float, list[tuple[int, bool]], int]] = []
    shown: set[int] = set()
    for weakest, steps, start in found:
        rels = {int(edges.ids[i]) for i, _ in steps}
        if rels <= shown:
            continue  # adds no relation to the paths already shown (e.g. the same ones walked from the other end)
        shown |= rels
        chosen_paths.append(_branch(chosen_paths, weakest, steps, start, edges))
        if len(chosen_paths) >= p.max_paths:
            break
    if not chosen_paths:
        return nothing
    view = ws.view
    used = sorted({i for _, steps, _ in chosen_paths for i, _ in steps})
    rel_of = dict(zip(used, view.relations(edges.ids[np.asarray(used, dtype=I64)])))
    nodes = sorted({int(x) for i in used for x in (edges.src[i], edges.dst[i])})
    names = {h: label for h, label in zip(nodes, view.labels(np.asarray(nodes, dtype=I64))) if label is not None}
    paths = []
    for weakest, steps, start in chosen_paths:
        built: list[PathStep] = []
        for i, fwd in steps:
            rel = rel_of.get(i)
            a, b = int(edges.src[i]), int(edges.dst[i])
            if rel is None or a not in names or b not in names:
                built = []
                break
            built.append(PathStep(rel.id, names[a][0], names[b][0], edges.type_of(i), fwd))
        if built and start in names:
            paths.append(GraphPath(names[start][0], built, float(weakest)))
    handle_of = {rel.id: int(edges.ids[i]) for i, rel in rel_of.items() if rel is not None}
    return paths, names, ShownPaths({int(edges.ids[i]) for i in used}, set(nodes), reached, handle_of)


def paths_and_rows(
    ws: Workspace,
    chosen: ScoredRelations,
    selected: Sequence[int],
    p: QueryParams,
    found: tuple[list[GraphPath], dict[int, tuple[str, str]], ShownPaths],
    named: set[int] | frozenset[int],
    chain: set[int] | frozenset[int],
) -> tuple[list[GraphPath], dict[int, tuple[str, str]], list[RelationRow], dict[int, tuple[str, str]]]:
    """The paths :func:`relation_paths` found and the relationship rows shown with them
    (:func:`~kg_rag.query.select.relation_rows`), each with its names by handle.

    When no path reaches a candidate answer, a one-step path is a named entity's own relation ("Kohuwala
    -[CONNECTED_TO]-> Dehiwala", eight such paths), which a row shows once already: it is shown only when the rows
    leave its relation out. A longer path, or a one-step branch off one, shows how two relations join and stays.
    The rows are chosen around the paths kept."""
    paths, names, shown = found
    if not paths or shown.reach:
        rows, row_names = relation_rows(ws, chosen, selected, p, shown, named, chain)
        return paths, names, rows, row_names
    alone, _ = relation_rows(ws, chosen, selected, p, ShownPaths(), named, chain)
    in_rows = {r.relation_id for r in alone}
    joined = {k for pa in paths if len(pa.steps) > 1 for k in pa.nodes[1:]}
    kept = [pa for pa in paths if len(pa.steps) > 1 or pa.start in joined or pa.steps[0].relation_id not in in_rows]
    keys = {k for pa in kept for k in pa.nodes}
    holding = ShownPaths(
        {shown.handle_of[st.relation_id] for pa in kept for st in pa.steps if st.relation_id in shown.handle_of},
        {h for h, (key, _) in names.items() if key in keys},
        reach=False,
    )
    rows, row_names = relation_rows(ws, chosen, selected, p, holding, named, chain)
    in_rows = {r.relation_id for r in rows}  # the rows around the kept paths may leave a dropped one's relation out
    kept = [pa for pa in paths if pa in kept or pa.steps[0].relation_id not in in_rows]
    keys = {k for pa in kept for k in pa.nodes}
    return kept, {h: kn for h, kn in names.items() if kn[0] in keys}, rows, row_names


def _branch(before, weakest: float, steps: list[tuple[int, bool]], start: int, edges: EdgeSet):
    """A path that begins with the steps of a path shown before it, from where it branches off (each fact is
    stated once): after ``Lars -[REPORTS_TO]-> Priya -[REPORTS_TO]-> Daniel``, ``Priya -[MANAGES]-> Platform``."""
    common = 0
    for _, other, _ in before:
        n = 0
        while n < min(len(other), len(steps) - 1) and other[n] == steps[n]:
            n += 1
        common = max(common, n)
    if not common:
        return weakest, steps, start
    i, fwd = steps[common - 1]
    return weakest, steps[common:], int(edges.dst[i] if fwd else edges.src[i])


def _chain_links(ws: Workspace, edges: EdgeSet, score, sure, asked, rank):
    """The chosen relations plus the graph's relations of their asked types that continue a chain of them, up to
    :data:`CHAIN_BOUND` links away (scored as the weakest asked relation chosen; stated by no returned chunk)."""
    names = edges.type_names
    wanted = {names[t] for t in set(edges.type_id[asked].tolist())}
    floor = float(score[asked].min())
    known = set(edges.ids.tolist())
    seen = set(edges.src[asked].tolist()) | set(edges.dst[asked].tolist())
    frontier, parts = set(seen), [edges]
    for _ in range(CHAIN_BOUND):
        if not frontier:
            break
        more = ws.view.edges_of(np.asarray(sorted(frontier), dtype=I64), ws.edge_filter)
        keep = [
            i
            for i, (e, t, syn) in enumerate(zip(more.ids.tolist(), more.type_id.tolist(), more.synonym.tolist()))
            if not syn and e not in known and more.type_names[t] in wanted
        ]
        if not keep:
            break
        more = more.take(np.asarray(keep, dtype=I64))
        known |= set(more.ids.tolist())
        parts.append(more)
        ends = set(more.src.tolist()) | set(more.dst.tolist())
        frontier = ends - seen
        seen |= ends
    added = sum(len(x) for x in parts[1:])
    if not added:
        return edges, score, sure, asked, rank
    return (
        _concat_vocabularies(parts),
        np.concatenate([score, np.full(added, floor)]),
        np.concatenate([sure, np.zeros(added, dtype=bool)]),
        np.concatenate([asked, np.ones(added, dtype=bool)]),
        np.concatenate([rank, np.full(added, -1, dtype=I64)]),
    )


def _concat_vocabularies(parts: list[EdgeSet]) -> EdgeSet:
    """Edge sets whose type codes index different vocabularies, as one (codes into the first's, extended)."""
    names = list(parts[0].type_names)
    index = {n: i for i, n in enumerate(names)}
    codes = []
    for x in parts:
        part = []
        for t in x.type_id.tolist():
            n = x.type_names[t]
            if n not in index:
                index[n] = len(names)
                names.append(n)
            part.append(index[n])
        codes.append(np.asarray(part, dtype=np.int32))
    return EdgeSet(
        np.concatenate([x.ids for x in parts]),
        np.concatenate([x.src for x in parts]),
        np.concatenate([x.dst for x in parts]),
        np.concatenate(codes),
        np.concatenate([x.weight for x in parts]),
        np.concatenate([x.synonym for x in parts]),
        names,
    )
