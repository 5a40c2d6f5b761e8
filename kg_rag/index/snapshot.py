"""The query snapshot: one immutable view of an index that the in-process backend serves queries from.

NetworkX stays the editable model; querying uses numpy arrays (:class:`CompiledGraph`): edge lists with CSR
offsets by source and by target (successors and predecessors are one slice each), the entity x chunk mention
incidence and the relation x chunk evidence incidence as sparse matrices, and relation-type codes. A
:class:`Snapshot` bundles those arrays with the vector tables and one :class:`RecordSource` (the live graph,
or the saved record files of a directory index). Nothing in a snapshot is mutated after it is built, so
concurrent queries share it without locks.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import scipy.sparse as sp

from kg_rag.errors import InputError
from kg_rag.index.build import GraphIndex
from kg_rag.index.vectors import VectorTable
from kg_rag.model.graph import KnowledgeGraph
from kg_rag.model.names import RELATED
from kg_rag.model.records import SYNONYM_KIND, Chunk, Entity, Relation


def csr_gather(indptr: np.ndarray, data: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate ``data[indptr[r]:indptr[r+1]]`` for every ``r`` in ``rows`` without a Python loop.

    Returns ``(values, owner_row)``.
    """
    rows = np.asarray(rows, dtype=np.int64)
    if rows.size == 0:
        return data[:0], rows[:0]
    starts = indptr[rows]
    lens = indptr[rows + 1] - starts
    total = int(lens.sum())
    if total == 0:
        return data[:0], rows[:0]
    offsets = np.repeat(starts - np.concatenate(([0], np.cumsum(lens)[:-1])), lens)
    return data[offsets + np.arange(total)], np.repeat(rows, lens)


class CompiledGraph:
    """Array form of the graph, aligned with the index's entity, fact and chunk vector rows."""

    ARRAYS = (
        "src",
        "dst",
        "type_id",
        "weight",
        "is_synonym",
        "incidence_rows",
        "incidence_cols",
        "fact_edge",
        "evidence_edges",
        "evidence_chunks",
    )
    """Arrays that fully describe a compiled graph (saved beside an index so loading skips the Python loops)."""
    LISTS = ("node_ids", "names", "types", "chunk_ids", "relation_ids", "type_names")

    node_ids: list[str]
    names: list[str]
    types: list[str]
    chunk_ids: list[str]
    relation_ids: list[str]
    type_names: list[str]
    src: np.ndarray
    dst: np.ndarray
    type_id: np.ndarray
    weight: np.ndarray
    is_synonym: np.ndarray
    incidence_rows: np.ndarray
    incidence_cols: np.ndarray
    fact_edge: np.ndarray
    evidence_edges: np.ndarray
    evidence_chunks: np.ndarray

    @classmethod
    def from_index(cls, index: GraphIndex) -> CompiledGraph:
        kg = index.kg
        self = cls.__new__(cls)
        with kg.lock:
            self.node_ids = list(index.entities.ids)
            pos = index.entities.position
            self.names = [kg.graph.nodes[k]["name"] if k in kg.graph else k for k in self.node_ids]
            self.types = [kg.graph.nodes[k]["entity_type"] if k in kg.graph else "" for k in self.node_ids]
            self.chunk_ids = list(index.chunks.ids) if len(index.chunks) else list(kg.chunks)
            cpos = {c: i for i, c in enumerate(self.chunk_ids)}
            type_names: dict[str, int] = {}
            src: list[int] = []
            dst: list[int] = []
            tid: list[int] = []
            weight: list[float] = []
            syn: list[bool] = []
            rel_ids: list[str] = []
            ev_edge, ev_chunk = [], []
            for u, v, key, attrs in kg.graph.edges(keys=True, data=True):
                if u not in pos or v not in pos:
                    continue
                rtype = attrs.get("relation_type", RELATED)
                is_syn = attrs.get("kind") == SYNONYM_KIND
                evidence = attrs.get("evidence", ())
                for cid in dict.fromkeys(e.get("chunk_id") for e in evidence):
                    if cid in cpos:
                        ev_edge.append(len(rel_ids))
                        ev_chunk.append(cpos[cid])
                src.append(pos[u])
                dst.append(pos[v])
                tid.append(type_names.setdefault(rtype, len(type_names)))
                syn.append(is_syn)
                weight.append(1.0 if is_syn else float(sum(e.get("weight", 1.0) for e in evidence) or 1.0))
                rel_ids.append(key)
            rows, cols = [], []
            for k in self.node_ids:
                if k not in kg.graph:
                    continue
                for c in kg.graph.nodes[k]["chunk_ids"]:
                    if c in cpos:
                        rows.append(pos[k])
                        cols.append(cpos[c])
        edge_position = {r: i for i, r in enumerate(rel_ids)}
        self.src = np.asarray(src, dtype=np.int64)
        self.dst = np.asarray(dst, dtype=np.int64)
        self.type_id = np.asarray(tid, dtype=np.int32)
        self.weight = np.asarray(weight, dtype=np.float32)
        self.is_synonym = np.asarray(syn, dtype=bool)
        self.incidence_rows = np.asarray(rows, dtype=np.int64)
        self.incidence_cols = np.asarray(cols, dtype=np.int64)
        self.fact_edge = np.asarray([edge_position.get(r, -1) for r in index.facts.ids], dtype=np.int64)
        self.evidence_edges = np.asarray(ev_edge, dtype=np.int64)
        self.evidence_chunks = np.asarray(ev_chunk, dtype=np.int64)
        self.relation_ids = rel_ids
        self.type_names = list(type_names)
        self._finish()
        return self

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], lists: dict[str, list[str]]) -> CompiledGraph:
        """Rebuild from :meth:`to_arrays` output; raises ``ValueError`` when the pieces do not fit together."""
        self = cls.__new__(cls)
        missing = [k for k in cls.ARRAYS if k not in arrays] + [k for k in cls.LISTS if k not in lists]
        if missing:
            raise InputError(f"compiled graph is missing {', '.join(missing)}")
        for k in cls.ARRAYS:
            setattr(self, k, np.asarray(arrays[k]))
        for k in cls.LISTS:
            if not isinstance(lists[k], list):
                raise InputError(f"compiled list {k} is not a list")
            setattr(self, k, [str(x) for x in lists[k]])
        n, m, c = len(self.node_ids), len(self.relation_ids), len(self.chunk_ids)
        if not (len(self.src) == len(self.dst) == len(self.type_id) == len(self.weight) == len(self.is_synonym) == m):
            raise InputError("compiled edge arrays have different lengths")
        if len(self.names) != n or len(self.types) != n:
            raise InputError("compiled node lists have different lengths")

        def within(values: np.ndarray, limit: int) -> bool:
            return not values.size or (int(values.min()) >= 0 and int(values.max()) < limit)

        checks = {
            "edges refer to nodes that do not exist": within(self.src, n) and within(self.dst, n),
            "edges refer to relation types that do not exist": within(self.type_id, len(self.type_names)),
            "incidence refers to rows that do not exist": within(self.incidence_rows, n)
            and within(self.incidence_cols, c)
            and self.incidence_rows.size == self.incidence_cols.size,
            "fact map refers to edges that do not exist": not self.fact_edge.size or int(self.fact_edge.max()) < m,
            "evidence refers to rows that do not exist": within(self.evidence_edges, m)
            and within(self.evidence_chunks, c)
            and self.evidence_edges.size == self.evidence_chunks.size,
        }
        for problem, ok in checks.items():
            if not ok:
                raise InputError(f"compiled {problem}")
        self._finish()
        return self

    def to_arrays(self) -> tuple[dict[str, np.ndarray], dict[str, list[str]]]:
        return {k: getattr(self, k) for k in self.ARRAYS}, {k: list(getattr(self, k)) for k in self.LISTS}

    def _finish(self) -> None:
        """Derive the query structures (CSR offsets, incidence matrices, lookups) from the stored arrays."""
        n, c = len(self.node_ids), len(self.chunk_ids)
        self.n_nodes, self.n_chunks = n, c
        self.n_edges = len(self.relation_ids)
        self.type_index = {t: i for i, t in enumerate(self.type_names)}
        # CSR by source (successors) and by target (predecessors): values are edge positions
        self.out_edges = np.argsort(self.src, kind="stable")
        self.out_indptr = np.searchsorted(self.src[self.out_edges], np.arange(n + 1))
        self.in_edges = np.argsort(self.dst, kind="stable")
        self.in_indptr = np.searchsorted(self.dst[self.in_edges], np.arange(n + 1))
        self.degree = np.diff(self.out_indptr) + np.diff(self.in_indptr)
        self.incidence = _binary_csr(self.incidence_rows, self.incidence_cols, (n, c))
        self.chunk_entities = self.incidence.T.tocsr()
        self.chunks_per_entity = np.diff(self.incidence.indptr).astype(np.float32)
        self.edge_chunks = _binary_csr(self.evidence_edges, self.evidence_chunks, (self.n_edges, c))
        self.chunk_edges = self.edge_chunks.T.tocsr()
        self.name_lookup = {k: i for i, k in enumerate(self.node_ids)}
        self.chunk_lookup = {k: i for i, k in enumerate(self.chunk_ids)}
        self.type_counts = np.bincount(self.type_id[~self.is_synonym], minlength=len(self.type_names))
        self._masks: dict[tuple, np.ndarray] = {}
        self.derived: dict[Any, Any] = {}
        """Per-graph caches (e.g. BM25); dropped with the graph."""
        self.derived_lock = threading.Lock()

    def type_mask(self, types: frozenset[str] | None, exclude: frozenset[str], synonyms: bool) -> np.ndarray:
        """Boolean mask over edges allowed by a type allow/deny list (cached per combination)."""
        key = (types, exclude, synonyms)
        mask = self._masks.get(key)
        if mask is None:
            allowed = np.ones(len(self.type_names), dtype=bool)
            if types is not None:
                allowed[:] = False
                for t in types:
                    if t in self.type_index:
                        allowed[self.type_index[t]] = True
            for t in exclude:
                if t in self.type_index:
                    allowed[self.type_index[t]] = False
            mask = allowed[self.type_id] if self.n_edges else np.zeros(0, dtype=bool)
            # synonym links follow the synonym setting only: they are not a relation type users filter on
            mask = np.where(self.is_synonym, synonyms, mask)
            mask.setflags(write=False)
            if len(self._masks) > 64:
                self._masks.clear()
            self._masks[key] = mask
        return mask


def _binary_csr(rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int]) -> sp.csr_matrix:
    m = sp.csr_matrix((np.ones(rows.size, dtype=np.float32), (rows, cols)), shape=shape)
    m.sum_duplicates()
    m.data[:] = 1.0
    return m


# ------------------------------------------------------------------------------------------ records
class RecordSource(Protocol):
    """Where a snapshot reads the records of the few rows a query returns."""

    def entity(self, row: int) -> Entity | None: ...

    def relation(self, row: int) -> Relation | None: ...

    def chunk(self, row: int) -> Chunk | None: ...


class GraphRecords:
    """Records from a live :class:`KnowledgeGraph`, rows resolved through the compiled id lists.

    A record removed by a concurrent edit reads as ``None`` (the query drops it).
    """

    def __init__(self, kg: KnowledgeGraph, cg: CompiledGraph) -> None:
        self.kg, self.cg = kg, cg

    def entity(self, row: int) -> Entity | None:
        return self.kg.get_entity(self.cg.node_ids[row]) if self.cg.node_ids[row] in self.kg.graph else None

    def relation(self, row: int) -> Relation | None:
        return self.kg.get_relation(self.cg.relation_ids[row])

    def chunk(self, row: int) -> Chunk | None:
        return self.kg.chunks.get(self.cg.chunk_ids[row])


def _instance(index: GraphIndex) -> str:
    """A name for this index object, kept across its edits: versions of two graphs built in one process must
    differ (caches keyed by version served one graph's relation types to another with the same edit count)."""
    name = index.__dict__.get("_snapshot_instance")
    if name is None:
        import uuid

        name = uuid.uuid4().hex[:12]
        index.__dict__["_snapshot_instance"] = name
    return name


@dataclass
class Snapshot:
    """Everything a query reads, fixed at one version of the index."""

    graph: CompiledGraph
    entities: VectorTable
    facts: VectorTable
    chunks: VectorTable
    records: RecordSource
    embedding_model: str = ""
    type_prefix: bool = True
    version: str = ""
    documents: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
    communities: Any = None
    """The index's :class:`~kg_rag.communities.CommunitySet`, if it has one."""
    aliases: dict[str, str] = field(default_factory=dict)
    """Entity keys merged into another entity -> that entity's key (:meth:`Resolution.aliases`): a name merged
    away still finds the entity it became."""

    @classmethod
    def from_index(cls, index: GraphIndex, version: str = "") -> Snapshot:
        cg = CompiledGraph.from_index(index)
        return cls(
            cg,
            index.entities,
            index.facts,
            index.chunks,
            GraphRecords(index.kg, cg),
            index.embedding_model,
            index.type_prefix,
            version or f"memory-{_instance(index)}-{index.kg_version}",
            len(index.kg.documents()),
            communities=index.communities,
            aliases=index.report.resolution.aliases(),
        )

    def check(self) -> None:
        """Raise ``ValueError`` when the arrays and the vector tables do not describe the same rows."""
        cg = self.graph
        if cg.n_nodes != len(self.entities) or len(cg.fact_edge) != len(self.facts):
            raise InputError("compiled graph does not match the vectors")
        if len(self.chunks) and len(self.chunks) != cg.n_chunks:
            raise InputError("compiled chunk list does not match the chunk vectors")

    @property
    def dim(self) -> int:
        return max(self.entities.dim, self.facts.dim, self.chunks.dim)
