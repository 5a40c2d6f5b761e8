"""Stage 4b: choosing what the context shows — entities, directed paths and relationship rows — and reading
their records from the backend."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from kg_rag.model.predicates import inverse_types
from kg_rag.model.results import RelationRow, ScoredEntity
from kg_rag.query.params import QueryParams
from kg_rag.query.relation_match import matches
from kg_rag.query.roles import reads_backwards
from kg_rag.query.seeds import Seeds
from kg_rag.query.workspace import Workspace
from kg_rag.store.base import EdgeSet, Pairs

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
    backwards: np.ndarray | None = None
    """Whether it has an entity the question names at the end the question's grammar rules out
    (:func:`backwards_relations`)."""

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
      continue from what a chunk ranked above it or the question names (see :func:`_continuation`) and, when the
      question asks for relation types (``less_sure_asked``), are of the kind it asks for
      (:func:`asked_relations`): its other relations are about its own neighbours. Ranks in ``unsure`` (the
      second, see :func:`unsure_ranks`) are treated so too;
    - its **fit** to the question: how similar its fact (``source predicate target``) is to the query, mapped
      to [0.5, 1] so fit refines the order without overriding evidence;
    - its **specificity**: relations whose ends are generic hubs (mentioned in many chunks, like a country or
      "film") are demoted, unless the hub is a query entity;
    - whether the question **asks for its kind**: its type ("spouse", "born", "replaced": see
      :mod:`kg_rag.query.relation_match`), or a value at its end when the question asks "when" or "how many"
      (:func:`asked_relations`), by ``relation_match``.

    Relevance drops off: a relation is kept only while it is at least ``relation_floor`` times as relevant as the
    best one (or of an asked type), and the :data:`RELATION_POOL` most relevant are what paths and rows are chosen
    from (at most ``max_relations`` rows are shown, see :func:`relation_rows`).
    """
    view, ef = ws.view, ws.edge_filter
    handles = ws.chunks.ids[np.asarray(list(ranked_chunks), dtype=I64)] if ranked_chunks else np.zeros(0, I64)
    rank_of = {int(h): i for i, h in enumerate(handles.tolist())}
    sure = [c for c, r in rank_of.items() if 1.0 / (1 + r) >= PATH_STEP_FLOOR and r not in unsure]  # rank order
    pairs, edges = view.chunk_relations(handles, ef) if handles.size else (None, EdgeSet.empty())
    evidence: dict[int, float] = {}
    best_rank: dict[int, int] = {}
    if pairs is not None:
        continues = _continuation(ws, edges, handles, seeds, p)
        sure_set = set(sure)
        for c, e in zip(pairs.left.tolist(), pairs.right.tolist()):
            r = rank_of[c]
            if 1.0 / (1 + r) > evidence.get(e, 0.0) and (c in sure_set or continues(e, r)):
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

    backwards = backwards_relations(ws, all_edges)
    asks = asked_relations(ws, all_edges, p, backwards)
    asked = np.where(asks, p.relation_match, 0.0) if asks is not None else np.zeros(len(all_edges))
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
    pool = max(p.max_relations, p.max_paths, RELATION_POOL)
    chosen = chosen[np.lexsort((all_edges.ids[chosen], -score[chosen]))][:pool]
    ranks = np.asarray([best_rank.get(int(e), -1) for e in all_edges.ids[chosen]], dtype=I64)
    return ScoredRelations(all_edges.take(chosen), score[chosen], ranks, asked[chosen] > 0, backwards[chosen])


RELATION_POOL = 25
"""The most relevant relations the paths and rows are chosen from; at most ``max_relations`` rows are shown."""

HUB_MENTIONS = 30.0
"""A relation end mentioned in more than this many chunks counts as a generic hub (its relevance shrinks in
proportion), the same scale at which the chain strategy stops linking through an entity."""


def asked_relations(
    ws: Workspace, edges: EdgeSet, p: QueryParams, backwards: np.ndarray | None = None
) -> np.ndarray | None:
    """Which relations are of the kind the question asks for (``None``: it asks for none, or ``relation_match``
    is off): of a type it names ("spouse", "born": :meth:`Workspace.asks_for`), or, when it asks for a date or a
    quantity ("When did ...", "How many ...": :attr:`Workspace.asks_value`), ending at a value ("April 1793",
    "35"; :func:`~kg_rag.query.senses.value_name`)."""
    if p.relation_match <= 0 or not (ws.relation_words or ws.asks_value):
        return None
    out = np.zeros(len(edges), dtype=bool)
    if ws.relation_words:
        names = edges.type_names
        asks = ws.asks_for({names[t] for t in set(edges.type_id.tolist())})
        out = np.asarray([asks[names[t]] for t in edges.type_id.tolist()], dtype=bool)
        out &= ~(backwards if backwards is not None else backwards_relations(ws, edges))
    if ws.asks_value and len(edges):
        ends = np.unique(np.concatenate([edges.src, edges.dst]))
        values = ends[ws.value_answers(ends)]  # "how many districts": "4 congressional districts", not a year
        out |= np.isin(edges.src, values) | np.isin(edges.dst, values)
    return out


def backwards_relations(ws: Workspace, edges: EdgeSet) -> np.ndarray:
    """Which edges have an entity the question names at the end its role rules out (:attr:`Workspace.roles`):
    "Who founded Publix?" asks for ``X -[FOUNDED]-> Publix``, and ``Publix -[FOUNDED]-> Y`` answers what Publix
    founded (:func:`~kg_rag.query.roles.reads_backwards`). Direction is meaning on the question's side
    too: such an edge is not of the asked kind, and no path steps along it."""
    out = np.zeros(len(edges), dtype=bool)
    roles = ws.roles
    if not roles or not len(edges):
        return out
    names = edges.type_names
    near = np.isin(edges.src, list(roles)) | np.isin(edges.dst, list(roles))
    for i in np.flatnonzero(near).tolist():
        rtype = names[int(edges.type_id[i])]
        for handle, at_source in ((int(edges.src[i]), True), (int(edges.dst[i]), False)):
            said = [role for word, role in roles.get(handle, {}).items() if matches(frozenset({word}), rtype)]
            if said and all(reads_backwards(rtype, at_source, role) for role in said):
                out[i] = True
    return out


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
    ws: Workspace, edges: EdgeSet, handles: np.ndarray, seeds: Seeds, p: QueryParams
) -> Callable[[int, int], bool]:
    """``continues(relation, rank)``: whether a relation stated by the less sure chunk at ``rank`` continues the
    evidence: one of its ends is an entity the question names, or one that a chunk ranked above it mentions and
    that is no generic hub. The chain grows pick by pick, so the third passage continues from the first two and
    the fourth from the first three (a 3-hop answer's last passage links to the one before it, not to the top
    one). The third to fifth passages are rarely supporting ones, so most of their relations are noise; for "the TEUs
    Thessaloniki handled" the last passage is the answer, and its row starts at *Thessaloniki*, which the top
    passage mentions. Rows about the passage's own subject, linked to nothing the surer evidence says (a
    neighbouring chess olympiad, another stadium), are left out.

    When the question asks for relation types (``less_sure_asked``, with ``relation_match`` on), a continuing
    relation must also be of the asked kind (:func:`asked_relations`: one of those types, or ending at a value
    when the question asks for a date or a quantity): a less sure passage is there for the last hop's answer
    ("Thessaloniki -[HANDLED]-> 273,282 TEUs" for "how many TEUs did it handle"), while its other rows that touch
    the surer evidence are its own facts about the shared entity, and few of them are gold (measured:
    evaluation/design-figures.md)."""
    pairs = ws.chunk_entities(handles) if handles.size else Pairs.empty()
    rank_of = {int(h): i for i, h in enumerate(handles.tolist())}
    first: dict[int, int] = {}  # entity -> the best rank of a chunk mentioning it
    for c, e in zip(pairs.left.tolist(), pairs.right.tolist()):
        first[e] = min(first.get(e, len(rank_of)), rank_of[c])
    if first:
        ents = np.fromiter(first, dtype=I64, count=len(first))
        for h in ents[ws.mention_counts(ents) > HUB_MENTIONS].tolist():
            del first[h]
    for n in seeds.named:
        first[int(n)] = -1
    position = {int(e): i for i, e in enumerate(edges.ids.tolist())}

    asked: set[int] | None = None
    asks = asked_relations(ws, edges, p) if p.less_sure_asked else None
    if asks is not None:
        asked = set(np.flatnonzero(asks).tolist())

    src, dst = edges.src.tolist(), edges.dst.tolist()
    never = len(rank_of)

    def continues(relation: int, rank: int) -> bool:
        i = position.get(relation)
        if i is None or (asked is not None and i not in asked):
            return False
        return first.get(src[i], never) < rank or first.get(dst[i], never) < rank

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
    ws: Workspace,
    chosen: ScoredRelations,
    selected: Sequence[int],
    p: QueryParams,
    shown: ShownPaths | None = None,
    named: set[int] | frozenset[int] = frozenset(),
    chain: set[int] | frozenset[int] | None = None,
) -> tuple[list[RelationRow], dict[int, tuple[str, str]]]:
    """The relationship table: at most ``max_relations`` rows.

    With ``shown`` (the paths shown; ``None``: every chosen relation may be a row, in the order of relevance) a row
    must lie on a shown path (be a step of one or touch one of its entities), touch an entity the question names
    (``named``), or be stated by a passage on the evidence chain (``chain``: the ranks of the passages the chain
    picked first or reached through a link). Any other row is about a passage retrieved for its resemblance to the
    question alone, and about nothing the question names or the paths pass through. Rows then come passage by
    passage in turn — the most relevant row of each passage on the chain, then the second of each, and so on —
    since a multi-hop answer needs a hop from every passage, and one passage's own facts must not crowd out the
    next hop (the rows the question itself evidences, between entities it names, come first). A step of a shown
    path is repeated as a row (with its description) only when the rows have room left: the path already shows
    it."""
    view = ws.view
    pool = chosen.edges
    idx = np.arange(len(pool), dtype=I64)
    if shown is not None and idx.size:
        ranks_all = chosen.chunk_rank.tolist()
        idx = np.asarray(
            [
                i
                for i, (e, a, b, r) in enumerate(
                    zip(pool.ids.tolist(), pool.src.tolist(), pool.dst.tolist(), ranks_all)
                )
                if e in shown.relations
                or (
                    a in shown.entities
                    or b in shown.entities
                    or a in named
                    or b in named
                    or (chain is not None and r in chain)
                )
            ],
            dtype=I64,
        )
    if idx.size == 0 or p.max_relations == 0:
        return [], {}
    edges = pool.take(idx)
    score = chosen.score[idx]
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
    if shown is not None:
        steps = np.asarray([e in shown.relations for e in edges.ids.tolist()], dtype=bool)
        rest, on = np.flatnonzero(~steps), np.flatnonzero(steps)
        ranks = chosen.chunk_rank[idx]
        within = (inside.astype(np.float64) * 2 + (link_count > 1)) * 1e6 + score  # in-network, linking, relevance
        order = np.concatenate(
            [rest[_in_turn(edges.ids[rest], within[rest], ranks[rest])], on[np.lexsort((edges.ids[on], -within[on]))]]
        )
    else:
        in_idx = np.flatnonzero(inside)
        in_idx = in_idx[np.lexsort((edges.ids[in_idx], -score[in_idx]))]
        out_idx = np.flatnonzero(~inside)
        out_idx = out_idx[np.lexsort((edges.ids[out_idx], -score[out_idx], -link_count[out_idx]))]
        order = np.concatenate([in_idx, out_idx])
    type_names = edges.type_names
    order = _one_voice(order, src, dst, [type_names[t] for t in edges.type_id.tolist()])[: p.max_relations]
    ends = np.unique(np.concatenate([edges.src[order], edges.dst[order]]))
    degree = dict(zip(ends.tolist(), view.degrees(ends).tolist()))
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
                int(degree[a] + degree[b]),
                bool(inside[i]),
                int(link_count[i]) if not inside[i] else 2,
                rel.evidence_quote,
                rel.chunk_ids,
            )
        )
    return rows, names


def _one_voice(order: np.ndarray, src: list[int], dst: list[int], types: list[str]) -> np.ndarray:
    """``order`` without a row that states, the other way round, a fact a row before it states ("Travel Policy 2019
    -[SUPERSEDED_BY]-> Global Travel Policy 2023" after "Global Travel Policy 2023 -[SUPERSEDES]-> Travel Policy
    2019", from two sentences): one fact, one row (:func:`~kg_rag.model.predicates.inverse_types`)."""
    taken: dict[tuple[int, int], list[str]] = {}
    kept = []
    for i in order.tolist():
        if any(inverse_types(types[i], t) for t in taken.get((dst[i], src[i]), ())):
            continue
        taken.setdefault((src[i], dst[i]), []).append(types[i])
        kept.append(i)
    return np.asarray(kept, dtype=I64)


def _in_turn(ids: np.ndarray, score: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """Positions passage by passage in turn: the most relevant of each passage (by the passage's rank; the
    question's own rows, rank -1, first), then the second most relevant of each, ..."""
    order = np.lexsort((ids, -score, ranks))  # by passage, then relevance
    turn = np.zeros(order.size, dtype=I64)
    seen: dict[int, int] = {}
    for j, r in enumerate(ranks[order].tolist()):
        turn[j] = seen.get(r, 0)
        seen[r] = turn[j] + 1
    return order[np.lexsort((ranks[order], turn))]


PATH_STEP_FLOOR = 0.5
"""A path step must be at least this fraction as relevant as the best relation — the most confident facts, those
evidenced by the best chunks — unless it is of a type the question asks for or crosses into another passage at a
bridge (see :func:`kg_rag.query.chains.relation_paths`)."""


@dataclass
class ShownPaths:
    """What the shown paths hold, by handle: their relations and the entities they pass through, and whether they
    reach a candidate answer (``reach``; when not, they only list the question's entities' own relations)."""

    relations: set[int] = field(default_factory=set)
    entities: set[int] = field(default_factory=set)
    reach: bool = True
    handle_of: dict[str, int] = field(default_factory=dict)
    """A shown relation's handle by its id (what a :class:`~kg_rag.model.results.PathStep` names it by)."""
