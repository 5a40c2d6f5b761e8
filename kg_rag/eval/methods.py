"""Retrieval methods under one interface, so the evaluation compares like with like.

A method maps ``(question text, query vector, k)`` to ranked chunk ids. Every method uses the same index
and the same query embedding; the embedding is computed once, outside the timed region.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kg_rag.index import GraphIndex
from kg_rag.lexical import BM25Index
from kg_rag.params import get_preset

Ranker = Callable[[str, np.ndarray, int], list[str]]


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
            raise ValueError(f"{path}: a method file needs 'name' and 'type'")
        return cls(
            str(data["name"]),
            str(data["type"]),
            data.get("preset"),
            data.get("params"),
            str(data.get("description", "")),
        )


BUILTIN: dict[str, MethodSpec] = {
    "dense": MethodSpec("dense", "dense", description="cosine similarity of the query to each chunk"),
    "bm25": MethodSpec("bm25", "bm25", description="Okapi BM25 over chunk texts (k1=1.5, b=0.75)"),
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


def _top(scores: np.ndarray, ids: list[str], k: int) -> list[str]:
    k = min(k, scores.size)
    if k <= 0:
        return []
    part = np.argpartition(-scores, k - 1)[:k]
    order = part[np.lexsort((part, -scores[part]))]
    return [ids[i] for i in order]


def build_method(spec: MethodSpec, index: GraphIndex, embeddings: Any) -> Ranker:
    """A ranking function for ``spec`` over ``index``."""
    if spec.type == "dense":
        table = index.chunks

        def dense(_: str, q: np.ndarray, k: int) -> list[str]:
            _, rows = table.search(q.reshape(1, -1), k)
            return [table.ids[r] for r in rows[0] if r >= 0]

        return dense
    if spec.type == "bm25":
        from kg_rag.index import chunk_text

        ids = list(index.kg.chunks)
        bm25 = BM25Index([chunk_text(index.kg.chunks[c]) for c in ids])
        return lambda text, _q, k: _top(bm25.scores(text), ids, k)
    if spec.type == "kg":
        from kg_rag.retrieve.engine import GraphRetrieverEngine

        params = get_preset(spec.preset or "default").replace(**(spec.params or {}))
        engine = GraphRetrieverEngine(index, embeddings, params)
        light = {"max_context_tokens": 50, "max_paths": 0, "max_relations": 0}  # ranking only: skip rendering

        def kg(text: str, q: np.ndarray, k: int) -> list[str]:
            p = params.replace(top_k_chunks=k, **light)
            return [c.id for c in engine.retrieve_by_vector(q, text, p).chunks]

        return kg
    raise ValueError(f"method {spec.name!r}: unknown type {spec.type!r} (dense, bm25 or kg)")
