"""One object for every retrieval knob, with documented defaults and named presets.

Modelled on nano-graphrag's ``QueryParam``: a frozen dataclass, validated on construction (every value is
checked for type, finiteness and range; a bad one raises ``ValueError`` naming it), overridable per call
with :meth:`QueryParams.replace` — which is what ``retriever.invoke(query, max_hops=2)`` uses. Knobs that
belong to one scoring strategy live on that strategy's object (``QueryParams(strategy=Chain(weight=0.3))``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from kg_rag.query.strategies import Chain, Frequency, Strategy, make_strategy
from kg_rag.query.strategies.base import check_number

Direction = Literal["out", "in", "both"]

_NAME_LISTS = ("include_entities", "exclude_entities", "exclude_edge_types")
_INTS = {
    "top_k_nodes": 0,
    "top_k_facts": 0,
    "max_hops": 0,
    "max_frontier": 1,
    "top_k_chunks": 1,
    "candidates": 1,
    "max_context_tokens": 50,
    "max_paths": 0,
    "max_communities": 0,
    "max_relations": 0,
    "history_turns": 0,
}
_BOOLS = ("lexical_linking", "use_synonyms", "fill_with_dense", "include_edges")


@dataclass(frozen=True)
class QueryParams:
    """Retrieval settings. Defaults are the project's recommended preset (see ``PRESETS``)."""

    # --- 2. entity / fact matching -------------------------------------------------------------------
    similarity_threshold: float = 0.3
    """Minimum cosine similarity for an entity (or fact) to seed the search."""
    top_k_nodes: int = 10
    """Entities matched by embedding similarity (before the threshold)."""
    top_k_facts: int = 10
    """Facts ("source relation target" texts) matched; both ends of a matched fact become seeds. 0 = off."""
    lexical_linking: bool = True
    """Also seed entities whose full name occurs in the query text."""
    include_entities: tuple[str, ...] = ()
    """Entity names always used as seeds and as the starting points of paths; the ``chain`` strategy also
    puts a passage about each among the chunks (however many passages mention it)."""
    exclude_entities: tuple[str, ...] = ()
    """Entity names never used: not as seeds, not in the subgraph, paths, relationship rows or metadata."""
    lexical_weight: float = 0.1
    """Weight of BM25 term matching (normalised to [0, 1] per query) added to each chunk's cosine similarity
    to form its query relevance; exact figures, codes and rare names are where embeddings are weakest."""

    # --- 3. subgraph exploration --------------------------------------------------------------------
    strategy: Strategy = field(default_factory=Chain)
    """Scoring strategy: ``chain`` (evidence chains over shared entities, the default), ``frequency`` (seed 003),
    ``path`` (seed 001 hybrid path scoring), ``ppr`` (HippoRAG-style personalised PageRank) — a name, a dict
    ``{"name": ..., **knobs}`` or a strategy object with its own knobs."""
    max_hops: int = 2
    """Hops explored from the seeds, and the longest chain of linked chunks."""
    direction: Direction = "both"
    """Follow edges ``out`` (source to target), ``in`` (target to source) or ``both``."""
    edge_types: tuple[str, ...] | None = None
    """Allow-list of relation types (``None`` = all)."""
    exclude_edge_types: tuple[str, ...] = ()
    """Deny-list of relation types."""
    max_frontier: int = 2000
    """Most new nodes kept per hop (best path score first); bounds work around hub entities."""
    use_synonyms: bool = True
    """Traverse ``SYNONYM_OF`` links added by entity resolution."""
    relation_match: float = 1.0
    """Prefer relations of the types the question names ("spouse", "born", "replaced"): they are shown first
    (relevance times 1 + this) even below ``relation_floor``, and expansion favours them (0 = off)."""

    # --- 4. chunk scoring ------------------------------------------------------------------------------
    top_k_chunks: int = 5
    """Chunks returned."""
    candidates: int = 200
    """Chunks considered before the graph adds any: this many best by dense similarity and by BM25."""
    fill_with_dense: bool = True
    """When the graph yields fewer than ``top_k_chunks`` chunks, fill up by relevance."""

    # --- 5. context assembly ------------------------------------------------------------------------
    max_context_tokens: int = 4000
    """Token budget of the formatted context (tiktoken cl100k_base), never exceeded."""
    relations_share: float = 0.3
    """Share of the budget for paths and the relationships table."""
    entities_share: float = 0.15
    """Share for the entities table. The rest goes to chunks; unused budget passes to the other sections."""
    community_share: float = 0.1
    """Share for the Communities section: reports of the communities the selected entities belong to (only
    when the index has communities — ``kg-rag communities`` — otherwise it passes to the other sections)."""
    community_level: int | None = None
    """Community level shown (0 = coarsest); ``None``: each entity's most specific community."""
    max_communities: int = 3
    """Most community reports shown, ranked by how many selected entities they hold, then by rating."""
    max_paths: int = 10
    """Most directed paths rendered (paths follow only the most relevant relations, from a query entity)."""
    max_relations: int = 25
    """Most rows in the relationships table."""
    relation_floor: float = 0.3
    """Relationship rows stop where relevance drops off: a relation is shown only while it is at least this
    fraction as relevant as the best one (budget left over goes to the source passages)."""
    include_edges: bool = True
    """Attach the edges used to each returned Document's metadata."""
    history_turns: int = 2
    """Previous user turns folded into the query when a conversation history is passed."""

    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    """Free-form settings for custom strategies."""

    def __post_init__(self) -> None:
        problems: list[str] = []
        set_ = object.__setattr__
        try:
            set_(self, "strategy", make_strategy(self.strategy))
            problems += self.strategy.check()
        except (ValueError, TypeError) as exc:
            problems.append(f"strategy: {exc}")
        problems += check_number("similarity_threshold", self.similarity_threshold, -1.0, 1.0)
        problems += check_number("lexical_weight", self.lexical_weight, low=0.0)
        problems += check_number("relation_match", self.relation_match, low=0.0)
        for name, low in _INTS.items():
            found = check_number(name, getattr(self, name), low=low, integer=True)
            problems += found
            if not found:
                set_(self, name, int(getattr(self, name)))
        for name in _BOOLS:
            if not isinstance(getattr(self, name), bool):
                problems.append(f"{name} must be True or False, got {getattr(self, name)!r}")
        if self.direction not in ("out", "in", "both"):
            problems.append(f"direction must be 'out', 'in' or 'both', got {self.direction!r}")
        for name in (*_NAME_LISTS, "edge_types"):
            value = getattr(self, name)
            if value is None and name == "edge_types":
                continue
            names, problem = _name_tuple(name, value)
            if problem:
                problems.append(problem)
            else:
                set_(self, name, names)
        for name in ("relations_share", "entities_share", "community_share", "relation_floor"):
            problems += check_number(name, getattr(self, name), 0.0, 1.0)
        if not problems and self.relations_share + self.entities_share + self.community_share > 1:
            problems.append("relations_share + entities_share + community_share must be <= 1")
        if self.community_level is not None:
            found = check_number("community_level", self.community_level, low=0, integer=True)
            problems += found
            if not found:
                set_(self, "community_level", int(self.community_level))
        if not isinstance(self.extra, Mapping):
            problems.append(f"extra must be a dict, got {type(self.extra).__name__}")
        if problems:
            raise ValueError("invalid retrieval parameters: " + "; ".join(problems))

    @property
    def specific_mentions(self) -> int:
        """An entity pins down passages — it may anchor a path, be covered, count as named in lower case —
        when at most this many chunks mention it: twice the chunks returned. A name many passages share
        ("film", a country) pins down none of them."""
        return 2 * self.top_k_chunks

    def replace(self, **overrides: Any) -> QueryParams:
        """A copy with ``overrides`` applied (validated). Unknown names raise ``ValueError``."""
        if not overrides:
            return self
        known = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise ValueError(f"unknown retrieval parameter(s): {', '.join(unknown)}")
        return dataclasses.replace(self, **overrides)

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["strategy"] = self.strategy.to_dict()
        out["extra"] = dict(self.extra)
        return out


def _name_tuple(name: str, value: Any) -> tuple[tuple[str, ...], str | None]:
    if isinstance(value, str):
        value = (value,)
    if not isinstance(value, (list, tuple, set, frozenset)):
        return (), f"{name} must be a list of names, got {type(value).__name__}"
    bad = [v for v in value if not isinstance(v, str) or not v.strip()]
    if bad:
        return (), f"{name} must hold non-empty strings, got {bad[0]!r}"
    return tuple(value), None


PRESETS: dict[str, QueryParams] = {
    # The seed-003 reproduction, with its published settings: entity similarity >= 0.7, 10 nodes, 1 hop, 5
    # chunks, chunk score = 0.4 * entity frequency + 0.6 * chunk similarity, no dense fallback. It returns what
    # the seed's algorithm returns (kg_rag.bench.Seed003Reference): with MiniLM often nothing, since few entity
    # names are 0.7 similar to a question (none for the demo's four, 50 of the 60 MuSiQue questions).
    "seed003": QueryParams(
        similarity_threshold=0.7,
        top_k_nodes=10,
        top_k_facts=0,
        lexical_linking=False,
        strategy=Frequency(freq_weight=0.4, sim_weight=0.6),
        max_hops=1,
        top_k_chunks=5,
        fill_with_dense=False,
        use_synonyms=False,
        lexical_weight=0.0,
    ),
    # The recommended default: measured by the evaluation harness (see evaluation/).
    "default": QueryParams(),
}


def get_preset(name: str) -> QueryParams:
    """Preset by name (``seed003``, ``default``/``kg-rag``)."""
    key = "default" if name in ("kg-rag", "recommended") else name
    if key not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose one of {', '.join(sorted(PRESETS))}")
    return PRESETS[key]
