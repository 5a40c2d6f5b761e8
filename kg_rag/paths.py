"""Directed path finding between two entities ("how is X connected to Y?").

Breadth-first over the compiled graph's CSR arrays, collecting every shortest path up to ``max_length``
edges (then up to ``limit`` of them). ``direction="directed"`` follows edges source -> target only;
``"any"`` may also walk an edge backwards, which the rendering shows as ``<-[TYPE]-`` — never inverted.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kg_rag.compiled import CompiledGraph, csr_gather
from kg_rag.retrieve.types import GraphPath, PathStep


def find_paths(
    cg: CompiledGraph,
    source: int,
    target: int,
    *,
    relation_types: Sequence[str] | None = None,
    max_length: int = 4,
    direction: str = "any",
    limit: int = 5,
    use_synonyms: bool = True,
) -> list[GraphPath]:
    """Shortest paths from node ``source`` to node ``target`` (row positions in ``cg``)."""
    if direction not in ("directed", "any"):
        raise ValueError("direction must be 'directed' or 'any'")
    if not 1 <= max_length <= 8:
        raise ValueError("max_length must be between 1 and 8")
    if limit < 1:
        raise ValueError("limit must be >= 1")
    if source == target:
        return [GraphPath(cg.node_ids[source], [])]
    mask = cg.edge_mask(relation_types, (), use_synonyms)
    level = np.full(cg.n_nodes, -1, dtype=np.int32)
    level[source] = 0
    parents: dict[int, list[tuple[int, int, bool]]] = {}  # node -> [(edge, previous node, forward)]
    frontier = np.asarray([source], dtype=np.int64)
    for depth in range(1, max_length + 1):
        steps = []
        e, owner = csr_gather(cg.out_indptr, cg.out_edges, frontier)
        steps.append((e, owner, cg.dst[e], True))
        if direction == "any":
            e, owner = csr_gather(cg.in_indptr, cg.in_edges, frontier)
            steps.append((e, owner, cg.src[e], False))
        nxt = []
        for edges, owners, nbrs, fwd in steps:
            keep = mask[edges] & ((level[nbrs] == -1) | (level[nbrs] == depth))
            for edge, prev, node in zip(edges[keep], owners[keep], nbrs[keep]):
                node = int(node)
                if level[node] == -1:
                    level[node] = depth
                    nxt.append(node)
                parents.setdefault(node, []).append((int(edge), int(prev), fwd))
        if level[target] != -1 or not nxt:
            break
        frontier = np.unique(np.asarray(nxt, dtype=np.int64))
    if level[target] == -1:
        return []
    out: list[GraphPath] = []

    def walk(node: int, suffix: list[PathStep]) -> None:
        if len(out) >= limit:
            return
        if node == source:
            out.append(GraphPath(cg.node_ids[source], list(reversed(suffix))))
            return
        for edge, prev, fwd in parents.get(node, []):
            if level[prev] != level[node] - 1:
                continue
            step = PathStep(
                cg.relation_ids[edge],
                cg.node_ids[cg.src[edge]],
                cg.node_ids[cg.dst[edge]],
                cg.type_names[cg.type_id[edge]],
                fwd,
            )
            walk(prev, [*suffix, step])

    walk(target, [])
    return out
