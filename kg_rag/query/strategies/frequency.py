"""``frequency`` (seed 003): chunks ranked by how many subgraph entities they mention and their relevance."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kg_rag.query.strategies.base import Strategy, StrategyInput, StrategyOutput, norm_max, rank_top, register_strategy


@register_strategy
@dataclass(frozen=True)
class Frequency(Strategy):
    """Chunk score = ``freq_weight`` x (subgraph entities it mentions, / max) + ``sim_weight`` x relevance,
    over the chunks that mention at least one entity of the expanded subgraph (seed 003)."""

    name = "frequency"
    consumes = frozenset({"expansion"})

    freq_weight: float = 0.4
    """Weight of how many subgraph entities a chunk mentions."""
    sim_weight: float = 0.6
    """Weight of the chunk's relevance to the query."""

    def score(self, s: StrategyInput) -> StrategyOutput:
        ws, ex = s.ws, s.expansion
        pairs = ws.entity_chunks(ex.nodes)
        if not len(pairs):
            return StrategyOutput(np.zeros(0, np.int64), np.zeros(0, np.float32), np.zeros(0, np.float32))
        pos = ws.chunks.add(pairs.right)
        freq = np.zeros(len(ws.chunks), dtype=np.float32)
        np.add.at(freq, pos, 1.0)
        rows = np.unique(pos)
        final = np.full(len(ws.chunks), -np.inf, dtype=np.float32)
        graph = self.freq_weight * norm_max(freq)  # the graph's part of the score (not the raw count)
        final[rows] = graph[rows] + self.sim_weight * ws.relevance(rows)
        # equal scores in chunk-handle order, not in the order the workspace happened to fetch the chunks
        top = rank_top(final, s.depth, ws.chunks.ids)
        entity_scores = dict(zip(ex.nodes.tolist(), ex.score.tolist()))
        return StrategyOutput(top, final[top], graph[top].astype(np.float32), entity_scores)
