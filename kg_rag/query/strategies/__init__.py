"""Scoring strategies, selectable by name (``QueryParams(strategy="ppr")``) or as objects with their own knobs
(``QueryParams(strategy=PPR(damping=0.6))``). Register your own with :func:`register_strategy`."""

from kg_rag.query.strategies.base import (
    REGISTRY,
    Strategy,
    StrategyInput,
    StrategyOutput,
    make_strategy,
    register_strategy,
)
from kg_rag.query.strategies.chain import Chain, link_specificity
from kg_rag.query.strategies.frequency import Frequency
from kg_rag.query.strategies.path import HybridPath
from kg_rag.query.strategies.ppr import PPR

__all__ = [
    "PPR",
    "REGISTRY",
    "Chain",
    "Frequency",
    "HybridPath",
    "Strategy",
    "StrategyInput",
    "StrategyOutput",
    "link_specificity",
    "make_strategy",
    "register_strategy",
]
