"""Retrieval settings, grouped by the stage of the query that owns them, with documented defaults and presets.

A query runs seeds → walk → select → context (→ communities); each stage reads one group:

- :class:`SeedSettings` — which entities the question is about (embedding, fact and name matching);
- :class:`WalkSettings` — which part of the graph may be walked, and how far (the filters hold at every stage);
- :class:`SelectSettings` — ranking chunks (the scoring strategy) and choosing the relations and paths shown;
- :class:`ContextSettings` — the token budget of the context and its split between sections;
- :class:`CommunitySettings` — which community reports the context may show.

:class:`QueryParams` holds one of each. Every setting keeps its flat name — ``QueryParams(max_hops=1)``,
``params.max_hops``, ``params.replace(k=3, edge_types=["SUPERSEDES"])``, ``retriever.invoke(q, max_hops=2)``,
``config={"configurable": {...}}`` and the CLI flags all use it — while ``params.walk.max_hops`` shows its scope.
Every value is checked when a group is built (type, finiteness, range); a bad one raises ``ValueError`` naming it.
Knobs that belong to one scoring strategy live on that strategy's object (``strategy=Chain(weight=0.3)``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from kg_rag.errors import InputError
from kg_rag.query.strategies import Chain, Frequency, Strategy, make_strategy
from kg_rag.query.strategies.base import check_number
from kg_rag.store.scope import DocumentFilter

Direction = Literal["out", "in", "both"]


def _name_tuple(name: str, value: Any) -> tuple[tuple[str, ...], str | None]:
    if isinstance(value, str):
        value = (value,)
    if not isinstance(value, (list, tuple, set, frozenset)):
        return (), f"{name} must be a list of names, got {type(value).__name__}"
    bad = [v for v in value if not isinstance(v, str) or not v.strip()]
    if bad:
        return (), f"{name} must hold non-empty strings, got {bad[0]!r}"
    return tuple(value), None


class _Settings:
    """Checks a frozen settings dataclass: integers, booleans, name lists, numbers in ranges (see the class
    variables), then :meth:`_check_more`. Problems are collected and raised together, naming each setting."""

    _INTS: ClassVar[dict[str, int]] = {}
    _BOOLS: ClassVar[tuple[str, ...]] = ()
    _NAMES: ClassVar[tuple[str, ...]] = ()
    _RANGES: ClassVar[dict[str, tuple[float | None, float | None]]] = {}

    def __post_init__(self) -> None:
        problems = self.problems()
        if problems:
            raise InputError("invalid retrieval parameters: " + "; ".join(problems))

    def problems(self) -> list[str]:
        out: list[str] = []
        set_ = object.__setattr__
        for name, low in self._INTS.items():
            found = check_number(name, getattr(self, name), low=low, integer=True)
            out += found
            if not found:
                set_(self, name, int(getattr(self, name)))
        for name in self._BOOLS:
            if not isinstance(getattr(self, name), bool):
                out.append(f"{name} must be True or False, got {getattr(self, name)!r}")
        for name in self._NAMES:
            names, problem = _name_tuple(name, getattr(self, name))
            if problem:
                out.append(problem)
            else:
                set_(self, name, names)
        for name, (least, most) in self._RANGES.items():
            out += check_number(name, getattr(self, name), least, most)
        return out + self._check_more()

    def _check_more(self) -> list[str]:
        return []


@dataclass(frozen=True)
class SeedSettings(_Settings):
    """Stage *seeds*: the query text and the entities it is about."""

    similarity_threshold: float = 0.3
    """Minimum cosine similarity for an entity (or fact) to seed the search."""
    top_k_nodes: int = 10
    """Entities matched by embedding similarity (before the threshold); also the most entities shown."""
    top_k_facts: int = 10
    """Facts ("source relation target" texts) matched; both ends of a matched fact become seeds. 0 = off."""
    lexical_linking: bool = True
    """Also seed entities whose full name occurs in the query text."""
    include_entities: tuple[str, ...] = ()
    """Entity names always used as seeds and as the starting points of paths; the ``chain`` strategy also
    puts a passage about each among the chunks (however many passages mention it)."""
    history_turns: int = 2
    """Previous user turns folded into the query when a conversation history is passed."""

    _INTS: ClassVar[dict[str, int]] = {"top_k_nodes": 0, "top_k_facts": 0, "history_turns": 0}
    _BOOLS: ClassVar[tuple[str, ...]] = ("lexical_linking",)
    _NAMES: ClassVar[tuple[str, ...]] = ("include_entities",)
    _RANGES: ClassVar[dict[str, tuple[float | None, float | None]]] = {"similarity_threshold": (-1.0, 1.0)}


@dataclass(frozen=True)
class WalkSettings(_Settings):
    """Stage *walk*: which relations and entities may be walked, which way, and how far. The filters hold at
    every stage — seeds, expansion, chunk scoring, paths, rows, entities and Document metadata."""

    max_hops: int = 2
    """The longest walk from the question's entities: expansion hops, path length, and the links of a chunk
    chain (each link crosses an entity; ``Chain(max_links=...)`` sets the chain apart)."""
    direction: Direction = "both"
    """Follow edges ``out`` (source to target), ``in`` (target to source) or ``both``."""
    edge_types: tuple[str, ...] | None = None
    """Allow-list of relation types (``None`` = all)."""
    exclude_edge_types: tuple[str, ...] = ()
    """Deny-list of relation types."""
    exclude_entities: tuple[str, ...] = ()
    """Entity names never used: not as seeds, not in the subgraph, paths, relationship rows or metadata. (The
    text of a chunk chosen for another reason is shown whole: this filters the graph, it does not redact.)"""
    use_synonyms: bool = True
    """Traverse ``SYNONYM_OF`` links added by entity resolution."""
    max_frontier: int = 2000
    """Most new nodes kept per hop of an expansion (best path score first); bounds work around hub entities."""
    filter: DocumentFilter | None = None
    """Only these documents: ``{"doc_id": [...]}`` and/or metadata equality (``{"source": "a.md"}``, a list for
    any of, ``$eq``/``$in``), as LangChain vector stores take ``filter``. Chunks, seeds, walks, rows and paths
    all come from the matching documents; community reports (which summarise every document) are not shown."""

    _INTS: ClassVar[dict[str, int]] = {"max_hops": 0, "max_frontier": 1}
    _BOOLS: ClassVar[tuple[str, ...]] = ("use_synonyms",)
    _NAMES: ClassVar[tuple[str, ...]] = ("exclude_entities", "exclude_edge_types")

    def _check_more(self) -> list[str]:
        out = []
        if self.direction not in ("out", "in", "both"):
            out.append(f"direction must be 'out', 'in' or 'both', got {self.direction!r}")
        try:
            object.__setattr__(self, "filter", DocumentFilter.parse(self.filter))
        except ValueError as exc:
            out.append(str(exc))
            object.__setattr__(self, "filter", None)
        if self.edge_types is not None:
            names, problem = _name_tuple("edge_types", self.edge_types)
            if problem:
                out.append(problem)
            else:
                object.__setattr__(self, "edge_types", names)
        return out


@dataclass(frozen=True)
class SelectSettings(_Settings):
    """Stage *select*: ranking the chunks (the scoring strategy) and choosing the relations and paths shown."""

    strategy: Strategy = field(default_factory=Chain)
    """Scoring strategy: ``chain`` (evidence chains over shared entities, the default), ``frequency`` (seed 003),
    ``path`` (seed 001 hybrid path scoring), ``ppr`` (HippoRAG-style personalised PageRank) — a name, a dict
    ``{"name": ..., **knobs}`` or a strategy object with its own knobs."""
    top_k_chunks: int = 5
    """Chunks returned (LangChain's ``k``)."""
    candidates: int = 200
    """Chunks considered before the graph adds any: this many best by dense similarity and by BM25."""
    fill_with_dense: bool = True
    """When the strategy yields fewer than ``top_k_chunks`` chunks, fill up by relevance."""
    lexical_weight: float = 0.1
    """Weight of BM25 term matching (normalised to [0, 1] per query) added to each chunk's cosine similarity
    to form its query relevance; exact figures, codes and rare names are where embeddings are weakest."""
    relation_match: float = 1.0
    """Prefer relations of the types the question names ("spouse", "born", "replaced"): they are shown first
    (relevance times 1 + this) even below ``relation_floor``, and expansion favours them (0 = off)."""
    relation_floor: float = 0.3
    """Relationship rows stop where relevance drops off: a relation is shown only while it is at least this
    fraction as relevant as the best one (budget left over goes to the source passages)."""
    less_sure_asked: bool = True
    """A chunk less than half as sure as the top one (the third and later) evidences only the relations that
    continue the evidence *and* are of a type the question asks for (when it asks for any, and
    ``relation_match`` is on): the last hop's answer, not the passage's other facts (off = every continuing
    relation, as before; measured: evaluation/README.md)."""
    unlinked_second_unsure: bool = True
    """When the top chunk owes its place to what the question names and the second owes nothing to the graph
    (no link from the top chunk, no named entity it covers), the second is as unsure as the third: it evidences
    only continuing relations, as above (off = the second is always sure; measured: evaluation/README.md)."""
    max_paths: int = 10
    """Most directed paths (paths follow only the most relevant relations, from a question entity)."""
    max_relations: int = 12
    """Most relationship rows (rows must lie on a shown path or touch an entity the question names)."""
    rerank_depth: int = 20
    """With a reranker: the chunks the strategy ranks for it to choose ``top_k_chunks`` from."""

    _INTS: ClassVar[dict[str, int]] = {
        "top_k_chunks": 1,
        "candidates": 1,
        "max_paths": 0,
        "max_relations": 0,
        "rerank_depth": 1,
    }
    _BOOLS: ClassVar[tuple[str, ...]] = ("fill_with_dense", "less_sure_asked", "unlinked_second_unsure")
    _RANGES: ClassVar[dict[str, tuple[float | None, float | None]]] = {
        "lexical_weight": (0.0, None),
        "relation_match": (0.0, None),
        "relation_floor": (0.0, 1.0),
    }

    def _check_more(self) -> list[str]:
        try:
            object.__setattr__(self, "strategy", make_strategy(self.strategy))
            return self.strategy.check()
        except (ValueError, TypeError) as exc:
            return [f"strategy: {exc}"]


@dataclass(frozen=True)
class ContextSettings(_Settings):
    """Stage *context*: the token budget and its split. A section that needs less passes the rest on."""

    max_context_tokens: int = 4000
    """Token budget of the formatted context (tiktoken cl100k_base), never exceeded."""
    relations_share: float = 0.3
    """Share of the budget for paths and the relationships table."""
    entities_share: float = 0.15
    """Share for the entities table. The rest goes to chunks; unused budget passes to the other sections."""
    community_share: float = 0.1
    """Share for the Communities section (only when the index has communities — ``kg-rag communities`` —
    otherwise it passes to the other sections)."""

    _INTS: ClassVar[dict[str, int]] = {"max_context_tokens": 50}
    _RANGES: ClassVar[dict[str, tuple[float | None, float | None]]] = {
        "relations_share": (0.0, 1.0),
        "entities_share": (0.0, 1.0),
        "community_share": (0.0, 1.0),
    }

    def _check_more(self) -> list[str]:
        shares = (self.relations_share, self.entities_share, self.community_share)
        if all(isinstance(s, (int, float)) for s in shares) and sum(shares) > 1:
            return ["relations_share + entities_share + community_share must be <= 1"]
        return []


@dataclass(frozen=True)
class CommunitySettings(_Settings):
    """Stage *communities*: which community reports the context may show."""

    community_level: int | None = None
    """Community level shown (0 = coarsest); ``None``: each entity's most specific community."""
    max_communities: int = 3
    """Most community reports shown, ranked by how many selected entities they hold, then by rating."""

    _INTS: ClassVar[dict[str, int]] = {"max_communities": 0}

    def _check_more(self) -> list[str]:
        if self.community_level is None:
            return []
        found = check_number("community_level", self.community_level, low=0, integer=True)
        if not found:
            object.__setattr__(self, "community_level", int(self.community_level))
        return found


GROUPS: dict[str, type[_Settings]] = {
    "seeds": SeedSettings,
    "walk": WalkSettings,
    "select": SelectSettings,
    "context": ContextSettings,
    "communities": CommunitySettings,
}
"""The settings groups, by the stage that owns them, in pipeline order."""
STAGE_OF: dict[str, str] = {f.name: g for g, cls in GROUPS.items() for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
"""Flat setting name -> the group (stage) that owns it."""
ALIASES = {"k": "top_k_chunks"}
"""Other names a setting is known by (LangChain's ``k``)."""
SETTING_NAMES = frozenset(STAGE_OF) | frozenset(ALIASES)


class QueryParams:
    """Every retrieval setting, one group per stage (``params.walk.max_hops``) and by flat name
    (``params.max_hops``). Immutable: :meth:`replace` returns a changed copy.

    ``QueryParams(max_hops=1, k=3)`` sets settings by flat name; ``QueryParams(walk=WalkSettings(...))`` or
    ``walk={"max_hops": 1}`` sets a whole group. Unknown names and bad values raise ``ValueError``.
    """

    __slots__ = tuple(GROUPS)
    seeds: SeedSettings
    walk: WalkSettings
    select: SelectSettings
    context: ContextSettings
    communities: CommunitySettings

    def __init__(self, **settings: Any) -> None:
        _assemble(self, dict.fromkeys(GROUPS), settings)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("QueryParams is immutable: use params.replace(...)")

    def __getattr__(self, name: str) -> Any:
        group = STAGE_OF.get(name)
        if group is None:
            raise AttributeError(f"QueryParams has no setting {name!r}")
        return getattr(object.__getattribute__(self, group), name)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, QueryParams) and all(getattr(self, g) == getattr(other, g) for g in GROUPS)

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, g) for g in GROUPS))

    def __repr__(self) -> str:
        changed = {k: v for k, v in self.to_dict().items() if v != _DEFAULTS.get(k)}
        return "QueryParams(" + ", ".join(f"{k}={v!r}" for k, v in changed.items()) + ")"

    def __copy__(self) -> QueryParams:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> QueryParams:
        return self

    @property
    def specific_mentions(self) -> int:
        """An entity pins down passages — it may anchor a path, be covered, count as named in lower case —
        when at most this many chunks mention it: twice the chunks returned. A name many passages share
        ("film", a country) pins down none of them."""
        return 2 * self.select.top_k_chunks

    def replace(self, **overrides: Any) -> QueryParams:
        """A copy with ``overrides`` applied (flat names, ``k`` included, or whole groups), validated."""
        if not overrides:
            return self
        out = object.__new__(QueryParams)
        _assemble(out, {g: getattr(self, g) for g in GROUPS}, overrides)
        return out

    def to_dict(self) -> dict[str, Any]:
        """Every setting by flat name (the strategy as ``{"name": ..., **knobs}``)."""
        out = {f.name: getattr(getattr(self, g), f.name) for g, cls in GROUPS.items() for f in _fields(cls)}
        out["strategy"] = self.select.strategy.to_dict()
        if out["filter"] is not None:
            out["filter"] = out["filter"].to_dict()
        return out


def _assemble(target: QueryParams, current: dict[str, Any], settings: dict[str, Any]) -> None:
    """Set each group of ``target``: the current one, replaced by a group given whole (an object or a dict), with
    the flat settings of its stage applied; all problems are raised together."""
    groups = {g: settings.pop(g) for g in list(settings) if g in GROUPS}
    flat = resolve_names(settings)
    problems: list[str] = []
    for name, cls in GROUPS.items():
        value = groups.get(name, current[name])
        mine = {k: v for k, v in flat.items() if STAGE_OF[k] == name}
        if value is not None and not isinstance(value, (cls, Mapping)):
            problems.append(f"{name} must be a {cls.__name__} or a dict, got {type(value).__name__}")
            value = None
        if value is None or isinstance(value, Mapping) or mine:
            if isinstance(value, Mapping):
                base = dict(value)
            else:
                base = {} if value is None else {f.name: getattr(value, f.name) for f in _fields(cls)}
            value = _build(cls, {**base, **mine}, problems, name)
        object.__setattr__(target, name, value)
    if problems:
        raise InputError("invalid retrieval parameters: " + "; ".join(problems))


def _fields(cls: type) -> tuple[dataclasses.Field, ...]:
    return dataclasses.fields(cls)  # type: ignore[arg-type]


def _build(cls: type[_Settings], values: dict[str, Any], problems: list[str], group: str = "") -> Any:
    """``cls(**values)``, its problems added to ``problems`` (``None`` when it cannot be built)."""
    known = {f.name for f in _fields(cls)}
    unknown = sorted(set(values) - known)
    if unknown:
        problems.append(f"unknown {group} setting(s): {', '.join(unknown)}")
        values = {k: v for k, v in values.items() if k in known}
    try:
        return cls(**values)
    except ValueError as exc:
        problems.append(str(exc).removeprefix("invalid retrieval parameters: "))
        return cls()


def resolve_names(settings: Mapping[str, Any]) -> dict[str, Any]:
    """Flat settings with aliases resolved (``k`` -> ``top_k_chunks``); an unknown name raises ``ValueError``."""
    out: dict[str, Any] = {}
    unknown = []
    for name, value in settings.items():
        real = ALIASES.get(name, name)
        if real not in STAGE_OF:
            unknown.append(name)
            continue
        out[real] = value
    if unknown:
        raise InputError(f"unknown retrieval parameter(s): {', '.join(sorted(unknown))}")
    return out


_DEFAULTS = {
    **{f.name: f.default for cls in GROUPS.values() for f in _fields(cls) if f.default is not dataclasses.MISSING},
    "strategy": Chain().to_dict(),
}

PRESETS: dict[str, QueryParams] = {
    # The seed-003 reproduction, with its published settings: entity similarity >= 0.7, 10 nodes, 1 hop, 5
    # chunks, chunk score = 0.4 * entity frequency + 0.6 * chunk similarity, no dense fallback. It returns what
    # the seed's algorithm returns (kg_rag.eval.bench.Seed003Reference): with MiniLM often nothing, since few entity
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


def build_params(params: QueryParams | None = None, preset: str | None = None, **settings: Any) -> QueryParams:
    """``params`` (or the ``preset`` named) with flat settings applied; unknown names raise ``ValueError``."""
    if preset is not None:
        if params is not None:
            raise InputError("give params= or preset=, not both")
        params = get_preset(preset)
    return (params or QueryParams()).replace(**settings)


def get_preset(name: str) -> QueryParams:
    """Preset by name (``seed003``, ``default``/``kg-rag``)."""
    key = "default" if name in ("kg-rag", "recommended") else name
    if key not in PRESETS:
        raise InputError(f"unknown preset {name!r}; choose one of {', '.join(sorted(PRESETS))}")
    return PRESETS[key]
