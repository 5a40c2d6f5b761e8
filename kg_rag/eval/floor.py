"""The floor of a query: the vector searches it makes, timed alone.

A graph retriever cannot be faster than the nearest-neighbour searches it starts from (entities, facts, chunks),
so kg-rag's latency is read against them: the ratio of its p50 to the floor's says how much of the time is the
graph work on top. The searches are *the same query's*: recorded while the query runs (untimed), then replayed
warm in one read view with the query-time thread limits — at once where the backend runs them so — and timed.
Opening the read view (a transaction on PostgreSQL) is not part of the floor.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from kg_rag.query.threads import query_threads
from kg_rag.store.base import QueryBackend


@dataclass(frozen=True)
class VectorSearch:
    """One call of :meth:`~kg_rag.store.base.QueryBackend.search`, as made."""

    kind: str
    query: np.ndarray
    k: int
    min_score: float | None


@contextmanager
def recording_searches(backend: QueryBackend) -> Iterator[list[VectorSearch]]:
    """The vector searches made through ``backend``'s read views while the block runs.

    Wraps ``backend.reader`` and each view's ``search`` on the instances for the block, so every caller (the
    engine, an evaluation method) is recorded unchanged; not for concurrent use."""
    calls: list[VectorSearch] = []
    reader = backend.reader

    @contextmanager
    def recording_reader() -> Iterator[QueryBackend]:
        with reader() as view:
            search = view.search

            def recorded(kind: Any, query: np.ndarray, k: int, min_score: float | None = None) -> Any:
                calls.append(VectorSearch(kind, np.array(query, dtype=np.float32), int(k), min_score))
                return search(kind, query, k, min_score)

            view.search = recorded  # type: ignore[method-assign]
            try:
                yield view
            finally:
                del view.search

    backend.reader = recording_reader  # type: ignore[method-assign]
    try:
        yield calls
    finally:
        del backend.reader


def replay_ms(backend: QueryBackend, searches: list[VectorSearch]) -> float:
    """Milliseconds the searches take in one read view (the view's opening untimed), run as the query runs them:
    at once where the backend runs a query's searches concurrently (PostgreSQL), else one after the other."""
    with query_threads(), backend.reader() as view:
        t0 = time.perf_counter()
        if searches and view.concurrent_searches:
            first = searches[0].query
            view.search_ahead(first, [(s.kind, s.k) for s in searches if np.array_equal(s.query, first)])
        for s in searches:
            view.search(s.kind, s.query, s.k, s.min_score)  # type: ignore[arg-type]
        return 1000 * (time.perf_counter() - t0)


def floor_ms(backend: QueryBackend, run: Callable[[], Any]) -> tuple[float, list[VectorSearch]]:
    """Run one query (``run``, untimed) while recording its vector searches, then time them alone: the query
    has just warmed what they read. Returns the floor in ms and the searches."""
    with recording_searches(backend) as searches:
        run()
    return (replay_ms(backend, searches) if searches else 0.0), searches


def stage_medians(timings: list[dict[str, float]]) -> dict[str, float]:
    """Median ms per stage over queries (a stage skipped by a query counts as 0 ms there)."""
    names = list(dict.fromkeys(name for t in timings for name in t))
    return {n: round(float(np.median([t.get(n, 0.0) for t in timings])), 3) for n in names} if timings else {}


__all__ = ["VectorSearch", "floor_ms", "recording_searches", "replay_ms", "stage_medians"]
