"""Query-time document filters: ``filter={"doc_id": [...]}`` or metadata equality, as LangChain vector stores
take ``filter``.

A :class:`DocumentFilter` names the documents a query may use. The query then runs on a :class:`ScopedView`:
the backend's read view restricted, primitive by primitive, to the chunks of those documents, the entities
they mention and the relations they state. Every stage reads the graph only through its view, so the filter
holds at every stage — seeds, walks, chunk candidates, relationship rows, paths — on every backend, and
nothing from another document reaches the context. Community reports summarise every document, so none is
shown under a filter.

One backend primitive does the matching (:meth:`~kg_rag.store.base.QueryBackend.matching_chunks`: a scan of
the chunk records by default, one SQL query on PostgreSQL); the rest is set arithmetic on handles.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from kg_rag.arrays import in_sorted, unique_ints
from kg_rag.errors import InputError
from kg_rag.store.base import BackendInfo, EdgeFilter, EdgeSet, Expansion, Hits, Pairs, QueryBackend, VectorKind

I64 = np.int64
Scalar = str | int | float | bool | None
_MISSING = object()


def _scalar(key: str, value: Any) -> Scalar:
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    raise InputError(f"filter[{key!r}]: values must be strings, numbers, booleans or None, got {value!r}")


def _values(key: str, want: Any) -> tuple[Scalar, ...]:
    """A key's accepted values: one value, a list of them (any of), or ``{"$eq": v}`` / ``{"$in": [...]}``."""
    if isinstance(want, Mapping):
        if len(want) != 1 or next(iter(want)) not in ("$eq", "$in"):
            raise InputError(f"filter[{key!r}]: only a value, a list of values, $eq or $in are supported, got {want!r}")
        op, want = next(iter(want.items()))
        if op == "$eq":
            return (_scalar(key, want),)
    if isinstance(want, (list, tuple, set, frozenset)):
        return tuple({_json_key(v): v for v in (_scalar(key, v) for v in want)}.values())
    return (_scalar(key, want),)


def _json_key(value: Scalar) -> tuple[bool, Scalar]:
    """A value as JSON compares it: ``True`` is not ``1`` (Python's ``==`` and ``hash`` say it is)."""
    return isinstance(value, bool), value


def _same(a: Any, b: Any) -> bool:
    """JSON equality: ``True`` is not ``1`` (as in PostgreSQL's jsonb), ``1`` is ``1.0``."""
    return _json_key(a) == _json_key(b)


@dataclass(frozen=True, eq=False)
class DocumentFilter:
    """The documents a query may use: ``doc_ids`` (``None``: any) and metadata keys that must equal one of their
    values. Chunk metadata is the document's (``source``, ``title``, ``page`` and whatever a LangChain
    ``Document`` carried into :func:`~kg_rag.indexing.plan.index_documents`)."""

    doc_ids: frozenset[str] | None = None
    metadata: tuple[tuple[str, tuple[Scalar, ...]], ...] = ()

    @classmethod
    def parse(cls, value: Any) -> DocumentFilter | None:
        """A filter from ``{"doc_id": [...], "source": "a.md", "year": {"$in": [2023, 2024]}}``; ``None`` and ``{}``
        mean no filter. Raises ``ValueError`` naming what is wrong."""
        if value is None or isinstance(value, DocumentFilter):
            return value
        if not isinstance(value, Mapping):
            raise InputError(
                "filter must be a dict such as {'doc_id': ['a.md']} or {'source': 'a.md'}, "
                f"got {type(value).__name__}"
            )
        if not value:
            return None
        doc_ids: frozenset[str] | None = None
        metadata: list[tuple[str, tuple[Scalar, ...]]] = []
        for key, want in value.items():
            if not isinstance(key, str) or not key.strip():
                raise InputError(f"filter keys must be non-empty strings, got {key!r}")
            if key.startswith("$"):
                raise InputError(f"filter: operator {key!r} is not supported; give each key a value or a list")
            values = _values(key, want)
            if key == "doc_id":
                bad = [v for v in values if not isinstance(v, str)]
                if bad:
                    raise InputError(f"filter['doc_id']: document ids are strings, got {bad[0]!r}")
                doc_ids = frozenset(values)  # type: ignore[arg-type]
            else:
                metadata.append((key, values))
        return cls(doc_ids, tuple(sorted(metadata, key=lambda kv: kv[0])))

    def _identity(self) -> tuple[Any, ...]:
        return self.doc_ids, tuple((key, tuple(map(_json_key, values))) for key, values in self.metadata)

    def __eq__(self, other: object) -> bool:
        """Equal when they select the same chunks: ``{"draft": True}`` is not ``{"draft": 1}`` (filters key the
        backends' caches)."""
        return isinstance(other, DocumentFilter) and self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(self._identity())

    def matches(self, doc_id: str, metadata: Mapping[str, Any] | None) -> bool:
        """Whether a chunk of document ``doc_id`` with this metadata passes."""
        if self.doc_ids is not None and doc_id not in self.doc_ids:
            return False
        meta = metadata or {}
        for key, values in self.metadata:
            have = meta.get(key, _MISSING)
            if have is _MISSING or not any(_same(have, v) for v in values):
                return False
        return True

    def parts(self) -> list[DocumentFilter]:
        """One filter per key (``doc_id`` first), to say which condition matches nothing."""
        ids = [] if self.doc_ids is None else [DocumentFilter(self.doc_ids)]
        return ids + [DocumentFilter(None, (kv,)) for kv in self.metadata]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {} if self.doc_ids is None else {"doc_id": sorted(self.doc_ids)}
        for key, values in self.metadata:
            out[key] = values[0] if len(values) == 1 else list(values)
        return out

    def __str__(self) -> str:
        return repr(self.to_dict())


def _sorted_unique(values: np.ndarray) -> np.ndarray:
    return unique_ints(np.asarray(values, dtype=I64))


def _within(ids: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    return in_sorted(np.asarray(ids, dtype=I64), allowed)


class ScopedView(QueryBackend):
    """A read view that shows only the chunks a :class:`DocumentFilter` allows, the entities they mention and the
    relations they state (see the module docstring). Built per query inside ``backend.reader()``."""

    EXACT_ROWS = 50_000
    """Up to this many allowed rows, a search scores every allowed row (exact); above, it searches the whole
    table for more and more hits and keeps the allowed ones."""

    def __init__(self, view: QueryBackend, doc_filter: DocumentFilter) -> None:
        self.view = view
        self.filter = doc_filter
        self.chunk_ids = _sorted_unique(view.matching_chunks(doc_filter))
        self._entity_ids: np.ndarray | None = None
        self._relation_ids: np.ndarray | None = None
        self._relation_set: frozenset[int] | None = None
        self._keys: dict[str, bool] = {}
        self._docs: set[str] | None = None

    def why_empty(self) -> str:
        """Why no chunk matches: the keys whose condition alone matches none (a misspelt key, an unknown id),
        else that no chunk meets them all together."""
        alone = [p for p in self.filter.parts() if self.view.matching_chunks(p).size == 0]
        if not alone:
            return "no chunk meets all its conditions together"
        return "no chunk has " + "; none has ".join(str(p)[1:-1] for p in alone)

    # ---------------------------------------------------------------- what the scope holds
    def _members(self) -> None:
        entities, relations = self.view.scope_members(self.chunk_ids)
        self._entity_ids, self._relation_ids = _sorted_unique(entities), _sorted_unique(relations)

    @property
    def entity_ids(self) -> np.ndarray:
        if self._entity_ids is None:
            self._members()
        return self._entity_ids  # type: ignore[return-value]

    @property
    def relation_ids(self) -> np.ndarray:
        if self._relation_ids is None:
            self._members()
        return self._relation_ids  # type: ignore[return-value]

    def _allowed(self, kind: VectorKind) -> np.ndarray:
        return {"chunks": self.chunk_ids, "entities": self.entity_ids}.get(kind, self.relation_ids)  # type: ignore[return-value]

    def _edges(self, edge_filter: EdgeFilter) -> EdgeFilter:
        """The walk filter with the scope's relations as its allow-list (intersected with one already there)."""
        if self._relation_set is None:
            self._relation_set = frozenset(self.relation_ids.tolist())
        scoped = self._relation_set
        mine = scoped if edge_filter.relations is None else scoped & edge_filter.relations
        return replace(edge_filter, relations=mine)

    @staticmethod
    def _top(ids: np.ndarray, scores: np.ndarray, k: int, min_score: float | None) -> Hits:
        keep = np.isfinite(scores) if min_score is None else np.isfinite(scores) & (scores >= min_score)
        ids, scores = ids[keep], scores[keep]
        order = np.lexsort((ids, -scores))[:k]
        return Hits(ids[order], scores[order].astype(np.float32))

    def _filtered_search(self, search: Any, allowed: np.ndarray, k: int) -> Hits:
        """Search the whole table for ``k``, 4k, 16k ... hits until ``k`` allowed ones are found (or the table is
        exhausted); ties keep the backend's order."""
        want = max(4 * k, 64)
        while True:
            hits = search(want)
            keep = _within(hits.ids, allowed)
            if int(keep.sum()) >= k or len(hits) < want:
                return Hits(hits.ids[keep][:k], hits.scores[keep][:k])
            want *= 4

    # ---------------------------------------------------------------- lifecycle
    @contextmanager
    def reader(self) -> Iterator[QueryBackend]:
        yield self

    def info(self) -> BackendInfo:
        return self.view.info()

    # ---------------------------------------------------------------- vectors and words
    def search(self, kind: VectorKind, query: np.ndarray, k: int, min_score: float | None = None) -> Hits:
        allowed = self._allowed(kind)
        if k <= 0 or allowed.size == 0:
            return Hits.empty()
        if allowed.size <= self.EXACT_ROWS:
            return self._top(allowed, self.view.similarity(kind, query, allowed).astype(np.float64), k, min_score)
        return self._filtered_search(lambda n: self.view.search(kind, query, n, min_score), allowed, k)

    def similarity(self, kind: VectorKind, query: np.ndarray, ids: np.ndarray) -> np.ndarray:
        return self.view.similarity(kind, query, ids)

    def lexical_search(self, text: str, k: int) -> Hits:
        allowed = self.chunk_ids
        if k <= 0 or allowed.size == 0:
            return Hits.empty()
        if allowed.size <= self.EXACT_ROWS:
            scores = self.view.lexical_scores(text, allowed).astype(np.float64)
            return self._top(allowed, np.where(scores > 0, scores, -np.inf), k, None)
        return self._filtered_search(lambda n: self.view.lexical_search(text, n), allowed, k)

    def lexical_scores(self, text: str, chunk_ids: np.ndarray) -> np.ndarray:
        return self.view.lexical_scores(text, chunk_ids)

    def lookup_entities(self, keys: Sequence[str]) -> dict[str, int]:
        found = self.view.lookup_entities(keys)
        if not found:
            return found
        keep = _within(np.fromiter(found.values(), dtype=I64, count=len(found)), self.entity_ids)
        return {k: h for (k, h), ok in zip(found.items(), keep.tolist()) if ok}

    def matching_chunks(self, doc_filter: Any) -> np.ndarray:
        inner = self.view.matching_chunks(doc_filter)
        return inner[_within(inner, self.chunk_ids)]

    # ---------------------------------------------------------------- graph
    def expand(self, seeds: Mapping[int, float], max_hops: int, edge_filter: EdgeFilter, **kwargs: Any) -> Expansion:
        ids = np.fromiter(seeds.keys(), dtype=I64, count=len(seeds))
        keep = _within(ids, self.entity_ids)
        inside = {int(h): float(w) for h, w, ok in zip(ids.tolist(), seeds.values(), keep.tolist()) if ok}
        return self.view.expand(inside, max_hops, self._edges(edge_filter), **kwargs)

    def edges_of(self, entity_ids: np.ndarray, edge_filter: EdgeFilter, *, among: bool = False) -> EdgeSet:
        return self.view.edges_of(entity_ids, self._edges(edge_filter), among=among)

    def edges_by_id(self, relation_ids: np.ndarray) -> EdgeSet:
        ids = np.asarray(relation_ids, dtype=I64).reshape(-1)
        return self.view.edges_by_id(ids[_within(ids, self.relation_ids)])

    def chunk_entities(self, chunk_ids: np.ndarray) -> Pairs:
        ids = np.asarray(chunk_ids, dtype=I64).reshape(-1)
        return self.view.chunk_entities(ids[_within(ids, self.chunk_ids)])

    def entity_chunks(self, entity_ids: np.ndarray) -> Pairs:
        pairs = self.view.entity_chunks(entity_ids)
        keep = _within(pairs.right, self.chunk_ids)
        return Pairs(pairs.left[keep], pairs.right[keep])

    def chunk_relations(self, chunk_ids: np.ndarray, edge_filter: EdgeFilter) -> tuple[Pairs, EdgeSet]:
        ids = np.asarray(chunk_ids, dtype=I64).reshape(-1)
        return self.view.chunk_relations(ids[_within(ids, self.chunk_ids)], self._edges(edge_filter))

    def relation_chunks(self, relation_ids: np.ndarray) -> Pairs:
        pairs = self.view.relation_chunks(relation_ids)
        keep = _within(pairs.right, self.chunk_ids)
        return Pairs(pairs.left[keep], pairs.right[keep])

    def mention_counts(self, entity_ids: np.ndarray) -> np.ndarray:
        return self.view.mention_counts(entity_ids)

    def names(self, entity_ids: np.ndarray) -> list[str | None]:
        return self.view.names(entity_ids)  # a scope narrows descriptions, never names

    def labels(self, entity_ids: np.ndarray) -> list[tuple[str, str] | None]:
        return self.view.labels(entity_ids)

    def degrees(self, entity_ids: np.ndarray) -> np.ndarray:
        return self.view.degrees(entity_ids)

    # ---------------------------------------------------------------- records: only what the scope says
    def _inside(self, stated: Sequence[tuple[str | None, str | None]]) -> list[bool]:
        """Whether each statement (a description, an evidence: its ``(chunk_id, doc_id)``) comes from the scope:
        its chunk, or, when only its document is recorded, a document with a chunk in the scope. Looks up only
        the chunk ids asked (remembered for the query), never the scope's chunk records."""
        new = list(dict.fromkeys(c for c, _ in stated if c and c not in self._keys))
        if new:
            found = self.chunk_handles(new)  # the scoped lookup: only chunks in the scope are found
            self._keys.update((c, c in found) for c in new)
        if self._docs is None and any(not c for c, _ in stated):
            self._docs = {c.doc_id for c in self.view.chunks(self.chunk_ids) if c is not None}
        return [self._keys[c] if c else d in (self._docs or ()) for c, d in stated]

    def entities(self, ids: np.ndarray) -> list[Any]:
        """Entity records with only the descriptions the scope's chunks gave (an entity's description merges
        what every document said about it)."""
        records = self.view.entities(ids)
        described = [e for e in records if e is not None and e.descriptions]
        told = iter(self._inside([(d.chunk_id, d.doc_id) for e in described for d in e.description_records]))
        out = []
        for e in records:
            if e is not None and e.descriptions:
                kept = [d for d in e.description_records if next(told)]
                e = replace(e, descriptions=list(dict.fromkeys(d.text for d in kept)), description_records=kept)
            out.append(e)
        return out

    def relations(self, ids: np.ndarray) -> list[Any]:
        """Relation records with only the evidence of the scope's chunks (their quotes and descriptions)."""
        records = self.view.relations(ids)
        seen_all = iter(self._inside([(ev.chunk_id, ev.doc_id) for r in records if r is not None for ev in r.evidence]))
        out = []
        for r in records:
            if r is not None and r.evidence:
                seen = [ev for ev in r.evidence if next(seen_all)]
                if len(seen) < len(r.evidence):
                    said = next((ev.description for ev in seen if ev.description), None)
                    r = replace(r, evidence=seen, description=said)
            out.append(r)
        return out

    def chunks(self, ids: np.ndarray) -> list[Any]:
        return self.view.chunks(ids)

    def chunk_handles(self, chunk_ids: Sequence[str]) -> dict[str, int]:
        found = self.view.chunk_handles(chunk_ids)
        if not found:
            return found
        keep = _within(np.fromiter(found.values(), dtype=I64, count=len(found)), self.chunk_ids)
        return {c: h for (c, h), ok in zip(found.items(), keep.tolist()) if ok}

    def iter_chunks(self) -> Iterator[tuple[int, Any]]:
        for handle, chunk in self.view.iter_chunks():
            if _within(np.asarray([handle], dtype=I64), self.chunk_ids)[0]:
                yield handle, chunk

    # ---------------------------------------------------------------- communities: reports summarise every document
    def list_communities(self, level: int | None = None) -> list[Any]:
        return []

    def community_records(self, ids: Sequence[str]) -> list[Any]:
        return []

    def communities_for(self, entity_ids: np.ndarray, level: int | None = None) -> list[tuple[str, int]]:
        return []
