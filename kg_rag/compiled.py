"""Compact query-time structures derived from a :class:`GraphIndex`.

NetworkX stays the editable model; querying uses numpy arrays: edge lists with CSR offsets by source and by
target (so predecessors and successors are both one slice away), a sparse entity x chunk incidence matrix,
and relation-type ids. Everything here is rebuilt when the index changes and never mutated afterwards, so a
compiled graph can be shared by concurrent queries without locks.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import scipy.sparse as sp

from kg_rag.graph import SYNONYM_KIND
from kg_rag.index import GraphIndex
from kg_rag.schema import RELATED, canonical_key, upper_snake

logger = logging.getLogger(__name__)


def csr_gather(indptr: np.ndarray, data: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate ``data[indptr[r]:indptr[r+1]]`` for every ``r`` in ``rows`` without a Python loop.

    Returns ``(values, owner_row)``.
    """
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
    """Array form of the graph, aligned with the index's entity and chunk vector rows."""

    def __init__(self, index: GraphIndex) -> None:
        kg = index.kg
        with kg._lock:
            self.node_ids: list[str] = list(index.entities.ids)
            pos = index.entities.position
            self.names = [kg.graph.nodes[k]["name"] if k in kg.graph else k for k in self.node_ids]
            self.types = [kg.graph.nodes[k]["entity_type"] if k in kg.graph else "" for k in self.node_ids]
            self.chunk_ids: list[str] = list(index.chunks.ids) if len(index.chunks) else list(kg.chunks)
            cpos = {c: i for i, c in enumerate(self.chunk_ids)}
            type_names: dict[str, int] = {}
            src, dst, tid, weight, syn, rel_ids = [], [], [], [], [], []
            for u, v, key, attrs in kg.graph.edges(keys=True, data=True):
                if u not in pos or v not in pos:
                    continue
                rtype = attrs.get("relation_type", RELATED)
                src.append(pos[u])
                dst.append(pos[v])
                tid.append(type_names.setdefault(rtype, len(type_names)))
                is_syn = attrs.get("kind") == SYNONYM_KIND
                syn.append(is_syn)
                weight.append(
                    1.0 if is_syn else float(sum(e.get("weight", 1.0) for e in attrs.get("evidence", ())) or 1.0)
                )
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
        self._set_arrays(
            src=np.asarray(src, dtype=np.int64),
            dst=np.asarray(dst, dtype=np.int64),
            type_id=np.asarray(tid, dtype=np.int32),
            weight=np.asarray(weight, dtype=np.float32),
            is_synonym=np.asarray(syn, dtype=bool),
            incidence_rows=np.asarray(rows, dtype=np.int64),
            incidence_cols=np.asarray(cols, dtype=np.int64),
            fact_edge=np.asarray([edge_position.get(r, -1) for r in index.facts.ids], dtype=np.int64),
        )
        self.relation_ids = rel_ids
        self.type_names = list(type_names)
        self._finish()

    # arrays that fully describe a compiled graph (saved beside the index so loading skips the Python loops)
    ARRAYS = ("src", "dst", "type_id", "weight", "is_synonym", "incidence_rows", "incidence_cols", "fact_edge")
    LISTS = ("node_ids", "names", "types", "chunk_ids", "relation_ids", "type_names")

    def _set_arrays(self, **arrays: np.ndarray) -> None:
        for name, value in arrays.items():
            setattr(self, name, value)

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], lists: dict[str, list[str]]) -> CompiledGraph:
        """Rebuild from :meth:`to_arrays` output; raises ``ValueError`` when the pieces do not fit together."""
        self = cls.__new__(cls)
        missing = [k for k in cls.ARRAYS if k not in arrays] + [k for k in cls.LISTS if k not in lists]
        if missing:
            raise ValueError(f"compiled graph is missing {', '.join(missing)}")
        self._set_arrays(**{k: np.asarray(arrays[k]) for k in cls.ARRAYS})
        for k in cls.LISTS:
            setattr(self, k, [str(x) for x in lists[k]])
        n, m = len(self.node_ids), len(self.relation_ids)
        if not (len(self.src) == len(self.dst) == len(self.type_id) == len(self.weight) == len(self.is_synonym) == m):
            raise ValueError("compiled edge arrays have different lengths")
        if len(self.names) != n or len(self.types) != n:
            raise ValueError("compiled node lists have different lengths")
        if m and (self.src.max() >= n or self.dst.max() >= n or self.src.min() < 0 or self.dst.min() < 0):
            raise ValueError("compiled edges refer to nodes that do not exist")
        if m and (self.type_id.max() >= len(self.type_names) or self.type_id.min() < 0):
            raise ValueError("compiled edges refer to relation types that do not exist")
        if self.incidence_rows.size and (
            self.incidence_rows.max() >= n or self.incidence_cols.max() >= len(self.chunk_ids)
        ):
            raise ValueError("compiled incidence refers to rows that do not exist")
        if self.fact_edge.size and self.fact_edge.max() >= m:
            raise ValueError("compiled fact map refers to edges that do not exist")
        self._finish()
        return self

    def to_arrays(self) -> tuple[dict[str, np.ndarray], dict[str, list[str]]]:
        return {k: getattr(self, k) for k in self.ARRAYS}, {k: list(getattr(self, k)) for k in self.LISTS}

    def _finish(self) -> None:
        """Derive the query structures (CSR offsets, incidence matrices, lookups) from the stored arrays."""
        n, c = len(self.node_ids), len(self.chunk_ids)
        self.n_nodes, self.n_chunks = n, c
        self.type_index = {t: i for i, t in enumerate(self.type_names)}
        self.n_edges = len(self.relation_ids)
        # CSR by source (successors) and by target (predecessors): values are edge positions
        self.out_edges = np.argsort(self.src, kind="stable")
        self.out_indptr = np.searchsorted(self.src[self.out_edges], np.arange(n + 1))
        self.in_edges = np.argsort(self.dst, kind="stable")
        self.in_indptr = np.searchsorted(self.dst[self.in_edges], np.arange(n + 1))
        self.degree = np.diff(self.out_indptr) + np.diff(self.in_indptr)
        self.incidence = sp.csr_matrix(
            (np.ones(self.incidence_rows.size, dtype=np.float32), (self.incidence_rows, self.incidence_cols)),
            shape=(n, c),
        )
        self.incidence.sum_duplicates()
        self.incidence.data[:] = 1.0
        self.chunk_entities = self.incidence.T.tocsr()
        self.chunks_per_entity = np.diff(self.incidence.indptr).astype(np.float32)
        self.name_by_key = dict(zip(self.node_ids, self.names))
        self.name_lookup = {k: i for i, k in enumerate(self.node_ids)}
        self.max_name_tokens = max((len(k.split()) for k in self.node_ids), default=1)
        self._masks: dict[tuple, np.ndarray] = {}
        self.derived: dict[str, object] = {}
        """Per-graph caches of strategies (e.g. PPR transition matrices); dropped with the graph."""
        self.derived_lock = threading.Lock()

    # ------------------------------------------------------------------ masks
    def edge_mask(
        self, edge_types: Sequence[str] | None, exclude_edge_types: Sequence[str], use_synonyms: bool
    ) -> np.ndarray:
        """Boolean mask over edges allowed by the type allow/deny lists (cached per combination)."""
        key = (
            frozenset(map(upper_snake, edge_types)) if edge_types is not None else None,
            frozenset(map(upper_snake, exclude_edge_types)),
            use_synonyms,
        )
        mask = self._masks.get(key)
        if mask is None:
            allowed = np.ones(len(self.type_names), dtype=bool)
            if key[0] is not None:
                allowed[:] = False
                for t in key[0]:
                    if t in self.type_index:
                        allowed[self.type_index[t]] = True
            for t in key[1]:
                if t in self.type_index:
                    allowed[self.type_index[t]] = False
            mask = allowed[self.type_id] if self.n_edges else np.zeros(0, dtype=bool)
            # synonym links follow use_synonyms only: they are not a relation type users filter on
            mask = np.where(self.is_synonym, use_synonyms, mask)
            mask.setflags(write=False)
            if len(self._masks) > 64:
                self._masks.clear()
            self._masks[key] = mask
        return mask

    def lexical_matches(self, text: str) -> list[int]:
        """Entities whose canonical name occurs as a whole-word n-gram of ``text`` (dictionary lookups only)."""
        tokens = canonical_key(text).split()
        found: dict[int, None] = {}
        longest = min(self.max_name_tokens, 8)
        for size in range(longest, 0, -1):
            for start in range(0, len(tokens) - size + 1):
                gram = " ".join(tokens[start : start + size])
                idx = self.name_lookup.get(gram)
                if idx is not None and _informative(gram):
                    found.setdefault(idx)
        return list(found)


_STOP = frozenset(
    "a an the of in on at to for and or is was are were be by with from as it its this that who what which when "
    "where why how whom whose did does do has have had not no yes he she they them his her their i you we us "
    "one two also than then there here".split()
)


@lru_cache(maxsize=4096)
def _informative(gram: str) -> bool:
    """Skip n-grams that are only stop-words or too short to identify an entity."""
    words = gram.split()
    return any(w not in _STOP for w in words) and len(gram) >= 3
