"""Stages 2-4 of retrieval, on any backend: seeds, expansion, scoring strategies, selection — and the engine
that runs them (``QueryEngine``) with its settings (``QueryParams``)."""

from kg_rag.query.engine import QueryEngine
from kg_rag.query.history import fold_history, validate_query
from kg_rag.query.params import PRESETS, QueryParams, get_preset
from kg_rag.query.paths import find_paths
from kg_rag.query.strategies import PPR, Chain, Frequency, HybridPath, Strategy, make_strategy, register_strategy
from kg_rag.query.types import GraphPath, PathStep, RelationRow, RetrievalResult, ScoredChunk, ScoredEntity

__all__ = [
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
