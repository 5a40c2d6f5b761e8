"""Entity resolution beyond canonical keys: similarity (synonym) links between entity embeddings.

Canonical keys already merge case / whitespace / punctuation variants when entities are added. This adds
``SYNONYM_OF`` edges (``kind="synonym"``, both directions) between distinct entities whose embeddings are at
least ``threshold`` apart in cosine similarity. They are a distinct relation type so they can never be
mistaken for an extracted relation. Two names that both carry numbers must carry the same ones: embeddings
put ``1963`` next to ``1964`` and ``27 November 1956`` next to ``19 June 1956``, which are different things.
"""

from __future__ import annotations

import logging
import re

import numpy as np

from kg_rag.errors import InputError
from kg_rag.index.build import GraphIndex
from kg_rag.model.records import SYNONYM_KIND

logger = logging.getLogger(__name__)


def link_synonyms(index: GraphIndex, threshold: float = 0.9, k: int = 10, batch_size: int = 4096) -> int:
    """Add synonym links between near-duplicate entities; returns how many pairs were linked."""
    if not 0.0 < threshold <= 1.0:
        raise InputError(f"threshold must be in (0, 1], got {threshold}")
    if k < 1:
        raise InputError(f"k must be >= 1, got {k}")
    table, kg = index.entities, index.kg
    pairs = 0
    for start in range(0, len(table), batch_size):
        scores, rows = table.search(table.vectors[start : start + batch_size], k + 1)
        for offset in range(scores.shape[0]):
            i = start + offset
            for score, j in zip(scores[offset], rows[offset]):
                if j < 0 or j == i or score < threshold:
                    continue
                a, b = table.ids[i], table.ids[int(j)]
                if not _numbers_agree(a, b):
                    continue
                if a in kg.graph and b in kg.graph and not _linked(kg.graph, a, b):
                    kg.add_synonym(a, b, float(np.clip(score, -1.0, 1.0)))
                    pairs += 1
    index.kg_version = kg.version  # synonym links change no embedded text
    logger.info("linked %d synonym pairs at threshold %.2f", pairs, threshold)
    return pairs


def _linked(graph, a: str, b: str) -> bool:
    return graph.has_edge(a, b) and any(d.get("kind") == SYNONYM_KIND for d in graph[a][b].values())


_NUMBER = re.compile(r"\d+")


def _numbers_agree(a: str, b: str) -> bool:
    """Whether two entity keys can name the same thing as far as their numbers go: the same numbers in the
    same order (``release 1.5`` is not ``release 5.1``; any script's digits), or numbers in only one of them
    (``world war 2`` ~ ``second world war``)."""
    na, nb = [int(x) for x in _NUMBER.findall(a)], [int(x) for x in _NUMBER.findall(b)]
    return not (na and nb) or na == nb
