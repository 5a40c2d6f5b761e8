"""Stages 2-4 of retrieval, on any backend: seeds, expansion, scoring strategies, selection — and the engine
that runs them (``QueryEngine``) with its settings (``QueryParams``).

Names are imported on first use, so ``kg_rag.query.limits`` (which servers read before anything else) does not
load the engine."""

from importlib import import_module
from typing import Any

_LAZY = {
    "QueryEngine": "kg_rag.query.engine",
    "fold_history": "kg_rag.query.history",
    "validate_query": "kg_rag.query.history",
    "PRESETS": "kg_rag.query.params",
    "QueryParams": "kg_rag.query.params",
    "get_preset": "kg_rag.query.params",
    "find_paths": "kg_rag.query.paths",
    "PPR": "kg_rag.query.strategies",
    "Chain": "kg_rag.query.strategies",
    "Frequency": "kg_rag.query.strategies",
    "HybridPath": "kg_rag.query.strategies",
    "Strategy": "kg_rag.query.strategies",
    "make_strategy": "kg_rag.query.strategies",
    "register_strategy": "kg_rag.query.strategies",
    "GraphPath": "kg_rag.model.results",
    "PathStep": "kg_rag.model.results",
    "RelationRow": "kg_rag.model.results",
    "RetrievalResult": "kg_rag.model.results",
    "ScoredChunk": "kg_rag.model.results",
    "ScoredEntity": "kg_rag.model.results",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'kg_rag.query' has no attribute {name!r}")


__all__ = [  # noqa: F822 - resolved on first use by __getattr__
    "PPR",
    "PRESETS",
    "Chain",
    "Frequency",
    "GraphPath",
    "HybridPath",
    "PathStep",
    "QueryEngine",
    "QueryParams",
    "RelationRow",
    "RetrievalResult",
    "ScoredChunk",
    "ScoredEntity",
    "Strategy",
    "find_paths",
    "fold_history",
    "get_preset",
    "make_strategy",
    "register_strategy",
    "validate_query",
]
