"""Retrieval methods under one interface, so the evaluation compares like with like.

A method maps ``(question text, query vector, k)`` to a :class:`MethodRun`: ranked chunk ids and, for graph
methods, the full retrieval result and its formatted context (for the graph-context metrics). Every method
uses the same index and the same query embedding; the embedding is computed once, outside the timed region.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kg_rag.errors import InputError
from kg_rag.query.params import get_preset
from kg_rag.store.base import QueryBackend


@dataclass
class MethodRun:
    """What one method returned for one question."""

    chunk_ids: list[str]
    result: Any = None
    """The :class:`~kg_rag.model.results.RetrievalResult` of a graph method (``None`` for chunk-only methods)."""
    params: Any = None
    """The :class:`~kg_rag.query.params.QueryParams` it ran with (the runner formats the context with them)."""


Ranker = Callable[[str, np.ndarray, int], MethodRun]


@dataclass
class MethodSpec:
    """One entry of ``methods/``: ``{"name", "type": "dense"|"bm25"|"kg", "preset", "params"}``."""

    name: str
    type: str
    preset: str | None = None
    params: dict[str, Any] | None = None
    description: str = ""

    @classmethod
    def from_file(cls, path: str | Path) -> MethodSpec:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(data, dict) or "name" not in data or "type" not in data:
            raise InputError(f"{path}: a method file needs 'name' and 'type'")
        return cls(
            str(data["name"]),
            str(data["type"]),
            data.get("preset"),
            data.get("params"),
            str(data.get("description", "")),
        )


BUILTIN: dict[str, MethodSpec] = {
    "dense": MethodSpec("dense", "dense", description="cosine similarity of the query to each chunk"),
    "bm25": MethodSpec("bm25", "bm25", description="Okapi BM25 over chunk title + text (k1=1.5, b=0.75)"),
    "seed003": MethodSpec("seed003", "kg", preset="seed003", description="EntityBasedKGRAG, published settings"),
    "kg-rag": MethodSpec("kg-rag", "kg", preset="default", description="EntityBasedKGRAG, recommended preset"),
}


def load_method_specs(folder: str | Path | None) -> dict[str, MethodSpec]:
    """Built-in methods plus every ``*.json`` in ``folder`` (a file may redefine a built-in name)."""
    specs = dict(BUILTIN)
    if folder and Path(folder).is_dir():
        for path in sorted(Path(folder).glob("*.json")):
            spec = MethodSpec.from_file(path)
            specs[spec.name] = spec
    return specs


def build_method(spec: MethodSpec, backend: QueryBackend, embeddings: Any) -> Ranker:
    """A ranking function for ``spec`` over ``backend`` (every method reads the same backend)."""
    if spec.type == "dense":

        def dense(_: str, q: np.ndarray, k: int) -> MethodRun:
            with backend.reader() as view:
                hits = view.search("chunks", q, k)
                return MethodRun([c.id for c in view.chunks(hits.ids) if c is not None])

        return dense
    if spec.type == "bm25":

        def bm25(text: str, _q: np.ndarray, k: int) -> MethodRun:
            with backend.reader() as view:
                hits = view.lexical_search(text, k)
                return MethodRun([c.id for c in view.chunks(hits.ids) if c is not None])

        return bm25
    if spec.type == "kg":
        from kg_rag.query.engine import QueryEngine

        params = get_preset(spec.preset or "default").replace(**(spec.params or {}))
        engine = QueryEngine(backend, embeddings, params)

        def kg(text: str, q: np.ndarray, k: int) -> MethodRun:
            p = params.replace(top_k_chunks=k)
            result = engine.retrieve_by_vector(q, text, p)
            return MethodRun([c.id for c in result.chunks], result, p)

        return kg
    raise InputError(f"method {spec.name!r}: unknown type {spec.type!r} (dense, bm25 or kg)")
