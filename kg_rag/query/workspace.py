"""The per-query working set: what one query has fetched from the backend, cached and addressed locally.

Strategies never see the whole graph. They grow a small local space of chunks and entities (the candidates,
the chunks a chain links to, the entities those chunks mention) through the backend protocol, and score
that. The same code therefore runs on the in-process backend and on a database.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

from kg_rag.arrays import in_sorted, unique_first, unique_ints
from kg_rag.index.lexical import tokenize
from kg_rag.query.params import QueryParams
from kg_rag.query.relation_match import matches, type_index
from kg_rag.query.senses import are_values, count_of, date_name
from kg_rag.store.base import EdgeFilter, Pairs, QueryBackend, TermScorer

I64 = np.int64


class HandleSpace:
    """Local positions ``0..n-1`` for backend handles, with per-position arrays that grow together."""

    def __init__(self) -> None:
        self.ids = np.zeros(0, dtype=I64)
        self._sorted = np.zeros(0, dtype=I64)
        self._sorted_pos = np.zeros(0, dtype=I64)
        self._arrays: dict[str, tuple[np.ndarray, float]] = {}

    def __len__(self) -> int:
        return int(self.ids.size)

    def positions(self, handles: np.ndarray) -> np.ndarray:
        """Positions of handles already in the space (-1 for the others), vectorised."""
        hs = np.asarray(handles, dtype=I64).reshape(-1)
        if self._sorted.size == 0 or hs.size == 0:
            return np.full(hs.size, -1, dtype=I64)
        at = np.minimum(np.searchsorted(self._sorted, hs), self._sorted.size - 1)
        return np.where(self._sorted[at] == hs, self._sorted_pos[at], -1)

    def add(self, handles: Iterable[int] | np.ndarray) -> np.ndarray:
        """Positions of ``handles``, adding the ones not seen yet (their array values start at the default)."""
        hs = np.asarray(list(handles) if not isinstance(handles, np.ndarray) else handles, dtype=I64).reshape(-1)
        pos = self.positions(hs)
        missing = pos < 0
        if missing.any():
            unseen = hs[missing]
            distinct, first = unique_first(unseen)
            rank = np.argsort(np.argsort(first))  # first-seen order, so positions do not depend on hashing
            start = self.ids.size
            new = np.empty(distinct.size, dtype=I64)
            new[rank] = distinct
            self.ids = np.concatenate([self.ids, new])
            # two sorted runs: the stable sort merges them (handles are distinct, so the order is unique)
            merged = np.concatenate([self._sorted, distinct])
            order = np.argsort(merged, kind="stable")
            self._sorted = merged[order]
            self._sorted_pos = np.concatenate([self._sorted_pos, start + rank])[order]
            for name, (arr, default) in self._arrays.items():
                grown = np.concatenate([arr, np.full(new.size, default, dtype=arr.dtype)])
                self._arrays[name] = (grown, default)
            pos[missing] = start + rank[np.searchsorted(distinct, unseen)]
        return pos

    def array(self, name: str, default: float = 0.0, dtype: type = np.float32) -> np.ndarray:
        """The current array ``name`` (created on first use). Re-fetch it after :meth:`add`."""
        if name not in self._arrays:
            self._arrays[name] = (np.full(self.ids.size, default, dtype=dtype), default)
        return self._arrays[name][0]

    def set_array(self, name: str, values: np.ndarray) -> None:
        _, default = self._arrays[name]
        self._arrays[name] = (values, default)


class _PairCache:
    """Pairs a query fetched, keyed by their left handle: from a database, each handle is fetched once; over an
    in-process backend (``keep=False``) this keeps nothing and asks again, which costs less than keeping.

    Pairs come back grouped by left handle in ascending order, whatever was fetched before, so positions in the
    query's chunk space follow what was asked, never the history of fetches, and keeping or not gives the same
    answers. A chain asks for one chunk's or a few entities' pairs at a time: those are kept per handle too (a
    dict look-up each); ``ppr`` asks for thousands at once: those are filtered from everything fetched, by
    binary search."""

    SMALL = 32
    """Requests of at most this many handles are answered per handle."""

    def __init__(self, fetch: Callable[[np.ndarray], Pairs], keep: bool = True) -> None:
        self._fetch = fetch
        self._keep = keep
        self._keys = np.zeros(0, dtype=I64)
        self._left = np.zeros(0, dtype=I64)
        self._right = np.zeros(0, dtype=I64)
        self._rows: dict[int, np.ndarray] = {}

    def _add(self, todo: np.ndarray) -> None:
        pairs = self._fetch(todo)
        left, right = pairs.left.astype(I64, copy=False), pairs.right.astype(I64, copy=False)
        self._keys = unique_ints(np.concatenate([self._keys, todo]))
        self._left = np.concatenate([self._left, left])
        self._right = np.concatenate([self._right, right])
        if todo.size <= self.SMALL:
            order = np.argsort(left, kind="stable")  # the identity when grouped as asked
            left, right = left[order], right[order]
            starts = np.searchsorted(left, todo, side="left").tolist()
            ends = np.searchsorted(left, todo, side="right").tolist()
            for h, a, b in zip(todo.tolist(), starts, ends):
                self._rows[h] = right[a:b]

    def get(self, handles: np.ndarray) -> Pairs:
        hs = unique_ints(np.asarray(handles, dtype=I64))
        if hs.size == 0:
            return Pairs.empty()
        if not self._keep:
            return self._fetch(hs)
        known = in_sorted(hs, self._keys)
        if not known.all():
            self._add(hs[~known])
        rows = self._rows
        if hs.size <= self.SMALL and all(h in rows for h in hs.tolist()):
            parts = [rows[h] for h in hs.tolist()]
            sizes = [part.size for part in parts]
            if not sum(sizes):
                return Pairs.empty()
            return Pairs(np.repeat(hs, sizes), np.concatenate(parts))
        keep = in_sorted(self._left, hs)
        order = np.argsort(self._left[keep], kind="stable")
        return Pairs(self._left[keep][order], self._right[keep][order])


@dataclass
class Workspace:
    """One query's view: the backend, the query (text and vector), the settings, and cached lookups."""

    view: QueryBackend
    query: np.ndarray
    text: str
    params: QueryParams
    edge_filter: EdgeFilter
    chunks: HandleSpace = field(default_factory=HandleSpace)
    relation_words: frozenset[str] = frozenset()
    """Lemmas of the question's words that can name a relation (``born``, ``spouse``, ``replace``)."""
    roles: dict[int, dict[str, str]] = field(default_factory=dict)
    """For the entities the question names (by handle), the part each plays in an asked relation, by relation word
    (:func:`~kg_rag.query.roles.question_roles`): "Who founded Publix?" makes *Publix* the patient."""
    asks_value: bool = False
    """Whether the question asks for a date or a quantity (:func:`~kg_rag.query.relation_match.asks_for_value`)."""
    counted: frozenset[str] = frozenset()
    """What a "how many" question counts (:func:`~kg_rag.query.relation_match.counted_words`)."""
    _lexical_max: float | None = None
    _terms: TermScorer | None = None
    _asked: tuple[frozenset[str], frozenset[str]] | None = None
    _mentions: dict[int, float] = field(default_factory=dict)
    _values: dict[int, bool] = field(default_factory=dict)
    _answers: dict[int, bool] = field(default_factory=dict)

    def __post_init__(self) -> None:
        keep = not self.view.in_process
        self._chunk_entities = _PairCache(self.view.chunk_entities, keep)
        self._entity_chunks = _PairCache(self.view.entity_chunks, keep)

    # ------------------------------------------------------------------ chunk relevance
    @property
    def terms(self) -> TermScorer:
        """BM25 of the question and of parts of it (:meth:`QueryBackend.term_scorer`), made once a query."""
        if self._terms is None:
            self._terms = self.view.term_scorer(tokenize(self.text))
        return self._terms

    @property
    def asked_types(self) -> frozenset[str]:
        """The index's relation types the question asks for (looked up once a query in the vocabulary's word
        index; the expansion prefers them, the rows rank them first)."""
        return self._vocabulary()[1]

    def asks_for(self, relation_types: Iterable[str]) -> dict[str, bool]:
        """Whether the question asks for each relation type (:func:`~kg_rag.query.relation_match.matches` of
        its relation words): the index's own types are :attr:`asked_types`; another name (``SYNONYM_OF``) is
        matched alone."""
        known, asked = self._vocabulary()
        return {t: (t in asked) if t in known else matches(self.relation_words, t) for t in relation_types}

    def _vocabulary(self) -> tuple[frozenset[str], frozenset[str]]:
        if self._asked is None:
            info, words = self.view.info(), self.relation_words
            index = type_index(info.relation_types, info.version)
            self._asked = (index.types, index.types_for(words) if words else frozenset())
        return self._asked

    @property
    def lexical_max(self) -> float:
        """The best BM25 score of any chunk (normalises the lexical channel to [0, 1] per query)."""
        if self._lexical_max is None:
            self._lexical_max = self.terms.best(self.text) if self.params.lexical_weight > 0 else 0.0
        return self._lexical_max

    def relevance(self, positions: np.ndarray) -> np.ndarray:
        """Query relevance of local chunks: cosine similarity + ``lexical_weight`` x normalised BM25 (cached)."""
        pos = np.asarray(positions, dtype=I64)
        rel = self.chunks.array("relevance", np.nan)
        missing = pos[np.isnan(rel[pos])]
        if missing.size:
            missing = unique_ints(missing)
            handles = self.chunks.ids[missing]
            dense = self.view.similarity("chunks", self.query, handles)
            values = dense.astype(np.float32)
            self.chunks.array("dense", np.nan)[missing] = dense
            if self.lexical_max > 0:
                lex = self.terms.scores(self.text, handles)
                values = values + self.params.lexical_weight * lex / self.lexical_max
            rel = self.chunks.array("relevance", np.nan)
            rel[missing] = values
        return rel[pos]

    def dense(self, positions: np.ndarray) -> np.ndarray:
        self.relevance(positions)
        return self.chunks.array("dense", np.nan)[np.asarray(positions, dtype=I64)]

    def candidates(self, n: int) -> np.ndarray:
        """Local positions of the candidate chunks: the best ``n`` by dense similarity and by BM25."""
        hits = self.view.search("chunks", self.query, n)
        handles = [hits.ids]
        if self.params.lexical_weight > 0:
            lex = self.terms.search(self.text, n)
            handles.append(lex.ids)
        pos = self.chunks.add(np.concatenate(handles))
        return unique_ints(pos)

    # ------------------------------------------------------------------ incidence
    def chunk_entities(self, chunk_handles: np.ndarray) -> Pairs:
        """``(chunk handle, entity handle)`` mentions of the given chunks, by chunk (from a database, each chunk is
        fetched once a query)."""
        return self._chunk_entities.get(chunk_handles)

    def entity_chunks(self, entity_handles: np.ndarray) -> Pairs:
        """``(entity handle, chunk handle)`` mentions of the given entities, by entity (from a database, each
        entity is fetched once a query)."""
        return self._entity_chunks.get(entity_handles)

    def are_values(self, entity_handles: np.ndarray) -> np.ndarray:
        """Which entities are values (:func:`~kg_rag.query.senses.value_name`), as a mask; their names are read once
        a query (the value rows a "when" question asks for and the bridges between passages ask for the same
        ends)."""
        hs = np.asarray(entity_handles, dtype=I64).reshape(-1)
        todo = [h for h in dict.fromkeys(hs.tolist()) if h not in self._values]
        if todo:
            self._values.update(zip(todo, are_values(self.view, np.asarray(todo, dtype=I64)).tolist()))
        return np.fromiter((self._values[h] for h in hs.tolist()), dtype=bool, count=hs.size)

    def value_answers(self, entity_handles: np.ndarray) -> np.ndarray:
        """Which entities answer a question that asks for a value, as a mask: the values (:meth:`are_values`); for a
        "how many" question (:attr:`counted`) no date, and a number of what it counts ("4 congressional districts":
        :func:`~kg_rag.query.senses.count_of`). Names are read once a query, however many relation sets ask."""
        hs = np.asarray(entity_handles, dtype=I64).reshape(-1)
        values = self.are_values(hs)
        if not self.counted:
            return values
        todo = [h for h in dict.fromkeys(hs.tolist()) if h not in self._answers]
        if todo:
            for h, name in zip(todo, self.view.names(np.asarray(todo, dtype=I64))):
                written = name or ""
                self._answers[h] = (self._values[h] and not date_name(written)) or count_of(written, self.counted)
        return np.fromiter((self._answers[h] for h in hs.tolist()), dtype=bool, count=hs.size)

    def mention_counts(self, entity_handles: np.ndarray) -> np.ndarray:
        """How many chunks mention each entity (from a database, kept per entity for the query)."""
        hs = np.asarray(entity_handles, dtype=I64).reshape(-1)
        if hs.size > 256 or self.view.in_process:  # one backend call, no per-handle bookkeeping
            return self.view.mention_counts(hs).astype(np.float32)
        todo = [h for h in dict.fromkeys(hs.tolist()) if h not in self._mentions]
        if todo:
            counts = self.view.mention_counts(np.asarray(todo, dtype=I64))
            self._mentions.update(zip(todo, counts.tolist()))
        return np.asarray([self._mentions[h] for h in hs.tolist()], dtype=np.float32)
