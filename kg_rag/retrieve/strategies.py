"""Stage 3b/4: scoring strategies, selectable by name (``QueryParams.strategy``).

Each strategy turns seeds and the expansion into per-entity scores and per-chunk graph scores; chunks are
then ranked by the strategy's fusion with dense chunk similarity. All work is numpy / scipy sparse algebra.
Register a custom one with :func:`register_strategy`.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import scipy.sparse as sp

from kg_rag.compiled import CompiledGraph
from kg_rag.params import STRATEGIES, QueryParams
from kg_rag.retrieve.explore import Expansion
from kg_rag.retrieve.relevance import ChunkRelevance


@dataclass
class ScoringInput:
    cg: CompiledGraph
    params: QueryParams
    seeds: dict[int, float]
    expansion: Expansion
    edge_mask: np.ndarray
    node_sim: np.ndarray
    """Cosine similarity of every entity to the query (computed only where needed; 0 elsewhere)."""
    relevance: ChunkRelevance
    """Query relevance of chunks: cosine similarity, plus ``lexical_weight`` * normalised BM25."""
    node_blocked: np.ndarray | None = None

    @property
    def chunk_dense(self) -> np.ndarray:
        """Relevance of every chunk as one array (computed in full on first use)."""
        return self.relevance.full()


@dataclass
class ScoringOutput:
    node_scores: np.ndarray
    chunk_scores: np.ndarray
    """Final chunk ranking scores; ``-inf`` marks chunks the strategy does not consider."""
    chunk_graph: np.ndarray
    order: list[int] | None = None
    """An explicit ranking of chunk rows (greedy strategies); ``None`` = rank by ``chunk_scores``."""


class Strategy(Protocol):
    name: str

    def score(self, s: ScoringInput) -> ScoringOutput: ...


def _norm_max(x: np.ndarray) -> np.ndarray:
    m = float(x.max()) if x.size else 0.0
    return x / m if m > 0 else np.zeros_like(x)


class FrequencySimilarity:
    """Seed 003: chunk score = ``node_freq_weight`` * (subgraph entities it mentions, / max) +
    ``node_sim_weight`` * chunk similarity, over chunks that mention at least one subgraph entity."""

    name = "frequency"

    def score(self, s: ScoringInput) -> ScoringOutput:
        cg, p, ex = s.cg, s.params, s.expansion
        indicator = np.zeros(cg.n_nodes, dtype=np.float32)
        indicator[ex.reached] = 1.0
        freq = np.asarray(cg.chunk_entities @ indicator).ravel()
        final = np.where(freq > 0, p.node_freq_weight * _norm_max(freq) + p.node_sim_weight * s.chunk_dense, -np.inf)
        return ScoringOutput(ex.path_score.copy(), final, freq)


class HybridPath:
    """Seed 001: node score = best path score (seed weight * decay per hop, cycle-free) +
    ``hybrid_weight`` * the node's own similarity; chunks sum their entities' scores, fused with dense."""

    name = "path"

    def score(self, s: ScoringInput) -> ScoringOutput:
        cg, p, ex = s.cg, s.params, s.expansion
        node = np.zeros(cg.n_nodes, dtype=np.float32)
        node[ex.reached] = ex.path_score[ex.reached] + p.hybrid_weight * np.maximum(s.node_sim[ex.reached], 0)
        graph = np.asarray(cg.chunk_entities @ node).ravel()
        final = p.graph_weight * _norm_max(graph) + p.dense_weight * s.chunk_dense
        if not p.fill_with_dense:
            final = np.where(graph > 0, final, -np.inf)
        return ScoringOutput(node, final, graph)


class PersonalizedPageRank:
    """HippoRAG-style personalised PageRank over entities and chunk nodes.

    Restart distribution: seed entities (weighted by match score, divided by how many chunks mention them
    when ``node_specificity``) plus chunks weighted by dense similarity * ``ppr_dense_seed``. Entity-entity
    edges follow ``direction`` and the type filters; entity-chunk incidence edges go both ways.
    """

    name = "ppr"

    def transition(self, cg: CompiledGraph, p: QueryParams, mask: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
        """Transposed row-stochastic transition matrix (cached per graph, direction, mask and weights)."""
        key = (
            p.direction,
            hashlib.blake2b(np.packbits(mask).tobytes(), digest_size=16).digest(),
            p.related_weight,
            p.chunk_edge_weight,
        )
        cache: OrderedDict = cg.derived.setdefault("ppr_transition", OrderedDict())
        with cg.derived_lock:
            hit = cache.get(key)
            if hit is not None:
                cache.move_to_end(key)
                return hit
        n, c = cg.n_nodes, cg.n_chunks
        e = np.flatnonzero(mask)
        w = np.log1p(cg.weight[e]).astype(np.float32) + 1.0
        related = cg.type_index.get("RELATED")
        if related is not None and p.related_weight != 1.0:
            w = np.where(cg.type_id[e] == related, w * p.related_weight, w)
        rows, cols, vals = [], [], []
        if p.direction in ("out", "both"):
            rows.append(cg.src[e])
            cols.append(cg.dst[e])
            vals.append(w)  # noqa: E702
        if p.direction in ("in", "both"):
            rows.append(cg.dst[e])
            cols.append(cg.src[e])
            vals.append(w)  # noqa: E702
        inc = cg.incidence.tocoo()
        if p.chunk_edge_weight > 0 and inc.nnz:
            cw = np.full(inc.nnz, p.chunk_edge_weight, dtype=np.float32)
            rows += [inc.row, inc.col + n]
            cols += [inc.col + n, inc.row]
            vals += [cw, cw]
        size = n + c
        if rows:
            a = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(size, size))
        else:
            a = sp.csr_matrix((size, size), dtype=np.float32)
        out_w = np.asarray(a.sum(axis=1)).ravel()
        inv = np.divide(1.0, out_w, out=np.zeros_like(out_w), where=out_w > 0)
        pt = (sp.diags(inv.astype(np.float32)) @ a).T.tocsr().astype(np.float32)
        result = (pt, out_w == 0)
        with cg.derived_lock:
            cache[key] = result
            while len(cache) > 16:
                cache.popitem(last=False)
        return result

    def score(self, s: ScoringInput) -> ScoringOutput:
        cg, p = s.cg, s.params
        n, c = cg.n_nodes, cg.n_chunks
        pers = np.zeros(n + c, dtype=np.float32)
        if s.seeds:
            idx = np.fromiter(s.seeds.keys(), dtype=np.int64, count=len(s.seeds))
            w = np.fromiter(s.seeds.values(), dtype=np.float32, count=len(s.seeds))
            if p.node_specificity:
                w = w / np.maximum(cg.chunks_per_entity[idx], 1.0)
            pers[idx] = w / w.sum() if w.sum() > 0 else 0
        if p.ppr_dense_seed > 0 and c:
            dense = np.maximum(s.chunk_dense, 0)
            if dense.max() > 0:
                pers[n:] += p.ppr_dense_seed * dense / dense.max() / max(1.0, float((dense > 0).sum()) ** 0.5)
        if s.node_blocked is not None:
            pers[:n][s.node_blocked] = 0
        total = pers.sum()
        if total <= 0:
            zeros = np.zeros(n, dtype=np.float32)
            final = p.dense_weight * s.chunk_dense if p.fill_with_dense else np.full(c, -np.inf)
            return ScoringOutput(zeros, final, np.zeros(c, dtype=np.float32))
        pers /= total
        pt, dangling = self.transition(cg, p, s.edge_mask)
        x = pers.copy()
        d = p.ppr_damping
        for _ in range(p.ppr_iterations):
            x_new = d * (pt @ x) + (1 - d) * pers
            leaked = d * float(x[dangling].sum())
            if leaked:
                x_new += leaked * pers
            if s.node_blocked is not None:
                x_new[:n][s.node_blocked] = 0
            delta = float(np.abs(x_new - x).sum())
            x = x_new
            if delta < 1e-6:
                break
        node = x[:n]
        graph = x[n:] if p.chunk_edge_weight > 0 else np.asarray(cg.chunk_entities @ node).ravel()
        final = p.graph_weight * _norm_max(graph) + p.dense_weight * s.chunk_dense
        if not p.fill_with_dense:
            final = np.where(graph > 0, final, -np.inf)
        return ScoringOutput(node, final, graph)


def link_specificity(cg: CompiledGraph, k: float) -> np.ndarray:
    """Per-entity link strength ``min(1, k / (other chunks mentioning it))``: an entity shared by two chunks
    links them fully; one mentioned in hundreds of chunks (a country, "film") barely links anything."""
    key = ("link_specificity", float(k))
    cached = cg.derived.get(key)
    if cached is None:
        others = np.maximum(cg.chunks_per_entity - 1.0, 1.0)
        cached = np.minimum(1.0, k / others).astype(np.float32)
        cg.derived[key] = cached
    return cached


class ChainExpansion:
    """Greedy evidence chains over chunks linked by shared entities (the recommended strategy).

    Chunks are picked one at a time. Each pick links every chunk that shares a specific entity with it
    (strength :func:`link_specificity`; ``chain_edge_weight`` also follows one allowed relation edge, in the
    permitted ``direction``) and gives those chunks a boost of ``chain_weight`` * the picked chunk's query
    similarity. A chunk's score is its own similarity to the query plus its best boost, so the second
    passage of a multi-hop answer — about the bridge entity, dissimilar to the question — can follow the
    first. Query entities (seeds) add ``seed_weight`` to the chunks that mention them.
    """

    name = "chain"

    def score(self, s: ScoringInput) -> ScoringOutput:
        cg, p = s.cg, s.params
        n, c = cg.n_nodes, cg.n_chunks
        if c == 0:
            return ScoringOutput(np.zeros(n, np.float32), np.zeros(0, np.float32), np.zeros(0, np.float32))
        rel = s.relevance
        # relevance is known exactly for the candidates; any other row is scored when a link reaches it
        d = np.full(c, -np.inf, dtype=np.float32)
        d[rel.candidates] = rel.candidate_values
        top_relevance = max(rel.max(), 0.0)

        def know(rows: np.ndarray) -> None:
            missing = rows[np.isneginf(d[rows])]
            if missing.size:
                d[missing] = rel.rows(missing)

        spec = link_specificity(cg, p.link_specificity)
        if s.node_blocked is not None:
            spec = np.where(s.node_blocked, 0.0, spec).astype(np.float32)
        mention = cg.chunk_entities  # C x N
        seed_boost = np.zeros(c, dtype=np.float32)
        if s.seeds and p.seed_weight > 0:
            u = np.zeros(n, dtype=np.float32)
            for node, w in s.seeds.items():
                u[node] = w * spec[node]
            seed_boost = p.seed_weight * top_relevance * np.minimum(mention @ u, 1.0)
            know(np.flatnonzero(seed_boost))
        adjacency = self._adjacency(cg, p, s.edge_mask) if p.chain_edge_weight > 0 else None

        def links(t: int) -> np.ndarray:
            ents = cg.chunk_entities.indices[cg.chunk_entities.indptr[t] : cg.chunk_entities.indptr[t + 1]]
            u = np.zeros(n, dtype=np.float32)
            u[ents] = spec[ents]
            if adjacency is not None:
                u = np.maximum(u, p.chain_edge_weight * np.minimum(adjacency @ u, 1.0) * spec)
            return np.minimum(mention @ u, 1.0)

        k = min(p.top_k_chunks, c)
        chosen: list[int] = []
        picked_score: list[float] = []
        depth = np.full(c, -1, dtype=np.int32)
        boost = np.zeros(c, dtype=np.float32)
        source_depth = np.zeros(c, dtype=np.int32)
        while len(chosen) < k:
            score = d + seed_boost + p.chain_weight * boost
            score[chosen] = -np.inf
            t = int(np.argmax(score))
            if not np.isfinite(score[t]):
                break
            chosen.append(t)
            picked_score.append(float(score[t]))
            depth[t] = source_depth[t] if boost[t] > 0 else 0
            if depth[t] < max(p.max_hops, 1):
                gain = max(float(d[t]), 0.0) * links(t)
                better = gain > boost
                know(np.flatnonzero(better))
                boost = np.where(better, gain, boost)
                source_depth = np.where(better, depth[t] + 1, source_depth)
        final = d + seed_boost + p.chain_weight * boost
        final[chosen] = picked_score  # each chosen chunk keeps the score it was picked with
        graph = boost
        # entity scores: what the chosen chunks mention, by chunk rank, plus the query seeds
        weights = np.zeros(c, dtype=np.float32)
        weights[chosen] = 1.0 / (1.0 + np.arange(len(chosen), dtype=np.float32))
        node = np.asarray(cg.incidence @ weights).ravel().astype(np.float32) * spec
        for seed, w in s.seeds.items():
            node[seed] += w
        return ScoringOutput(node, final, graph, order=chosen)

    @staticmethod
    def _adjacency(cg: CompiledGraph, p: QueryParams, mask: np.ndarray) -> sp.csr_matrix:
        """Entity adjacency over allowed edges (``adj @ u`` spreads from sources to targets for ``out``)."""
        key = ("chain_adjacency", p.direction, hashlib.blake2b(np.packbits(mask).tobytes(), digest_size=16).digest())
        cached = cg.derived.get(key)
        if cached is None:
            e = np.flatnonzero(mask)
            rows, cols = [], []
            if p.direction in ("out", "both"):
                rows.append(cg.dst[e])
                cols.append(cg.src[e])
            if p.direction in ("in", "both"):
                rows.append(cg.src[e])
                cols.append(cg.dst[e])
            r = np.concatenate(rows) if rows else np.zeros(0, np.int64)
            cc = np.concatenate(cols) if cols else np.zeros(0, np.int64)
            cached = sp.csr_matrix((np.ones(r.size, np.float32), (r, cc)), shape=(cg.n_nodes, cg.n_nodes))
            cached.data[:] = 1.0
            with cg.derived_lock:
                if len([k for k in cg.derived if isinstance(k, tuple) and k[0] == "chain_adjacency"]) > 16:
                    for k in [k for k in cg.derived if isinstance(k, tuple) and k[0] == "chain_adjacency"]:
                        del cg.derived[k]
                cg.derived[key] = cached
        return cached


STRATEGY_REGISTRY: dict[str, Strategy] = {
    "chain": ChainExpansion(),
    "frequency": FrequencySimilarity(),
    "path": HybridPath(),
    "ppr": PersonalizedPageRank(),
}


def register_strategy(strategy: Strategy) -> None:
    """Make a custom strategy selectable by ``QueryParams(strategy=strategy.name)``."""
    if not getattr(strategy, "name", None):
        raise ValueError("a strategy needs a non-empty name")
    STRATEGY_REGISTRY[strategy.name] = strategy
    STRATEGIES.add(strategy.name)


def get_strategy(name: str) -> Strategy:
    try:
        return STRATEGY_REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown strategy {name!r}; registered: {', '.join(sorted(STRATEGY_REGISTRY))}") from None
