"""The retrieval pipeline without LangChain: embed -> seed -> expand -> score -> select -> assemble context.

:class:`GraphRetrieverEngine` holds an immutable snapshot (index + compiled arrays). When the graph is edited,
the next query builds a fresh snapshot (re-embedding only new text) and swaps it in atomically, so a query
always sees one consistent version.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from kg_rag.compiled import CompiledGraph
from kg_rag.context import format_context, render_path
from kg_rag.embeddings import embed_query
from kg_rag.index import GraphIndex
from kg_rag.params import QueryParams
from kg_rag.records import GraphRecords
from kg_rag.retrieve.explore import expand
from kg_rag.retrieve.relevance import ChunkRelevance
from kg_rag.retrieve.seeds import match_seeds
from kg_rag.retrieve.strategies import ScoringInput, get_strategy
from kg_rag.retrieve.types import GraphPath, PathStep, RelationRow, RetrievalResult, ScoredChunk, ScoredEntity
from kg_rag.schema import canonical_key
from kg_rag.threads import query_threads
from kg_rag.tokens import count_tokens

logger = logging.getLogger(__name__)

MAX_QUERY_CHARS = 8000
"""Queries longer than this are cut before embedding (the models truncate far earlier anyway)."""


def fold_history(query: str, history: Sequence[Any] | None, turns: int) -> str:
    """Fold the last ``turns`` previous *user* turns into the query text (seed 004).

    ``history`` items may be strings (taken as user turns), LangChain messages or ``{"role", "content"}`` dicts.
    """
    if not history or turns <= 0:
        return query
    user_turns: list[str] = []
    for item in history:
        if isinstance(item, str):
            user_turns.append(item)
        elif isinstance(item, dict):
            if item.get("role") in ("user", "human"):
                user_turns.append(str(item.get("content", "")))
        elif getattr(item, "type", None) == "human":
            user_turns.append(str(item.content))
    kept = [t.strip() for t in user_turns[-turns:] if t and t.strip()]
    return "\n".join([*kept, query]) if kept else query


class GraphRetrieverEngine:
    """Runs queries against a :class:`GraphIndex` with a fixed embedding model."""

    def __init__(self, index: GraphIndex, embeddings: Any, params: QueryParams | None = None) -> None:
        if not hasattr(embeddings, "embed_query"):
            raise ValueError("embeddings must provide embed_query()/embed_documents() (a LangChain Embeddings)")
        self.embeddings = embeddings
        self.params = params or QueryParams()
        self._lock = threading.Lock()
        self._snapshot = (index, index.compiled if index.compiled is not None else CompiledGraph(index))
        self.warm_up()

    def warm_up(self) -> None:
        """Build the FAISS indexes and load the tokenizer now, so the first query is not the slow one."""
        index, _ = self._snapshot
        for table in (index.entities, index.facts, index.chunks):
            if len(table):
                table.faiss_index()
        count_tokens("warm up")

    @property
    def index(self) -> GraphIndex:
        return self.snapshot()[0]

    def snapshot(self) -> tuple[GraphIndex, CompiledGraph]:
        """The current (index, compiled graph); rebuilt once, under a lock, after the graph was edited."""
        index, cg = self._snapshot
        if not index.stale:
            return index, cg
        with self._lock:
            index, cg = self._snapshot
            if index.stale:
                logger.info("graph changed: refreshing the index snapshot")
                fresh = index.refresh(self.embeddings)
                self._snapshot = (fresh, CompiledGraph(fresh))
            return self._snapshot

    # ---------------------------------------------------------------- public
    def retrieve(self, query: str, *, history: Sequence[Any] | None = None, **overrides: Any) -> RetrievalResult:
        """Run the whole pipeline for one query. ``overrides`` are :class:`QueryParams` fields."""
        p = self.params.replace(**overrides)
        text = validate_query(query)
        full = fold_history(text, history, p.history_turns)
        index, cg = self.snapshot()
        q = embed_query(self.embeddings, full[:MAX_QUERY_CHARS], index.dim or None)
        return self.retrieve_by_vector(q, full, p, snapshot=(index, cg))

    def retrieve_by_vector(
        self,
        q: np.ndarray,
        query_text: str,
        p: QueryParams | None = None,
        snapshot: tuple[GraphIndex, CompiledGraph] | None = None,
    ) -> RetrievalResult:
        """The pipeline after query embedding (what latency benchmarks time)."""
        with query_threads():
            return self._retrieve_by_vector(q, query_text, p, snapshot)

    def _retrieve_by_vector(self, q, query_text, p, snapshot) -> RetrievalResult:
        p = p or self.params
        index, cg = snapshot or self.snapshot()
        t0 = time.perf_counter()
        q = np.asarray(q, dtype=np.float32).reshape(1, -1)
        seeds, sims, facts = match_seeds(index, cg, q, query_text, p)
        t_seed = time.perf_counter()

        blocked = None
        if p.exclude_entities:
            blocked = np.zeros(cg.n_nodes, dtype=bool)
            for key in map(canonical_key, p.exclude_entities):
                if key in cg.name_lookup:
                    blocked[cg.name_lookup[key]] = True
        mask = cg.edge_mask(p.edge_types, p.exclude_edge_types, p.use_synonyms)
        expansion = expand(
            cg, seeds, p.max_hops, p.direction, mask, blocked, decay=p.path_decay, max_frontier=max(p.max_frontier, 1)
        )
        node_sim = np.zeros(cg.n_nodes, dtype=np.float32)
        if expansion.reached.size:
            node_sim[expansion.reached] = index.entities.vectors[expansion.reached] @ q[0]
        for n, s in sims.items():
            node_sim[n] = s
        records = _records(index, cg)
        lexical = _bm25(records, cg).scores(query_text) if p.lexical_weight > 0 and cg.n_chunks else None
        relevance = ChunkRelevance(index, cg, q, lexical, p.lexical_weight)
        t_expand = time.perf_counter()

        strategy = get_strategy(p.strategy)
        out = strategy.score(ScoringInput(cg, p, seeds, expansion, mask, node_sim, relevance, blocked))
        chunk_rows = (
            list(out.order[: p.top_k_chunks])
            if out.order is not None
            else _top_chunks(out.chunk_scores, relevance.full(), p)
        )
        t_score = time.perf_counter()

        # Reading records (names, descriptions, evidence, chunk text) from the editable graph: hold its lock
        # so a concurrent writer cannot remove something between a check and a read.
        with index.kg._lock:
            entities = self._entities(records, cg, out.node_scores, seeds, node_sim, p, blocked)
            selected = [cg.name_lookup[e.key] for e in entities]
            paths = _paths(cg, expansion, selected, facts, out.node_scores, p)
            relations = _relations(records, cg, selected, out.node_scores, mask, p)
            chunks = self._chunks(records, cg, chunk_rows, out, relevance, paths, seeds, node_sim)
            result = RetrievalResult(query_text, chunks, entities, paths, relations)
            t_select = time.perf_counter()
            result.context, result.section_tokens = format_context(result, cg.name_by_key, p)
        t_end = time.perf_counter()
        result.timings_ms = {
            "seeds": 1000 * (t_seed - t0),
            "expand": 1000 * (t_expand - t_seed),
            "score": 1000 * (t_score - t_expand),
            "select": 1000 * (t_select - t_score),
            "context": 1000 * (t_end - t_select),
            "total": 1000 * (t_end - t0),
        }
        return result

    # --------------------------------------------------------------- helpers
    @staticmethod
    def _entities(records, cg, scores, seeds, node_sim, p, blocked) -> list[ScoredEntity]:
        ranked = np.asarray(scores, dtype=np.float64).copy()
        for n, w in seeds.items():  # seeds always make the cut, in seed-weight order
            ranked[n] = max(ranked[n], 0) + 1e3 + w
        if blocked is not None:
            ranked[blocked] = 0
        k = min(max(p.top_k_nodes, len(seeds)), cg.n_nodes)
        if k == 0:
            return []
        top = np.argpartition(-ranked, k - 1)[:k] if k < cg.n_nodes else np.arange(cg.n_nodes)
        top = top[np.argsort(-ranked[top], kind="stable")]
        out = []
        for n in top:
            if ranked[n] <= 0:
                continue
            key = cg.node_ids[n]
            descriptions = records.entity_descriptions(int(n))
            out.append(
                ScoredEntity(
                    key,
                    cg.names[n],
                    cg.types[n],
                    "; ".join(descriptions),
                    float(scores[n]),
                    float(node_sim[n]) if node_sim[n] else None,
                    n in seeds,
                )
            )
        return out

    @staticmethod
    def _chunks(records, cg, rows, out, relevance, paths, seeds, node_sim) -> list[ScoredChunk]:
        result = []
        rendered = [(set(pa.nodes), render_path(cg.name_by_key, pa)) for pa in paths]
        dense = dict(zip(rows, relevance.dense_rows(np.asarray(rows, dtype=np.int64)).tolist()))
        for r in rows:
            cid = cg.chunk_ids[r]
            chunk = records.chunk(int(r))
            if chunk is None:
                continue
            ents = cg.chunk_entities.indices[cg.chunk_entities.indptr[r] : cg.chunk_entities.indptr[r + 1]]
            keys = {cg.node_ids[e] for e in ents}
            score = float(out.chunk_scores[r])
            result.append(
                ScoredChunk(
                    id=cid,
                    text=chunk.text,
                    doc_id=chunk.doc_id,
                    score=score if np.isfinite(score) else dense[r],
                    metadata=dict(chunk.metadata),
                    graph_score=float(out.chunk_graph[r]),
                    dense_score=float(dense[r]),
                    entities=[cg.node_ids[e] for e in ents if e in seeds],
                    paths=[text for nodes, text in rendered if nodes & keys],
                )
            )
        return result


def _records(index: GraphIndex, cg: CompiledGraph):
    """Where a query reads records: the saved files of a loaded index whose graph was never built, else the
    live graph."""
    if index.records is not None and not getattr(index.kg, "materialized", True):
        return index.records
    return GraphRecords(index.kg, cg)


def _bm25(records, cg: CompiledGraph):
    """BM25 over the snapshot's chunks (title + text), built once per compiled graph."""
    bm = cg.derived.get("bm25")
    if bm is None:
        from kg_rag.lexical import BM25Index

        with cg.derived_lock:
            bm = cg.derived.get("bm25")
            if bm is None:
                bm = BM25Index(records.chunk_texts())
                cg.derived["bm25"] = bm
    return bm


def validate_query(query: Any) -> str:
    """The query as a clean string; ``ValueError`` when it is not text or has no content."""
    if not isinstance(query, str):
        raise ValueError(f"query must be a string, got {type(query).__name__}")
    cleaned = "".join(ch if ch.isprintable() or ch in "\n\t" else " " for ch in query).strip()
    if not cleaned:
        raise ValueError("query is empty: pass a question or keywords")
    return cleaned


def _top_chunks(scores: np.ndarray, dense: np.ndarray, p: QueryParams) -> list[int]:
    k = p.top_k_chunks
    finite = np.flatnonzero(np.isfinite(scores))
    if finite.size:
        kk = min(k, finite.size)
        part = finite[np.argpartition(-scores[finite], kk - 1)[:kk]] if kk < finite.size else finite
        chosen = list(part[np.lexsort((part, -scores[part]))])
    else:
        chosen = []
    if len(chosen) < k and p.fill_with_dense and dense.size:
        taken = set(chosen)
        for r in np.argsort(-dense, kind="stable"):
            if len(chosen) >= k:
                break
            if int(r) not in taken:
                chosen.append(int(r))
    return [int(r) for r in chosen]


def _paths(cg, expansion, selected, facts, scores, p) -> list[GraphPath]:
    """Directed paths from seeds to the selected entities, plus the matched facts themselves."""
    paths: list[GraphPath] = []
    seen: set[tuple[str, ...]] = set()
    for e in facts:  # matched facts first: they answered the query most directly
        step = PathStep(
            cg.relation_ids[e], cg.node_ids[cg.src[e]], cg.node_ids[cg.dst[e]], cg.type_names[cg.type_id[e]], True
        )
        key = (step.relation_id,)
        if key not in seen:
            seen.add(key)
            paths.append(GraphPath(step.source, [step], float(scores[cg.src[e]] + scores[cg.dst[e]])))
    tail = []
    for n in selected:
        path = expansion.path_to(cg, n)
        if path is None or not path.steps:
            continue
        key = tuple(s.relation_id for s in path.steps)
        if key in seen:
            continue
        seen.add(key)
        path.score = float(scores[n])
        tail.append(path)
    tail.sort(key=lambda pa: -pa.score)
    return (paths + tail)[: p.max_paths]


def _relations(records, cg, selected, scores, mask, p) -> list[RelationRow]:
    """In-network relations (both ends selected) first, then out-network ones ranked by how many selected
    entities their outside end links to, then by rank (combined degree)."""
    if not selected or p.max_relations == 0:
        return []
    from kg_rag.compiled import csr_gather

    sel = np.asarray(selected, dtype=np.int64)
    is_sel = np.zeros(cg.n_nodes, dtype=bool)
    is_sel[sel] = True
    e_out, _ = csr_gather(cg.out_indptr, cg.out_edges, sel)
    e_in, _ = csr_gather(cg.in_indptr, cg.in_edges, sel)
    edges = np.unique(np.concatenate([e_out, e_in]))
    edges = edges[mask[edges] & ~cg.is_synonym[edges]]
    if edges.size == 0:
        return []
    src, dst = cg.src[edges], cg.dst[edges]
    inside = is_sel[src] & is_sel[dst]
    other = np.where(is_sel[src], dst, src)
    links = np.zeros(cg.n_nodes, dtype=np.int64)
    outside = ~inside
    if outside.any():  # distinct (outside entity, selected entity) pairs, as one int64 key each
        inner = np.where(is_sel[src[outside]], src[outside], dst[outside])
        pairs = np.unique(other[outside].astype(np.int64) * cg.n_nodes + inner)
        np.add.at(links, pairs // cg.n_nodes, 1)
    rank = cg.degree[src] + cg.degree[dst]
    strength = scores[src] + scores[dst]
    in_idx = np.flatnonzero(inside)
    in_idx = in_idx[np.lexsort((-rank[in_idx], -strength[in_idx]))]
    out_idx = np.flatnonzero(~inside)
    out_idx = out_idx[np.lexsort((-strength[out_idx], -rank[out_idx], -links[other[out_idx]]))]
    rows = []
    for i in np.concatenate([in_idx, out_idx])[: p.max_relations]:
        rel = records.relation(int(edges[i]))
        if rel is None:
            continue
        rows.append(
            RelationRow(
                rel.id,
                cg.names[src[i]],
                cg.names[dst[i]],
                rel.description or rel.predicate or "",
                rel.relation_type,
                rel.weight,
                int(rank[i]),
                bool(inside[i]),
                int(links[other[i]]) if not inside[i] else 2,
                rel.evidence_quote,
                rel.chunk_ids,
            )
        )
    return rows
