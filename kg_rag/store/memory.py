"""The in-process backend: :class:`~kg_rag.store.base.QueryBackend` over a :class:`~kg_rag.index.snapshot.Snapshot`
(numpy / SciPy arrays and FAISS), used for directory indexes and for graphs built in code.

:class:`SnapshotBackend` serves one immutable snapshot. :class:`LiveBackend` follows an editable
:class:`~kg_rag.index.build.GraphIndex`: after the graph is edited, the next query re-embeds only new text,
builds a fresh snapshot and swaps it in atomically, so a query always reads one version.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from kg_rag.arrays import unique_first, unique_ints
from kg_rag.errors import InputError
from kg_rag.index.build import GraphIndex, chunk_text
from kg_rag.index.lexical import BM25Index, tokenize
from kg_rag.index.meta import IndexMeta
from kg_rag.index.snapshot import CompiledGraph, Snapshot, csr_gather
from kg_rag.index.vectors import VectorTable
from kg_rag.model.records import Chunk, Entity, Relation
from kg_rag.store.base import (
    BackendInfo,
    EdgeFilter,
    EdgeSet,
    Expansion,
    Hits,
    Pairs,
    QueryBackend,
    TermScorer,
    VectorKind,
    VersionedBackend,
    count_communities,
)

logger = logging.getLogger(__name__)

I64 = np.int64


def _ids(values: Any) -> np.ndarray:
    return np.asarray(values, dtype=I64).reshape(-1)


def _top_hits(scores: np.ndarray, k: int) -> Hits:
    """The ``k`` best chunks of an every-chunk score array (positive scores only; ties by handle)."""
    positive = np.flatnonzero(scores > 0)
    if k <= 0 or positive.size == 0:
        return Hits.empty()
    kk = min(k, positive.size)
    part = positive[np.argpartition(-scores[positive], kk - 1)[:kk]] if kk < positive.size else positive
    order = part[np.lexsort((part, -scores[part]))]
    return Hits(order.astype(I64), scores[order].astype(np.float32))


def _scores_of(scores: np.ndarray, chunk_ids: Any) -> np.ndarray:
    """The given chunks' entries of an every-chunk score array (0 for unknown handles)."""
    ids = _ids(chunk_ids)
    out = np.zeros(ids.size, dtype=np.float32)
    ok = (ids >= 0) & (ids < scores.size)
    out[ok] = scores[ids[ok]]
    return out


class SnapshotBackend(QueryBackend):
    """Serves queries from one snapshot; immutable, so every view is the backend itself."""

    in_process = True

    def __init__(self, snapshot: Snapshot) -> None:
        snapshot.check()
        self.snapshot = snapshot
        self.cg: CompiledGraph = snapshot.graph
        self._lock = threading.Lock()
        self._lexical_cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._scopes: OrderedDict[Any, np.ndarray] = OrderedDict()
        self._edge_fact: np.ndarray | None = None
        self._info: BackendInfo | None = None
        self._query = threading.local()

    # ------------------------------------------------------------------ lifecycle
    def info(self) -> BackendInfo:
        if self._info is None:
            self._info = self._make_info()
        return self._info

    def _make_info(self) -> BackendInfo:
        cg, s = self.cg, self.snapshot
        cs = s.communities
        meta = IndexMeta(
            schema_version=0,
            embedding_model=s.embedding_model,
            dim=s.dim,
            type_prefix=s.type_prefix,
            chunks=cg.n_chunks,
            documents=s.documents,
            entities=cg.n_nodes,
            relations=int((~cg.is_synonym).sum()),
            synonym_links=int(cg.is_synonym.sum()),
            relation_types={cg.type_names[i]: int(n) for i, n in enumerate(cg.type_counts) if n},
            communities=len(cs) if cs is not None else None,
            community_levels=tuple(cs.levels) if cs is not None else (),
            version=s.version,
        )
        return meta.info(**s.extra)

    def warm_up(self) -> None:
        """Build the FAISS indexes and the chunks' BM25 now, so the first query is not the slow one (BM25 is
        built from every chunk's text, which a first query otherwise spent in its candidates stage)."""
        for table in (self.snapshot.entities, self.snapshot.facts, self.snapshot.chunks):
            if len(table):
                table.faiss_index()
        if self.cg.n_chunks:
            self._bm25()

    # ------------------------------------------------------------------ vectors
    def _table(self, kind: VectorKind) -> VectorTable:
        if kind not in ("entities", "facts", "chunks"):
            raise InputError(f"unknown vector table {kind!r}")
        return getattr(self.snapshot, kind)

    def search(self, kind: VectorKind, query: np.ndarray, k: int, min_score: float | None = None) -> Hits:
        table = self._table(kind)
        if k <= 0 or not len(table):
            return Hits.empty()
        q = np.asarray(query, np.float32).reshape(1, -1)
        probe = min(k + 1, len(table))
        scores, rows = table.search(q, probe)
        scores, rows = scores[0], rows[0]
        if probe > k and table.exact and rows[k] >= 0 and scores[k - 1] == scores[k]:
            # a tie straddles the cut: which tied rows make it is decided by handle, as in every backend
            scores = np.asarray(table.vectors @ q[0], dtype=np.float32)
            rows = np.arange(len(table), dtype=I64)
        keep = rows >= 0
        if min_score is not None:
            keep &= scores >= min_score
        rows, scores = rows[keep].astype(I64), scores[keep].astype(np.float32)
        if kind == "facts":
            rows = self.cg.fact_edge[rows]
            ok = rows >= 0
            rows, scores = rows[ok], scores[ok]
        order = np.lexsort((rows, -scores))[:k]  # best first; ties by handle
        return Hits(rows[order], scores[order])

    def _fact_rows(self, edges: np.ndarray) -> np.ndarray:
        if self._edge_fact is None:
            inverse = np.full(self.cg.n_edges, -1, dtype=I64)
            fe = self.cg.fact_edge
            valid = fe >= 0
            inverse[fe[valid]] = np.flatnonzero(valid)
            self._edge_fact = inverse
        out = np.full(edges.size, -1, dtype=I64)
        ok = (edges >= 0) & (edges < self.cg.n_edges)
        out[ok] = self._edge_fact[edges[ok]]
        return out

    def similarity(self, kind: VectorKind, query: np.ndarray, ids: np.ndarray) -> np.ndarray:
        table = self._table(kind)
        ids = _ids(ids)
        rows = self._fact_rows(ids) if kind == "facts" else ids
        out = np.zeros(ids.size, dtype=np.float32)
        ok = (rows >= 0) & (rows < len(table))
        if not ok.any():
            return out
        valid = rows[ok]
        order = np.argsort(valid, kind="stable")  # sorted reads are kinder to row-read vectors
        vals = np.empty(valid.size, dtype=np.float32)
        q = np.asarray(query, np.float32).reshape(-1)
        vals[order] = np.asarray(table.vectors[valid[order]] @ q, dtype=np.float32)
        out[ok] = vals
        return out

    # ------------------------------------------------------------------ lexical
    def _bm25(self) -> BM25Index:
        cg = self.cg
        bm = cg.derived.get("bm25")
        if bm is None:
            with cg.derived_lock:
                bm = cg.derived.get("bm25")
                if bm is None:
                    texts = [""] * cg.n_chunks
                    for row, chunk in self.iter_chunks():
                        texts[row] = chunk_text(chunk)
                    bm = BM25Index(texts)
                    cg.derived["bm25"] = bm
        return bm

    def _lexical_all(self, text: str) -> np.ndarray:
        with self._lock:
            hit = self._lexical_cache.get(text)
            if hit is not None:
                self._lexical_cache.move_to_end(text)
                return hit
        scores = self._bm25().scores(text) if self.cg.n_chunks else np.zeros(0, np.float32)
        with self._lock:
            self._lexical_cache[text] = scores
            while len(self._lexical_cache) > 32:
                self._lexical_cache.popitem(last=False)
        return scores

    def lexical_search(self, text: str, k: int) -> Hits:
        return _top_hits(self._lexical_all(text), k)

    def lexical_scores(self, text: str, chunk_ids: np.ndarray) -> np.ndarray:
        return _scores_of(self._lexical_all(text), chunk_ids)

    def term_scorer(self, words: Sequence[str]) -> TermScorer:
        return ColumnScorer(self, self._bm25(), words) if self.cg.n_chunks else TermScorer(self)

    def lookup_entities(self, keys: Sequence[str]) -> dict[str, int]:
        lookup, aliases = self.cg.name_lookup, self.snapshot.aliases
        out = {k: lookup[k] for k in keys if k in lookup}
        if aliases and len(out) < len(keys):  # a name merged into another entity finds that one
            out.update({k: lookup[aliases[k]] for k in keys if k not in out and aliases.get(k) in lookup})
        return out

    # ------------------------------------------------------------------ graph
    def _allowed(self, edge_filter: EdgeFilter) -> np.ndarray:
        mask = self.cg.type_mask(edge_filter.types, edge_filter.exclude_types, edge_filter.synonyms)
        if edge_filter.relations is None:
            return mask
        only = np.zeros(self.cg.n_edges, dtype=bool)
        ids = np.fromiter(edge_filter.relations, dtype=I64, count=len(edge_filter.relations))
        only[ids[(ids >= 0) & (ids < self.cg.n_edges)]] = True
        return mask & only

    def _blocked(self, edge_filter: EdgeFilter) -> np.ndarray | None:
        if not edge_filter.blocked:
            return None
        blocked = np.zeros(self.cg.n_nodes, dtype=bool)
        ids = _ids(sorted(edge_filter.blocked))
        blocked[ids[(ids >= 0) & (ids < self.cg.n_nodes)]] = True
        return blocked

    def _edge_set(self, edges: np.ndarray) -> EdgeSet:
        cg = self.cg
        return EdgeSet(
            edges.astype(I64),
            cg.src[edges],
            cg.dst[edges],
            cg.type_id[edges],
            cg.weight[edges],
            cg.is_synonym[edges],
            cg.type_names,
        )

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
        cg = self.cg
        boost = None
        if prefer and prefer_weight > 0:
            per_type = np.ones(len(cg.type_names), dtype=np.float32)
            for t in prefer:
                if t in cg.type_index:
                    per_type[cg.type_index[t]] = 1.0 + prefer_weight
            boost = per_type
        n = cg.n_nodes
        mask = self._allowed(edge_filter)
        blocked = self._blocked(edge_filter)
        direction = edge_filter.direction
        hop = np.full(n, -1, dtype=np.int32)
        parent = np.full(n, -1, dtype=I64)
        forward = np.zeros(n, dtype=bool)
        score = np.zeros(n, dtype=np.float32)
        valid = {int(k): float(v) for k, v in seeds.items() if 0 <= int(k) < n}
        if blocked is not None:
            valid = {k: v for k, v in valid.items() if not blocked[k]}
        frontier = _ids(list(valid))
        if frontier.size:
            hop[frontier] = 0
            score[frontier] = np.asarray(list(valid.values()), dtype=np.float32)
        for h in range(1, max_hops + 1):
            if frontier.size == 0:
                break
            degree = np.zeros(frontier.size, dtype=I64)
            if direction != "in":
                degree += cg.out_indptr[frontier + 1] - cg.out_indptr[frontier]
            if direction != "out":
                degree += cg.in_indptr[frontier + 1] - cg.in_indptr[frontier]
            if int(degree.sum()) > max_edges_per_hop:
                by_score = np.lexsort((frontier, -score[frontier]))
                within = np.cumsum(degree[by_score]) <= max_edges_per_hop
                within[0] = True
                frontier = frontier[by_score[within]]
            parts = []
            if direction in ("out", "both"):
                e, owner = csr_gather(cg.out_indptr, cg.out_edges, frontier)
                parts.append((e, owner, cg.dst[e], np.ones(e.size, dtype=bool)))
            if direction in ("in", "both"):
                e, owner = csr_gather(cg.in_indptr, cg.in_edges, frontier)
                parts.append((e, owner, cg.src[e], np.zeros(e.size, dtype=bool)))
            edges = np.concatenate([p[0] for p in parts])
            owners = np.concatenate([p[1] for p in parts])
            nbrs = np.concatenate([p[2] for p in parts])
            fwd = np.concatenate([p[3] for p in parts])
            keep = mask[edges] & (hop[nbrs] < 0)
            if blocked is not None:
                keep &= ~blocked[nbrs]
            edges, owners, nbrs, fwd = edges[keep], owners[keep], nbrs[keep], fwd[keep]
            if edges.size == 0:
                break
            cand = score[owners] * decay
            if boost is not None:
                cand = cand * boost[cg.type_id[edges]]
            # best parent per node: highest score, then an edge walked forward, then the lowest edge handle (the
            # same rule every backend applies, so ties never depend on storage order)
            order = np.lexsort((edges, ~fwd, -cand))
            uniq, first = unique_first(nbrs[order])
            best = order[first]
            if uniq.size > max_frontier:
                keep_best = np.lexsort((uniq, -cand[best]))[:max_frontier]
                uniq, best = uniq[keep_best], best[keep_best]
            hop[uniq] = h
            parent[uniq] = edges[best]
            forward[uniq] = fwd[best]
            score[uniq] = cand[best]
            frontier = uniq
        nodes = np.flatnonzero(hop >= 0).astype(I64)
        return Expansion(nodes, hop[nodes], score[nodes], parent[nodes], forward[nodes])

    def edges_of(self, entity_ids: np.ndarray, edge_filter: EdgeFilter, *, among: bool = False) -> EdgeSet:
        cg = self.cg
        ids = _ids(entity_ids)
        ids = unique_ints(ids[(ids >= 0) & (ids < cg.n_nodes)])
        if ids.size == 0:
            return EdgeSet.empty(cg.type_names)
        e_out, _ = csr_gather(cg.out_indptr, cg.out_edges, ids)
        e_in, _ = csr_gather(cg.in_indptr, cg.in_edges, ids)
        edges = unique_ints(np.concatenate([e_out, e_in]))
        edges = edges[self._allowed(edge_filter)[edges]]
        blocked = self._blocked(edge_filter)
        if blocked is not None:
            edges = edges[~blocked[cg.src[edges]] & ~blocked[cg.dst[edges]]]
        if among:
            member = np.zeros(cg.n_nodes, dtype=bool)
            member[ids] = True
            edges = edges[member[cg.src[edges]] & member[cg.dst[edges]]]
        return self._edge_set(edges)

    def edges_by_id(self, relation_ids: np.ndarray) -> EdgeSet:
        ids = _ids(relation_ids)
        return self._edge_set(ids[(ids >= 0) & (ids < self.cg.n_edges)])

    def chunk_entities(self, chunk_ids: np.ndarray) -> Pairs:
        ids = _ids(chunk_ids)
        ids = ids[(ids >= 0) & (ids < self.cg.n_chunks)]
        m = self.cg.chunk_entities
        ents, owner = csr_gather(m.indptr, m.indices, ids)
        return Pairs(owner.astype(I64), ents.astype(I64))

    def entity_chunks(self, entity_ids: np.ndarray) -> Pairs:
        ids = _ids(entity_ids)
        ids = ids[(ids >= 0) & (ids < self.cg.n_nodes)]
        m = self.cg.incidence
        chunks, owner = csr_gather(m.indptr, m.indices, ids)
        return Pairs(owner.astype(I64), chunks.astype(I64))

    def names(self, entity_ids: np.ndarray) -> list[str | None]:
        names, n = self.cg.names, self.cg.n_nodes
        return [names[i] if 0 <= i < n else None for i in _ids(entity_ids).tolist()]

    def labels(self, entity_ids: np.ndarray) -> list[tuple[str, str] | None]:
        keys, names, n = self.cg.node_ids, self.cg.names, self.cg.n_nodes
        return [(keys[i], names[i]) if 0 <= i < n else None for i in _ids(entity_ids).tolist()]

    def mention_counts(self, entity_ids: np.ndarray) -> np.ndarray:
        ids = _ids(entity_ids)
        out = np.zeros(ids.size, dtype=np.float32)
        ok = (ids >= 0) & (ids < self.cg.n_nodes)
        out[ok] = self.cg.chunks_per_entity[ids[ok]]
        return out

    def degrees(self, entity_ids: np.ndarray) -> np.ndarray:
        ids = _ids(entity_ids)
        out = np.zeros(ids.size, dtype=I64)
        ok = (ids >= 0) & (ids < self.cg.n_nodes)
        out[ok] = self.cg.degree[ids[ok]]
        return out

    def chunk_relations(self, chunk_ids: np.ndarray, edge_filter: EdgeFilter) -> tuple[Pairs, EdgeSet]:
        cg = self.cg
        ids = _ids(chunk_ids)
        ids = ids[(ids >= 0) & (ids < cg.n_chunks)]
        m = cg.chunk_edges
        edges, owner = csr_gather(m.indptr, m.indices, ids)
        keep = self._allowed(edge_filter)[edges] if edges.size else np.zeros(0, bool)
        blocked = self._blocked(edge_filter)
        if blocked is not None and edges.size:
            keep &= ~blocked[cg.src[edges]] & ~blocked[cg.dst[edges]]
        edges, owner = edges[keep].astype(I64), owner[keep].astype(I64)
        return Pairs(owner, edges), self._edge_set(unique_ints(edges))

    def relation_chunks(self, relation_ids: np.ndarray) -> Pairs:
        ids = _ids(relation_ids)
        ids = ids[(ids >= 0) & (ids < self.cg.n_edges)]
        m = self.cg.edge_chunks
        chunks, owner = csr_gather(m.indptr, m.indices, ids)
        return Pairs(owner.astype(I64), chunks.astype(I64))

    # ------------------------------------------------------------------ records
    @contextmanager
    def query_view(self) -> Iterator[SnapshotBackend]:
        """This backend as one query's view: the records it decodes are kept until the query ends (a query
        reads the same entity several times — for its rows, its paths, the entities shown). Per thread, so
        concurrent queries never share a memo; nested views share the outer one."""
        outer = getattr(self._query, "records", None)
        if outer is None:
            self._query.records = {"entities": {}, "relations": {}, "chunks": {}}
        try:
            yield self
        finally:
            if outer is None:
                self._query.records = None

    def _records(self, kind: str, ids: np.ndarray, count: int, read: Any) -> list[Any]:
        handles = _ids(ids).tolist()
        memo = getattr(self._query, "records", None)
        if memo is None:
            return [read(i) if 0 <= i < count else None for i in handles]
        seen = memo[kind]
        out = []
        for i in handles:
            if i not in seen:
                seen[i] = read(i) if 0 <= i < count else None
            out.append(seen[i])
        return out

    def entities(self, ids: np.ndarray) -> list[Entity | None]:
        return self._records("entities", ids, self.cg.n_nodes, self.snapshot.records.entity)

    def relations(self, ids: np.ndarray) -> list[Relation | None]:
        return self._records("relations", ids, self.cg.n_edges, self.snapshot.records.relation)

    def chunks(self, ids: np.ndarray) -> list[Chunk | None]:
        return self._records("chunks", ids, self.cg.n_chunks, self.snapshot.records.chunk)

    # ------------------------------------------------------------------ communities
    def _community_index(self) -> dict[str, list[tuple[int, str]]]:
        cached = self.cg.derived.get("communities")
        cs = self.snapshot.communities
        if cached is None or cached[0] is not cs:
            by_key: dict[str, list[tuple[int, str]]] = {}
            for c in cs or ():
                for key in c.entities:
                    by_key.setdefault(key, []).append((c.level, c.id))
            cached = (cs, {k: sorted(v) for k, v in by_key.items()})
            self.cg.derived["communities"] = cached
        return cached[1]

    def communities_for(self, entity_ids: np.ndarray, level: int | None = None) -> list[tuple[str, int]]:
        index = self._community_index()
        if not index:
            return []
        n = self.cg.n_nodes
        handles = [h for h in dict.fromkeys(int(i) for i in _ids(entity_ids)) if 0 <= h < n]
        return count_communities((index.get(self.cg.node_ids[h]) or [] for h in handles), level)

    def community_records(self, ids: Sequence[str]) -> list[Any]:
        cs = self.snapshot.communities
        if cs is None:
            return [None for _ in ids]
        return [cs.communities.get(str(i)) for i in ids]

    def list_communities(self, level: int | None = None) -> list[Any]:
        cs = self.snapshot.communities
        if cs is None:
            return []
        return sorted((c for c in cs if level is None or c.level == level), key=lambda c: (c.level, c.id))

    def chunk_handles(self, chunk_ids: Sequence[str]) -> dict[str, int]:
        lookup = self.cg.chunk_lookup
        return {c: lookup[c] for c in chunk_ids if c in lookup}

    def matching_chunks(self, doc_filter: Any) -> np.ndarray:
        """The scan of the chunk records, kept for the last 32 filters (a snapshot never changes)."""
        with self._lock:
            found = self._scopes.get(doc_filter)
            if found is not None:
                self._scopes.move_to_end(doc_filter)
                return found
        found = super().matching_chunks(doc_filter)
        with self._lock:
            self._scopes[doc_filter] = found
            while len(self._scopes) > 32:
                self._scopes.popitem(last=False)
        return found

    def iter_chunks(self) -> Iterator[tuple[int, Chunk]]:
        for row in range(self.cg.n_chunks):
            chunk = self.snapshot.records.chunk(row)
            if chunk is not None:
                yield row, chunk


class ColumnScorer(TermScorer):
    """:class:`TermScorer` over the question's columns of the in-process BM25 matrix, sliced once a query: the
    question and each part of it is one sparse product over those columns, and a chunk's words are one binary
    search, with no record read. Scores are those of :meth:`BM25Index.scores` to the bit: the product runs over
    the columns in the question's order, and a word of the question not in the part only adds zeros (a text
    whose words come in another order, or with other words, is scored as any text is)."""

    def __init__(self, view: SnapshotBackend, bm: BM25Index, words: Sequence[str]) -> None:
        super().__init__(view)
        self.bm = bm
        self.words = [w for w in dict.fromkeys(words) if w in bm.vocab]
        self.column = {w: j for j, w in enumerate(self.words)}
        cols = np.asarray([bm.vocab[w] for w in self.words], dtype=I64)
        self.matrix = bm.matrix[:, cols]  # each column's chunks ascending, as in the index's matrix
        self.idf = bm.idf[cols]
        # chunk c holds word j when c + j * n is among the keys (each column's chunks shifted by j * n)
        n = self.matrix.shape[0]
        self.shift = np.arange(len(self.words), dtype=I64) * n
        self.keys = self.matrix.indices.astype(I64) + np.repeat(self.shift, np.diff(self.matrix.indptr))
        self._all: dict[str, np.ndarray] = {}

    def _scores(self, text: str) -> np.ndarray:
        hit = self._all.get(text)
        if hit is None:
            counts: dict[int, int] = {}
            for t in tokenize(text):
                j = self.column.get(t, -1 if t in self.bm.vocab else None)
                if j is not None:
                    counts[j] = counts.get(j, 0) + 1
            order = list(counts)
            if -1 in counts or order != sorted(order):  # another word, or the question's in another order: the
                hit = self.bm.scores(text)  # sum would run in another order (float32 may differ in the last bit)
            else:
                q = np.zeros(len(self.words), dtype=np.float32)
                cols = np.fromiter(counts.keys(), dtype=I64, count=len(counts))
                q[cols] = self.idf[cols] * np.fromiter(counts.values(), dtype=np.float32, count=len(counts))
                hit = np.asarray(self.matrix @ q).ravel() if counts else np.zeros(self.matrix.shape[0], np.float32)
            self._all[text] = hit
        return hit

    def search(self, text: str, k: int) -> Hits:
        return _top_hits(self._scores(text), k)

    def scores(self, text: str, chunk_ids: np.ndarray) -> np.ndarray:
        return _scores_of(self._scores(text), chunk_ids)

    def best(self, text: str) -> float:
        scores = self._scores(text)
        top = float(scores.max()) if scores.size else 0.0
        return top if top > 0 else 0.0

    def words_in(self, chunk_id: int) -> set[str]:
        if not self.keys.size:
            return set()
        wanted = self.shift + int(chunk_id)
        at = np.minimum(np.searchsorted(self.keys, wanted), self.keys.size - 1)
        return {self.words[j] for j in np.flatnonzero(self.keys[at] == wanted).tolist()}


class LiveBackend(VersionedBackend):
    """Queries an editable :class:`GraphIndex`; graph edits are picked up by the next query.

    ``embeddings`` embeds the text that edits add (unchanged text comes from the index's cache).
    """

    def __init__(self, index: GraphIndex, embeddings: Any) -> None:
        self._embeddings = embeddings
        self._lock = threading.Lock()
        self._index = index
        self._current = SnapshotBackend(Snapshot.from_index(index))

    @property
    def index(self) -> GraphIndex:
        self.current()
        return self._index

    def current(self) -> SnapshotBackend:
        """The backend of the current graph version (rebuilt once, under a lock, after an edit)."""
        if not self._index.stale:
            return self._current
        with self._lock:
            if self._index.stale:
                logger.info("graph changed: refreshing the query snapshot")
                fresh = self._index.refresh(self._embeddings)
                backend = SnapshotBackend(Snapshot.from_index(fresh))
                self._index, self._current = fresh, backend
            return self._current

    @contextmanager
    def reader(self) -> Iterator[SnapshotBackend]:
        with self.current().query_view() as view:
            yield view

    def warm_up(self) -> None:
        self.current().warm_up()

    def knowledge_graph(self) -> Any:
        """The editable graph itself: edits to it are picked up by the next query."""
        return self.index.kg

    def to_index(self) -> GraphIndex:
        return self.index


class StoreBackend(VersionedBackend):
    """The default query backend of a store (:meth:`GraphStore.backend`): its loaded index, served by the
    in-process reference backend; loaded again when the store's ``version`` changes (on every read when the store
    cannot tell, so a reader always sees the last committed write)."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._version: str | None = None
        self._current: SnapshotBackend | None = None

    def current(self) -> SnapshotBackend:
        version = self._store.version
        with self._lock:
            if self._current is None or not version or version != self._version:
                index = self._store.load()
                self._current = SnapshotBackend(Snapshot.from_index(index, version=version))
                self._version = version
            return self._current

    @contextmanager
    def reader(self) -> Iterator[SnapshotBackend]:
        with self.current().query_view() as view:
            yield view

    def refresh(self) -> bool:
        version = self._store.version
        if not version or version == self._version:
            return False
        self.current()
        return True
