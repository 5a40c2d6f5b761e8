"""What a reader checks in one query's view: every stored document is there whole (shared by the concurrency and
replica tests, which run :class:`kg_rag.eval.bench_writes.Readers` with it)."""

from __future__ import annotations

import numpy as np


def check_view(view) -> tuple[str, int]:
    """One query's view is one committed version: every stored document is there whole. Returns the version
    and how many documents it holds."""
    info = view.info()
    chunks = list(view.iter_chunks())
    assert len(chunks) == info.chunks, (len(chunks), info.chunks)
    handles = np.asarray([h for h, _ in chunks], np.int64)
    pairs, edges = view.chunk_relations(handles, _ANY)
    with_relation = set(pairs.left.tolist())
    mentions = view.chunk_entities(handles)
    mentioned = set(mentions.left.tolist())
    for handle, chunk in chunks:
        assert handle in with_relation and handle in mentioned, f"{chunk.id} is there without what it says"
    assert len(edges) == info.relations, (len(edges), info.relations)
    return info.version, info.documents


def _any():
    from kg_rag.store.base import EdgeFilter

    return EdgeFilter.build()


_ANY = _any()
