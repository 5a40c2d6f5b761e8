"""Stage 2: matching the query to entities — by entity embedding, by fact embedding, and lexically."""

from __future__ import annotations

import numpy as np

from kg_rag.compiled import CompiledGraph
from kg_rag.index import GraphIndex
from kg_rag.params import QueryParams
from kg_rag.schema import canonical_key


def match_seeds(
    index: GraphIndex, cg: CompiledGraph, q: np.ndarray, query_text: str, p: QueryParams
) -> tuple[dict[int, float], dict[int, float], list[int]]:
    """Seed entities for a query.

    Returns ``(seeds, similarity, matched_facts)``: seed node -> weight, node -> cosine similarity to the
    query (for every node looked at), and the edge positions of the matched facts. All similarity search
    goes through FAISS; lexical linking is dictionary lookups of the query's n-grams.
    """
    seeds: dict[int, float] = {}
    sims: dict[int, float] = {}
    excluded = {cg.name_lookup[k] for k in map(canonical_key, p.exclude_entities) if k in cg.name_lookup}
    if p.top_k_nodes and len(index.entities):
        scores, rows = index.entities.search(q, p.top_k_nodes)
        for s, r in zip(scores[0], rows[0]):
            if r < 0:
                continue
            sims[int(r)] = float(s)
            if s >= p.similarity_threshold and r not in excluded:
                seeds[int(r)] = max(seeds.get(int(r), 0.0), float(s))
    facts: list[int] = []
    if p.top_k_facts and len(index.facts):
        scores, rows = index.facts.search(q, p.top_k_facts)
        for s, r in zip(scores[0], rows[0]):
            if r < 0 or s < p.similarity_threshold:
                continue
            edge = int(cg.fact_edge[r])
            if edge < 0:
                continue
            facts.append(edge)
            for node in (int(cg.src[edge]), int(cg.dst[edge])):
                if node not in excluded:
                    seeds[node] = max(seeds.get(node, 0.0), float(s))
    if p.lexical_linking:
        lexical = [n for n in cg.lexical_matches(query_text) if n not in excluded]
        if lexical:
            lex_sims = index.entities.vectors[lexical] @ q[0]
            for n, s in zip(lexical, lex_sims):
                sims.setdefault(n, float(s))
                seeds[n] = max(seeds.get(n, 0.0), float(s), p.similarity_threshold, 1e-3)
    for name in p.include_entities:
        n = cg.name_lookup.get(canonical_key(name))
        if n is not None and n not in excluded:
            seeds[n] = max(seeds.get(n, 0.0), 1.0)
    return seeds, sims, facts
