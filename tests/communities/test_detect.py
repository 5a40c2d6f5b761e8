"""Community detection (``kg_rag/communities/detect.py``): hierarchical, deterministic, covering the graph."""

from __future__ import annotations

import pytest

from kg_rag.communities import (
    detect_communities,
)

from .graphs import big_graph

# ------------------------------------------------------------------------------------------- detection


def test_detection_is_hierarchical_deterministic_and_covers_the_graph():
    kg = big_graph()
    first = detect_communities(kg, max_cluster_size=5, seed=7)
    again = detect_communities(kg, max_cluster_size=5, seed=7)
    assert [(c.id, c.entities) for c in first] == [(c.id, c.entities) for c in again]
    levels = {c.level for c in first}
    assert levels == {0, 1}
    top = [c for c in first if c.level == 0]
    assert sorted(k for c in top for k in c.entities) == sorted(kg.graph.nodes)  # every entity in one community
    for child in (c for c in first if c.level == 1):
        parent = next(c for c in first if c.id == child.parent)
        assert set(child.entities) <= set(parent.entities) and parent.size > 5
    with pytest.raises(ValueError, match="max_cluster_size"):
        detect_communities(kg, max_cluster_size=1)
