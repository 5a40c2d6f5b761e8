"""Plain result types of a retrieval (no LangChain), shared by the engine, the context builder and the adapters."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class PathStep:
    """One edge of a path, walked ``forward`` (along its stored direction) or backwards. ``source`` and
    ``target`` are entity keys in the stored direction, whichever way the step walks."""

    relation_id: str
    source: str
    target: str
    relation_type: str
    forward: bool


@dataclass
class GraphPath:
    """A chain of edges from a seed entity; rendered so every edge keeps its stored direction."""

    start: str
    steps: list[PathStep]
    score: float = 0.0

    @property
    def nodes(self) -> list[str]:
        out = [self.start]
        for s in self.steps:
            out.append(s.target if s.forward else s.source)
        return out


@dataclass
class ScoredEntity:
    key: str
    name: str
    entity_type: str
    description: str
    score: float
    similarity: float | None = None
    seed: bool = False


@dataclass
class RelationRow:
    """A row of the relationships table (``in_network``: both ends are selected entities)."""

    relation_id: str
    source: str
    target: str
    description: str
    relation_type: str
    weight: float
    rank: int
    in_network: bool
    links: int = 0
    evidence: str | None = None
    chunk_ids: list[str] = field(default_factory=list)


@dataclass
class ScoredChunk:
    id: str
    text: str
    doc_id: str
    score: float
    metadata: dict[str, Any] = field(default_factory=dict)
    graph_score: float = 0.0
    dense_score: float = 0.0
    entities: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class StageRun:
    """One stage of a query: the milliseconds it took, or (``ms`` is ``None``) why it was skipped."""

    name: str
    ms: float | None
    skipped: str = ""


@dataclass
class RetrievalResult:
    """Everything one query produced, ranked: chunks, entities, paths and relations.

    The engine fills it all: the ranked parts, and the budgeted ``context`` the answer model reads (with the
    tokens per section in ``section_tokens`` and what made it in, ``formatted``).
    """

    query: str
    chunks: list[ScoredChunk]
    entities: list[ScoredEntity]
    paths: list[GraphPath]
    relations: list[RelationRow]
    names: dict[str, str] = field(default_factory=dict)
    """Entity key -> display name, for every entity the paths and relations mention."""
    communities: list[Any] = field(default_factory=list)
    """Reports (:class:`~kg_rag.communities.Community`) of the selected entities' communities, best first."""
    warnings: list[str] = field(default_factory=list)
    """Things the caller should know (an unknown edge type or entity name in a filter, an empty index)."""
    context: str = ""
    """The formatted context, not yet fenced: data lines are prefixed, but a ``</context>`` a document holds is
    kept as written, so the text stays what the index holds. Fence it (:func:`kg_rag.fence.fenced`, as
    the answer prompt and every agent tool do) before putting it into a prompt of your own."""
    section_tokens: dict[str, int] = field(default_factory=dict)
    formatted: Any = None
    """The :class:`~kg_rag.context.format.FormattedContext` (what made it into ``context``), once formatted."""
    timings_ms: dict[str, float] = field(default_factory=dict)
    """Milliseconds per stage that ran, and ``total`` (query embedding excluded)."""
    stages: list[StageRun] = field(default_factory=list)
    """Every stage of the pipeline, in order: its time, or why it was skipped."""
