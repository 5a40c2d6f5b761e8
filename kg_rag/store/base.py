"""The store protocol: what retrieval needs from a backend (``QueryBackend``) and what writers need
(``GraphStore``). The query engine, the strategies and the context builder use nothing else, so every backend
— the directory index (:mod:`kg_rag.store.directory`), PostgreSQL (:mod:`kg_rag.store.postgres`) — serves
the same retrieval. :mod:`kg_rag.testing` holds the compliance suite every backend passes.

Entities, relations and chunks are addressed by integer *handles* (``int64``): row positions in the directory
backend, primary keys in PostgreSQL. Handles are only valid within one view of the data (one snapshot or one
transaction); user-facing ids (entity keys, relation ids, chunk ids) come from the records.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

from kg_rag.model.records import Chunk, Entity, Relation
from kg_rag.model.schema import upper_snake

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
    never entered. A filter never changes an edge's stored direction, only which edges may be walked.
    """

    types: frozenset[str] | None = None
    exclude_types: frozenset[str] = frozenset()
    direction: Direction = "both"
    synonyms: bool = True
    blocked: frozenset[int] = frozenset()

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


@dataclass
class Expansion:
    """Breadth-first expansion from seed entities (see :meth:`QueryBackend.expand`).

    One row per reached entity (seeds included, at hop 0): its hop distance, its best path score
    (``seed weight * decay ** hop``) and the edge it was reached through (``parent_edge`` -1 for seeds), walked
    ``parent_forward`` (along the stored direction) or backwards. ``parent_src``/``parent_dst``/``parent_type_id``
    describe that edge, so the path to any reached node can be rebuilt without another call.
    """

    nodes: np.ndarray
    hop: np.ndarray
    score: np.ndarray
    parent_edge: np.ndarray
    parent_forward: np.ndarray
    parent_src: np.ndarray
    parent_dst: np.ndarray
    parent_type_id: np.ndarray
    type_names: Sequence[str] = ()
    _position: dict[int, int] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_seeds(cls, seeds: Mapping[int, float], type_names: Sequence[str] = ()) -> Expansion:
        n = len(seeds)
        return cls(
            _i64(list(seeds)),
            np.zeros(n, np.int32),
            np.asarray(list(seeds.values()), F32),
            np.full(n, -1, I64),
            np.zeros(n, bool),
            np.full(n, -1, I64),
            np.full(n, -1, I64),
            np.full(n, -1, np.int32),
            type_names,
        )

    def __len__(self) -> int:
        return int(self.nodes.size)

    @property
    def position(self) -> dict[int, int]:
        if self._position is None:
            self._position = {int(n): i for i, n in enumerate(self.nodes.tolist())}
        return self._position

    def steps_to(self, node: int) -> list[tuple[int, int, int, str, bool]] | None:
        """``(edge, src, dst, type, forward)`` from a seed to ``node`` (``None`` when not reached)."""
        pos = self.position.get(int(node))
        if pos is None:
            return None
        steps = []
        seen = set()
        while self.parent_edge[pos] >= 0 and pos not in seen:
            seen.add(pos)
            fwd = bool(self.parent_forward[pos])
            src, dst = int(self.parent_src[pos]), int(self.parent_dst[pos])
            rtype = self.type_names[int(self.parent_type_id[pos])]
            steps.append((int(self.parent_edge[pos]), src, dst, rtype, fwd))
            prev = self.position.get(src if fwd else dst)
            if prev is None:
                break
            pos = prev
        steps.reverse()
        return steps


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


@dataclass
class BackendInfo:
    """What a backend holds: counts, the embedding model the vectors come from, and its version."""

    entities: int
    relations: int
    chunks: int
    documents: int
    dim: int
    embedding_model: str
    type_prefix: bool = True
    version: str = ""
    """Changes whenever the data changes (a generation name, a transaction counter)."""
    relation_types: dict[str, int] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class QueryBackend(Protocol):
    """The operations retrieval needs. Every method is read-only and safe to call from several threads.

    A query runs inside ``with backend.reader() as view:`` and calls only ``view``, so it sees one consistent
    version of the data even while writers commit (a snapshot in process, a transaction in a database).
    """

    def reader(self) -> AbstractContextManager[QueryBackend]:
        """A consistent read view for one query (may be ``self`` for immutable backends)."""
        ...

    def info(self) -> BackendInfo: ...

    # ---------------------------------------------------------------- vectors
    def search(self, kind: VectorKind, query: np.ndarray, k: int, min_score: float | None = None) -> Hits:
        """Top-``k`` rows of a vector table by cosine similarity to ``query`` (scores >= ``min_score``)."""
        ...

    def similarity(self, kind: VectorKind, query: np.ndarray, ids: np.ndarray) -> np.ndarray:
        """Cosine similarity of the given rows to ``query`` (0 for unknown handles)."""
        ...

    # ---------------------------------------------------------------- lexical
    def lexical_search(self, text: str, k: int) -> Hits:
        """Top-``k`` chunks by Okapi BM25 of ``text`` (only chunks with a positive score)."""
        ...

    def lexical_scores(self, text: str, chunk_ids: np.ndarray) -> np.ndarray:
        """BM25 of ``text`` for the given chunks."""
        ...

    def lookup_entities(self, keys: Sequence[str]) -> dict[str, int]:
        """Handles of the entities with these canonical keys (absent keys are left out)."""
        ...

    # ---------------------------------------------------------------- graph
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
        ...

    def edges_of(self, entity_ids: np.ndarray, edge_filter: EdgeFilter, *, among: bool = False) -> EdgeSet:
        """Allowed edges touching any of the given entities (``among``: both ends in the set).

        The filter's ``direction`` is not applied here (an edge touching the set is returned whichever way it
        points); its types, synonym setting and blocked entities are.
        """
        ...

    def edges_by_id(self, relation_ids: np.ndarray) -> EdgeSet:
        """The given relations (unknown handles are left out), whatever the filters."""
        ...

    def chunk_entities(self, chunk_ids: np.ndarray) -> Pairs:
        """Mentions: ``(chunk, entity)`` pairs for the given chunks."""
        ...

    def entity_chunks(self, entity_ids: np.ndarray) -> Pairs:
        """Mentions: ``(entity, chunk)`` pairs for the given entities."""
        ...

    def mention_counts(self, entity_ids: np.ndarray) -> np.ndarray:
        """How many chunks mention each entity (how generic it is)."""
        ...

    def degrees(self, entity_ids: np.ndarray) -> np.ndarray:
        """Number of relations (both directions, synonym links included) at each entity."""
        ...

    def chunk_relations(self, chunk_ids: np.ndarray, edge_filter: EdgeFilter) -> tuple[Pairs, EdgeSet]:
        """Allowed relations evidenced in the given chunks: ``(chunk, relation)`` pairs and the relations."""
        ...

    def relation_chunks(self, relation_ids: np.ndarray) -> Pairs:
        """Evidence: ``(relation, chunk)`` pairs for the given relations."""
        ...

    # ---------------------------------------------------------------- records
    def entities(self, ids: np.ndarray) -> list[Entity | None]: ...

    def relations(self, ids: np.ndarray) -> list[Relation | None]: ...

    def chunks(self, ids: np.ndarray) -> list[Chunk | None]: ...

    def chunk_handles(self, chunk_ids: Sequence[str]) -> dict[str, int]:
        """Handles of chunks by their ids."""
        ...

    # ---------------------------------------------------------------- communities
    def communities_for(self, entity_ids: np.ndarray, level: int | None = None) -> list[tuple[str, int]]:
        """Communities holding the given entities — at ``level``, or each entity's finest when ``None`` — with
        how many of the entities each holds, most first (then by id). Empty when the index has none."""
        ...

    def community_records(self, ids: Sequence[str]) -> list[Any]:
        """The :class:`~kg_rag.communities.Community` records (``None`` for unknown ids)."""
        ...

    def list_communities(self, level: int | None = None) -> list[Any]:
        """Every community at ``level`` (all levels when ``None``), by level then id (for global search)."""
        ...

    def iter_chunks(self) -> Iterator[tuple[int, Chunk]]:
        """Every chunk with its handle (a full scan: for evaluation and maintenance, never on the query path)."""
        ...


class GraphStore(Protocol):
    """A place an index lives: saved and loaded whole, edited document by document, and queried.

    Implemented by :class:`~kg_rag.store.directory.DirectoryStore` and
    :class:`~kg_rag.store.postgres.PostgresStore`; :mod:`kg_rag.testing` checks both the same way.
    """

    def exists(self) -> bool: ...

    def writing(self, wait: float | None = None) -> AbstractContextManager[Any]:
        """Hold the writer lock for a whole read–modify–write (re-entrant; ``save`` inside does not wait)."""
        ...

    def replace_documents(
        self, fragment: Any, embeddings: Any, *, report: Any = None, wait: float | None = None
    ) -> dict:
        """Add the documents of a :class:`~kg_rag.model.graph.KnowledgeGraph` fragment, replacing stored
        versions, atomically (see :mod:`kg_rag.store.writes`)."""
        ...

    def delete_documents(self, doc_ids: Sequence[str], embeddings: Any, *, wait: float | None = None) -> dict:
        """Remove documents and everything they contributed, atomically."""
        ...

    def documents(self) -> list[dict[str, Any]]:
        """The stored documents' records (``id``, ``source``, ``content_hash``, ..., ``chunks``)."""
        ...

    def stats(self) -> dict[str, Any]: ...

    def save(self, index: Any) -> None:
        """Replace the stored index with ``index`` (a :class:`~kg_rag.index.build.GraphIndex`)."""
        ...

    def load(self) -> Any:
        """The stored index as an editable :class:`~kg_rag.index.build.GraphIndex`."""
        ...

    def backend(self) -> QueryBackend:
        """A read-only view for queries."""
        ...
