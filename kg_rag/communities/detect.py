"""Hierarchical community detection on the typed graph, with Leiden (``leidenalg`` on ``igraph``).

The directed typed graph is projected to an undirected weighted one (the weight of a pair is the evidence
weight of every relation between the two, either way, synonym links included: communities are about which
entities belong together, not about direction). Level 0 partitions the whole graph; a community larger than
``max_cluster_size`` is partitioned again at the next level, up to ``max_levels``. Runs are deterministic for a
given ``seed``; a previous result seeds level 0 (``initial_membership``), so an update moves few entities and
most communities keep their members — and their reports.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from typing import Any, TypedDict

from kg_rag.communities.model import Community, CommunitySet, community_id
from kg_rag.errors import InputError
from kg_rag.model.graph import KnowledgeGraph
from kg_rag.model.records import EXTRACTED, SYNONYM_KIND

logger = logging.getLogger(__name__)


class CommunityDefaults(TypedDict):
    """The defaults of :func:`detect_communities` (one place for the CLI and the library)."""

    max_cluster_size: int
    max_levels: int
    resolution: float
    seed: int
    min_size: int


DEFAULTS: CommunityDefaults = {"max_cluster_size": 12, "max_levels": 3, "resolution": 1.0, "seed": 42, "min_size": 2}


def _weighted_pairs(kg: KnowledgeGraph, members: set[str] | None = None) -> dict[tuple[str, str], float]:
    pairs: dict[tuple[str, str], float] = {}
    edges = kg.graph.subgraph(members).edges(data=True) if members is not None else kg.graph.edges(data=True)
    for u, v, attrs in edges:
        if u == v:
            continue
        if attrs.get("kind", EXTRACTED) == SYNONYM_KIND:
            w = 1.0
        else:
            w = float(sum(e.get("weight", 1.0) for e in attrs.get("evidence", ())) or 1.0)
        key = (u, v) if u < v else (v, u)
        pairs[key] = pairs.get(key, 0.0) + w
    return pairs


def _leiden(
    nodes: Sequence[str],
    pairs: dict[tuple[str, str], float],
    resolution: float,
    seed: int,
    initial: list[int] | None = None,
) -> list[int]:
    """Membership (one label per node) from Leiden, or NetworkX Louvain when leidenalg is missing."""
    index = {n: i for i, n in enumerate(nodes)}
    edges = [(index[u], index[v]) for u, v in pairs]
    weights = list(pairs.values())
    try:
        import igraph as ig
        import leidenalg
    except ImportError:  # pragma: no cover - the dependency is declared; this keeps odd installs working
        import networkx as nx

        logger.warning("leidenalg/igraph not installed: using NetworkX Louvain for communities")
        g = nx.Graph()
        g.add_nodes_from(range(len(nodes)))
        g.add_weighted_edges_from((a, b, w) for (a, b), w in zip(edges, weights))
        parts = nx.community.louvain_communities(g, weight="weight", resolution=resolution, seed=seed)
        membership = [0] * len(nodes)
        for label, part in enumerate(sorted(parts, key=lambda p: min(p))):
            for n in part:
                membership[n] = label
        return membership
    g = ig.Graph(n=len(nodes), edges=edges, directed=False)
    g.es["weight"] = weights
    partition = leidenalg.find_partition(
        g,
        leidenalg.RBConfigurationVertexPartition,
        weights="weight",
        resolution_parameter=resolution,
        seed=seed,
        n_iterations=-1,
        initial_membership=initial,
    )
    return list(partition.membership)


def _groups(nodes: Sequence[str], membership: list[int], min_size: int) -> list[list[str]]:
    groups: dict[int, list[str]] = {}
    for node, label in zip(nodes, membership):
        groups.setdefault(label, []).append(node)
    return sorted((sorted(g) for g in groups.values() if len(g) >= min_size), key=lambda g: g[0])


def detect_communities(
    kg: KnowledgeGraph,
    *,
    max_cluster_size: int = DEFAULTS["max_cluster_size"],
    max_levels: int = DEFAULTS["max_levels"],
    resolution: float = DEFAULTS["resolution"],
    seed: int = DEFAULTS["seed"],
    min_size: int = DEFAULTS["min_size"],
    previous: CommunitySet | None = None,
) -> list[Community]:
    """Hierarchical communities of ``kg`` (no reports yet: see :mod:`kg_rag.communities.reports`)."""
    for name, value, low in (
        ("max_cluster_size", max_cluster_size, 2),
        ("max_levels", max_levels, 1),
        ("min_size", min_size, 1),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise InputError(f"{name} must be an integer >= {low}, got {value!r}")
    if not resolution > 0:
        raise InputError(f"resolution must be > 0, got {resolution!r}")
    with kg.lock:
        nodes = sorted(kg.graph.nodes)
        pairs = _weighted_pairs(kg)
        initial = None
        if previous is not None and len(previous):
            # labels must be 0..n-1: each previous community still present, then each entity in none (new, or
            # too small a group to be kept) on its own
            prior = {key: i for i, c in enumerate(previous.at_level(0)) for key in c.entities}
            compact: dict[tuple[int, str], int] = {}
            initial = [compact.setdefault((prior[n], "") if n in prior else (-1, n), len(compact)) for n in nodes]
        out: list[Community] = []
        if not nodes:
            return out
        membership = _leiden(nodes, pairs, resolution, seed, initial)
        todo: list[tuple[int, str | None, list[str]]] = [
            (0, None, group) for group in _groups(nodes, membership, min_size)
        ]
        while todo:
            level, parent, members = todo.pop(0)
            community = Community(community_id(level, members), level, members, parent=parent)
            out.append(community)
            if len(members) > max_cluster_size and level + 1 < max_levels:
                sub_pairs = _weighted_pairs(kg, set(members))
                sub = _groups(members, _leiden(members, sub_pairs, resolution, seed), min_size)
                if len(sub) > 1 or (len(sub) == 1 and len(sub[0]) < len(members)):
                    todo += [(level + 1, community.id, group) for group in sub]
        for c in out:
            c.relations = internal_relations(kg, c.entities)
            c.signature = signature(kg, c.entities)
    logger.info("found %d communities on %d levels", len(out), len({c.level for c in out}))
    return out


def graph_fingerprint(kg: KnowledgeGraph) -> str:
    """Hash of the graph's shape (entity keys, relation and synonym link ids) that detection reads; what the
    reports read is in each community's :func:`signature`."""
    h = hashlib.sha256()
    with kg.lock:
        for key in sorted(kg.graph.nodes):
            h.update(f"n:{key}\n".encode())
        for u, v, k in sorted(kg.graph.edges(keys=True), key=lambda e: (e[2], e[0], e[1])):
            h.update(json.dumps([k, u, v], ensure_ascii=False).encode())
    return h.hexdigest()[:32]


def internal_relations(kg: KnowledgeGraph, members: Sequence[str]) -> list[str]:
    """Ids of the extracted relations with both ends in ``members``."""
    present = [m for m in members if m in kg.graph]
    return sorted(
        k
        for _, _, k, a in kg.graph.subgraph(present).edges(keys=True, data=True)
        if a.get("kind", EXTRACTED) == EXTRACTED
    )


def signature(kg: KnowledgeGraph, members: Sequence[str]) -> str:
    """Hash of what a report is written from: the members' records and the relations among them. A member
    that no longer exists, a changed description or a changed relation changes it."""
    h = hashlib.sha256()
    graph = kg.graph
    for key in sorted(members):
        if key not in graph:
            h.update(f"missing:{key}\n".encode())
            continue
        a = graph.nodes[key]
        texts = sorted(d.get("text", "") if isinstance(d, dict) else str(d) for d in a.get("descriptions", []))
        h.update(json.dumps([key, a.get("name"), a.get("entity_type"), texts], ensure_ascii=False).encode())
    present = [m for m in members if m in graph]
    for u, v, k, a in sorted(graph.subgraph(present).edges(keys=True, data=True), key=lambda e: e[2]):
        evidence = sorted(
            (str(e.get("chunk_id")), str(e.get("quote") or ""), str(e.get("description") or ""))
            for e in a.get("evidence", [])
        )
        h.update(json.dumps([k, u, v, a.get("relation_type"), a.get("kind"), evidence], ensure_ascii=False).encode())
    return h.hexdigest()[:32]


def mark_stale(communities: CommunitySet | None, kg: KnowledgeGraph) -> int:
    """Mark the communities whose members or the relations among them changed; returns how many are stale.

    A stale community's report is dropped, and so are the members and relations the graph no longer holds: the
    report was written from what changed, so it may state a deleted document's facts (a deleted document must
    be found in no file and no answer). Its remaining members still seed the next detection, and
    ``kg-rag communities`` writes it a new report."""
    if communities is None:
        return 0
    with kg.lock:
        for c in communities:
            if not c.stale and signature(kg, c.entities) != c.signature:
                c.stale = True
            if c.stale:
                forget_report(c, kg)
    return len(communities.stale)


def forget_report(c: Community, kg: KnowledgeGraph) -> None:
    """Drop a community's report and what of it the graph no longer holds (see :func:`mark_stale`)."""
    c.entities = [e for e in c.entities if e in kg.graph]
    c.relations = [r for r in c.relations if kg.get_relation(r) is not None]
    c.title, c.summary, c.rating_explanation, c.rating = "", "", "", 0.0
    c.findings, c.cited = [], []


def community_params(**overrides: Any) -> dict[str, Any]:
    params = dict(DEFAULTS)
    params.update({k: v for k, v in overrides.items() if v is not None})
    return params
