"""The backend base class: what retrieval needs from a backend (:class:`QueryBackend`). The query engine, the
strategies and the context builder use nothing else, so every backend — the directory index
(:mod:`kg_rag.store.directory`), PostgreSQL (:mod:`kg_rag.store.postgres`) — serves the same retrieval.
:mod:`kg_rag.testing` holds the compliance suite every backend passes; :mod:`kg_rag.store.graph_store` has the
store side (saving, loading, document writes).

A backend implements the primitives (vector and BM25 search, expansion, incidences, records) and may override the
derived operations (mention counts, degrees, edges by id, chunk handles, community lookups) for speed.

Entities, relations and chunks are addressed by integer *handles* (``int64``): row positions in the directory
backend, primary keys in PostgreSQL. Handles are only valid within one view of the data (one snapshot or one
transaction); user-facing ids (entity keys, relation ids, chunk ids) come from the records.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from kg_rag.errors import InputError
from kg_rag.index.meta import BackendInfo
from kg_rag.model.names import upper_snake
from kg_rag.model.records import SYNONYM_KIND, Chunk, Entity, Relation

if TYPE_CHECKING:
    from kg_rag.index.build import GraphIndex
    from kg_rag.model.graph import KnowledgeGraph

Direction = Literal["out", "in", "both"]
VectorKind = Literal["entities", "facts", "chunks"]
"""The three vector tables: entities (name, type, description), facts (``source predicate target``, one per
extracted relation; a fact's handle is its relation's handle) and chunks (title and text)."""

I64 = np.int64
F32 = np.float32


def _i64(values: Any) -> np.ndarray:
    return np.asarray(values, dtype=I64).reshape(-1)


@dataclass(frozen=True)
class EdgeFilter:
    """Which relations a traversal may use.

    ``types`` is an allow-list of relation types (``None``: all), ``exclude_types`` a deny-list; ``direction``
    says whether edges are followed from source to target (``out``), backwards (``in``) or both ways;
    ``synonyms`` whether entity-resolution links (``SYNONYM_OF``) are traversed; ``blocked`` entity handles are
    never entered; ``relations`` (``None``: all) is an allow-list of relation handles — a document filter's
    relations (:mod:`kg_rag.store.scope`). A filter never changes an edge's stored direction, only which edges
    may be walked.
    """

    types: frozenset[str] | None = None
    exclude_types: frozenset[str] = frozenset()
    direction: Direction = "both"
    synonyms: bool = True
    blocked: frozenset[int] = frozenset()
    relations: frozenset[int] | None = None

    @classmethod
    def build(
        cls,
        types: Iterable[str] | None = None,
        exclude_types: Iterable[str] = (),
        direction: Direction = "both",
        synonyms: bool = True,
        blocked: Iterable[int] = (),
    ) -> EdgeFilter:
        return cls(
            frozenset(map(upper_snake, types)) if types is not None else None,
            frozenset(map(upper_snake, exclude_types)),
            direction,
            bool(synonyms),
            frozenset(int(b) for b in blocked),
        )

    def allows_type(self, relation_type: str, synonym: bool = False) -> bool:
        """Whether an edge of this type may be used (synonym links follow ``synonyms`` only)."""
        if synonym:
            return self.synonyms
        if self.types is not None and relation_type not in self.types:
            return False
        return relation_type not in self.exclude_types

    @property
    def restricts_types(self) -> bool:
        return self.types is not None or bool(self.exclude_types)


@dataclass
class Hits:
    """Search results: handles and their scores, best first."""

    ids: np.ndarray
    scores: np.ndarray

    @classmethod
    def empty(cls) -> Hits:
        return cls(np.zeros(0, I64), np.zeros(0, F32))

    def __len__(self) -> int:
        return int(self.ids.size)


@dataclass
class EdgeSet:
    """A batch of relations by handle: endpoints (entity handles), type codes into ``type_names``, weights."""

    ids: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    type_id: np.ndarray
    weight: np.ndarray
    synonym: np.ndarray
    type_names: Sequence[str] = ()

    @classmethod
    def empty(cls, type_names: Sequence[str] = ()) -> EdgeSet:
        z = np.zeros(0, I64)
        return cls(z, z, z, np.zeros(0, np.int32), np.zeros(0, F32), np.zeros(0, bool), type_names)

    def __len__(self) -> int:
        return int(self.ids.size)

    def type_of(self, i: int) -> str:
        return self.type_names[int(self.type_id[i])]

    def take(self, positions: np.ndarray) -> EdgeSet:
        pos = _i64(positions)
        return EdgeSet(
            self.ids[pos],
            self.src[pos],
            self.dst[pos],
            self.type_id[pos],
            self.weight[pos],
            self.synonym[pos],
            self.type_names,
        )

    def unique(self) -> EdgeSet:
        """The same edges once each, ordered by handle."""
        _, first = np.unique(self.ids, return_index=True)
        return self.take(first)


class TermScorer:
    """BM25 of texts made of one question's words, and which of those words a chunk contains.

    The chain ranks a chunk it links to by the words of the question that no picked chunk contains yet
    (:class:`~kg_rag.query.strategies.chain.QuestionRest`): one question, several parts of it. A backend that
    holds its postings in process scores every part from the question's own columns
    (:meth:`QueryBackend.term_scorer`); this default asks the backend for each text and reads the chunk."""

    def __init__(self, view: QueryBackend) -> None:
        self.view = view

    def search(self, text: str, k: int) -> Hits:
        """The top-``k`` chunks by BM25 of ``text`` (:meth:`QueryBackend.lexical_search`)."""
        return self.view.lexical_search(text, k)

    def scores(self, text: str, chunk_ids: np.ndarray) -> np.ndarray:
        """BM25 of ``text`` for the given chunks."""
        return self.view.lexical_scores(text, chunk_ids)

    def best(self, text: str) -> float:
        """The best BM25 of ``text`` over every chunk (0 when no chunk contains a word of it)."""
        top = self.view.lexical_search(text, 1)
        return float(top.scores[0]) if len(top) else 0.0

    def words_in(self, chunk_id: int) -> set[str]:
        """The words of a chunk as BM25 reads them (its title included); at least the question's among them."""
        from kg_rag.index.build import chunk_text
        from kg_rag.index.lexical import tokenize

        record = self.view.chunks(np.asarray([chunk_id], dtype=I64))[0]
        return set(tokenize(chunk_text(record))) if record is not None else set()


@dataclass
class Expansion:
    """Breadth-first expansion from seed entities (see :meth:`QueryBackend.expand`).

    One row per reached entity (seeds included, at hop 0): its hop distance, its best path score
    (``seed weight * decay ** hop``) and the edge it was reached through (``parent_edge`` -1 for seeds), walked
    ``parent_forward`` (along the stored direction) or backwards.
    """

    nodes: np.ndarray
    hop: np.ndarray
    score: np.ndarray
    parent_edge: np.ndarray
    parent_forward: np.ndarray
    _position: dict[int, int] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_seeds(cls, seeds: Mapping[int, float]) -> Expansion:
        n = len(seeds)
        return cls(
            _i64(list(seeds)),
            np.zeros(n, np.int32),
            np.asarray(list(seeds.values()), F32),
            np.full(n, -1, I64),
            np.zeros(n, bool),
        )

    def __len__(self) -> int:
        return int(self.nodes.size)

    @property
    def position(self) -> dict[int, int]:
        if self._position is None:
            self._position = {int(n): i for i, n in enumerate(self.nodes.tolist())}
        return self._position


@dataclass
class Pairs:
    """An incidence between two kinds of handle (e.g. chunk -> entity mentions), as two aligned arrays."""

    left: np.ndarray
    right: np.ndarray

    @classmethod
    def empty(cls) -> Pairs:
        return cls(np.zeros(0, I64), np.zeros(0, I64))

    def __len__(self) -> int:
        return int(self.left.size)


class QueryBackend(ABC):
    """What retrieval needs from a backend: a small core of primitives, operations derived from them (a backend
    may override those for speed), and a serving lifecycle. Every method is read-only and thread-safe.

    A query runs inside ``with backend.reader() as view:`` and calls only ``view``, so it sees one consistent
    version of the data even while writers commit (a snapshot in process, a transaction in a database).

    Lifecycle: :meth:`reader` (a consistent view), :meth:`info`, :meth:`refresh` (move to the newest version;
    returns whether anything changed), :meth:`warm_up` (prepare so the first query is not the slow one) and
    :meth:`close` (release connections and locks). :meth:`knowledge_graph` and :meth:`to_index` give the
    editable graph where a backend can build it.
    """

    in_process: bool = False
    """Lookups are reads of in-process arrays: a query keeps no copy of what it fetched, since that would cost
    more than asking again. Over a database (``False``) the query keeps them: one round trip per handle."""

    def __copy__(self) -> QueryBackend:  # a handle on shared, read-only data (and open files): copies share it
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> QueryBackend:
        return self

    # ---------------------------------------------------------------- lifecycle
    def reader(self) -> AbstractContextManager[QueryBackend]:
        """A consistent read view for one query (``self`` for an immutable backend)."""
        return nullcontext(self)

    @abstractmethod
    def info(self) -> BackendInfo: ...

    def refresh(self) -> bool:
        """Move to the newest committed version; returns whether the data changed (always current here)."""
        return False

    def warm_up(self) -> None:  # noqa: B027 - a default, not an abstract method
        """Prepare for the first query (build in-process indexes); nothing to do by default."""

    def close(self) -> None:  # noqa: B027 - a default, not an abstract method
        """Release what the backend holds (connections, reader locks); nothing by default."""

    @property
    def generation(self) -> str:
        """The version being served (a generation name, ``schema@N``)."""
        return self.info().version

    def knowledge_graph(self) -> KnowledgeGraph:
        """The editable graph of the version served (built on first use where a backend can)."""
        raise InputError(f"{type(self).__name__} does not hold an editable graph")

    def to_index(self) -> GraphIndex:
        """The version served as an editable :class:`~kg_rag.index.build.GraphIndex`."""
        raise InputError(f"{type(self).__name__} cannot be turned into an editable index")

    # ---------------------------------------------------------------- vectors
    concurrent_searches: bool = False
    """Whether :meth:`search_ahead` runs a query's vector searches at once (a database with spare connections)."""

    @abstractmethod
    def search(self, kind: VectorKind, query: np.ndarray, k: int, min_score: float | None = None) -> Hits:
        """Top-``k`` rows of a vector table by cosine similarity to ``query`` (scores >= ``min_score``; ties by
        handle)."""

    def search_ahead(  # noqa: B027 - a default, not an abstract method
        self, query: np.ndarray, requests: Sequence[tuple[VectorKind, int]], text: str | None = None
    ) -> None:
        """The searches a query is about to make — vector searches, ``(kind, k)`` each, and BM25 of ``text`` —
        : a backend with :attr:`concurrent_searches` runs them at once now and answers the matching
        :meth:`search` and lexical calls from them (same results). By default each runs where it is made."""

    @abstractmethod
    def similarity(self, kind: VectorKind, query: np.ndarray, ids: np.ndarray) -> np.ndarray:
        """Cosine similarity of the given rows to ``query`` (0 for unknown handles)."""

    # ---------------------------------------------------------------- lexical
    @abstractmethod
    def lexical_search(self, text: str, k: int) -> Hits:
        """Top-``k`` chunks by Okapi BM25 of ``text`` (only chunks with a positive score)."""

    @abstractmethod
    def lexical_scores(self, text: str, chunk_ids: np.ndarray) -> np.ndarray:
        """BM25 of ``text`` for the given chunks."""

    def term_scorer(self, words: Sequence[str]) -> TermScorer:
        """BM25 of texts made of ``words`` (the question's), for scoring several parts of one question (see
        :class:`TermScorer`). The default asks this backend for each text."""
        return TermScorer(self)

    @abstractmethod
    def lookup_entities(self, keys: Sequence[str]) -> dict[str, int]:
        """Handles of the entities with these canonical keys (absent keys are left out)."""

    # ---------------------------------------------------------------- graph
    @abstractmethod
    def expand(
        self,
        seeds: Mapping[int, float],
        max_hops: int,
        edge_filter: EdgeFilter,
        *,
        decay: float = 0.5,
        max_frontier: int = 2000,
        max_edges_per_hop: int = 50_000,
        prefer: frozenset[str] = frozenset(),
        prefer_weight: float = 0.0,
    ) -> Expansion:
        """Breadth-first expansion from ``seeds`` over allowed edges, cycle-free, ``max_hops`` deep.

        A node's score is its parent's times ``decay`` (times ``1 + prefer_weight`` when the edge's type is in
        ``prefer``); it keeps the best-scoring parent at its shortest distance. Each hop keeps at most
        ``max_frontier`` new nodes (best score first, then lowest handle) and expands frontier nodes (best
        first) only until ``max_edges_per_hop`` edges are gathered.
        """

    @abstractmethod
    def edges_of(self, entity_ids: np.ndarray, edge_filter: EdgeFilter, *, among: bool = False) -> EdgeSet:
        """Allowed edges touching any of the given entities (``among``: both ends in the set), by handle.

        The filter's ``direction`` is not applied here (an edge touching the set is returned whichever way it
        points); its types, synonym setting and blocked entities are.
        """

    @abstractmethod
    def chunk_entities(self, chunk_ids: np.ndarray) -> Pairs:
        """Mentions: ``(chunk, entity)`` pairs for the given chunks."""

    @abstractmethod
    def entity_chunks(self, entity_ids: np.ndarray) -> Pairs:
        """Mentions: ``(entity, chunk)`` pairs for the given entities."""

    @abstractmethod
    def chunk_relations(self, chunk_ids: np.ndarray, edge_filter: EdgeFilter) -> tuple[Pairs, EdgeSet]:
        """Allowed relations evidenced in the given chunks: ``(chunk, relation)`` pairs and the relations."""

    @abstractmethod
    def relation_chunks(self, relation_ids: np.ndarray) -> Pairs:
        """Evidence: ``(relation, chunk)`` pairs for the given relations."""

    # ---------------------------------------------------------------- records
    @abstractmethod
    def entities(self, ids: np.ndarray) -> list[Entity | None]: ...

    @abstractmethod
    def relations(self, ids: np.ndarray) -> list[Relation | None]: ...

    @abstractmethod
    def chunks(self, ids: np.ndarray) -> list[Chunk | None]: ...

    @abstractmethod
    def iter_chunks(self) -> Iterator[tuple[int, Chunk]]:
        """Every chunk with its handle (a full scan: for evaluation and maintenance, never on the query path)."""

    def list_communities(self, level: int | None = None) -> list[Any]:
        """Every community at ``level`` (all levels when ``None``), by level then id; none by default."""
        return []

    # ---------------------------------------------------------------- derived (override for speed)
    def names(self, entity_ids: np.ndarray) -> list[str | None]:
        """Each entity's name (``None`` for an unknown handle): for a step that needs nothing else of the
        record (whether a chain may link through it), so a backend holding the names need not decode records."""
        return [r.name if r is not None else None for r in self.entities(entity_ids)]

    def labels(self, entity_ids: np.ndarray) -> list[tuple[str, str] | None]:
        """Each entity's ``(key, name)`` (``None`` for an unknown handle): what a relationship row or a path
        shows of its ends, so a backend holding keys and names need not decode records."""
        return [(r.key, r.name) if r is not None else None for r in self.entities(entity_ids)]

    def mention_counts(self, entity_ids: np.ndarray) -> np.ndarray:
        """How many chunks mention each entity (how generic it is)."""
        ids = _i64(entity_ids)
        pairs = self.entity_chunks(np.unique(ids))
        owners, counts = np.unique(pairs.left, return_counts=True)
        found = dict(zip(owners.tolist(), counts.tolist()))
        return np.asarray([found.get(i, 0) for i in ids.tolist()], dtype=F32)

    def degrees(self, entity_ids: np.ndarray) -> np.ndarray:
        """Number of relations (both directions, synonym links included) at each entity."""
        ids = _i64(entity_ids)
        edges = self.edges_of(np.unique(ids), EdgeFilter.build())
        found = Counter(edges.src.tolist()) + Counter(edges.dst.tolist())
        return np.asarray([found.get(i, 0) for i in ids.tolist()], dtype=I64)

    def edges_by_id(self, relation_ids: np.ndarray) -> EdgeSet:
        """The given relations (unknown handles are left out), whatever the filters."""
        ids = _i64(relation_ids).tolist()
        known = [(h, r) for h, r in zip(ids, self.relations(np.asarray(ids, I64))) if r is not None]
        if not known:
            return EdgeSet.empty()
        ends = self.lookup_entities(sorted({k for _, r in known for k in (r.source, r.target)}))
        known = [(h, r) for h, r in known if r.source in ends and r.target in ends]
        names = sorted({r.relation_type for _, r in known})
        code = {n: i for i, n in enumerate(names)}
        synonym = [r.kind == SYNONYM_KIND for _, r in known]
        return EdgeSet(
            _i64([h for h, _ in known]),
            _i64([ends[r.source] for _, r in known]),
            _i64([ends[r.target] for _, r in known]),
            np.asarray([code[r.relation_type] for _, r in known], np.int32),
            np.asarray([1.0 if s else r.weight for s, (_, r) in zip(synonym, known)], F32),
            np.asarray(synonym, bool),
            names,
        )

    def matching_chunks(self, doc_filter: Any) -> np.ndarray:
        """Handles of the chunks a :class:`~kg_rag.store.scope.DocumentFilter` allows (a full scan by default)."""
        return _i64([h for h, c in self.iter_chunks() if doc_filter.matches(c.doc_id, c.metadata)])

    def scope_members(self, chunk_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The entities these chunks mention and the relations (synonym links aside) they evidence, as sorted
        unique handles: what a document filter's scope holds. Built from :meth:`chunk_entities` and
        :meth:`chunk_relations` by default; a backend whose primitives do more per row (PostgreSQL's prefetches)
        answers with two plain lookups."""
        entities = np.unique(self.chunk_entities(chunk_ids).right.astype(np.int64))
        pairs, _ = self.chunk_relations(chunk_ids, EdgeFilter(synonyms=False))
        return entities, np.unique(pairs.right.astype(np.int64))

    def chunk_handles(self, chunk_ids: Sequence[str]) -> dict[str, int]:
        """Handles of chunks by their ids (a full scan by default)."""
        wanted = set(map(str, chunk_ids))
        return {c.id: h for h, c in self.iter_chunks() if c.id in wanted}

    def community_records(self, ids: Sequence[str]) -> list[Any]:
        """The :class:`~kg_rag.communities.Community` records (``None`` for unknown ids)."""
        known = {c.id: c for c in self.list_communities(None)}
        return [known.get(str(i)) for i in ids]

    def communities_for(self, entity_ids: np.ndarray, level: int | None = None) -> list[tuple[str, int]]:
        """Communities holding the given entities — at ``level``, or each entity's finest when ``None`` — with
        how many of the entities each holds, most first (then by id). Empty when the index has none."""
        communities = self.list_communities(None)
        if not communities:
            return []
        by_key: dict[str, list[tuple[int, str]]] = {}
        for c in communities:
            for key in c.entities:
                by_key.setdefault(key, []).append((c.level, c.id))
        handles = list(dict.fromkeys(_i64(entity_ids).tolist()))
        keys = [e.key if e is not None else None for e in self.entities(_i64(handles))]
        return count_communities((sorted(by_key.get(k) or []) for k in keys if k is not None), level)


def count_communities(memberships: Iterable[list[tuple[int, str]]], level: int | None) -> list[tuple[str, int]]:
    """For each entity's ``(level, community)`` list (sorted): its community at ``level`` (or its finest), counted
    across the entities, most first, then by id — the one rule every backend's ``communities_for`` follows."""
    counts: Counter[str] = Counter()
    for mine in memberships:
        if not mine:
            continue
        chosen = [cid for lvl, cid in mine if lvl == level] if level is not None else [mine[-1][1]]
        counts.update(chosen)
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


class _Forward:
    """A query operation of :class:`VersionedBackend`: the operation of the same name, run in a view of its own."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        self.__doc__ = getattr(QueryBackend, name).__doc__

    def __get__(self, backend: Any, owner: type | None = None) -> Any:
        if backend is None:
            return self
        name = self.name

        def forward(*args: Any, **kwargs: Any) -> Any:
            with backend.reader() as view:
                return getattr(view, name)(*args, **kwargs)

        forward.__name__ = name
        return forward


class VersionedBackend(QueryBackend):
    """A backend that serves successive versions of an index: :meth:`reader` yields a view of the current one,
    and every query operation called on the backend itself runs in a view of its own (so it is consistent,
    but handles from two such calls may come from two versions — use :meth:`reader` to query). Each query operation
    is a :class:`_Forward`: it runs the operation of the same name in a view of its own (none is written out)."""

    @abstractmethod
    def reader(self) -> AbstractContextManager[QueryBackend]: ...

    def search_ahead(
        self, query: np.ndarray, requests: Sequence[tuple[VectorKind, int]], text: str | None = None
    ) -> None:
        """Nothing to run ahead: each call on the backend itself runs in a view of its own, so results found
        ahead would have nobody to answer (a query runs ahead in its :meth:`reader` view)."""

    def term_scorer(self, words: Sequence[str]) -> TermScorer:
        """Scores through this backend's own calls (each in a view of its own): a scorer from one view would
        outlive it."""
        return TermScorer(self)

    info = _Forward()
    search = _Forward()
    similarity = _Forward()
    lexical_search = _Forward()
    lexical_scores = _Forward()
    lookup_entities = _Forward()
    expand = _Forward()
    edges_of = _Forward()
    edges_by_id = _Forward()
    chunk_entities = _Forward()
    entity_chunks = _Forward()
    names = _Forward()
    labels = _Forward()
    mention_counts = _Forward()
    degrees = _Forward()
    chunk_relations = _Forward()
    relation_chunks = _Forward()
    entities = _Forward()
    relations = _Forward()
    chunks = _Forward()
    matching_chunks = _Forward()
    scope_members = _Forward()
    chunk_handles = _Forward()
    iter_chunks = _Forward()
    list_communities = _Forward()
    community_records = _Forward()
    communities_for = _Forward()
