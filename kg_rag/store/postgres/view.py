"""The query protocol (:class:`~kg_rag.store.base.QueryBackend`) inside one PostgreSQL transaction.

A :class:`PostgresView` is what :meth:`~kg_rag.store.postgres.backend.PostgresBackend.reader` yields: every query
operation as SQL on that transaction's connection, so a query reads one committed version however many writers
commit meanwhile. Nothing is loaded into Python beyond what a query returns:

- vector search with pgvector (HNSW, or an exact scan in exact mode), similarity of given rows by inner product;
- BM25 from the ``postings``/``terms`` inverted index, with the same tokeniser and formula as the in-process
  index; a question's words' postings are read once and each part of it is scored from them
  (:mod:`~kg_rag.store.postgres.lexical`);
- expansion as one recursive CTE: hop limit, direction, relation-type allow/deny lists, synonym links, blocked
  entities, cycle prevention (a visited set), the per-hop frontier cap and the per-hop edge budget — the same
  rules, ties included, as the in-process backend;
- incidences (mentions, evidence), names and records by handle, with what a chain's next step asks read ahead.

A query's vector searches run at once (:meth:`PostgresView.search_ahead`) on the backend's helper threads.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from kg_rag.errors import IndexFormatError, InputError
from kg_rag.index import vectors
from kg_rag.index.lexical import tokenize
from kg_rag.index.meta import IndexMeta
from kg_rag.model.records import (
    Chunk,
    Entity,
    Relation,
    chunk_from_record,
    entity_from_record,
    relation_from_record,
)
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
)
from kg_rag.store.postgres.lexical import (
    MAX_POSTINGS,
    Postings,
    PostingsScorer,
    bm25_params,
    postings_sql,
    scores_of,
    top_of,
)

if TYPE_CHECKING:
    from kg_rag.store.postgres.backend import PostgresBackend

logger = logging.getLogger(__name__)

I64 = np.int64
F32 = np.float32
_TABLES = {"entities": "entity_vectors", "facts": "fact_vectors", "chunks": "chunk_vectors"}
_COUNTS = {"entities": "entities", "facts": "relations", "chunks": "chunks"}
EXACT_MAX_ROWS = 5000
"""In ``auto`` search mode, vector tables up to this many rows are scanned exactly, larger ones use HNSW."""
PREFETCH_MENTIONS = 64
"""``chunk_entities`` also returns the other chunks of entities mentioned at most this often (one round trip
instead of two for the chain strategy's next step)."""
ANY_MAX_IDS = 100
"""Up to this many entities, ``edges_of`` tests ``= ANY(array)`` per row; above, it joins the array on the source
and target indexes: the array test is cheaper for a few ids, the join for many (measured:
evaluation/design-figures.md)."""
PREFETCH_FOR_CHUNKS = 32
"""...but only for requests of at most this many chunks (a chain's pick asks for one): for ppr's hundreds of
passages the look-ahead is costly and never read."""
IVF_NPROBE = vectors.IVF_NPROBE
"""Lists probed per search of a table with an inverted-file index (``KG_RAG_IVF_NPROBE``, as in process)."""
HALFVEC_MARGIN = 10
"""Extra candidates a half-precision HNSW search fetches before re-scoring at full precision and cutting to k."""
HNSW_MIN_EF = 100
"""``hnsw.ef_search`` is ``max(HNSW_MIN_EF, 2 k)`` (capped at 1000; its recall: evaluation/design-figures.md)."""


def _ids(values: Any) -> list[int]:
    return [int(v) for v in np.asarray(values, dtype=I64).reshape(-1)]


def _vec(query: np.ndarray) -> np.ndarray:
    return np.asarray(query, dtype=F32).reshape(-1)


EXPAND_SQL = """
WITH RECURSIVE bfs(hop, ids, scores, pedges, pfwd, visited) AS (
    SELECT 0,
           array_agg(e.id ORDER BY e.id),
           array_agg(w.w ORDER BY e.id),
           NULL::int8[], NULL::bool[],
           array_agg(e.id)
    FROM (SELECT DISTINCT ON (id) id, w FROM unnest(%(seed_ids)s::int8[], %(seed_w)s::real[]) AS t(id, w)
          ORDER BY id, w DESC) w
    JOIN {s}.entities e ON e.id = w.id
    WHERE e.id <> ALL (%(blocked)s::int8[])
  UNION ALL
    SELECT b.hop + 1, nxt.ids, nxt.scores, nxt.pedges, nxt.pfwd, b.visited || nxt.ids
    FROM bfs b
    CROSS JOIN LATERAL (
        SELECT array_agg(c.nbr) AS ids, array_agg(c.score) AS scores, array_agg(c.eid) AS pedges,
               array_agg(c.fwd) AS pfwd
        FROM (
            SELECT * FROM (
                SELECT DISTINCT ON (cand.nbr) cand.*
                FROM (
                    SELECT fr.node, fr.score FROM (
                        SELECT f.node, f.score,
                               sum(CASE %(dir)s WHEN 'out' THEN en.out_degree WHEN 'in' THEN en.in_degree
                                   ELSE en.out_degree + en.in_degree END)
                                   OVER (ORDER BY f.score DESC, f.node ROWS UNBOUNDED PRECEDING) AS cum,
                               row_number() OVER (ORDER BY f.score DESC, f.node) AS rn
                        FROM unnest(b.ids, b.scores) AS f(node, score)
                        JOIN {s}.entities en ON en.id = f.node
                    ) fr
                    WHERE fr.cum <= %(edge_cap)s OR fr.rn = 1
                ) fr
                CROSS JOIN LATERAL (
                    SELECT r.target AS nbr,
                           (fr.score * %(decay)s::real)
                             * (CASE WHEN r.type_id = ANY (%(prefer)s::int4[]) THEN %(boost)s::real ELSE 1::real END)
                             AS score,
                           r.id AS eid, true AS fwd, r.source AS src, r.target AS dst, r.type_id
                    FROM {s}.relations r
                    WHERE %(dir)s IN ('out', 'both') AND r.source = fr.node AND {allowed}
                    UNION ALL
                    SELECT r.source,
                           (fr.score * %(decay)s::real)
                             * (CASE WHEN r.type_id = ANY (%(prefer)s::int4[]) THEN %(boost)s::real ELSE 1::real END),
                           r.id, false, r.source, r.target, r.type_id
                    FROM {s}.relations r
                    WHERE %(dir)s IN ('in', 'both') AND r.target = fr.node AND {allowed}
                ) cand
                WHERE NOT EXISTS (SELECT 1 FROM unnest(b.visited) AS v(id) WHERE v.id = cand.nbr)  -- a hash anti-join
                  AND cand.nbr <> ALL (%(blocked)s::int8[])
                ORDER BY cand.nbr, cand.score DESC, cand.fwd DESC, cand.eid
            ) d
            ORDER BY d.score DESC, d.nbr
            LIMIT %(max_frontier)s
        ) c
    ) nxt
    WHERE b.hop < %(max_hops)s AND nxt.ids IS NOT NULL
)
SELECT b.hop, b.ids, b.scores, b.pedges, b.pfwd FROM bfs b
"""
ALLOWED = (
    "((r.is_synonym AND %(synonyms)s) OR (NOT r.is_synonym AND (%(allow)s::int4[] IS NULL "
    "OR r.type_id = ANY (%(allow)s::int4[])) AND r.type_id <> ALL (%(deny)s::int4[]))) "
    "AND (%(only)s::int8[] IS NULL OR r.id = ANY (%(only)s::int8[]))"
)


class PostgresView(QueryBackend):
    """The query operations inside one transaction (what :meth:`PostgresBackend.reader` yields)."""

    def __init__(self, backend: PostgresBackend, conn: Any) -> None:
        self.backend = backend
        self.conn = conn
        self.s = backend.schema
        self.mode = backend.store.search
        self._meta: tuple[dict[str, Any], IndexMeta, BackendInfo] | None = None
        self._lexical: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._postings: dict[frozenset[str], Postings | None] = {}
        """Postings read for a question's words (``None``: too many, each text is one statement)."""
        # per-query caches: a view is one transaction, so what it read once stays true until it ends
        self._records_cache: dict[str, dict[int, Any]] = {"entities": {}, "relations": {}, "chunks": {}}
        self._mentions: dict[int, float] = {}
        self._names: dict[int, str | None] = {}
        self._labels: dict[int, tuple[str, str] | None] = {}
        self._entity_chunk_cache: dict[int, list[int]] = {}
        self._query: np.ndarray | None = None
        """The query vector (set by the first vector search): chunk similarities are prefetched for it."""
        self._chunk_sims: dict[int, float] = {}
        self._keys: dict[str, int | None] = {}
        self._ahead: dict[tuple[str, int], tuple] = {}
        """Searches run ahead for the remembered query (:meth:`search_ahead`), by ``(kind, k)``."""
        self.concurrent_searches = backend.helpers() > 0

    def _fetch(self, sql: str, params: Any = None) -> list[tuple]:
        """Rows of a query in binary format (numbers are not parsed from text)."""
        with self.conn.cursor(binary=True) as cur:
            cur.execute(sql, params)
            return cur.fetchall()

    # ------------------------------------------------------------------ meta
    def _metas(self) -> tuple[dict[str, Any], IndexMeta, BackendInfo]:
        if self._meta is None:
            self._meta = self.backend.meta(self.conn)
        return self._meta

    def _load_meta(self) -> dict[str, Any]:
        return self._metas()[0]

    def index_meta(self) -> IndexMeta:
        return self._metas()[1]

    def info(self) -> BackendInfo:
        return self._metas()[2]

    def _types(self) -> tuple[list[str], dict[str, int]]:
        return self.backend.type_names(self.conn, int(self._load_meta().get("version") or 0))

    # ------------------------------------------------------------------ vectors
    def search(self, kind: VectorKind, query: np.ndarray, k: int, min_score: float | None = None) -> Hits:
        if kind not in _TABLES:
            raise InputError(f"unknown vector table {kind!r}")
        if k <= 0:
            return Hits.empty()
        q = _vec(query)
        self._remember(q)
        found = self._ahead.get((kind, int(k)))
        ids, scores, exact = found if found is not None else self._vector_search(kind, q, int(k))
        if kind == "chunks":  # the same expression as similarity(): the candidates' relevance needs no refetch
            self._chunk_sims.update(zip(ids.tolist(), exact))
        if min_score is not None:
            keep = scores >= min_score
            ids, scores = ids[keep], scores[keep]
        return Hits(ids, scores)

    def search_ahead(
        self, query: np.ndarray, requests: Sequence[tuple[VectorKind, int]], text: str | None = None
    ) -> None:
        """Run the query's searches at once — the vector searches asked, and the postings of ``text``'s words
        (its BM25 and every part's: :mod:`~kg_rag.store.postgres.lexical`) — the first on this connection, the
        others on helper connections in transactions that import this one's snapshot (``pg_export_snapshot``),
        so each reads the version this query reads. A search a helper could not run is left to :meth:`search`
        (or the lexical calls)."""
        if not self.concurrent_searches:
            return
        q = _vec(query)
        self._remember(q)
        todo: list[tuple[str, Any]] = [
            (kind, int(k))
            for kind, k in dict.fromkeys(requests)
            if kind in _TABLES and int(k) > 0 and (kind, int(k)) not in self._ahead
        ]
        if text and frozenset(tokenize(text)) not in self._postings:
            todo.append(("lexical", text))
        if len(todo) < 2:
            return
        self._load_meta()
        snapshot = self.conn.execute("SELECT pg_export_snapshot()").fetchone()[0]

        def own(key: tuple[str, Any]) -> Any:
            """The search ``key`` on this connection."""
            if key[0] == "lexical":
                return self._lexical_ahead(key[1])
            return self._vector_search(cast(VectorKind, key[0]), q, key[1])

        def helper(key: tuple[str, Any]) -> Any:
            call = ("_lexical_ahead", key[1]) if key[0] == "lexical" else ("_vector_search", key[0], q, key[1])
            return self.backend.in_snapshot(snapshot, self._meta, *call)

        try:
            futures = [self.backend.searchers().submit(helper, key) for key in todo[1:]]
        except RuntimeError:  # the backend is closing: each search runs where it is asked
            return
        results = [own(todo[0])]
        for key, future in zip(todo[1:], futures):
            if future.cancel():  # still queued behind other queries' searches: this connection is free now
                results.append(own(key))
                continue
            try:
                results.append(future.result())
            except Exception as exc:  # noqa: BLE001 - the search runs again on this connection when asked
                logger.warning("a %s search ahead failed (%s); it runs on the query's connection", key[0], exc)
                results.append(None)
        for key, found in zip(todo, results):
            if found is None:
                continue
            if key[0] == "lexical":
                postings, bm25 = found
                self._postings[frozenset(tokenize(key[1]))] = postings
                if bm25 is not None:
                    self._lexical[key[1]] = bm25
            else:
                self._ahead[key] = found

    def _vector_search(self, kind: VectorKind, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, list]:
        """Top-``k`` rows of a vector table: handles, float32 scores, and the scores as the server gave them."""
        table = _TABLES[kind]
        fetch = int(k)
        if self._exact(kind):
            # an exact scan: the fenced subquery (OFFSET 0) computes each distance once and keeps the planner
            # from matching the HNSW index expression
            sql = (
                f"SELECT id, -d FROM (SELECT id, embedding <#> %(q)s AS d FROM {self.s}.{table} OFFSET 0) x "
                "ORDER BY d, id LIMIT %(k)s"
            )
        elif self._index_kind(table) == "hnsw-halfvec":
            # candidates by the half-precision index, a few more than asked, re-scored at full precision below
            dim = int(q.size)
            fetch = int(k) + HALFVEC_MARGIN
            sql = (
                f"SELECT id, -(embedding <#> %(q)s) FROM {self.s}.{table} "
                f"ORDER BY embedding::halfvec({dim}) <#> %(q)s::halfvec({dim}), id LIMIT %(k)s"
            )
            if 2 * k > HNSW_MIN_EF or fetch > HNSW_MIN_EF:
                self.conn.execute(f"SET LOCAL hnsw.ef_search = {int(min(1000, max(2 * k, fetch)))}")
        else:
            sql = (
                f"SELECT id, -(embedding <#> %(q)s) FROM {self.s}.{table} ORDER BY embedding <#> %(q)s, id LIMIT %(k)s"
            )
            if 2 * k > HNSW_MIN_EF:
                self.conn.execute(f"SET LOCAL hnsw.ef_search = {int(min(1000, 2 * k))}")
        rows = self.conn.execute(sql, {"q": q, "k": fetch}).fetchall()
        if not rows:
            return np.zeros(0, dtype=I64), np.zeros(0, dtype=F32), []
        ids = np.fromiter((r[0] for r in rows), dtype=I64, count=len(rows))
        scores = np.fromiter((r[1] for r in rows), dtype=F32, count=len(rows))
        if fetch > k:  # best first at full precision, ties by handle, as every backend orders them
            order = np.lexsort((ids, -scores))[:k]
            ids, scores = ids[order], scores[order]
            rows = [rows[i] for i in order]
        return ids, scores, [float(r[1]) for r in rows]

    def _index_kind(self, table: str) -> str:
        """The kind of the table's vector index, as the last whole save recorded it (``hnsw`` before)."""
        kinds = self._load_meta().get("vector_indexes")
        return str(kinds.get(table, "hnsw")) if isinstance(kinds, dict) else "hnsw"

    def _exact(self, kind: VectorKind) -> bool:
        if self.mode != "auto":
            return self.mode == "exact"
        return int(getattr(self.index_meta(), _COUNTS[kind])) <= EXACT_MAX_ROWS

    def _remember(self, q: np.ndarray) -> None:
        if self._query is None or not np.array_equal(self._query, q):
            self._query = q
            self._chunk_sims = {}
            self._ahead = {}

    def similarity(self, kind: VectorKind, query: np.ndarray, ids: np.ndarray) -> np.ndarray:
        table = _TABLES.get(kind)
        if table is None:
            raise InputError(f"unknown vector table {kind!r}")
        handles = _ids(ids)
        out = np.zeros(len(handles), dtype=F32)
        if not handles:
            return out
        q = _vec(query)
        same_query = self._query is not None and np.array_equal(q, self._query)
        cached = self._chunk_sims if kind == "chunks" and same_query else None
        todo = handles if cached is None else [h for h in dict.fromkeys(handles) if h not in cached]
        found: dict[int, float] = {}
        if todo:
            rows = self._fetch(  # one row of two arrays (a hub's chunks are thousands of rows otherwise)
                f"SELECT array_agg(t.id ORDER BY t.id), array_agg(-(t.embedding <#> %(q)s) ORDER BY t.id) "
                f"FROM {self.s}.{table} t "
                "WHERE t.id = ANY(%(ids)s::int8[])",
                {"q": q, "ids": todo},
            )
            found = dict(zip(rows[0][0] or [], rows[0][1] or [])) if rows else {}
            if cached is not None:
                cached.update({h: found.get(h, 0.0) for h in todo})
        source = cached if cached is not None else found
        return np.fromiter((source.get(h, 0.0) for h in handles), dtype=F32, count=len(handles))

    # ------------------------------------------------------------------ lexical
    def _bm25(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """Every chunk with a positive BM25 score for ``text``: (handles, scores), best first. From postings
        this view has read when they hold every word of the text (:meth:`term_scorer`), else one statement."""
        hit = self._lexical.get(text)
        if hit is not None:
            return hit
        counts = Counter(tokenize(text))
        params = bm25_params(self._load_meta().get("bm25") or {})
        read = next((p for p in self._postings.values() if p is not None and all(w in p.asked for w in counts)), None)
        if read is not None:
            result = read.bm25(text)
        elif not counts or not params["n"]:
            result = (np.zeros(0, I64), np.zeros(0, F32))
        else:
            # one row of two arrays (aligned by their ORDER BY): a common word puts most chunks in the result, and
            # arrays decode in C
            rows = self._fetch(
                f"""WITH q AS MATERIALIZED (
                        SELECT q.term, q.qn * ln(1 + (%(n)s::float8 - t.df + 0.5) / (t.df + 0.5)) AS w
                        FROM unnest(%(terms)s::text[], %(qn)s::int4[]) AS q(term, qn)
                        JOIN {self.s}.terms t ON t.term = q.term),
                    s AS (
                        SELECT p.chunk,
                               sum(q.w * p.tf * %(k1p)s::float8 / (p.tf + %(k1)s::float8 * (%(one_b)s::float8
                                   + %(b_avg)s::float8 * p.dl))) AS score
                        FROM q JOIN {self.s}.postings p ON p.term = q.term
                        GROUP BY p.chunk)
                    SELECT array_agg(chunk ORDER BY chunk), array_agg(score ORDER BY chunk) FROM s""",
                {"terms": list(counts), "qn": list(counts.values()), **params},
            )
            chunks, values = rows[0] if rows else (None, None)
            ids = np.asarray(chunks or [], dtype=I64)
            scores = np.asarray(values or [], dtype=np.float64).astype(F32)
            keep = scores > 0
            ids, scores = ids[keep], scores[keep]
            order = np.lexsort((ids, -scores))
            result = (ids[order], scores[order])
        self._lexical[text] = result
        return result

    def _read_postings(self, words: frozenset[str]) -> Postings | None:
        """The postings of ``words`` (one statement; kept for the view), or ``None`` when they are more than
        :data:`~kg_rag.store.postgres.lexical.MAX_POSTINGS`."""
        if words not in self._postings:
            params = bm25_params(self._load_meta().get("bm25") or {})
            sql = postings_sql(self.s)
            rows = self._fetch(sql, {"terms": sorted(words), "cap": MAX_POSTINGS, **params}) if params["n"] else []
            self._postings[words] = Postings.from_rows(words, rows, params["k1p"])
        return self._postings[words]

    def _lexical_ahead(self, text: str) -> tuple[Postings | None, tuple[np.ndarray, np.ndarray] | None]:
        """What a question's lexical work reads ahead: its words' postings, or — when they are too many — its
        own BM25."""
        postings = self._read_postings(frozenset(tokenize(text)))
        return postings, (self._bm25(text) if postings is None else None)

    def term_scorer(self, words: Sequence[str]) -> TermScorer:
        """The question's words' postings, read once (or ahead with the searches): every part of the question
        is scored from them (:class:`~kg_rag.store.postgres.lexical.PostingsScorer`). Too many postings: each
        text is one statement."""
        postings = self._read_postings(frozenset(words))
        return PostingsScorer(self, postings) if postings is not None else TermScorer(self)

    def lexical_search(self, text: str, k: int) -> Hits:
        return top_of(self._bm25(text), k)

    def lexical_scores(self, text: str, chunk_ids: np.ndarray) -> np.ndarray:
        return scores_of(self._bm25(text), chunk_ids)

    def lookup_entities(self, keys: Sequence[str]) -> dict[str, int]:
        keys = [str(k) for k in keys]
        missing = [k for k in dict.fromkeys(keys) if k not in self._keys]
        if missing:
            rows = self.conn.execute(f"SELECT key, id FROM {self.s}.entities WHERE key = ANY(%s)", (missing,))
            found = {k: int(i) for k, i in rows.fetchall()}
            for k in missing:
                self._keys[k] = found.get(k)
            unknown = [k for k in missing if self._keys[k] is None]
            aliases = self.backend.aliases(self.conn, int(self._load_meta().get("version") or 0)) if unknown else {}
            merged = {k: aliases[k] for k in unknown if k in aliases}
            if merged:  # a name merged into another entity finds that one
                rows = self.conn.execute(
                    f"SELECT key, id FROM {self.s}.entities WHERE key = ANY(%s)", (sorted(set(merged.values())),)
                )
                into = {k: int(i) for k, i in rows.fetchall()}
                for k, target in merged.items():
                    self._keys[k] = into.get(target)
        return {k: h for k in keys if (h := self._keys.get(k)) is not None}

    # ------------------------------------------------------------------ graph
    def _filter_params(self, edge_filter: EdgeFilter) -> dict[str, Any]:
        _, index = self._types()
        allow = None if edge_filter.types is None else [index[t] for t in edge_filter.types if t in index]
        deny = [index[t] for t in edge_filter.exclude_types if t in index]
        return {
            "synonyms": bool(edge_filter.synonyms),
            "allow": allow,
            "deny": deny,
            "blocked": sorted(int(b) for b in edge_filter.blocked),
            "only": None if edge_filter.relations is None else sorted(int(r) for r in edge_filter.relations),
        }

    def _edge_set(self, rows: Sequence[tuple]) -> EdgeSet:
        names, _ = self._types()
        if not rows:
            return EdgeSet.empty(names)
        n = len(rows)
        return EdgeSet(
            np.fromiter((r[0] for r in rows), I64, n),
            np.fromiter((r[1] for r in rows), I64, n),
            np.fromiter((r[2] for r in rows), I64, n),
            np.fromiter((r[3] for r in rows), np.int32, n),
            np.fromiter((r[4] for r in rows), F32, n),
            np.fromiter((r[5] for r in rows), bool, n),
            names,
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
        _, index = self._types()
        if not seeds:
            return Expansion.from_seeds({})
        params = self._filter_params(edge_filter)
        params.update(
            {
                "seed_ids": [int(k) for k in seeds],
                "seed_w": [float(v) for v in seeds.values()],
                "dir": edge_filter.direction,
                "decay": float(decay),
                "prefer": [index[t] for t in prefer if t in index] if prefer_weight > 0 else [],
                "boost": 1.0 + float(prefer_weight),
                "max_frontier": int(max_frontier),
                "edge_cap": int(max_edges_per_hop),
                "max_hops": int(max_hops),
            }
        )
        sql = EXPAND_SQL.format(s=self.s, allowed=ALLOWED)
        hops = self.conn.execute(sql, params).fetchall()
        if not hops:
            return Expansion.from_seeds({})
        parts: list[list[np.ndarray]] = [[] for _ in range(5)]
        for hop, ids, scores, pedges, pfwd in hops:
            n = len(ids)
            parts[0].append(np.asarray(ids, I64))
            parts[1].append(np.full(n, hop, np.int32))
            parts[2].append(np.asarray(scores, F32))
            parts[3].append(np.asarray(pedges, I64) if pedges is not None else np.full(n, -1, I64))
            parts[4].append(np.asarray(pfwd, bool) if pfwd is not None else np.zeros(n, bool))
        cols = [np.concatenate(p) for p in parts]
        order = np.argsort(cols[0], kind="stable")
        nodes, hop, score, parent_edge, parent_forward = (c[order] for c in cols)
        return Expansion(nodes, hop, score, parent_edge, parent_forward)

    def edges_of(self, entity_ids: np.ndarray, edge_filter: EdgeFilter, *, among: bool = False) -> EdgeSet:
        ids = sorted(set(_ids(entity_ids)))
        if not ids:
            return self._edge_set([])
        params = self._filter_params(edge_filter)
        params["ids"] = ids
        # `= ANY(array)` tests each row against the whole array: quickest for a handful of entities, but ppr asks
        # for the edges among thousands (all 19 k of MuSiQue's: 424 ms that way, 26 ms joined on the indexes)
        r_of = f"FROM unnest(%(ids)s::int8[]) AS u(id) JOIN {self.s}.relations r"
        if len(ids) <= ANY_MAX_IDS:
            member = " AND r.source = ANY(%(ids)s) AND r.target = ANY(%(ids)s)" if among else ""
            where = f"(r.source = ANY(%(ids)s) OR r.target = ANY(%(ids)s)){member}"
        elif among:
            ends = "SELECT unnest(%(ids)s::int8[])"
            where = f"r.id IN (SELECT r.id {r_of} ON r.source = u.id WHERE r.target IN ({ends}))"
        else:
            where = f"r.id IN (SELECT r.id {r_of} ON r.source = u.id UNION SELECT r.id {r_of} ON r.target = u.id)"
        rows = self.conn.execute(
            f"""SELECT r.id, r.source, r.target, r.type_id, r.weight, r.is_synonym FROM {self.s}.relations r
                WHERE {where} AND {ALLOWED}
                  AND r.source <> ALL (%(blocked)s::int8[]) AND r.target <> ALL (%(blocked)s::int8[])
                ORDER BY r.id""",
            params,
        ).fetchall()
        return self._edge_set(rows)

    def edges_by_id(self, relation_ids: np.ndarray) -> EdgeSet:
        ids = _ids(relation_ids)
        if not ids:
            return self._edge_set([])
        rows = self.conn.execute(
            f"""SELECT r.id, r.source, r.target, r.type_id, r.weight, r.is_synonym
                FROM unnest(%s::int8[]) WITH ORDINALITY AS u(id, ord) JOIN {self.s}.relations r ON r.id = u.id
                ORDER BY u.ord""",
            (ids,),
        ).fetchall()
        return self._edge_set(rows)

    def _pairs(self, sql: str, ids: list[int]) -> Pairs:
        if not ids:
            return Pairs.empty()
        rows = self._fetch(sql, (ids,))
        if not rows:
            return Pairs.empty()
        n = len(rows)
        return Pairs(np.fromiter((r[-2] for r in rows), I64, n), np.fromiter((r[-1] for r in rows), I64, n))

    def chunk_entities(self, chunk_ids: np.ndarray) -> Pairs:
        ids = _ids(chunk_ids)
        if not ids:
            return Pairs.empty()
        q = self._query
        ahead = len(ids) <= PREFETCH_FOR_CHUNKS  # a chain's pick, not a bulk request (ppr asks for hundreds)
        with_sim = q is not None and ahead
        sims = (
            f""", CASE WHEN e.n_chunks <= {PREFETCH_MENTIONS} THEN
                   (SELECT array_agg(-(v.embedding <#> %(q)s) ORDER BY m2.chunk) FROM {self.s}.mentions m2
                    JOIN {self.s}.chunk_vectors v ON v.id = m2.chunk WHERE m2.entity = m.entity) END"""
            if with_sim
            else ""
        )
        others = (
            f""", CASE WHEN e.n_chunks <= {PREFETCH_MENTIONS} THEN
                    (SELECT array_agg(m2.chunk ORDER BY m2.chunk) FROM {self.s}.mentions m2
                     WHERE m2.entity = m.entity) END{sims},
                  CASE WHEN row_number() OVER (PARTITION BY u.ord ORDER BY m.entity) = 1 THEN
                    (SELECT c.record FROM {self.s}.chunks c WHERE c.id = u.id) END"""
            if ahead
            else ""
        )
        rows = self._fetch(
            f"""SELECT m.chunk, m.entity, e.n_chunks, e.name{others}
                FROM unnest(%(ids)s::int8[]) WITH ORDINALITY AS u(id, ord)
                JOIN {self.s}.mentions m ON m.chunk = u.id JOIN {self.s}.entities e ON e.id = m.entity
                ORDER BY u.ord, m.entity""",
            {"ids": ids, "q": q} if with_sim else {"ids": ids},
        )
        n = len(rows)
        kept = self._records_cache["chunks"]
        for row in rows:  # what a strategy asks next: how generic, what it is called (a kind?), where else
            # mentioned, how similar those are, and the picked chunk's own record (its words, its text)
            entity, count, chunks = row[1], row[2], (row[4] if ahead else None)
            self._mentions[entity] = float(count)
            self._names[entity] = row[3]
            if chunks is not None:
                self._entity_chunk_cache[entity] = chunks
                if with_sim and row[5] is not None and len(row[5]) == len(chunks):
                    self._chunk_sims.update(zip(chunks, row[5]))
            if ahead and row[-1] is not None and row[0] not in kept:
                kept[row[0]] = chunk_from_record(row[-1])
        return Pairs(np.fromiter((r[0] for r in rows), I64, n), np.fromiter((r[1] for r in rows), I64, n))

    def entity_chunks(self, entity_ids: np.ndarray) -> Pairs:
        ids = _ids(entity_ids)
        cache = self._entity_chunk_cache
        missing = [h for h in dict.fromkeys(ids) if h not in cache]
        if missing:
            # a chain's few entities: their chunks are scored next, so their similarity comes with them (the
            # expression of similarity()); ppr's thousands are only counted
            q = self._query if len(missing) <= PREFETCH_FOR_CHUNKS else None
            similar = ", -(v.embedding <#> %(q)s)" if q is not None else ""
            vectors = f" LEFT JOIN {self.s}.chunk_vectors v ON v.id = m.chunk" if q is not None else ""
            rows = self._fetch(
                f"""SELECT m.entity, m.chunk{similar} FROM unnest(%(ids)s::int8[]) AS u(id)
                    JOIN {self.s}.mentions m ON m.entity = u.id{vectors} ORDER BY m.entity, m.chunk""",
                {"ids": missing, "q": q} if q is not None else {"ids": missing},
            )
            found: dict[int, list[int]] = {h: [] for h in missing}
            for row in rows:
                found[row[0]].append(row[1])
            if q is not None:
                self._chunk_sims.update((row[1], row[2]) for row in rows if row[2] is not None)
            cache.update(found)
        left = [h for h in ids for _ in cache[h]]
        right = [c for h in ids for c in cache[h]]
        if not left:
            return Pairs.empty()
        return Pairs(np.asarray(left, I64), np.asarray(right, I64))

    def _entity_column(self, column: str, entity_ids: np.ndarray, dtype: Any) -> np.ndarray:
        ids = _ids(entity_ids)
        out = np.zeros(len(ids), dtype=dtype)
        if not ids:
            return out
        rows = self._fetch(
            f"""SELECT u.ord, {column} FROM unnest(%s::int8[]) WITH ORDINALITY AS u(id, ord)
                JOIN {self.s}.entities e ON e.id = u.id""",
            (ids,),
        )
        for ordinal, value in rows:
            out[ordinal - 1] = value
        return out

    def names(self, entity_ids: np.ndarray) -> list[str | None]:
        ids = _ids(entity_ids)
        known = self._names
        missing = [h for h in dict.fromkeys(ids) if h not in known]
        if missing:
            found = dict(self._fetch(f"SELECT id, name FROM {self.s}.entities WHERE id = ANY(%s::int8[])", (missing,)))
            known.update((h, found.get(h)) for h in missing)
        return [known[h] for h in ids]

    def labels(self, entity_ids: np.ndarray) -> list[tuple[str, str] | None]:
        ids = _ids(entity_ids)
        known, records = self._labels, self._records_cache["entities"]
        for h in dict.fromkeys(ids):  # a record this query read already says it
            if h not in known and h in records:
                rec = records[h]
                known[h] = (rec.key, rec.name) if rec is not None else None
        missing = [h for h in dict.fromkeys(ids) if h not in known]
        if missing:
            rows = self._fetch(f"SELECT id, key, name FROM {self.s}.entities WHERE id = ANY(%s::int8[])", (missing,))
            found = {h: (key, name) for h, key, name in rows}
            known.update((h, found.get(h)) for h in missing)
        return [known[h] for h in ids]

    def mention_counts(self, entity_ids: np.ndarray) -> np.ndarray:
        ids = _ids(entity_ids)
        missing = [h for h in dict.fromkeys(ids) if h not in self._mentions]
        if missing:
            counts = self._entity_column("e.n_chunks", np.asarray(missing, I64), F32)
            self._mentions.update(zip(missing, counts.tolist()))
        return np.fromiter((self._mentions.get(h, 0.0) for h in ids), dtype=F32, count=len(ids))

    def degrees(self, entity_ids: np.ndarray) -> np.ndarray:
        return self._entity_column("e.out_degree + e.in_degree", entity_ids, I64)

    def chunk_relations(self, chunk_ids: np.ndarray, edge_filter: EdgeFilter) -> tuple[Pairs, EdgeSet]:
        ids = _ids(chunk_ids)
        if not ids:
            return Pairs.empty(), self._edge_set([])
        params = self._filter_params(edge_filter)
        params["ids"] = ids
        rows = self.conn.execute(
            f"""SELECT DISTINCT u.ord, u.id, r.id, r.source, r.target, r.type_id, r.weight, r.is_synonym
                FROM unnest(%(ids)s::int8[]) WITH ORDINALITY AS u(id, ord)
                JOIN {self.s}.evidence ev ON ev.chunk = u.id
                JOIN {self.s}.relations r ON r.id = ev.relation
                WHERE {ALLOWED} AND r.source <> ALL (%(blocked)s::int8[]) AND r.target <> ALL (%(blocked)s::int8[])
                ORDER BY u.ord, r.id""",
            params,
        ).fetchall()
        n = len(rows)
        pairs = Pairs(np.fromiter((r[1] for r in rows), I64, n), np.fromiter((r[2] for r in rows), I64, n))
        unique = {r[2]: r[2:] for r in rows}
        return pairs, self._edge_set([unique[k] for k in sorted(unique)])

    def relation_chunks(self, relation_ids: np.ndarray) -> Pairs:
        return self._pairs(
            f"""SELECT DISTINCT u.ord, ev.relation, ev.chunk FROM unnest(%s::int8[]) WITH ORDINALITY AS u(id, ord)
                JOIN {self.s}.evidence ev ON ev.relation = u.id WHERE ev.chunk IS NOT NULL
                ORDER BY u.ord, ev.chunk""",
            _ids(relation_ids),
        )

    # ------------------------------------------------------------------ records
    def _records(self, table: str, ids: np.ndarray, decode: Any) -> list[Any]:
        handles = _ids(ids)
        if not handles:
            return []
        cache = self._records_cache[table]
        missing = sorted({h for h in handles if h not in cache})
        if missing:
            rows = self.conn.execute(f"SELECT id, record FROM {self.s}.{table} WHERE id = ANY(%s)", (missing,))
            found = {i: decode(rec) for i, rec in rows.fetchall()}
            for h in missing:
                cache[h] = found.get(h)
        return [cache[h] for h in handles]

    def entities(self, ids: np.ndarray) -> list[Entity | None]:
        return self._records("entities", ids, entity_from_record)

    def relations(self, ids: np.ndarray) -> list[Relation | None]:
        return self._records("relations", ids, relation_from_record)

    def chunks(self, ids: np.ndarray) -> list[Chunk | None]:
        return self._records("chunks", ids, chunk_from_record)

    # ------------------------------------------------------------------ communities
    def communities_for(self, entity_ids: np.ndarray, level: int | None = None) -> list[tuple[str, int]]:
        ids = sorted(set(_ids(entity_ids)))
        if not ids or not self.index_meta().communities:
            return []
        if level is None:  # each entity's finest community
            rows = self.conn.execute(
                f"""SELECT DISTINCT ON (e.id) e.id, m.community FROM {self.s}.entities e
                    JOIN {self.s}.community_members m ON m.entity_key = e.key
                    WHERE e.id = ANY(%s) ORDER BY e.id, m.level DESC, m.community""",
                (ids,),
            ).fetchall()
        else:
            rows = self.conn.execute(
                f"""SELECT e.id, m.community FROM {self.s}.entities e
                    JOIN {self.s}.community_members m ON m.entity_key = e.key
                    WHERE e.id = ANY(%s) AND m.level = %s""",
                (ids, int(level)),
            ).fetchall()
        counts: dict[str, int] = {}
        for _, community in rows:
            counts[community] = counts.get(community, 0) + 1
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))

    def community_records(self, ids: Sequence[str]) -> list[Any]:
        from kg_rag.communities.model import Community

        wanted = [str(i) for i in ids]
        if not wanted:
            return []
        rows = self.conn.execute(f"SELECT id, record FROM {self.s}.communities WHERE id = ANY(%s)", (wanted,))
        found = {i: self._community(Community, r) for i, r in rows.fetchall()}
        return [found.get(i) for i in wanted]

    def list_communities(self, level: int | None = None) -> list[Any]:
        from kg_rag.communities.model import Community

        if level is None:
            rows = self.conn.execute(f"SELECT record FROM {self.s}.communities ORDER BY level, id")
        else:
            rows = self.conn.execute(
                f"SELECT record FROM {self.s}.communities WHERE level = %s ORDER BY id", (int(level),)
            )
        return [self._community(Community, r[0]) for r in rows.fetchall()]

    def _community(self, kind: Any, record: Any) -> Any:
        """A community from its stored record; a record of the wrong shape is one error naming the table."""
        try:
            return kind.from_record(record)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise IndexFormatError(
                f"{self.backend.store}#{self.s}.communities", f"unreadable community ({exc})"
            ) from exc

    def chunk_handles(self, chunk_ids: Sequence[str]) -> dict[str, int]:
        ids = [str(c) for c in chunk_ids]
        if not ids:
            return {}
        rows = self.conn.execute(f"SELECT chunk_id, id FROM {self.s}.chunks WHERE chunk_id = ANY(%s)", (ids,))
        return {c: int(i) for c, i in rows.fetchall()}

    def scope_members(self, chunk_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Two plain lookups: chunk_entities would prefetch every mention's chunks and their similarities, far
        more work for a wide scope than what this needs."""
        ids = _ids(chunk_ids)
        if not ids:
            return np.zeros(0, I64), np.zeros(0, I64)
        entities = self.conn.execute(
            f"SELECT DISTINCT entity FROM {self.s}.mentions WHERE chunk = ANY(%s::int8[]) ORDER BY 1", (ids,)
        ).fetchall()
        relations = self.conn.execute(
            f"""SELECT DISTINCT ev.relation FROM {self.s}.evidence ev JOIN {self.s}.relations r ON r.id = ev.relation
                WHERE ev.chunk = ANY(%s::int8[]) AND NOT r.is_synonym ORDER BY 1""",
            (ids,),
        ).fetchall()
        return np.asarray([r[0] for r in entities], I64), np.asarray([r[0] for r in relations], I64)

    def matching_chunks(self, doc_filter: Any) -> np.ndarray:
        """One query: ``doc_id`` any of the filter's, each metadata key's JSON value one of its values."""
        where = ["(%s::text[] IS NULL OR doc_id = ANY (%s::text[]))"]
        docs = None if doc_filter.doc_ids is None else sorted(doc_filter.doc_ids)
        params: list[Any] = [docs, docs]
        for key, values in doc_filter.metadata:
            where.append("record->'metadata'->%s = ANY (%s::jsonb[])")
            params += [key, [json.dumps(v) for v in values]]
        sql = f"SELECT id FROM {self.s}.chunks WHERE {' AND '.join(where)} ORDER BY id"
        return np.asarray([r[0] for r in self.conn.execute(sql, params).fetchall()], dtype=I64)

    def iter_chunks(self) -> Iterator[tuple[int, Chunk]]:
        with self.conn.cursor(name="kg_rag_chunks") as cur:
            cur.itersize = 2000
            cur.execute(f"SELECT id, record FROM {self.s}.chunks ORDER BY id")
            for handle, record in cur:
                yield int(handle), chunk_from_record(record)
