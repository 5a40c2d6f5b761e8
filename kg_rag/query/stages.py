"""The query pipeline as declared stages over one :class:`QueryState`.

``filters → searches → seeds → expand → candidates → score → fill → rerank → select → communities → context``

Each stage reads what earlier stages put on the state and adds its own part. A stage runs only when something
consumes what it gives: the scoring strategy declares what it reads (``Strategy.consumes``), so the graph
expansion — a recursive CTE on PostgreSQL — runs for ``frequency`` and ``path`` and not for ``chain`` or
``ppr`` (which walks on its own); ``fill`` runs only when the strategy returned fewer chunks than asked;
``searches`` runs a query's vector searches at once, where the backend can (PostgreSQL, on helper connections);
``rerank`` only with a reranker (which then chooses ``top_k_chunks`` of ``rerank_depth`` ranked chunks);
``communities`` only when the index has reports and the context may show them. Each stage is timed on its own;
``RetrievalResult.stages`` lists the stages that ran, with their times, and the ones skipped, with why.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from kg_rag.context.format import ContextFormatter, format_context
from kg_rag.errors import InputError
from kg_rag.model.names import SYNONYM, canonical_key, upper_snake
from kg_rag.model.notation import render_path
from kg_rag.model.results import RetrievalResult, ScoredChunk, StageRun
from kg_rag.query.chains import path_anchors, paths_and_rows, relation_paths
from kg_rag.query.limits import suggest_entities, unknown_name
from kg_rag.query.params import QueryParams
from kg_rag.query.relation_match import asks_for_value, counted_words, question_relation_words
from kg_rag.query.roles import question_roles
from kg_rag.query.seeds import Seeds, match_seeds, names_entity, resolve_names, unmatched_reason
from kg_rag.query.select import HUB_MENTIONS, score_relations, select_entities, unsure_ranks
from kg_rag.query.strategies import StrategyInput, StrategyOutput
from kg_rag.query.strategies.base import rank_top
from kg_rag.query.workspace import Workspace
from kg_rag.store.base import BackendInfo, EdgeFilter, Expansion, QueryBackend, VectorKind
from kg_rag.store.scope import ScopedView

I64 = np.int64
Reranker = Callable[[str, list[ScoredChunk]], list[str]]
"""Given the question and the ranked chunks (with their text), the ids of the chunks to keep, best first."""


def edge_filter_for(view: QueryBackend, p: QueryParams) -> tuple[EdgeFilter, dict[str, int]]:
    """The :class:`EdgeFilter` the settings' walk filters give on this view, and the excluded entities found
    (canonical key -> handle). Every walk of a query — and the explorer's — is bounded by it."""
    w = p.walk
    excluded = resolve_names(view, w.exclude_entities)
    edge_filter = EdgeFilter.build(w.edge_types, w.exclude_edge_types, w.direction, w.use_synonyms, excluded.values())
    return edge_filter, excluded


def unknown_relation_types(view: QueryBackend, names: Sequence[str] | None) -> list[str]:
    """The names among ``names`` that are no relation type of the index, as written or in UPPER_SNAKE (a typo,
    another index's vocabulary). A query only warns about them; the CLI and the explorer refuse them, since an
    allow list of unknown types leaves no graph at all."""
    if not names:
        return []
    known = {*view.info().relation_types, SYNONYM}
    return [t for t in names if t not in known and upper_snake(t) not in known]


@dataclass
class QueryState:
    """One query on its way through the stages."""

    view: QueryBackend
    query: np.ndarray
    text: str
    params: QueryParams
    info: BackendInfo
    earlier: str = ""
    """Earlier turns of the conversation (context for the question, not part of it)."""
    reranker: Reranker | None = None
    """Reorders (and may drop) the ranked chunks before the graph half is chosen for them."""
    embed: Callable[[str], np.ndarray] | None = None
    """The query embedding function, for suggestions when a filter names an unknown entity."""
    formatter: ContextFormatter = format_context
    """The last stage: ``(result, params) -> FormattedContext``."""
    warnings: list[str] = field(default_factory=list)
    edge_filter: EdgeFilter = field(default_factory=EdgeFilter)
    ws: Workspace | None = None
    seeds: Seeds = field(default_factory=Seeds)
    expansion: Expansion | None = None
    candidates: np.ndarray | None = None
    scored: StrategyOutput | None = None
    ranked: list[int] = field(default_factory=list)
    """Local chunk positions, best first (at most ``top_k_chunks``), with their scores and graph shares."""
    scores: list[float] = field(default_factory=list)
    graph: list[float] = field(default_factory=list)
    result: RetrievalResult | None = None
    handles: list[int] = field(default_factory=list)
    """The selected entities' handles (for the communities stage)."""
    anchors: set[int] = field(default_factory=set)
    """Question entities and the ends of shown relations: a community report must hold one of them."""
    runs: list[StageRun] = field(default_factory=list)


# --------------------------------------------------------------------------------------------- the stages
def run_filters(s: QueryState) -> None:
    """Resolve the filters' entity names, warn about names and types the index does not have, build the
    workspace."""
    p, info = s.params, s.info
    if p.walk.filter is not None:  # every later stage reads the graph through the scoped view
        s.view = ScopedView(s.view, p.walk.filter)
        if s.view.chunk_ids.size == 0:
            s.warnings.append(f"filter {p.walk.filter}: no chunk of the index matches it ({s.view.why_empty()})")
    view = s.view
    s.edge_filter, excluded = edge_filter_for(view, p)
    for label, names in (("include_entities", p.seeds.include_entities), ("exclude_entities", p.walk.exclude_entities)):
        found = resolve_names(view, names) if label == "include_entities" else excluded
        missing = [n for n in names if canonical_key(n) not in found]
        outside = resolve_names(view.view, missing) if missing and isinstance(view, ScopedView) else {}
        for name in (n for n in missing if canonical_key(n) not in outside):
            s.warnings.append(f"{label}: {unknown_name(name, suggest_entities(view, name, s.embed))}")
        if outside:  # the name is known, only not in the filtered documents
            unseen = ", ".join(repr(n) for n in missing if canonical_key(n) in outside)
            s.warnings.append(f"{label}: {unseen} not in the documents of the filter {p.walk.filter}")
    both = [n for n in p.seeds.include_entities if canonical_key(n) in excluded]
    if both:  # the exclusion wins: an excluded entity never seeds, links or shows
        s.warnings.append(f"{', '.join(map(repr, both))} both included and excluded: excluded")
    known = info.relation_types
    for label, types in (("edge_types", p.walk.edge_types or ()), ("exclude_edge_types", p.walk.exclude_edge_types)):
        unknown = [t for t in types if upper_snake(t) not in known and t not in known]
        if unknown:
            s.warnings.append(f"{label}: no relation of type {', '.join(map(repr, unknown))} in the index")
    if p.walk.edge_types is not None and not p.walk.edge_types:
        s.warnings.append("edge_types is empty: no relation may be walked or shown")
    levels = info.extra.get("community_levels")
    level = p.communities.community_level
    if level is not None and levels and level not in levels and p.context.community_share > 0:
        shown = ", ".join(map(str, levels))
        s.warnings.append(f"community_level {level}: the index has communities on levels {shown} only")
    s.ws = Workspace(view, s.query, s.text, p, s.edge_filter)


def run_searches(s: QueryState) -> None:
    """The query's searches at once (the seeds' entities and facts, the candidate chunks by vector and by BM25,
    the strategy's own: ``Strategy.searches``), on a backend that runs them concurrently; the later stages then
    read their results."""
    p = s.params
    planned: list[tuple[VectorKind, int]] = [("entities", p.seeds.top_k_nodes), ("facts", p.seeds.top_k_facts)]
    if "candidates" in p.select.strategy.consumes:
        planned.append(("chunks", p.select.candidates))
    planned.extend(p.select.strategy.searches())
    s.view.search_ahead(s.query, planned, s.text if p.select.lexical_weight > 0 else None)


def run_seeds(s: QueryState) -> None:
    """The entities the question is about, and the relation words it uses."""
    ws = _ws(s)
    s.seeds = match_seeds(s.view, s.query, s.text, s.params, s.edge_filter)
    if s.earlier and s.params.seeds.lexical_linking:
        _earlier_names(s)
    if s.params.select.relation_match > 0:
        proper = np.fromiter(s.seeds.proper, dtype=I64, count=len(s.seeds.proper))
        records = [(int(h), e) for h, e in zip(proper.tolist(), s.view.entities(proper)) if e]
        named = [e.name for _, e in records]
        ws.relation_words = question_relation_words(s.text, named)
        roles = question_roles(s.text, named)
        ws.roles = {h: roles[canonical_key(e.name)] for h, e in records if canonical_key(e.name) in roles}
        ws.asks_value = asks_for_value(s.text)
        ws.counted = counted_words(s.text)


def _earlier_names(s: QueryState) -> None:
    """Entities the earlier turns name by a proper name seed the search at half weight, without counting as
    named by the question (they never anchor paths or pull in passages of their own)."""
    from kg_rag.query.history import HISTORY_WEIGHT
    from kg_rag.query.seeds import query_grams

    found = s.view.lookup_entities(query_grams(s.earlier))
    handles = [h for h in dict.fromkeys(found.values()) if h not in s.edge_filter.blocked]
    if not handles:
        return
    records = s.view.entities(np.asarray(handles, dtype=I64))
    proper = [h for h, rec in zip(handles, records) if rec is not None and names_entity(rec.name, s.earlier)]
    if not proper:
        return
    sims = s.view.similarity("entities", s.query, np.asarray(proper, dtype=I64))
    for h, sim in zip(proper, sims.tolist()):
        s.seeds.similarity.setdefault(h, sim)
        s.seeds.weights[h] = max(s.seeds.weights.get(h, 0.0), HISTORY_WEIGHT * max(sim, 1e-3))


def run_expand(s: QueryState) -> None:
    """Breadth-first expansion from the seeds under the walk filters (the backend's traversal)."""
    ws, p = _ws(s), s.params
    s.expansion = s.view.expand(
        s.seeds.weights,
        p.walk.max_hops,
        s.edge_filter,
        decay=p.select.strategy.expansion_decay,
        max_frontier=p.walk.max_frontier,
        prefer=ws.asked_types,
        prefer_weight=p.select.relation_match,
    )


def run_candidates(s: QueryState) -> None:
    """The chunks considered before the graph adds any: best by dense similarity and by BM25."""
    s.candidates = _ws(s).candidates(s.params.select.candidates)


def run_score(s: QueryState) -> None:
    """The strategy's ranking of chunks and its entity scores."""
    seeds = s.seeds
    empty = np.zeros(0, I64)
    out = s.params.select.strategy.score(
        StrategyInput(
            _ws(s),
            seeds.weights,
            s.expansion if s.expansion is not None else Expansion.from_seeds({}),
            s.candidates if s.candidates is not None else empty,
            dict(seeds.similarity),
            frozenset(seeds.named),
            frozenset(seeds.proper),
            frozenset(seeds.included),
            _wanted(s) if s.reranker is not None else 0,
        )
    )
    k = _wanted(s)
    s.scored = out
    s.ranked = [int(x) for x in out.chunks[:k]]
    s.scores = [float(x) for x in out.scores[:k]]
    s.graph = [float(x) for x in out.graph_scores[:k]]


def _wanted(s: QueryState) -> int:
    """Chunks the ranking should hold before selection: ``top_k_chunks``, or the rerank depth for a reranker."""
    k = s.params.select.top_k_chunks
    return k if s.reranker is None else max(k, s.params.select.rerank_depth)


def run_fill(s: QueryState) -> None:
    """Fill up to ``top_k_chunks`` (the rerank depth, with a reranker) with the most relevant candidates (scores
    kept non-increasing)."""
    ws, k = _ws(s), _wanted(s)
    candidates = s.candidates if s.candidates is not None else ws.candidates(s.params.select.candidates)
    if not candidates.size:
        return
    relevance = ws.relevance(candidates)
    order = candidates[rank_top(relevance.astype(np.float64), candidates.size)]
    floor = min(s.scores) if s.scores else np.inf
    taken = set(s.ranked)
    for pos in order.tolist():
        if len(s.ranked) >= k:
            break
        if pos not in taken:
            s.ranked.append(pos)
            taken.add(pos)
            floor = min(floor, float(ws.relevance(np.asarray([pos]))[0]))
            s.scores.append(floor)  # keep the reported scores in the order the chunks come in
            s.graph.append(0.0)


def run_rerank(s: QueryState) -> None:
    """The reranker's choice and order of the ranked chunks (it sees their text), cut to ``top_k_chunks``: the
    relations and paths are then chosen for the chunks it kept."""
    ws, k = _ws(s), s.params.select.top_k_chunks
    reranker = s.reranker
    if reranker is None or not s.ranked:  # pragma: no cover - the stage is skipped then
        return
    handles = ws.chunks.ids[np.asarray(s.ranked, dtype=I64)]
    records = s.view.chunks(handles)
    present = [(i, rec) for i, rec in enumerate(records) if rec is not None]
    offered = [
        ScoredChunk(rec.id, rec.text, rec.doc_id, s.scores[i], dict(rec.metadata), s.graph[i]) for i, rec in present
    ]
    at = {rec.id: i for i, rec in present}
    order = [at[c] for c in reranker(s.text, offered) if c in at]
    order = list(dict.fromkeys(order))[:k]
    s.ranked = [s.ranked[i] for i in order]
    s.scores = [s.scores[i] for i in order]
    s.graph = [s.graph[i] for i in order]


def run_select(s: QueryState) -> None:
    """The relations, paths and entities shown for this question, and the chunks with their records."""
    ws, p, seeds, ranked = _ws(s), s.params, s.seeds, s.ranked
    if not ranked:
        unmatched = not seeds.weights and not p.select.fill_with_dense
        why = unmatched_reason(s.view, seeds, p) if unmatched else "nothing matched it under these filters"
        if isinstance(s.view, ScopedView) and s.view.chunk_ids.size == 0:  # said by the filter's own warning
            why = f"the filter {p.walk.filter} matches no chunk"
        s.warnings.append(f"no chunk was retrieved for this query: {why}")
    chosen = score_relations(ws, ranked, seeds, p, unsure_ranks(s.graph, p))
    ends = set(chosen.edges.src.tolist()) | set(chosen.edges.dst.tolist())
    mentioned = ws.chunk_entities(ws.chunks.ids[np.asarray(ranked, dtype=I64)]).right if ranked else np.zeros(0, I64)
    present = ends | set(mentioned.tolist())
    allowed = ends if s.edge_filter.restricts_types else None
    entity_scores = s.scored.entity_scores if s.scored is not None else {}
    selected = select_entities(ws, entity_scores, seeds, p, present, allowed)
    s.handles = [h for h, _ in selected]
    s.anchors = set(seeds.weights) | ends
    anchors = path_anchors(ws, seeds, p)
    named = set(seeds.named) or set(anchors)  # a question naming nothing specific: what it matches by meaning
    bridges = _bridges(ws, ranked, named)
    found = relation_paths(ws, chosen, anchors, p, frozenset(named), bridges)
    chain = {i for i, g in enumerate(s.graph) if i == 0 or g > 0} | {-1}  # -1: evidenced by the question
    paths, path_names, relations, rel_names = paths_and_rows(ws, chosen, s.handles, p, found, named, chain)
    listed = selected
    if path_names or rel_names:  # the entity table describes what the graph half shows (and what the question
        # names); an entity only a returned passage mentions is written in that passage already
        listed = select_entities(ws, entity_scores, seeds, p, set(path_names) | set(rel_names), allowed)
        s.handles = [h for h, _ in listed]
    names = {key: name for key, name in [*path_names.values(), *rel_names.values()]}
    names.update({e.key: e.name for _, e in listed})
    chunks = _chunks(ws, ranked, s.scores, s.graph, selected, paths, path_names)
    s.result = RetrievalResult(s.text, chunks, [e for _, e in listed], paths, relations, names, [], s.warnings)


def _bridges(ws: Workspace, ranked: Sequence[int], named: set[int]) -> frozenset[int]:
    """Entities that two or more of the returned chunks mention, that the question does not name and that are no
    generic hub and no value (a date or number two passages share by coincidence): where the evidence crosses
    from one passage to the next."""
    if len(ranked) < 2:
        return frozenset()
    pairs = ws.chunk_entities(ws.chunks.ids[np.asarray(ranked, dtype=I64)])
    ents, counts = np.unique(pairs.right, return_counts=True)
    shared = ents[counts >= 2]
    if shared.size:
        shared = shared[ws.mention_counts(shared) <= HUB_MENTIONS]
    if shared.size:
        shared = shared[~ws.are_values(shared)]
    return frozenset(int(e) for e in shared.tolist() if int(e) not in named)


def run_communities(s: QueryState) -> None:
    """Reports of the communities that hold at least two of the selected entities, one of them a question
    entity or an end of a shown relation (so a report earns its tokens), ranked by how many selected entities
    they hold, then by rating (seed 004). A community around a single selected entity is out-network: such a
    report ("country, Aggabodhi I and 7 more" for the author of *Brand*) is about that entity's neighbours,
    not about what the context connects, and took the slots and tokens of reports that are (measured:
    evaluation/design-figures.md)."""
    view, c = s.view, s.params.communities
    anchored = {cid for cid, _ in view.communities_for(np.asarray(sorted(s.anchors), dtype=I64), c.community_level)}
    counts = [  # at most one community per selected entity and level, so this stays short
        (cid, n)
        for cid, n in view.communities_for(np.asarray(s.handles, dtype=I64), c.community_level)
        if cid in anchored and n >= 2
    ]
    records = view.community_records([cid for cid, _ in counts])
    ranked = sorted(
        ((n, rec) for (_, n), rec in zip(counts, records) if rec is not None and rec.serves),
        key=lambda x: (-x[0], -x[1].rating, x[1].id),
    )
    _result(s).communities = shown_report_rows(
        [rec for _, rec in ranked[: c.max_communities]], _result(s), _named_keys(s)
    )


def _named_keys(s: QueryState) -> set[str]:
    named = np.fromiter(sorted(s.seeds.named), dtype=I64, count=len(s.seeds.named))
    return {label[0] for label in s.view.labels(named) if label is not None} if named.size else set()


def shown_report_rows(communities: list, result: RetrievalResult, named: set[str]) -> list:
    """The reports with only the relation lines that add to the context: none repeats a relationship row, a path
    step or a line of a report before it, and each lies on a shown path or touches an entity the question names
    (``named``, keys). A report keeps its summary and findings; the others' lines were the rows of the
    community's own neighbourhood, repeated report after report."""
    from dataclasses import replace

    seen = {r.relation_id for r in result.relations} | {st.relation_id for pa in result.paths for st in pa.steps}
    on_paths = {key for pa in result.paths for key in pa.nodes}
    wanted = on_paths | named
    out = []
    for community in communities:
        cited = []
        for rel in community.cited:
            if rel.id in seen or not {canonical_key(rel.source), canonical_key(rel.target)} & wanted:
                continue
            seen.add(rel.id)
            cited.append(rel)
        out.append(replace(community, cited=cited) if len(cited) != len(community.cited) else community)
    return out


def run_context(s: QueryState) -> None:
    """The token-budgeted context the answer model reads."""
    result = _result(s)
    formatted = s.formatter(result, s.params)
    result.warnings.extend(w for w in formatted.warnings if w not in result.warnings)
    result.context, result.section_tokens, result.formatted = formatted.text, formatted.section_tokens, formatted


# --------------------------------------------------------------------------------------------- when they run
def _strategy_reads(what: str) -> Callable[[QueryState], str | None]:
    def check(s: QueryState) -> str | None:
        strategy = s.params.select.strategy
        return None if what in strategy.consumes else f"the {strategy.name} strategy does not read it"

    return check


def _fill_needed(s: QueryState) -> str | None:
    if not s.params.select.fill_with_dense:
        return "fill_with_dense is off"
    if len(s.ranked) >= _wanted(s):
        return "the strategy returned enough chunks"
    return None


def _rerank_needed(s: QueryState) -> str | None:
    if s.reranker is None:
        return "no reranker was given"
    return None if s.ranked else "no chunk to rerank"


def _communities_needed(s: QueryState) -> str | None:
    p = s.params
    if p.context.community_share <= 0 or p.communities.max_communities <= 0:
        return "the context shows no community reports"
    if not s.info.extra.get("communities"):
        return "the index has no communities"
    if p.walk.filter is not None:
        return "a document filter is set (community reports summarise every document)"
    if s.edge_filter.restricts_types or s.edge_filter.blocked:
        # a report is written over the whole graph: its title and rows name what the filters leave out
        return "relation-type or entity filters are set (community reports summarise the unfiltered graph)"
    if not s.handles:
        return "no entity was selected"
    return None


def _searches_concurrent(s: QueryState) -> str | None:
    if isinstance(s.view, ScopedView):
        return "a document filter widens each search until enough matching rows are found; they run where needed"
    if not s.view.concurrent_searches:
        return "the backend runs each search where it is needed"
    return None


def _always(s: QueryState) -> str | None:
    return None


@dataclass(frozen=True)
class Stage:
    """A pipeline stage: its name, what it does to the state, and when it is needed (``None``) or skipped
    (the reason)."""

    name: str
    run: Callable[[QueryState], None]
    needed: Callable[[QueryState], str | None] = _always


PIPELINE: tuple[Stage, ...] = (
    Stage("filters", run_filters),
    Stage("searches", run_searches, _searches_concurrent),
    Stage("seeds", run_seeds),
    Stage("expand", run_expand, _strategy_reads("expansion")),
    Stage("candidates", run_candidates, _strategy_reads("candidates")),
    Stage("score", run_score),
    Stage("fill", run_fill, _fill_needed),
    Stage("rerank", run_rerank, _rerank_needed),
    Stage("select", run_select),
    Stage("communities", run_communities, _communities_needed),
    Stage("context", run_context),
)
"""The stages of a query, in order."""


def run_pipeline(
    view: QueryBackend,
    query: np.ndarray,
    text: str,
    params: QueryParams,
    earlier: str = "",
    reranker: Reranker | None = None,
    embed: Callable[[str], np.ndarray] | None = None,
    formatter: ContextFormatter = format_context,
) -> RetrievalResult:
    """Run the stages for one query inside one read view; the result carries the context and the stage log.
    ``embed`` (the query embedding function) lets a warning about an unknown entity name suggest known ones;
    ``formatter`` writes the context (:func:`~kg_rag.context.format.format_context` by default)."""
    info = view.info()
    if info.dim and query.size != info.dim:
        raise InputError(f"the query vector has dimension {query.size}, the index has {info.dim}")
    state = QueryState(
        view, query, text, params, info, earlier=earlier, reranker=reranker, embed=embed, formatter=formatter
    )
    if info.chunks == 0:
        state.warnings.append("the index has no chunks")
        result = RetrievalResult(text, [], [], [], [], warnings=state.warnings)
        result.stages = [StageRun(st.name, None, "the index has no chunks") for st in PIPELINE]
        return result
    t_start = time.perf_counter()
    for stage in PIPELINE:
        why = stage.needed(state)
        if why is not None:
            state.runs.append(StageRun(stage.name, None, why))
            continue
        t0 = time.perf_counter()
        stage.run(state)
        state.runs.append(StageRun(stage.name, 1000 * (time.perf_counter() - t0)))
    result = _result(state)
    result.stages = state.runs
    result.timings_ms = {r.name: r.ms for r in state.runs if r.ms is not None}
    result.timings_ms["total"] = 1000 * (time.perf_counter() - t_start)
    return result


# --------------------------------------------------------------------------------------------- helpers
def _ws(s: QueryState) -> Workspace:
    if s.ws is None:  # pragma: no cover - the filters stage always runs first
        raise InputError("the filters stage has not run")
    return s.ws


def _result(s: QueryState) -> RetrievalResult:
    if s.result is None:  # pragma: no cover - the select stage always runs before
        raise InputError("the select stage has not run")
    return s.result


def _chunks(ws: Workspace, ranked, scores, graph, selected, paths, path_names) -> list[ScoredChunk]:
    """The ranked chunks with their records, the seeds they mention and the paths that reach them."""
    if not ranked:
        return []
    handles = ws.chunks.ids[np.asarray(ranked, dtype=I64)]
    records = ws.view.chunks(handles)
    dense = ws.dense(np.asarray(ranked, dtype=I64))
    mentions = ws.chunk_entities(handles)
    by_chunk: dict[int, set[int]] = {}
    for c, e in zip(mentions.left.tolist(), mentions.right.tolist()):
        by_chunk.setdefault(c, set()).add(e)
    seed_keys = {h: e.key for h, e in selected if e.seed}
    handle_of = {key: h for h, (key, _) in path_names.items()}
    names = {key: name for key, name in path_names.values()}
    rendered = [({handle_of[k] for k in pa.nodes if k in handle_of}, render_path(names, pa)) for pa in paths]
    out = []
    for i, (h, rec) in enumerate(zip(handles.tolist(), records)):
        if rec is None:
            continue  # removed by a concurrent edit between ranking and reading
        ents = by_chunk.get(h, set())
        out.append(
            ScoredChunk(
                id=rec.id,
                text=rec.text,
                doc_id=rec.doc_id,
                score=scores[i],
                metadata=dict(rec.metadata),
                graph_score=graph[i],
                dense_score=float(dense[i]),
                entities=[seed_keys[e] for e in ents if e in seed_keys],
                paths=[text for nodes, text in rendered if nodes & ents],
            )
        )
    return out


def describe(result: RetrievalResult) -> list[str]:
    """The stage log as lines (``kg-rag query --explain``): each stage that ran with its time, each skipped
    one with why."""
    lines = []
    for run in result.stages:
        if run.ms is None:
            lines.append(f"  {run.name:<12} skipped: {run.skipped}")
        else:
            lines.append(f"  {run.name:<12} {run.ms:8.2f} ms")
    total = result.timings_ms.get("total")
    if total is not None:
        lines.append(f"  {'total':<12} {total:8.2f} ms (query embedding excluded)")
    return lines


__all__ = ["PIPELINE", "QueryState", "Stage", "describe", "edge_filter_for", "run_pipeline"]
