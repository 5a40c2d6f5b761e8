"""``path`` (seed 001): hybrid path scoring — entities scored by decayed path score plus similarity."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kg_rag.query.strategies.base import Strategy, StrategyInput, StrategyOutput, norm_max, rank_top, register_strategy


@register_strategy
@dataclass(frozen=True)
class HybridPath(Strategy):
    """Entity score = best path score (seed weight x ``decay`` per hop, cycle-free) + ``hybrid_weight`` x its
    own similarity; chunks sum the scores of the entities they mention, fused with relevance
    (``graph_weight`` / ``dense_weight``)."""

    name = "path"
    consumes = frozenset({"expansion", "candidates"})

    decay: float = 0.5
    """Score multiplier per hop away from a seed."""
    hybrid_weight: float = 0.5
    """Weight of an entity's own similarity to the query, added to its path score."""
    graph_weight: float = 0.5
    """Weight of the graph score when fusing with relevance."""
    dense_weight: float = 0.5
    """Weight of the chunk's relevance when fusing."""

    @property
    def expansion_decay(self) -> float:  # type: ignore[override]
        return self.decay

    def check(self) -> list[str]:
        problems = super().check()
        if not problems and self.decay > 1:
            problems.append(f"path.decay must be <= 1, got {self.decay!r}")
        return problems

    def score(self, s: StrategyInput) -> StrategyOutput:
        ws, ex, p = s.ws, s.expansion, s.ws.params
        sims = ws.view.similarity("entities", ws.query, ex.nodes) if len(ex) else np.zeros(0, np.float32)
        for i, n in enumerate(ex.nodes.tolist()):
            if n in s.node_similarity:
                sims[i] = s.node_similarity[n]
        sims = np.maximum(sims, 0).astype(np.float32)
        node = ex.score + self.hybrid_weight * sims
        entity_scores = dict(zip(ex.nodes.tolist(), node.tolist()))
        pairs = ws.entity_chunks(ex.nodes)
        pos = ws.chunks.add(pairs.right)
        graph = np.zeros(len(ws.chunks), dtype=np.float32)
        if len(pairs):
            np.add.at(graph, pos, np.asarray([entity_scores[int(e)] for e in pairs.left], dtype=np.float32))
        rows = np.unique(np.concatenate([pos, s.candidates])) if p.fill_with_dense else np.unique(pos)
        final = np.full(len(ws.chunks), -np.inf, dtype=np.float32)
        final[rows] = self.graph_weight * norm_max(graph)[rows] + self.dense_weight * ws.relevance(rows)
        if not p.fill_with_dense:
            final[graph <= 0] = -np.inf
        top = rank_top(final, s.depth)
        return StrategyOutput(top, final[top], graph[top], entity_scores)
