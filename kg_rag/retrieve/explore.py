"""Stage 3a: directed subgraph expansion from the seeds (breadth-first, vectorised over CSR arrays).

Each hop takes successors (``out``), predecessors (``in``) or both, restricted by the edge mask. A node keeps
the best-scoring parent at its shortest distance, so reconstructed paths are cycle-free.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kg_rag.compiled import CompiledGraph, csr_gather
from kg_rag.retrieve.types import GraphPath, PathStep


@dataclass
class Expansion:
    hop: np.ndarray
    """Distance from the nearest seed (-1: not reached)."""
    parent_edge: np.ndarray
    parent_forward: np.ndarray
    path_score: np.ndarray
    """Best ``seed weight * decay**hop * edge factor`` over the paths reaching each node."""
    reached: np.ndarray

    def path_to(self, cg: CompiledGraph, node: int) -> GraphPath | None:
        """The path from a seed to ``node``, each step in its stored direction."""
        if self.hop[node] < 0:
            return None
        steps: list[PathStep] = []
        current = node
        while self.parent_edge[current] >= 0:
            e = int(self.parent_edge[current])
            fwd = bool(self.parent_forward[current])
            steps.append(
                PathStep(
                    cg.relation_ids[e],
                    cg.node_ids[cg.src[e]],
                    cg.node_ids[cg.dst[e]],
                    cg.type_names[cg.type_id[e]],
                    fwd,
                )
            )
            current = int(cg.src[e] if fwd else cg.dst[e])
        steps.reverse()
        return GraphPath(cg.node_ids[current], steps, float(self.path_score[node]))


def expand(
    cg: CompiledGraph,
    seeds: dict[int, float],
    max_hops: int,
    direction: str,
    edge_mask: np.ndarray,
    node_blocked: np.ndarray | None = None,
    decay: float = 0.5,
    max_frontier: int = 2000,
    max_edges_per_hop: int = 50_000,
) -> Expansion:
    """Breadth-first expansion. A hop's new frontier is capped at ``max_frontier`` nodes (best path score
    first, then lowest row), and a hop expands frontier nodes (best first) only until ``max_edges_per_hop``
    edges are gathered: on power-law graphs two hops from a hub otherwise touch most of the graph."""
    n = cg.n_nodes
    hop = np.full(n, -1, dtype=np.int32)
    parent = np.full(n, -1, dtype=np.int64)
    forward = np.zeros(n, dtype=bool)
    score = np.zeros(n, dtype=np.float32)
    if seeds:
        idx = np.fromiter(seeds.keys(), dtype=np.int64, count=len(seeds))
        hop[idx] = 0
        score[idx] = np.fromiter(seeds.values(), dtype=np.float32, count=len(seeds))
        frontier = idx
    else:
        frontier = np.zeros(0, dtype=np.int64)
    for h in range(1, max_hops + 1):
        if frontier.size == 0:
            break
        degree = (cg.out_indptr[frontier + 1] - cg.out_indptr[frontier] if direction != "in" else 0) + (
            cg.in_indptr[frontier + 1] - cg.in_indptr[frontier] if direction != "out" else 0
        )
        if int(np.sum(degree)) > max_edges_per_hop:
            by_score = np.lexsort((frontier, -score[frontier]))
            within = np.cumsum(np.asarray(degree)[by_score]) <= max_edges_per_hop
            within[0] = True
            frontier = frontier[by_score[within]]
        parts = []
        if direction in ("out", "both"):
            e, owner = csr_gather(cg.out_indptr, cg.out_edges, frontier)
            parts.append((e, owner, cg.dst[e], np.ones(e.size, dtype=bool)))
        if direction in ("in", "both"):
            e, owner = csr_gather(cg.in_indptr, cg.in_edges, frontier)
            parts.append((e, owner, cg.src[e], np.zeros(e.size, dtype=bool)))
        edges = np.concatenate([p[0] for p in parts])
        owners = np.concatenate([p[1] for p in parts])
        nbrs = np.concatenate([p[2] for p in parts])
        fwd = np.concatenate([p[3] for p in parts])
        keep = edge_mask[edges] & (hop[nbrs] < 0)
        if node_blocked is not None:
            keep &= ~node_blocked[nbrs]
        edges, owners, nbrs, fwd = edges[keep], owners[keep], nbrs[keep], fwd[keep]
        if edges.size == 0:
            break
        cand = score[owners] * decay
        order = np.argsort(-cand, kind="stable")
        uniq, first = np.unique(nbrs[order], return_index=True)
        best = order[first]
        if uniq.size > max_frontier:
            keep_best = np.lexsort((uniq, -cand[best]))[:max_frontier]
            uniq, best = uniq[keep_best], best[keep_best]
        hop[uniq] = h
        parent[uniq] = edges[best]
        forward[uniq] = fwd[best]
        score[uniq] = cand[best]
        frontier = uniq
    return Expansion(hop, parent, forward, score, np.flatnonzero(hop >= 0))
