"""The retrieval pipeline without LangChain: embed -> seed -> expand -> score -> select.

:class:`QueryEngine` runs one query against a :class:`~kg_rag.store.base.QueryBackend` inside one read view,
so it sees one version of the data, and returns a ranked :class:`~kg_rag.query.types.RetrievalResult`.
Formatting the context is a separate step (:func:`kg_rag.context.format_context`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from kg_rag.context.render import render_path
from kg_rag.index.embeddings import aembed_query, embed_query
from kg_rag.model.schema import canonical_key, upper_snake
from kg_rag.query.history import MAX_QUERY_CHARS, fold_history, validate_query
from kg_rag.query.params import QueryParams
from kg_rag.query.relation_match import matching_types, question_relation_words
from kg_rag.query.seeds import match_seeds, resolve_names
from kg_rag.query.select import path_anchors, relation_paths, relation_rows, score_relations, select_entities
from kg_rag.query.strategies import StrategyInput
from kg_rag.query.strategies.base import rank_top
from kg_rag.query.threads import query_threads
from kg_rag.query.types import RetrievalResult, ScoredChunk
from kg_rag.query.workspace import Workspace
from kg_rag.store.base import EdgeFilter, QueryBackend

logger = logging.getLogger(__name__)

I64 = np.int64


class QueryEngine:
    """Runs queries against a backend with a fixed embedding model and default :class:`QueryParams`."""

    def __init__(self, backend: QueryBackend, embeddings: Any, params: QueryParams | None = None) -> None:
        if not hasattr(embeddings, "embed_query"):
            raise ValueError("embeddings must provide embed_query()/embed_documents() (a LangChain Embeddings)")
        if params is not None and not isinstance(params, QueryParams):
            raise ValueError(f"params must be a QueryParams, got {type(params).__name__}")
        if not isinstance(backend, QueryBackend):
            raise ValueError(f"backend must be a kg_rag.store.QueryBackend, got {type(backend).__name__}")
        self.backend = backend
        self.embeddings = embeddings
        self.params = params or QueryParams()
        backend.warm_up()

    @classmethod
    def for_index(cls, index: Any, embeddings: Any, params: QueryParams | None = None) -> QueryEngine:
        """An engine over an editable :class:`~kg_rag.index.build.GraphIndex` (graph edits are picked up)."""
        from kg_rag.store.memory import LiveBackend

        return cls(LiveBackend(index, embeddings), embeddings, params)

    def _prepare(self, query: Any, history: Sequence[Any] | None, params: QueryParams | None, overrides: dict):
        p = (params or self.params).replace(**overrides)
        text = fold_history(validate_query(query), history, p.history_turns)
        return p, text

    def retrieve(
        self,
        query: str,
        *,
        history: Sequence[Any] | None = None,
        params: QueryParams | None = None,
        **overrides: Any,
    ) -> RetrievalResult:
        """Run the whole pipeline for one query. ``overrides`` are :class:`QueryParams` fields."""
        p, text = self._prepare(query, history, params, overrides)
        q = embed_query(self.embeddings, text[:MAX_QUERY_CHARS])
        return self.retrieve_by_vector(q, text, p)

    async def aretrieve(
        self,
        query: str,
        *,
        history: Sequence[Any] | None = None,
        params: QueryParams | None = None,
        **overrides: Any,
    ) -> RetrievalResult:
        """Async :meth:`retrieve`: the query is embedded with ``aembed_query`` and the graph work runs in a
        worker thread, so the event loop is never blocked by it."""
        p, text = self._prepare(query, history, params, overrides)
        q = await aembed_query(self.embeddings, text[:MAX_QUERY_CHARS])
        return await asyncio.to_thread(self.retrieve_by_vector, q, text, p)

    def retrieve_by_vector(self, q: np.ndarray, query_text: str, params: QueryParams | None = None) -> RetrievalResult:
        """The pipeline after query embedding (what latency benchmarks time)."""
        p = params or self.params
        with query_threads(), self.backend.reader() as view:
            return _run(view, np.asarray(q, dtype=np.float32).reshape(-1), query_text, p)


def _run(view: QueryBackend, q: np.ndarray, query_text: str, p: QueryParams) -> RetrievalResult:
    t0 = time.perf_counter()
    info = view.info()
    if info.dim and q.size != info.dim:
        raise ValueError(f"the query vector has dimension {q.size}, the index has {info.dim}")
    warnings: list[str] = []
    if info.chunks == 0:
        return RetrievalResult(query_text, [], [], [], [], warnings=["the index has no chunks"])
    excluded = resolve_names(view, p.exclude_entities)
    for label, names in (("include_entities", p.include_entities), ("exclude_entities", p.exclude_entities)):
        found = resolve_names(view, names) if label == "include_entities" else excluded
        missing = [n for n in names if canonical_key(n) not in found]
        if missing:
            warnings.append(f"{label}: no entity named {', '.join(map(repr, missing))}")
    known_types = info.relation_types
    for label, types in (("edge_types", p.edge_types or ()), ("exclude_edge_types", p.exclude_edge_types)):
        unknown = [t for t in types if upper_snake(t) not in known_types and t not in known_types]
        if unknown:
            warnings.append(f"{label}: no relation of type {', '.join(map(repr, unknown))} in the index")
    if p.edge_types is not None and not p.edge_types:
        warnings.append("edge_types is empty: no relation may be walked or shown")
    levels = info.extra.get("community_levels")
    if p.community_level is not None and levels and p.community_level not in levels and p.community_share > 0:
        shown = ", ".join(map(str, levels))
        warnings.append(f"community_level {p.community_level}: the index has communities on levels {shown} only")
    edge_filter = EdgeFilter.build(p.edge_types, p.exclude_edge_types, p.direction, p.use_synonyms, excluded.values())
    ws = Workspace(view, q, query_text, p, edge_filter)
    seeds = match_seeds(view, q, query_text, p, edge_filter)
    if p.relation_match > 0:
        named = [e.name for e in view.entities(np.fromiter(seeds.proper, dtype=I64, count=len(seeds.proper))) if e]
        ws.relation_words = question_relation_words(query_text, named)
    t_seed = time.perf_counter()

    strategy = p.strategy
    asked = matching_types(ws.relation_words, info.relation_types, info.version) if ws.relation_words else frozenset()
    expansion = view.expand(
        seeds.weights,
        p.max_hops,
        edge_filter,
        decay=strategy.expansion_decay,
        max_frontier=p.max_frontier,
        prefer=asked,
        prefer_weight=p.relation_match,
    )
    candidates = ws.candidates(p.candidates)
    t_expand = time.perf_counter()

    out = strategy.score(
        StrategyInput(
            ws,
            seeds.weights,
            expansion,
            candidates,
            dict(seeds.similarity),
            frozenset(seeds.named),
            frozenset(seeds.proper),
            frozenset(seeds.included),
        )
    )
    ranked = [int(x) for x in out.chunks[: p.top_k_chunks]]
    scores = [float(x) for x in out.scores[: p.top_k_chunks]]
    graph = [float(x) for x in out.graph_scores[: p.top_k_chunks]]
    if len(ranked) < p.top_k_chunks and p.fill_with_dense and candidates.size:
        relevance = ws.relevance(candidates)
        order = candidates[rank_top(relevance.astype(np.float64), candidates.size)]
        floor = min(scores) if scores else np.inf
        for pos in order.tolist():
            if len(ranked) >= p.top_k_chunks:
                break
            if pos not in ranked:
                ranked.append(pos)
                value = float(ws.relevance(np.asarray([pos]))[0])
                floor = min(floor, value)
                scores.append(floor)  # keep the reported scores in the order the chunks come in
                graph.append(0.0)
    if not ranked:
        unmatched = not seeds.weights and not p.fill_with_dense
        why = "no entity matched it closely enough" if unmatched else "nothing matched it under these filters"
        warnings.append(f"no chunk was retrieved for this query: {why}")
    t_score = time.perf_counter()

    chosen = score_relations(ws, ranked, seeds, p)
    ends = set(chosen.edges.src.tolist()) | set(chosen.edges.dst.tolist())
    mentioned = ws.chunk_entities(ws.chunks.ids[np.asarray(ranked, dtype=I64)]).right if ranked else np.zeros(0, I64)
    present = ends | set(mentioned.tolist())
    allowed = ends if edge_filter.restricts_types else None
    selected = select_entities(ws, out.entity_scores, seeds, p, present, allowed)
    handles = [h for h, _ in selected]
    paths, path_names = relation_paths(ws, chosen, path_anchors(ws, seeds, p), p)
    relations, rel_names = relation_rows(ws, chosen, handles, p)
    names = {key: name for key, name in [*path_names.values(), *rel_names.values()]}
    names.update({e.key: e.name for _, e in selected})
    chunks = _chunks(ws, ranked, scores, graph, selected, paths, path_names)
    communities = _communities(view, info, handles, set(seeds.weights) | ends, p)
    t_select = time.perf_counter()
    result = RetrievalResult(
        query_text, chunks, [e for _, e in selected], paths, relations, names, communities, warnings
    )
    result.timings_ms = {
        "seeds": 1000 * (t_seed - t0),
        "expand": 1000 * (t_expand - t_seed),
        "score": 1000 * (t_score - t_expand),
        "select": 1000 * (t_select - t_score),
        "total": 1000 * (t_select - t0),
    }
    return result


def _communities(view: QueryBackend, info: Any, handles: list[int], anchors: set[int], p: QueryParams) -> list[Any]:
    """Reports of the communities that hold at least two of the selected entities, one of them a question entity
    or an end of a shown relation (so a report earns its tokens), ranked by how many selected entities they
    hold, then by rating (seed 004). A community around a single selected entity is out-network: on MuSiQue
    such reports ("country, Aggabodhi I and 7 more" for the author of *Brand*) took half of the section's slots
    and about 350 tokens a question, and 80 % of the reports left mention a supporting passage's entity
    against 65 % before."""
    if p.community_share <= 0 or p.max_communities <= 0 or not info.extra.get("communities") or not handles:
        return []
    anchored = {cid for cid, _ in view.communities_for(np.asarray(sorted(anchors), dtype=I64), p.community_level)}
    counts = [  # at most one community per selected entity and level, so this stays short
        (cid, n)
        for cid, n in view.communities_for(np.asarray(handles, dtype=I64), p.community_level)
        if cid in anchored and n >= 2
    ]
    records = view.community_records([cid for cid, _ in counts])
    ranked = sorted(
        ((n, rec) for (_, n), rec in zip(counts, records) if rec is not None and rec.serves),
        key=lambda x: (-x[0], -x[1].rating, x[1].id),
    )
    return [rec for _, rec in ranked[: p.max_communities]]


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
