"""Stages 2-4 of retrieval: seeds, directed expansion, scoring strategies, and the engine that runs them."""

from kg_rag.retrieve.engine import GraphRetrieverEngine, fold_history, validate_query
from kg_rag.retrieve.strategies import STRATEGY_REGISTRY, ScoringInput, ScoringOutput, get_strategy, register_strategy
from kg_rag.retrieve.types import (
    GraphPath,
    PathStep,
    RelationRow,
    RetrievalResult,
    ScoredChunk,
    ScoredEntity,
)

__all__ = [
    "STRATEGY_REGISTRY",
    "GraphPath",
    "GraphRetrieverEngine",
    "PathStep",
    "RelationRow",
    "RetrievalResult",
    "ScoredChunk",
    "ScoredEntity",
    "ScoringInput",
    "ScoringOutput",
    "fold_history",
    "get_strategy",
    "register_strategy",
    "validate_query",
]
