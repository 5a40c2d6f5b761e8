"""A small served index: the demo corpus (bag-of-words embeddings) with communities and extractive reports."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def served_index(demo_index, tmp_path_factory):
    from kg_rag import save_index
    from kg_rag.communities import refresh_communities

    communities, _ = refresh_communities(demo_index.kg, None, reporter=None)
    demo_index.communities = communities
    folder = tmp_path_factory.mktemp("served") / "idx"
    save_index(demo_index, folder)
    demo_index.communities = None  # the session's demo index is shared: leave it as it was
    return folder
