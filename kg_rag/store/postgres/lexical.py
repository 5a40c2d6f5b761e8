"""BM25 of one question's words from their postings, fetched once a query.

The chain scores the question and then, after each pick, the rest of it (the words no picked passage contains:
:class:`~kg_rag.query.strategies.chain.QuestionRest`). Asking the database for each text cost a statement
(a round trip) each time; every such text is made of the question's words, so one statement reads their
postings, and each text is scored from them in process, as the directory scores it from the question's
columns of its matrix (:class:`~kg_rag.store.memory.ColumnScorer`).

Each term's share of a chunk's score is computed with the operations, in the order, of the SQL it replaces
(:meth:`~kg_rag.store.postgres.view.PostgresView.lexical_search`). Only the sum over a chunk's terms may run in
another order than the server's; that can move a float64 score by its last bit, which changes the float32 score
only on a rounding boundary (checked byte for byte on benchmark questions and parts of them:
evaluation/design-figures.md).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kg_rag.index.lexical import tokenize
from kg_rag.store.base import Hits, TermScorer

if TYPE_CHECKING:
    from kg_rag.store.postgres.view import PostgresView

I64 = np.int64
F32 = np.float32
BM25_K1, BM25_B = 1.5, 0.75


def bm25_params(stats: dict[str, Any]) -> dict[str, float]:
    """The constants of the BM25 formula for an index's ``bm25`` statistics (chunk count, mean length)."""
    avg = float(stats.get("avgdl", 0.0)) or 1.0
    return {"n": int(stats.get("n", 0)), "k1": BM25_K1, "k1p": BM25_K1 + 1, "one_b": 1 - BM25_B, "b_avg": BM25_B / avg}


MAX_POSTINGS = 20_000
"""A question whose words have more postings than this is scored one statement per text, as before: the
statement returns at most one row per chunk, while the postings of a few common words in a large corpus are
several times that, and each crosses the wire (the limit sits above what benchmark questions read:
evaluation/design-figures.md)."""


def postings_sql(schema: str) -> str:
    """One row per word of the question that the index knows: its ``ln`` idf factor, and its chunks (ascending)
    with each one's term frequency and BM25 length normaliser, as arrays — or no arrays (NULL) when the words
    have more than ``%(cap)s`` postings in all."""
    return f"""WITH q AS MATERIALIZED (
                SELECT q.term, t.df, ln(1 + (%(n)s::float8 - t.df + 0.5) / (t.df + 0.5)) AS idf
                FROM unnest(%(terms)s::text[]) AS q(term) JOIN {schema}.terms t ON t.term = q.term),
            total AS (SELECT coalesce(sum(df), 0) AS postings FROM q)
            SELECT q.term, q.idf, x.chunks, x.tf, x.norm
            FROM q CROSS JOIN total CROSS JOIN LATERAL (
                SELECT array_agg(p.chunk ORDER BY p.chunk) AS chunks, array_agg(p.tf ORDER BY p.chunk) AS tf,
                       array_agg(p.tf + %(k1)s::float8 * (%(one_b)s::float8 + %(b_avg)s::float8 * p.dl)
                                 ORDER BY p.chunk) AS norm
                FROM {schema}.postings p WHERE p.term = q.term AND total.postings <= %(cap)s) x"""


Ranked = tuple[np.ndarray, np.ndarray]
"""Every chunk with a positive BM25 score for a text: ``(handles, float32 scores)``, best first, ties by handle."""


def top_of(ranked: Ranked, k: int) -> Hits:
    """The ``k`` best of a ranking."""
    ids, scores = ranked
    if k <= 0 or not ids.size:
        return Hits.empty()
    return Hits(ids[:k].copy(), scores[:k].copy())


def scores_of(ranked: Ranked, chunk_ids: np.ndarray) -> np.ndarray:
    """The given chunks' scores in a ranking (0 for the others)."""
    ids, scores = ranked
    handles = np.asarray(chunk_ids, dtype=I64).reshape(-1)
    out = np.zeros(handles.size, dtype=F32)
    if ids.size and handles.size:
        order = np.argsort(ids)
        at = np.minimum(np.searchsorted(ids[order], handles), ids.size - 1)
        found = ids[order][at] == handles
        out[found] = scores[order][at[found]]
    return out


@dataclass
class Postings:
    """The postings of a set of words (``asked``): those the index knows, concatenated term by term."""

    asked: frozenset[str]
    terms: list[str]
    idf: np.ndarray
    """Per known term: ``ln(1 + (n - df + 0.5) / (df + 0.5))``."""
    chunk: np.ndarray
    term: np.ndarray
    """Per posting: its term's position in :attr:`terms`."""
    tf: np.ndarray
    norm: np.ndarray
    """Per posting: ``tf + k1 * (1 - b + b * dl / avgdl)``."""
    k1p: float
    _chunks: np.ndarray | None = None
    """Every chunk of the postings, ascending (made on first use), and each posting's position among them."""
    _at: np.ndarray | None = None

    @classmethod
    def from_rows(cls, asked: Iterable[str], rows: list[tuple], k1p: float) -> Postings | None:
        """The postings of :func:`postings_sql`'s rows (``None`` when there were too many to read)."""
        if any(row[2] is None for row in rows):  # a known word has postings: none came, they were too many
            return None
        rows = sorted(rows, key=lambda row: row[0])  # a fixed order: a chunk's terms are summed in it

        def column(i: int, dtype: Any) -> np.ndarray:
            parts = [np.asarray(row[i] or [], dtype=dtype) for row in rows]
            return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)

        chunk = column(2, I64)
        sizes = [len(row[2] or []) for row in rows]
        return cls(
            frozenset(asked),
            [str(row[0]) for row in rows],
            np.asarray([float(row[1]) for row in rows], dtype=np.float64),
            chunk,
            np.repeat(np.arange(len(rows), dtype=I64), sizes),
            column(3, np.float64),
            column(4, np.float64),
            k1p,
        )

    def covers(self, text: str) -> bool:
        return all(w in self.asked for w in tokenize(text))

    def bm25(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """Every chunk with a positive BM25 score for ``text`` (whose words must be among :attr:`asked`):
        ``(handles, float32 scores)``, best first, ties by handle."""
        column = {t: j for j, t in enumerate(self.terms)}
        weight = np.zeros(len(self.terms), dtype=np.float64)
        for word, count in Counter(tokenize(text)).items():
            j = column.get(word)
            if j is not None:
                weight[j] = count * self.idf[j]  # the SQL's ``qn * ln(...)``
        use = weight[self.term] > 0
        if not use.any():
            return np.zeros(0, I64), np.zeros(0, F32)
        share = weight[self.term[use]] * self.tf[use] * self.k1p / self.norm[use]
        if self._chunks is None or self._at is None:  # every text of the question sums over the same chunks: once
            self._chunks, self._at = np.unique(self.chunk, return_inverse=True)
        scores = np.bincount(self._at[use], weights=share, minlength=self._chunks.size).astype(F32)
        keep = scores > 0
        ids, scores = self._chunks[keep], scores[keep]
        order = np.lexsort((ids, -scores))
        return ids[order], scores[order]

    def words_in(self, chunk_id: int) -> set[str]:
        return {self.terms[j] for j in np.unique(self.term[self.chunk == int(chunk_id)]).tolist()}


class PostingsScorer(TermScorer):
    """:class:`TermScorer` of one question over PostgreSQL: its words' postings are read once (ahead, with the
    query's searches, when a helper connection is free) and every part of the question is scored from them. A
    text with another word is asked of the database, as by default."""

    def __init__(self, view: PostgresView, postings: Postings) -> None:
        super().__init__(view)
        self.postings = postings
        self._texts: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def _bm25(self, text: str) -> tuple[np.ndarray, np.ndarray] | None:
        hit = self._texts.get(text)
        if hit is None:
            if not self.postings.covers(text):
                return None
            hit = self._texts[text] = self.postings.bm25(text)
        return hit

    def search(self, text: str, k: int) -> Hits:
        hit = self._bm25(text)
        return super().search(text, k) if hit is None else top_of(hit, k)

    def scores(self, text: str, chunk_ids: np.ndarray) -> np.ndarray:
        hit = self._bm25(text)
        return super().scores(text, chunk_ids) if hit is None else scores_of(hit, chunk_ids)

    def best(self, text: str) -> float:
        hit = self._bm25(text)
        if hit is None:
            return super().best(text)
        return float(hit[1][0]) if hit[1].size else 0.0

    def words_in(self, chunk_id: int) -> set[str]:
        return self.postings.words_in(chunk_id)
