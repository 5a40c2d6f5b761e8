"""What a scoring strategy receives and returns, and the registry that makes strategies selectable by name.

A strategy is a small frozen object that carries its own knobs (``Chain(weight=0.5)``, ``PPR(damping=0.5)``)
and turns the query's seeds, its expansion and the candidate chunks into a ranking of chunks and scores for
entities. It reads the graph only through the :class:`~kg_rag.query.workspace.Workspace`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from kg_rag.errors import InputError
from kg_rag.store.base import Expansion, VectorKind

if TYPE_CHECKING:
    from kg_rag.query.workspace import Workspace


@dataclass
class StrategyInput:
    ws: Workspace
    seeds: dict[int, float]
    """Seed entity handle -> match weight."""
    expansion: Expansion
    """Breadth-first expansion from the seeds under the query's filters."""
    candidates: np.ndarray
    """Local positions (in ``ws.chunks``) of the candidate chunks (best by dense similarity and BM25)."""
    node_similarity: dict[int, float] = field(default_factory=dict)
    """Entity handle -> cosine similarity to the query, for the seeds and the reached entities."""
    named: frozenset[int] = frozenset()
    """The entities the question names (or the caller included): what it is about, not what it asks."""
    proper: frozenset[int] = frozenset()
    """The named entities written as proper names (or included by the caller), not as common words."""
    included: frozenset[int] = frozenset()
    """The entities the caller included (``include_entities``)."""
    k: int = 0
    """How many chunks to rank: ``top_k_chunks``, or more for a reranker to choose from (0: ``top_k_chunks``)."""

    @property
    def depth(self) -> int:
        return self.k or self.ws.params.top_k_chunks


@dataclass
class StrategyOutput:
    chunks: np.ndarray
    """Local chunk positions, ranked best first (at most ``top_k_chunks``)."""
    scores: np.ndarray
    """The score of each ranked chunk; non-increasing, so the order is the order of the scores."""
    graph_scores: np.ndarray
    """The graph's contribution to each ranked chunk's score."""
    entity_scores: dict[int, float] = field(default_factory=dict)
    """Entity handle -> score, for choosing the entities shown."""


class Strategy:
    """Base class of scoring strategies (subclasses are frozen dataclasses with their knobs as fields)."""

    name: ClassVar[str] = ""
    expansion_decay: ClassVar[float] = 0.5
    consumes: ClassVar[frozenset[str]] = frozenset({"expansion", "candidates"})
    """What the strategy reads from :class:`StrategyInput` besides the seeds: ``expansion`` (the graph
    expansion from the seeds) and ``candidates`` (the best chunks by dense similarity and BM25). A stage whose
    output no strategy reads does not run (an unread expansion arrives empty)."""

    def searches(self) -> tuple[tuple[VectorKind, int], ...]:
        """The vector searches the strategy makes of its own, ``(kind, k)`` each (with the query's vector and no
        score floor): the ``searches`` stage runs them with the query's other searches, at once where the
        backend can. None by default."""
        return ()

    def score(self, s: StrategyInput) -> StrategyOutput:  # pragma: no cover - interface
        raise NotImplementedError

    def check(self) -> list[str]:
        """Problems with the knobs (empty when valid): every number finite and non-negative by default."""
        problems = []
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if isinstance(f.default, bool):
                if not isinstance(value, bool):
                    problems.append(f"{self.name}.{f.name} must be True or False, got {value!r}")
                continue
            problems += check_number(f"{self.name}.{f.name}", value, low=0.0, integer=isinstance(f.default, int))
        return problems

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, **dataclasses.asdict(self)}  # type: ignore[call-overload]


def check_number(name: str, value: Any, low: float | None = None, high: float | None = None, integer: bool = False):
    """Problems with a numeric knob: its type, finiteness and range (empty list when it is fine)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        kind = "an integer" if integer else "a number"
        return [f"{name} must be {kind}, got {type(value).__name__} {value!r}"]
    if not math.isfinite(float(value)):
        return [f"{name} must be finite, got {value!r}"]
    if integer and float(value) != int(value):
        return [f"{name} must be an integer, got {value!r}"]
    if low is not None and value < low:
        return [f"{name} must be >= {low:g}, got {value!r}"]
    if high is not None and value > high:
        return [f"{name} must be <= {high:g}, got {value!r}"]
    return []


REGISTRY: dict[str, type[Strategy]] = {}


def register_strategy(cls: type[Strategy]) -> type[Strategy]:
    """Make a strategy class selectable by its ``name`` (``QueryParams(strategy="name")``); usable as a decorator."""
    if not getattr(cls, "name", None):
        raise InputError("a strategy needs a non-empty name")
    REGISTRY[cls.name] = cls
    return cls


def make_strategy(value: Any) -> Strategy:
    """A strategy object from an object, a registered name, or ``{"name": ..., **knobs}``."""
    if isinstance(value, Strategy):
        return value
    if isinstance(value, str):
        cls = REGISTRY.get(value)
        if cls is None:
            raise InputError(f"unknown strategy {value!r}; registered: {', '.join(sorted(REGISTRY))}")
        return cls()
    if isinstance(value, Mapping):
        knobs = dict(value)
        name = knobs.pop("name", None)
        cls = REGISTRY.get(name) if isinstance(name, str) else None
        if cls is None:
            raise InputError(f"unknown strategy {name!r}; registered: {', '.join(sorted(REGISTRY))}")
        known = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        unknown = sorted(set(knobs) - known)
        if unknown:
            raise InputError(f"unknown knob(s) for strategy {name}: {', '.join(unknown)}")
        return cls(**knobs)
    raise InputError(f"strategy must be a name, a dict or a Strategy, got {type(value).__name__}")


def rank_top(scores: np.ndarray, k: int, tiebreak: np.ndarray | None = None) -> np.ndarray:
    """Indices of the ``k`` largest finite scores, best first (ties: lower ``tiebreak`` value, else lower index
    first)."""
    finite = np.flatnonzero(np.isfinite(scores))
    if finite.size == 0 or k <= 0:
        return np.zeros(0, dtype=np.int64)
    kk = min(k, finite.size)
    if tiebreak is not None:  # all the tied scores at the cut must be seen to order them by the tiebreak
        order = finite[np.lexsort((tiebreak[finite], -scores[finite]))]
        return order[:kk]
    part = finite
    if kk < finite.size:  # every score tied with the k-th is kept, so the cut never depends on the partition order
        cut = np.partition(-scores[finite], kk - 1)[kk - 1]
        part = finite[-scores[finite] <= cut]
    return part[np.lexsort((part, -scores[part]))][:kk]


def norm_max(x: np.ndarray) -> np.ndarray:
    m = float(x.max()) if x.size else 0.0
    return x / m if m > 0 else np.zeros_like(x)
