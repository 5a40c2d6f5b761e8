"""``ppr``: HippoRAG-2-style personalised PageRank over entities and passages."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from kg_rag.arrays import unique_ints
from kg_rag.model.records import EXTRACTED
from kg_rag.query.strategies.base import (
    Strategy,
    StrategyInput,
    StrategyOutput,
    check_number,
    rank_top,
    register_strategy,
)
from kg_rag.store.base import VectorKind

I64 = np.int64


def _index(universe: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Positions of ``values`` in the sorted array ``universe`` (-1 where absent), vectorised."""
    if universe.size == 0 or values.size == 0:
        return np.full(values.size, -1, dtype=I64)
    top = int(universe[-1])
    if universe[0] >= 0 and top < 4 * (universe.size + values.size):
        # handles are dense small integers here: a lookup table beats a binary search per value several times
        table = np.full(top + 1, -1, dtype=I64)
        table[universe] = np.arange(universe.size, dtype=I64)
        ok = (values >= 0) & (values <= top)
        out = np.full(values.size, -1, dtype=I64)
        out[ok] = table[values[ok]]
        return out
    pos = np.searchsorted(universe, values)
    pos = np.minimum(pos, universe.size - 1)
    return np.where(universe[pos] == values, pos, -1).astype(I64)


@register_strategy
@dataclass(frozen=True)
class PPR(Strategy):
    """Personalised PageRank over a graph of entities and passage (chunk) nodes, as in HippoRAG 2.

    Seeds: the ``facts`` facts most similar to the query; each end of a fact is weighted by the fact's
    similarity divided by how many passages mention it (*specificity*: a rare entity says more than a
    country), and only the ``link_top`` best-linked entities are kept. Every passage also gets a reset weight
    ``passage_weight`` x its min-max normalised relevance, so the walk starts from dense retrieval too.
    Edges: passage-entity mentions (weight 1), entity-entity relations (weight = observations) and synonym
    links, all walked both ways (the query's type filters apply; ``direction`` other than ``both`` walks
    relations one way). Passages are ranked by their PageRank mass alone, at ``damping`` 0.5.

    The walk runs on the query's neighbourhood — the ``passages`` most relevant passages, every entity they
    mention, the seeds and what ``max_hops`` reach — which holds nearly all of the mass at damping 0.5.
    """

    name = "ppr"
    consumes = frozenset({"candidates"})

    facts: int = 5
    """Facts used as seeds (query-to-fact similarity)."""
    link_top: int = 5
    """Most seed entities kept (best average fact similarity)."""
    passage_weight: float = 0.05
    """Reset weight of a passage per unit of normalised relevance (the dense prior of the walk)."""
    passages: int = 2000
    """Passages given a dense reset weight (the most relevant ones)."""
    damping: float = 0.5
    """Probability of following an edge (1 - restart probability)."""
    iterations: int = 50
    """Maximum power iterations (stops earlier on convergence)."""
    node_specificity: bool = True
    """Divide seed weights by how many passages mention the entity."""

    def check(self) -> list[str]:
        problems = super().check()
        if not problems:
            if not 0.0 < self.damping < 1.0:
                problems.append(f"ppr.damping must be in (0, 1), got {self.damping!r}")
            for knob in ("facts", "passages", "iterations"):
                problems += check_number(f"ppr.{knob}", getattr(self, knob), low=1, integer=True)
        return problems

    def searches(self) -> tuple[tuple[VectorKind, int], ...]:
        """The query's best facts (three times the seeds wanted: some are filtered out) and passages."""
        return (("facts", self.facts * 3), ("chunks", self.passages))

    # ------------------------------------------------------------------ seeds
    def seeds(self, s: StrategyInput) -> dict[int, float]:
        """Seed entity -> weight from the query's best facts (plus any ``include_entities``)."""
        ws = s.ws
        view = ws.view
        blocked = ws.edge_filter.blocked
        hits = view.search("facts", ws.query, self.facts * 3)  # some may be filtered out below
        rels = view.relations(hits.ids)
        ends = view.lookup_entities([k for r in rels if r is not None for k in (r.source, r.target)])
        weight: dict[int, float] = {}
        scores: dict[int, list[float]] = defaultdict(list)
        used = 0
        for score, rel in zip(hits.scores.tolist(), rels):
            if used >= self.facts:
                break
            if rel is None or not ws.edge_filter.allows_type(rel.relation_type, rel.kind != EXTRACTED):
                continue
            head, tail = ends.get(rel.source), ends.get(rel.target)
            if head is None or tail is None or head in blocked or tail in blocked:
                continue
            used += 1
            for h in (head, tail):
                weight[h] = max(weight.get(h, 0.0), score)
                scores[h].append(score)
        for h, w in s.seeds.items():  # entities the caller insisted on (include_entities) keep full weight
            if w >= 1.0 and h not in blocked:
                weight[h] = max(weight.get(h, 0.0), w)
                scores[h].append(w)
        if len(weight) > self.link_top:
            keep = sorted(weight, key=lambda h: (-float(np.mean(scores[h])), h))[: self.link_top]
            weight = {h: weight[h] for h in keep}
        if self.node_specificity and weight:
            handles = np.fromiter(weight, dtype=I64, count=len(weight))
            counts = ws.mention_counts(handles)
            weight = {h: w / max(float(c), 1.0) for (h, w), c in zip(weight.items(), counts.tolist())}
        return weight

    # ------------------------------------------------------------------ walk
    def score(self, s: StrategyInput) -> StrategyOutput:
        ws, p = s.ws, s.ws.params
        view, ef = ws.view, ws.edge_filter
        seeds = self.seeds(s)
        hits = view.search("chunks", ws.query, self.passages)
        prior_pos = unique_ints(np.concatenate([s.candidates, ws.chunks.add(hits.ids)]))
        reached = view.expand(seeds, p.max_hops, ef, max_frontier=p.max_frontier) if seeds else None
        mentions = ws.chunk_entities(ws.chunks.ids[prior_pos])
        parts = [mentions.right, np.fromiter(seeds, dtype=I64, count=len(seeds))]
        if reached is not None:
            parts.append(reached.nodes)
        entities = unique_ints(np.concatenate(parts))
        if ef.blocked and entities.size:
            entities = entities[~np.isin(entities, np.fromiter(ef.blocked, dtype=I64))]
        back = ws.entity_chunks(entities)
        passage_pos = unique_ints(np.concatenate([prior_pos, ws.chunks.add(back.right)]))
        passages = ws.chunks.ids[passage_pos]
        order = np.argsort(passages)
        passages_sorted, passage_pos_sorted = passages[order], passage_pos[order]
        n, c = entities.size, passages.size
        if n + c == 0:
            return StrategyOutput(np.zeros(0, I64), np.zeros(0, np.float32), np.zeros(0, np.float32))

        rows: list[np.ndarray] = []
        cols: list[np.ndarray] = []
        vals: list[np.ndarray] = []
        edges = view.edges_of(entities, ef, among=True)
        if len(edges):
            a, b = _index(entities, edges.src), _index(entities, edges.dst)
            w = np.where(edges.synonym, 1.0, edges.weight).astype(np.float32)
            if ef.direction in ("out", "both"):
                rows += [a]
                cols += [b]
                vals += [w]
            if ef.direction in ("in", "both"):
                rows += [b]
                cols += [a]
                vals += [w]
        ent = _index(entities, back.left)
        psg = _index(passages_sorted, back.right)
        ok = (ent >= 0) & (psg >= 0)
        ones = np.ones(int(ok.sum()), dtype=np.float32)
        rows += [ent[ok], n + psg[ok]]
        cols += [n + psg[ok], ent[ok]]
        vals += [ones, ones]
        size = n + c
        adj = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(size, size))
        out_w = np.asarray(adj.sum(axis=1)).ravel()
        inv = np.divide(1.0, out_w, out=np.zeros_like(out_w), where=out_w > 0)
        walk = (sp.diags(inv) @ adj).T.tocsr()
        dangling = out_w == 0

        reset = np.zeros(size, dtype=np.float64)
        if seeds:
            idx = _index(entities, np.fromiter(seeds, dtype=I64, count=len(seeds)))
            reset[idx[idx >= 0]] = np.asarray(list(seeds.values()), dtype=np.float64)[idx >= 0]
        relevance = ws.relevance(passage_pos_sorted).astype(np.float64)
        prior_mask = np.isin(passage_pos_sorted, prior_pos)
        if self.passage_weight > 0 and prior_mask.any():
            rel = relevance[prior_mask]
            span = float(rel.max() - rel.min())
            norm = (rel - rel.min()) / span if span > 0 else np.ones_like(rel)
            reset[n:][prior_mask] += self.passage_weight * norm
        total = reset.sum()
        if total <= 0:
            top = rank_top(relevance, s.depth)
            return StrategyOutput(passage_pos_sorted[top], relevance[top].astype(np.float32), np.zeros(top.size))
        reset /= total
        x = reset.copy()
        d = self.damping
        for _ in range(self.iterations):
            x_new = d * (walk @ x) + (1 - d) * reset
            x_new += d * float(x[dangling].sum()) * reset
            delta = float(np.abs(x_new - x).sum())
            x = x_new
            if delta < 1e-9:
                break
        mass = x[n:]
        top = rank_top(mass, s.depth)
        best = rank_top(x[:n], max(p.top_k_nodes, 1) * 20)  # only the best entities can be shown
        entity_scores = dict(zip(entities[best].tolist(), x[:n][best].tolist()))
        return StrategyOutput(
            passage_pos_sorted[top], mass[top].astype(np.float32), mass[top].astype(np.float32), entity_scores
        )
