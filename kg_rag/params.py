"""One object for every retrieval knob, with documented defaults and named presets.

Modelled on nano-graphrag's ``QueryParam``: a frozen dataclass, validated on construction, overridable per
call with :meth:`QueryParams.replace` (which is what ``retriever.invoke(query, max_hops=2)`` uses).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal

Direction = Literal["out", "in", "both"]
STRATEGIES = {"chain", "frequency", "path", "ppr"}
"""Names accepted for ``QueryParams.strategy``; :func:`kg_rag.retrieve.register_strategy` adds to it."""


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
    """Entity names always used as seeds."""
    exclude_entities: tuple[str, ...] = ()
    """Entity names never used (not as seeds, not in the expanded subgraph)."""

    lexical_weight: float = 0.1
    """Weight of BM25 term matching (normalised to [0, 1] per query) added to each chunk's cosine similarity
    to form its query relevance; exact figures, codes and rare names are where embeddings are weakest."""

    # --- 3. subgraph exploration --------------------------------------------------------------------
    strategy: str = "chain"
    """Scoring strategy by name: ``chain`` (evidence chains over shared entities), ``frequency`` (seed 003),
    ``path`` (seed 001 hybrid path scoring), ``ppr`` (HippoRAG-style personalised PageRank)."""
    max_hops: int = 2
    """Hops explored from the seeds (for ``frequency``/``path`` scoring, and for the paths shown)."""
    direction: Direction = "both"
    """Follow edges ``out`` (successors), ``in`` (predecessors) or ``both``."""
    edge_types: tuple[str, ...] | None = None
    """Allow-list of relation types to traverse (``None`` = all)."""
    exclude_edge_types: tuple[str, ...] = ()
    """Deny-list of relation types."""
    max_frontier: int = 2000
    """Most new nodes kept per hop (best path score first); bounds work around hub entities."""
    use_synonyms: bool = True
    """Traverse ``SYNONYM_OF`` links added by entity resolution."""
    node_freq_weight: float = 0.4
    """``frequency``: weight of how many subgraph entities a chunk mentions."""
    node_sim_weight: float = 0.6
    """``frequency``: weight of the chunk's similarity to the query."""
    path_decay: float = 0.5
    """``path``: score multiplier per hop away from a seed."""
    hybrid_weight: float = 0.5
    """``path``: weight of a node's own similarity to the query, added to its path score."""
    ppr_damping: float = 0.5
    """``ppr``: probability of following an edge (1 - restart probability)."""
    ppr_iterations: int = 30
    """``ppr``: maximum power iterations (stops earlier on convergence)."""
    node_specificity: bool = True
    """``ppr``: divide seed weights by how many chunks mention the entity (rare entities matter more)."""
    ppr_dense_seed: float = 0.05
    """``ppr``: restart weight given to chunks in proportion to their dense similarity (0 = entities only)."""
    related_weight: float = 1.0
    """``ppr``: weight of untyped ``RELATED`` edges relative to typed ones."""
    chunk_edge_weight: float = 1.0
    """``ppr``: weight of entity-chunk links (0 = chunks are scored from entity scores instead)."""

    chain_weight: float = 0.5
    """``chain``: boost a linked chunk by this times the similarity of the chunk it is linked from."""
    link_specificity: float = 30.0
    """``chain``: an entity links chunks fully when at most this many other chunks mention it (less beyond)."""
    seed_weight: float = 0.1
    """``chain``: extra score for chunks mentioning query-matched entities (times the best similarity)."""
    chain_edge_weight: float = 0.0
    """``chain``: also link through one allowed relation edge, at this strength (0 = shared mentions only)."""

    # --- 4. chunk scoring ------------------------------------------------------------------------------
    top_k_chunks: int = 5
    """Chunks returned."""
    graph_weight: float = 0.5
    """Weight of the graph score when fusing with dense chunk similarity (``path``/``ppr``)."""
    dense_weight: float = 0.5
    """Weight of the chunk's own similarity to the query when fusing (``path``/``ppr``)."""
    fill_with_dense: bool = True
    """When the graph yields fewer than ``top_k_chunks`` chunks, fill up by dense similarity."""

    # --- 5. context assembly ------------------------------------------------------------------------
    max_context_tokens: int = 4000
    """Token budget of the formatted context (tiktoken cl100k_base), never exceeded."""
    relations_share: float = 0.3
    """Share of the budget for paths and the relationships table."""
    entities_share: float = 0.15
    """Share for the entities table. The rest goes to chunks; unused budget passes to the other sections."""
    max_paths: int = 20
    """Most directed paths rendered."""
    max_relations: int = 40
    """Most rows in the relationships table."""
    include_edges: bool = True
    """Attach the edges used to each returned Document's metadata."""
    history_turns: int = 2
    """Previous user turns folded into the query when a conversation history is passed."""

    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    """Free-form settings for custom strategies."""

    def __post_init__(self) -> None:
        problems = []

        def check(ok: bool, msg: str) -> None:
            if not ok:
                problems.append(msg)

        check(-1.0 <= self.similarity_threshold <= 1.0, "similarity_threshold must be in [-1, 1]")
        for name in (
            "top_k_nodes",
            "top_k_facts",
            "max_hops",
            "max_paths",
            "max_relations",
            "history_turns",
            "max_frontier",
        ):
            check(isinstance(getattr(self, name), int) and getattr(self, name) >= 0, f"{name} must be an integer >= 0")
        check(isinstance(self.top_k_chunks, int) and self.top_k_chunks >= 1, "top_k_chunks must be an integer >= 1")
        check(self.ppr_iterations >= 1, "ppr_iterations must be >= 1")
        check(self.strategy in STRATEGIES, f"strategy must be one of {', '.join(sorted(STRATEGIES))}")
        check(self.direction in ("out", "in", "both"), "direction must be 'out', 'in' or 'both'")
        check(0.0 < self.ppr_damping < 1.0, "ppr_damping must be in (0, 1)")
        check(0.0 <= self.path_decay <= 1.0, "path_decay must be in [0, 1]")
        for name in (
            "node_freq_weight",
            "node_sim_weight",
            "graph_weight",
            "dense_weight",
            "hybrid_weight",
            "ppr_dense_seed",
            "related_weight",
            "chunk_edge_weight",
        ):
            check(getattr(self, name) >= 0, f"{name} must be >= 0")
        check(self.max_context_tokens >= 50, "max_context_tokens must be >= 50")
        check(0 <= self.relations_share <= 1 and 0 <= self.entities_share <= 1, "shares must be in [0, 1]")
        check(self.relations_share + self.entities_share <= 1, "relations_share + entities_share must be <= 1")
        if problems:
            raise ValueError("invalid retrieval parameters: " + "; ".join(problems))

    def replace(self, **overrides: Any) -> QueryParams:
        """A copy with ``overrides`` applied (validated). Unknown names raise ``ValueError``."""
        if not overrides:
            return self
        known = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise ValueError(f"unknown retrieval parameter(s): {', '.join(unknown)}")
        for key in ("edge_types", "exclude_edge_types", "include_entities", "exclude_entities"):
            if key in overrides and overrides[key] is not None:
                value = overrides[key]
                overrides[key] = (value,) if isinstance(value, str) else tuple(value)
        return dataclasses.replace(self, **overrides)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


PRESETS: dict[str, QueryParams] = {
    # The published seed-003 settings: entity similarity >= 0.7, 10 nodes, 1 hop, 5 chunks, chunk score =
    # 0.4 * entity frequency + 0.6 * chunk similarity, no dense fallback.
    "seed003": QueryParams(
        similarity_threshold=0.7,
        top_k_nodes=10,
        top_k_facts=0,
        lexical_linking=False,
        strategy="frequency",
        max_hops=1,
        node_freq_weight=0.4,
        node_sim_weight=0.6,
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
