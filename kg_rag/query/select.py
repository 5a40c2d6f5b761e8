"""Stage 4b: choosing what the context shows — entities, directed paths and relationship rows — and reading
their records from the backend."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from kg_rag.query.params import QueryParams
from kg_rag.query.seeds import Seeds
from kg_rag.query.senses import same_thing
from kg_rag.query.types import GraphPath, PathStep, RelationRow, ScoredEntity
from kg_rag.query.workspace import Workspace
from kg_rag.store.base import EdgeSet

I64 = np.int64


def select_entities(
    ws: Workspace,
    scores: dict[int, float],
    seeds: Seeds,
    p: QueryParams,
    present: set[int],
    allowed: set[int] | None = None,
) -> list[tuple[int, ScoredEntity]]:
    """The entities the context lists (with their handles): at most ``top_k_nodes``, the entities the
    question names first, then the best-scoring others. Any other entity — matched by embedding similarity or
    reached by expansion — is listed only if the returned chunks or the chosen relations mention it
    (``present``): a name the rest of the context never mentions leads the answer model nowhere and is noise.
    ``allowed`` (under type filters: the ends of the chosen relations) limits the others further."""
    blocked = ws.edge_filter.blocked
    k = p.top_k_nodes
    if k == 0:
        return []
    ranked: dict[int, float] = {}
    handles = np.fromiter(scores.keys(), dtype=I64, count=len(scores))
    values = np.fromiter(scores.values(), dtype=np.float64, count=len(scores))
    if handles.size > 4 * k:  # only the best few can make the cut: avoid sorting everything
        cut = np.partition(-values, 4 * k)[4 * k]  # the ties at the cut all stay: the partition's order never decides
        part = np.flatnonzero(-values <= cut)
        handles, values = handles[part], values[part]
    for e, v in zip(handles.tolist(), values.tolist()):
        if v > 0 and e not in blocked and (e in seeds.named or (e in present and (allowed is None or e in allowed))):
            ranked[e] = v
    for n, w in seeds.weights.items():
        if n in blocked:
            continue
        if n in seeds.named:
            ranked[n] = max(ranked.get(n, 0.0), 0.0) + 1e3 + w
        elif n in present and (allowed is None or n in allowed):
            ranked[n] = max(ranked.get(n, 0.0), w)
    top = sorted(ranked, key=lambda e: (-ranked[e], e))[:k]
    if not top:
        return []
    records = ws.view.entities(np.asarray(top, dtype=I64))
    out = []
    for handle, rec in zip(top, records):
        if rec is None:
            continue
        sim = seeds.similarity.get(handle)
        entity = ScoredEntity(
            rec.key,
            rec.name,
            rec.entity_type,
            rec.description,
            float(scores.get(handle, 0.0)),
            float(sim) if sim else None,
            handle in seeds.weights,
        )
        out.append((handle, entity))
    return out


@dataclass
class ScoredRelations:
    """The relations chosen for the context, best first, with what paths and rows need to render them."""

    edges: EdgeSet
    score: np.ndarray
    """Relevance of each relation to this question (see :func:`score_relations`)."""
    chunk_rank: np.ndarray
    """Rank of the best returned chunk that evidences it (-1: none, e.g. a matched fact)."""
    asked: np.ndarray | None = None
    """Whether the question asks for its type (see :mod:`kg_rag.query.relation_match`)."""

    def __len__(self) -> int:
        return len(self.edges)


def score_relations(
    ws: Workspace,
    ranked_chunks: Sequence[int],
    seeds: Seeds,
    p: QueryParams,
    unsure: frozenset[int] = frozenset(),
) -> ScoredRelations:
    """Rank the relations that could help answer this question, and keep those that do.

    Candidates: the relations evidenced in the returned chunks, and the relations between entities the
    question names — all under the query's filters. A relation's relevance combines:

    - its **evidence**: the reciprocal rank of the best returned chunk that states it (the top chunk 1, the
      second 1/2, ...); a relation between two entities the question names is evidenced by the question. A
      chunk less than half as sure as the top one (the third and later) evidences only the relations that
      continue from what the surer chunks or the question name (see :func:`_continuation`) and, when the
      question asks for relation types (``less_sure_asked``), are of one of them: its other relations are
      about its own neighbours. Ranks in ``unsure`` (the second, see :func:`unsure_ranks`) are treated so too;
    - its **fit** to the question: how similar its fact (``source predicate target``) is to the query, mapped
      to [0.5, 1] so fit refines the order without overriding evidence;
    - its **specificity**: relations whose ends are generic hubs (mentioned in many chunks, like a country or
      "film") are demoted, unless the hub is a query entity;
    - whether the question **asks for its type** ("spouse", "born", "replaced": see
      :mod:`kg_rag.query.relation_match`), by ``relation_match``.

    Rows stop where relevance drops off: a relation is kept only while it is at least
    ``relation_floor`` times as relevant as the best one (and at most ``max_relations`` rows).
    """
    view, ef = ws.view, ws.edge_filter
    handles = ws.chunks.ids[np.asarray(list(ranked_chunks), dtype=I64)] if ranked_chunks else np.zeros(0, I64)
    rank_of = {int(h): i for i, h in enumerate(handles.tolist())}
    sure = [c for c, r in rank_of.items() if 1.0 / (1 + r) >= PATH_STEP_FLOOR and r not in unsure]  # rank order
    pairs, edges = view.chunk_relations(handles, ef) if handles.size else (None, EdgeSet.empty())
    evidence: dict[int, float] = {}
    best_rank: dict[int, int] = {}
    if pairs is not None:
        continues = _continuation(ws, edges, sure, seeds, p)
        sure_set = set(sure)
        for c, e in zip(pairs.left.tolist(), pairs.right.tolist()):
            r = rank_of[c]
            if 1.0 / (1 + r) > evidence.get(e, 0.0) and (c in sure_set or continues(e)):
                evidence[e], best_rank[e] = 1.0 / (1 + r), r
    parts = [edges]
    named = np.fromiter(seeds.named, dtype=I64, count=len(seeds.named))
    if named.size >= 2:  # relations between entities the question names are evidenced by the question itself
        between = view.edges_of(named, ef, among=True)
        parts.append(between)
        for e in between.ids.tolist():
            evidence[e] = max(evidence.get(e, 0.0), 1.0)
    all_edges = _concat(parts).unique()
    keep = ~all_edges.synonym
    all_edges = all_edges.take(np.flatnonzero(keep))
    if not len(all_edges):
        return ScoredRelations(all_edges, np.zeros(0), np.zeros(0, I64), np.zeros(0, dtype=bool))
    fit = view.similarity("facts", ws.query, all_edges.ids)
    ends = np.unique(np.concatenate([all_edges.src, all_edges.dst]))
    mentions = dict(zip(ends.tolist(), ws.mention_counts(ends).tolist()))
    k = HUB_MENTIONS
    seed_set = set(seeds.weights)

    def spec(h: int) -> float:
        return 1.0 if h in seed_set else min(1.0, k / max(mentions.get(h, 1.0) - 1.0, 1.0))

    asked = np.zeros(len(all_edges), dtype=np.float64)
    if p.relation_match > 0 and ws.relation_words:
        names = all_edges.type_names
        asks = ws.asks_for({names[t] for t in set(all_edges.type_id.tolist())})
        asked = np.asarray([p.relation_match if asks[names[t]] else 0.0 for t in all_edges.type_id.tolist()])
    base = np.asarray(
        [
            evidence.get(e, 0.0) * (1.0 + max(f, 0.0)) / 2.0 * min(spec(a), spec(b))
            for e, a, b, f in zip(all_edges.ids.tolist(), all_edges.src.tolist(), all_edges.dst.tolist(), fit.tolist())
        ]
    )
    score = base * (1.0 + asked)  # the asked-for types come first; whether a row is kept depends on base
    top = float(base.max()) if base.size else 0.0
    keep = (base > 0) & ((base >= p.relation_floor * top) | (asked > 0))
    chosen = np.flatnonzero(keep)
    chosen = chosen[np.lexsort((all_edges.ids[chosen], -score[chosen]))][: max(p.max_relations, p.max_paths)]
    ranks = np.asarray([best_rank.get(int(e), -1) for e in all_edges.ids[chosen]], dtype=I64)
    return ScoredRelations(all_edges.take(chosen), score[chosen], ranks, asked[chosen] > 0)


HUB_MENTIONS = 30.0
"""A relation end mentioned in more than this many chunks counts as a generic hub (its relevance shrinks in
proportion), the same scale at which the chain strategy stops linking through an entity."""


def unsure_ranks(graph: Sequence[float], p: QueryParams) -> frozenset[int]:
    """Ranks that are less sure than their rank says (``unlinked_second_unsure``): the second, when the top
    chunk owes its place to what the question names (its graph share at pick is a named entity's cover) and the
    second owes nothing to the graph (share 0: no link from the top chunk, no named entity it covers). It owes
    its rank to resembling the question only, like a third; a multi-hop question's second passage follows from
    the first. A top chunk that owes nothing to the graph either vouches for no order, and both stay sure."""
    if not p.unlinked_second_unsure or len(graph) < 2:
        return frozenset()
    return frozenset({1}) if graph[0] > 0 and graph[1] == 0 else frozenset()


def _continuation(
    ws: Workspace, edges: EdgeSet, sure_chunks: Sequence[int], seeds: Seeds, p: QueryParams
) -> Callable[[int], bool]:
    """Whether a relation stated by a less sure chunk continues the evidence: one of its ends is an entity the
    question names, or one that a sure chunk (at least ``PATH_STEP_FLOOR`` as sure as the top one: the first two,
    unless the second is unsure) mentions and that is no generic hub. On MuSiQue the third to fifth passages are
    supporting ones for 14 % of their relations; for "the TEUs Thessaloniki handled" the last passage is the answer,
    and its row starts at *Thessaloniki*, which the top passage mentions. Rows about the passage's own subject,
    linked to nothing the surer evidence says (a neighbouring chess olympiad, another stadium), are left out.

    When the question asks for relation types (``less_sure_asked``, with ``relation_match`` on), a continuing
    relation must also be of one of them: a less sure passage is there for the last hop's answer ("Thessaloniki
    -[HANDLED]-> 273,282 TEUs" for "how many TEUs did it handle"), while its other rows that touch the surer
    evidence are its own facts about the shared entity (on MuSiQue 11 of the 79 continuing rows were gold)."""
    sure = np.asarray(list(sure_chunks), dtype=I64)
    mentioned = np.unique(ws.chunk_entities(sure).right) if sure.size else np.zeros(0, I64)
    if mentioned.size:
        mentioned = mentioned[ws.mention_counts(mentioned) <= HUB_MENTIONS]
    bridges = set(mentioned.tolist()) | set(seeds.named)
    position = {int(e): i for i, e in enumerate(edges.ids.tolist())}

    asked: set[int] | None = None
    if p.less_sure_asked and p.relation_match > 0 and ws.relation_words:
        names = edges.type_names
        asks = ws.asks_for({names[t] for t in set(edges.type_id.tolist())})
        asked = {i for i, t in enumerate(edges.type_id.tolist()) if asks[names[t]]}

    src, dst = edges.src.tolist(), edges.dst.tolist()

    def continues(relation: int) -> bool:
        i = position.get(relation)
        if i is None or (asked is not None and i not in asked):
            return False
        return src[i] in bridges or dst[i] in bridges

    return continues


def _concat(parts: list[EdgeSet]) -> EdgeSet:
    parts = [x for x in parts if len(x)]
    if not parts:
        return EdgeSet.empty()
    names = parts[0].type_names
    return EdgeSet(
        np.concatenate([x.ids for x in parts]),
        np.concatenate([x.src for x in parts]),
        np.concatenate([x.dst for x in parts]),
        np.concatenate([x.type_id for x in parts]),
        np.concatenate([x.weight for x in parts]),
        np.concatenate([x.synonym for x in parts]),
        names,
    )


def relation_rows(
    ws: Workspace, chosen: ScoredRelations, selected: Sequence[int], p: QueryParams
) -> tuple[list[RelationRow], dict[int, tuple[str, str]]]:
    """The relationship table: in-network rows (both ends among the selected entities) first, by relevance;
    then out-network rows by how many selected entities their outside end links to, then relevance."""
    n = min(len(chosen), p.max_relations)
    if n == 0:
        return [], {}
    view = ws.view
    edges = chosen.edges.take(np.arange(n))
    score = chosen.score[:n]
    sel = set(int(x) for x in selected)
    src, dst = edges.src.tolist(), edges.dst.tolist()
    inside = np.asarray([a in sel and b in sel for a, b in zip(src, dst)], dtype=bool)
    links: dict[int, set[int]] = {}
    for a, b in zip(src, dst):
        for outer, inner in ((a, b), (b, a)):
            if inner in sel and outer not in sel:
                links.setdefault(outer, set()).add(inner)
    other = [b if a in sel else a for a, b in zip(src, dst)]
    link_count = np.asarray([len(links.get(o, ())) for o in other], dtype=I64)
    ends = np.unique(np.concatenate([edges.src, edges.dst]))
    degree = dict(zip(ends.tolist(), view.degrees(ends).tolist()))
    rank = np.asarray([degree[a] + degree[b] for a, b in zip(src, dst)], dtype=I64)
    in_idx = np.flatnonzero(inside)
    in_idx = in_idx[np.lexsort((edges.ids[in_idx], -score[in_idx]))]
    out_idx = np.flatnonzero(~inside)
    out_idx = out_idx[np.lexsort((edges.ids[out_idx], -score[out_idx], -link_count[out_idx]))]
    order = np.concatenate([in_idx, out_idx])
    records = view.relations(edges.ids[order])
    names = {h: label for h, label in zip(ends.tolist(), view.labels(ends)) if label is not None}
    rows = []
    for i, rel in zip(order.tolist(), records):
        a, b = src[i], dst[i]
        if rel is None or a not in names or b not in names:
            continue  # removed by a concurrent edit
        rows.append(
            RelationRow(
                rel.id,
                names[a][1],
                names[b][1],
                rel.description or rel.predicate or "",
                rel.relation_type,
                rel.weight,
                int(rank[i]),
                bool(inside[i]),
                int(link_count[i]) if not inside[i] else 2,
                rel.evidence_quote,
                rel.chunk_ids,
            )
        )
    return rows, names


PATH_STEP_FLOOR = 0.5
"""A path step must be at least this fraction as relevant as the best relation: paths show only the most
confident facts (those evidenced by the best chunks, or asked for by the question). The one exception: a step
of a type the question asks for may continue a chain of that type (see :func:`relation_paths`)."""


def _continues_chain(edges: EdgeSet, steps: list[tuple[int, bool]], i: int, forward: bool) -> bool:
    """Whether edge ``i`` walked ``forward`` extends the path's last step in the same type and sense."""
    return bool(steps) and steps[-1][1] == forward and edges.type_id[steps[-1][0]] == edges.type_id[i]


def path_anchors(ws: Workspace, seeds: Seeds, p: QueryParams) -> list[int]:
    """Where paths start: entities the question names that are specific enough to pin down evidence — those
    mentioned in at most twice as many chunks as the context holds. A generic name ("film", a country) in
    the question is no anchor: a path from it would start in whichever passage mentions it. When the
    question names no such entity, the specific entities it matches by meaning are the anchors. Entities the
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
    # the question names no specific entity: start from the specific entities it matches by meaning
    matched = np.fromiter(sorted(seeds.weights), dtype=I64, count=len(seeds.weights))
    if matched.size == 0:
        return []
    counts = ws.mention_counts(matched)
    return [int(h) for h, c in zip(matched.tolist(), counts.tolist()) if c <= p.specific_mentions]


def relation_paths(
    ws: Workspace, chosen: ScoredRelations, anchors: Sequence[int], p: QueryParams
) -> tuple[list[GraphPath], dict[int, tuple[str, str]]]:
    """Directed paths that start at an anchor (see :func:`path_anchors`) and follow only the most relevant of
    the chosen relations (at least ``PATH_STEP_FLOOR`` times the best) — except that a relation of a type the
    question asks for may continue a chain of that type in the same sense: "who does Lars *ultimately* report
    to" is answered by ``REPORTS_TO`` after ``REPORTS_TO``, whose later steps are stated by lower-ranked chunks.

    A path walks an edge forwards or — when the query's direction allows — backwards, and is scored by its
    weakest step; a path is shown only when it adds a relation the paths before it did not show. Two relations
    are joined at an entity only when they are about the same thing there (:func:`~kg_rag.query.senses.same_thing`).
    """
    if p.max_paths == 0 or p.max_hops == 0 or not len(chosen) or not anchors:
        return [], {}
    top = float(chosen.score.max())
    asked_all = chosen.asked if chosen.asked is not None else np.zeros(len(chosen), dtype=bool)
    strong = np.flatnonzero((chosen.score >= PATH_STEP_FLOOR * top) | asked_all)
    edges = chosen.edges.take(strong)
    score = chosen.score[strong]
    sure = score >= PATH_STEP_FLOOR * top
    direction = ws.edge_filter.direction
    joins = same_thing(ws.view, edges.ids, edges.src, edges.dst)
    adjacency: dict[int, list[tuple[int, int, bool]]] = {}
    for i, (a, b) in enumerate(zip(edges.src.tolist(), edges.dst.tolist())):
        if direction in ("out", "both"):
            adjacency.setdefault(a, []).append((i, b, True))
        if direction in ("in", "both"):
            adjacency.setdefault(b, []).append((i, a, False))
    found: list[tuple[float, list[tuple[int, bool]], int]] = []

    def walk(node: int, steps: list[tuple[int, bool]], visited: set[int], weakest: float, start: int) -> None:
        extended = False
        if len(steps) < p.max_hops:
            for i, nxt, fwd in adjacency.get(node, ()):
                if nxt in visited:
                    continue
                if not sure[i] and not _continues_chain(edges, steps, i, fwd):
                    continue
                if steps and not joins(steps[-1][0], i, node):
                    continue
                extended = True
                walk(nxt, [*steps, (i, fwd)], visited | {nxt}, min(weakest, float(score[i])), start)
        if steps and not extended:
            found.append((weakest, steps, start))

    for a in dict.fromkeys(int(x) for x in anchors):
        walk(a, [], {a}, np.inf, a)
    asked = asked_all[strong]
    found.sort(  # paths with the relations the question asks for first, then the surest, then the longest
        key=lambda item: (
            -sum(bool(asked[i]) for i, _ in item[1]),
            -item[0],
            -len(item[1]),
            [int(edges.ids[i]) for i, _ in item[1]],
        )
    )
    chosen_paths, shown = [], set()
    for weakest, steps, start in found:
        rels = {int(edges.ids[i]) for i, _ in steps}
        if rels <= shown:
            continue  # adds no relation to the paths already shown (e.g. the same ones walked from the other end)
        shown |= rels
        chosen_paths.append((weakest, steps, start))
        if len(chosen_paths) >= p.max_paths:
            break
    if not chosen_paths:
        return [], {}
    view = ws.view
    used = sorted({i for _, steps, _ in chosen_paths for i, _ in steps})
    rels = dict(zip(used, view.relations(edges.ids[np.asarray(used, dtype=I64)])))
    nodes = sorted({int(x) for i in used for x in (edges.src[i], edges.dst[i])})
    names = {h: label for h, label in zip(nodes, view.labels(np.asarray(nodes, dtype=I64))) if label is not None}
    paths = []
    for weakest, steps, start in chosen_paths:
        built = []
        for i, fwd in steps:
            rel = rels.get(i)
            a, b = int(edges.src[i]), int(edges.dst[i])
            if rel is None or a not in names or b not in names:
                built = []
                break
            built.append(PathStep(rel.id, names[a][0], names[b][0], edges.type_of(i), fwd))
        if built and start in names:
            paths.append(GraphPath(names[start][0], built, float(weakest)))
    return paths, names
