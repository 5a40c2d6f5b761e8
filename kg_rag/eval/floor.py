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


class RecordedSearches(list):
    """The vector searches a query made (:class:`VectorSearch` each, in order), and those it asked its view to
    run at once (:meth:`~kg_rag.store.base.QueryBackend.search_ahead`: the query vector and ``(kind, k)``s)."""

    def __init__(self) -> None:
        super().__init__()
        self.ahead: list[tuple[np.ndarray, list[tuple[str, int]]]] = []


@contextmanager
def recording_searches(backend: QueryBackend) -> Iterator[RecordedSearches]:
    """The vector searches made through ``backend``'s read views while the block runs.

    Wraps ``backend.reader`` and each view's ``search`` and ``search_ahead`` on the instances for the block, so
    every caller (the engine, an evaluation method) is recorded unchanged; not for concurrent use."""
    calls = RecordedSearches()
    reader = backend.reader

    @contextmanager
    def recording_reader() -> Iterator[QueryBackend]:
        with reader() as view:
            search, ahead = view.search, view.search_ahead

            def recorded(kind: Any, query: np.ndarray, k: int, min_score: float | None = None) -> Any:
                calls.append(VectorSearch(kind, np.array(query, dtype=np.float32), int(k), min_score))
                return search(kind, query, k, min_score)

            def recorded_ahead(query: np.ndarray, requests: Any, text: str | None = None) -> None:
                calls.ahead.append((np.array(query, dtype=np.float32), [(kind, int(k)) for kind, k in requests]))
                return ahead(query, requests, text)

            view.search = recorded  # type: ignore[method-assign]
            view.search_ahead = recorded_ahead  # type: ignore[method-assign]
            try:
                yield view
            finally:
                del view.search, view.search_ahead

    backend.reader = recording_reader  # type: ignore[method-assign]
    try:
        yield calls
    finally:
        del backend.reader


def replay_ms(backend: QueryBackend, searches: list[VectorSearch]) -> float:
    """Milliseconds the searches take in one read view (the view's opening untimed), run as the query ran them:
    those it asked to run at once (``searches.ahead``, on PostgreSQL) at once, the others one after the other."""
    with query_threads(), backend.reader() as view:
        t0 = time.perf_counter()
        for query, requests in getattr(searches, "ahead", ()):
            view.search_ahead(query, requests)
        for s in searches:
            view.search(s.kind, s.query, s.k, s.min_score)  # type: ignore[arg-type]
        return 1000 * (time.perf_counter() - t0)


def floor_ms(backend: QueryBackend, run: Callable[[], Any]) -> tuple[float, RecordedSearches]:
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
