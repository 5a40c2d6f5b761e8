"""Path finding (``kg_rag/query/paths.py``): deny-lists, blocked entities, backward walks, the direction vocabulary."""

from __future__ import annotations

from typing import Any

import pytest

from kg_rag import EntityBasedKGRAG, QueryParams
from kg_rag.query.paths import find_paths


@pytest.fixture
def make_retriever(demo_index, bow_embeddings):
    def make(**params: Any) -> EntityBasedKGRAG:
        return EntityBasedKGRAG(index=demo_index, embeddings=bow_embeddings, k=3, params=QueryParams(**params))

    return make


def test_find_paths_applies_deny_list_blocked_entities_and_backward_walks(make_retriever):
    r = make_retriever()
    with r.backend.reader() as view:
        ids = view.lookup_entities(["lars eriksen", "maria chen", "priya nair"])
        lars, maria, priya = ids["lars eriksen"], ids["maria chen"], ids["priya nair"]
        assert find_paths(view, lars, maria)[0]
        assert find_paths(view, lars, maria, blocked=[priya]) == ([], {})
        assert find_paths(view, lars, maria, relation_types=["REPORTS_TO"], exclude_types=["REPORTS_TO"])[0] == []
        assert find_paths(view, maria, lars, direction="in")[0]
        assert find_paths(view, lars, maria, direction="in", relation_types=["REPORTS_TO"])[0] == []
        with pytest.raises(ValueError, match="'out', 'in' or 'both'"):
            find_paths(view, lars, maria, direction="sideways")
