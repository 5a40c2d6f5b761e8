"""The PostgreSQL store: an index in a PostgreSQL schema, written transactionally, read by any number of
processes (see :mod:`kg_rag.store.postgres.tables` for the tables).

Writes (all through :class:`~kg_rag.indexing.writer.IndexWriter`). Adding, replacing or deleting documents
(:meth:`PostgresStore.apply`) touches only the rows they contribute, in one transaction, without loading the
graph (:mod:`~kg_rag.store.postgres.changes`). ``save(index)`` replaces the whole index: a first save bulk-loads
it, a later one writes the rows whose hashes changed (:mod:`~kg_rag.store.postgres.sync`). Writers hold a
session advisory lock for the whole read-modify-write (``with store.writing(wait):``), so two processes writing
at once lose nothing; the second waits up to ``wait`` seconds, then fails with
:class:`~kg_rag.store.locking.IndexLockedError` naming the holder.

Reads. :meth:`backend` serves the query protocol; every query is one read-only ``REPEATABLE READ``
transaction, so it sees one committed version, and the next query sees the next one — nothing to reload.

Location: ``postgresql://user@host/db?kg_schema=NAME&kg_search=MODE`` — ``kg_schema`` (default ``kg_rag``)
names the schema holding the index; ``kg_search`` is ``auto`` (default: exact scans for vector tables up to
``EXACT_MAX_ROWS`` rows, HNSW above), ``exact`` or ``hnsw``; both are removed before connecting.
Needs the ``postgres`` extra (psycopg 3, pgvector).
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import numpy as np

import kg_rag.store.postgres.rows as R
import kg_rag.store.postgres.tables as S
from kg_rag.errors import (
    ConfigurationError,
    IndexFormatError,
    IndexNotFoundError,
    InputError,
    KGRagError,
    StoreError,
)
from kg_rag.index.build import GraphIndex
from kg_rag.index.meta import IndexMeta
from kg_rag.index.vectors import VectorTable
from kg_rag.model.change import GraphChange
from kg_rag.model.graph import KnowledgeGraph
from kg_rag.model.records import Chunk, chunk_from_record
from kg_rag.model.report import IngestReport
from kg_rag.store.graph_store import GraphStore
from kg_rag.store.locking import IndexLockedError, default_wait

logger = logging.getLogger(__name__)
T = TypeVar("T")

KG_PARAMS = ("kg_schema", "kg_search")
SEARCH_MODES = ("auto", "exact", "hnsw")


def parse_location(location: str) -> tuple[str, str, str]:
    """``(conninfo, schema, search)`` from a ``postgresql://`` URI with optional ``kg_schema``/``kg_search``
    (``auto``, ``exact`` or ``hnsw``)."""
    parts = urlsplit(location)
    query = parse_qsl(parts.query, keep_blank_values=True)
    ours = {k: v for k, v in query if k in KG_PARAMS}
    rest = [(k, v) for k, v in query if k not in KG_PARAMS]
    schema = S.check_schema_name(ours.get("kg_schema") or S.DEFAULT_SCHEMA)
    search = ours.get("kg_search", "auto")
    if search not in SEARCH_MODES:
        raise InputError(f"kg_search must be one of {', '.join(SEARCH_MODES)}, got {search!r}")
    # percent-encoded as libpq decodes (a space as %20: libpq reads "+" as a plus, so options=-c%20... kept working)
    query_text = urlencode(rest, safe="/", quote_via=quote)
    conninfo = urlunsplit((parts.scheme, parts.netloc, parts.path, query_text, parts.fragment))
    return conninfo, schema, search


def _psycopg():
    try:
        import psycopg
        from pgvector.psycopg import register_vector
    except ImportError as exc:
        raise ConfigurationError(
            "PostgreSQL indexes need the `postgres` extra: pip install 'kg-rag[postgres]' (psycopg, pgvector)"
        ) from exc
    return psycopg, register_vector


def connect(conninfo: str, *, autocommit: bool = False, vector: bool = True) -> Any:
    """A psycopg connection (pgvector types registered when the extension exists); one-line errors."""
    psycopg, register_vector = _psycopg()
    name = "kg-rag " + " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(sys.argv[:3]))
    try:
        conn = psycopg.connect(conninfo, autocommit=autocommit, application_name=name[:63], connect_timeout=10)
    except psycopg.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigurationError(f"cannot connect to PostgreSQL: {first}") from exc
    if vector:
        try:
            register_vector(conn)
        except psycopg.ProgrammingError:  # the extension is not installed yet (an empty database)
            conn.rollback()
    return conn


def _lock_key(schema: str) -> int:
    """The writer lock's advisory-lock key, from the schema name as validated (one name, one key)."""
    schema = S.check_schema_name(schema)
    return int.from_bytes(hashlib.sha256(f"kg-rag:{schema}".encode()).digest()[:8], "big", signed=True)


def store_error(exc: BaseException, where: str, *, writing: bool) -> StoreError:
    """A psycopg error as one line (:class:`~kg_rag.errors.StoreError`): a full disk and a lost server say what
    happened to the write; anything else is named with its first line."""
    import psycopg

    first = " ".join(str(exc).split("\n", 1)[0].split()) or type(exc).__name__
    if isinstance(exc, psycopg.errors.DiskFull):
        then = "; the write was rolled back and the index is as it was: free space, then run the command again"
        return StoreError(f"{where}: PostgreSQL is out of disk space ({first}){then if writing else ''}")
    if isinstance(exc, psycopg.OperationalError):
        then = (
            "; the write was rolled back, unless the server committed it as the connection dropped: running the "
            "command again is safe"
            if writing
            else "; try again once the server is back"
        )
        return StoreError(f"{where}: lost the connection to PostgreSQL ({first}){then}")
    then = "; the write was rolled back" if writing else ""
    return StoreError(f"{where}: PostgreSQL failed ({type(exc).__name__}: {first}){then}")


def _one_line(method: Callable[..., T]) -> Callable[..., T]:
    """A read method whose psycopg errors become one line (:func:`store_error`)."""

    @functools.wraps(method)
    def reading(self: PostgresStore, *args: Any, **kwargs: Any) -> T:
        import psycopg

        try:
            return method(self, *args, **kwargs)
        except psycopg.Error as exc:
            raise store_error(exc, str(self), writing=False) from exc

    return reading


class PostgresStore(GraphStore):
    """An index in PostgreSQL (see the module docstring)."""

    def __init__(self, location: str, *, verify: bool = True, search: str | None = None) -> None:
        """``verify`` is taken for :func:`~kg_rag.store.open_store`'s one signature: a directory store checks its
        files' hashes with it; a database checks its own pages, so there is nothing to switch here."""
        self.location = location
        self.conninfo, self.schema, parsed = parse_location(location)
        self.search = parsed if search is None else search
        if self.search not in SEARCH_MODES:
            raise InputError(f"search must be one of {', '.join(SEARCH_MODES)}, got {self.search!r}")
        self._lock_key = _lock_key(self.schema)
        self._local = threading.local()
        self._guard = threading.RLock()
        self.last_write: dict[str, Any] = {}
        """Timings and counts of this process's last write (for benchmarks and logs)."""

    def __repr__(self) -> str:
        return f"PostgresStore(schema={self.schema!r})"

    def __str__(self) -> str:
        return _redact(self.location)

    # ------------------------------------------------------------------- basics
    def connect(self, **kwargs: Any) -> Any:
        return connect(self.conninfo, **kwargs)

    @_one_line
    def exists(self) -> bool:
        with self.connect(autocommit=True, vector=False) as conn:
            found = conn.execute("SELECT to_regclass(%s)", (f"{self.schema}.meta",)).fetchone()[0]
            if found is None:
                return False
            row = conn.execute(f"SELECT value FROM {self.schema}.meta WHERE key = 'schema_version'").fetchone()
            return row is not None

    def _not_found(self) -> IndexNotFoundError:
        return IndexNotFoundError(str(self), f"no kg-rag index there (schema {self.schema!r})")

    @property
    def where(self) -> str:
        """How errors name the index's metadata."""
        return f"{self}#{self.schema}.meta"

    def meta_rows(self, conn: Any) -> dict[str, Any]:
        """The raw ``meta`` rows; :class:`IndexNotFoundError` when the schema holds no index."""
        if conn.execute("SELECT to_regclass(%s)", (f"{self.schema}.meta",)).fetchone()[0] is None:
            raise self._not_found()
        rows = R.read_meta_rows(conn, self.schema)
        if rows.get("schema_version") is None:
            raise self._not_found()
        return rows

    def meta_in(self, conn: Any) -> IndexMeta:
        """The index's :class:`IndexMeta`, read and validated in ``conn``'s transaction."""
        return R.parse_meta(self.meta_rows(conn), self.where, self.schema)

    @_one_line
    def read_meta(self) -> IndexMeta:
        with self.connect(autocommit=True) as conn:
            return self.meta_in(conn)

    @_one_line
    def read_report(self) -> IngestReport:
        with self.connect(autocommit=True) as conn:
            return self._report(self.meta_rows(conn))

    def _report(self, rows: dict[str, Any]) -> IngestReport:
        data = rows.get("report") or {}
        try:
            if not isinstance(data, dict):
                raise TypeError("not an object")
            return IngestReport.from_dict(data)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise IndexFormatError(self.where, f"unreadable ingest report ({type(exc).__name__}: {exc})") from exc

    @_one_line
    def stats(self) -> dict[str, Any]:
        with self.connect(autocommit=True) as conn, conn.transaction():
            rows = self.meta_rows(conn)
            return R.parse_meta(rows, self.where, self.schema).stats(self._report(rows))

    # ------------------------------------------------------------------ writing
    @contextmanager
    def writing(self, wait: float | None = None) -> Iterator[PostgresStore]:
        """Hold the index's writer lock (a session advisory lock) for a whole read–modify–write."""
        wait = default_wait() if wait is None else wait
        with self._guard:
            depth = getattr(self._local, "depth", 0)
            import psycopg

            if depth:
                self._local.depth += 1
                try:
                    yield self
                except psycopg.Error as exc:  # said here too: an IndexWriter closes the outer lock without it
                    raise store_error(exc, str(self), writing=True) from exc
                finally:
                    self._local.depth -= 1
                return

            conn = self.connect(autocommit=True)
            try:
                self._acquire(conn, wait)
                self._local.conn, self._local.depth = conn, 1
                try:
                    yield self
                except psycopg.Error as exc:
                    raise store_error(exc, str(self), writing=True) from exc
                finally:
                    self._local.conn, self._local.depth = None, 0
                    self._release(conn)
            except psycopg.Error as exc:  # taking the lock
                raise store_error(exc, str(self), writing=True) from exc
            finally:
                conn.close()

    def _release(self, conn: Any) -> None:
        """Release the writer lock; never raises. A session that is gone took its lock with it, and closing the
        connection (which follows) ends the session: so a failing release can neither hide the write's own error
        nor turn a committed write into a failure."""
        import psycopg

        try:
            conn.execute("SELECT pg_advisory_unlock(%s)", (self._lock_key,))
        except psycopg.Error as exc:
            logger.info("%s: the writer lock went with its session (%s)", self, " ".join(str(exc).split()))

    def _acquire(self, conn: Any, wait: float) -> None:
        deadline = time.monotonic() + wait
        while True:
            if conn.execute("SELECT pg_try_advisory_lock(%s)", (self._lock_key,)).fetchone()[0]:
                return
            if time.monotonic() >= deadline:
                raise IndexLockedError(
                    f"{self}: schema {self.schema} is locked for writing by {self._holder(conn)}; "
                    f"gave up after {wait:g} s (use --wait SECONDS to wait longer)"
                )
            time.sleep(0.05)

    def _holder(self, conn: Any) -> str:
        key = self._lock_key & 0xFFFFFFFFFFFFFFFF
        row = conn.execute(
            """SELECT a.pid, a.application_name, a.client_addr, a.backend_start FROM pg_locks l
               JOIN pg_stat_activity a ON a.pid = l.pid
               WHERE l.locktype = 'advisory' AND l.granted AND l.classid = %s AND l.objid = %s LIMIT 1""",
            (key >> 32, key & 0xFFFFFFFF),
        ).fetchone()
        if row is None:
            return "another session"
        pid, app, addr, since = row
        where = f" from {addr}" if addr else ""
        return f"server pid {pid} ({app or 'unknown client'}{where}) since {since:%Y-%m-%dT%H:%M:%S}"

    def save(self, index: GraphIndex, *, wait: float | None = None, forget: bool = False) -> str:
        """Make the stored index equal to ``index`` in one transaction; returns the new data version (see
        :mod:`~kg_rag.store.postgres.sync`: a first save bulk-loads, a later one writes the difference).

        ``forget`` is accepted for parity with the directory store: PostgreSQL keeps no older versions
        (deleted rows are gone once the transaction commits and vacuum runs).
        """
        from kg_rag.store.postgres.sync import FullSave

        started = time.perf_counter()
        with self.writing(wait):
            conn = self._local.conn
            with conn.transaction():
                sync = FullSave(self, conn, index)
                version = sync.run()
            t = time.perf_counter()
            self._vacuum(conn, sync.bulk)  # after the commit: housekeeping, which cannot fail the save
            sync.timings["vacuum_s"] = round(time.perf_counter() - t, 2)
        self.last_write = {"kind": "save", "seconds": round(time.perf_counter() - started, 3), **sync.timings}
        logger.info("saved index to PostgreSQL schema %s (version %s): %s", self.schema, version, self.last_write)
        return str(version)

    def _vacuum(self, conn: Any, bulk: bool) -> None:
        """Refresh the planner's statistics (and, after row writes, the visibility map index-only scans need) once a
        save has committed. A failure here is a warning: the save is done, and autovacuum catches up."""
        import psycopg

        try:
            for table in ANALYZED_TABLES:
                conn.execute(f"{'ANALYZE' if bulk else 'VACUUM (ANALYZE)'} {self.schema}.{table}")
        except psycopg.Error as exc:
            logger.warning(
                "%s: saved, but refreshing the table statistics failed (%s); autovacuum will do it",
                self,
                " ".join(str(exc).split()) or type(exc).__name__,
            )

    def apply(
        self,
        change: GraphChange,
        embeddings: Any,
        *,
        type_prefix: bool | None = None,
        synonym_threshold: float | None = None,
        progress: bool = False,
    ) -> dict[str, int]:
        """Apply a document-level change row by row (:mod:`~kg_rag.store.postgres.changes`): one transaction
        touching only the rows the documents contribute. A change that needs the whole graph — the first write
        of an index, another embedding model or type prefix (every vector changes), synonym linking (every
        entity is compared) — goes through the whole-graph path instead."""
        from kg_rag.index.embeddings import model_id
        from kg_rag.store.postgres.changes import RowChanges

        started = time.perf_counter()
        with self.writing():
            conn = self._local.conn
            meta = self.meta_in(conn) if self.exists() else None
            whole = (
                meta is None
                or synonym_threshold is not None
                or (type_prefix is not None and type_prefix != meta.type_prefix)
                or (meta.embedding_model and model_id(embeddings) != meta.embedding_model)
            )
            if whole:
                return super().apply(
                    change,
                    embeddings,
                    type_prefix=type_prefix,
                    synonym_threshold=synonym_threshold,
                    progress=progress,
                )
            with conn.transaction():
                rows = RowChanges(self, conn, embeddings, progress=progress)
                removed = rows.apply(change)
        self.last_write = {
            "kind": "rows",
            "seconds": round(time.perf_counter() - started, 3),
            **rows.timings,
            "embedded": rows.counts["embedded"],
        }
        return removed

    def write_communities(self, communities: Any) -> None:
        """Store ``communities`` alone: only the community rows and the meta change (no graph is rewritten)."""
        from kg_rag.store.postgres.sync import write_communities

        with self.writing():
            conn = self._local.conn
            with conn.transaction():
                rows = self.meta_rows(conn)
                meta = R.parse_meta(rows, self.where, self.schema)
                write_communities(conn, self.schema, communities)
                meta = meta.with_(
                    communities=len(communities),
                    stale_communities=len(communities.stale),
                    community_levels=tuple(communities.levels),
                )
                R.write_meta(
                    conn,
                    self.schema,
                    R.meta_values(
                        meta,
                        version=int(rows.get("version") or 0) + 1,
                        report=self._report(rows),
                        bm25=rows.get("bm25") or {},
                        communities=R.community_meta(communities),
                    ),
                )

    # ------------------------------------------------------------------ reading
    @_one_line
    def load(self) -> GraphIndex:
        """The stored index as an editable :class:`GraphIndex` (records and vectors read into memory)."""
        with self.connect() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            rows = self.meta_rows(conn)
            meta = R.parse_meta(rows, self.where, self.schema)
            report = self._report(rows)
            s = self.schema
            documents = [r[0] for r in conn.execute(f"SELECT record FROM {s}.documents ORDER BY doc_id")]
            chunks = [r[0] for r in conn.execute(f"SELECT record FROM {s}.chunks ORDER BY id")]
            entities = [r[0] for r in conn.execute(f"SELECT record FROM {s}.entities ORDER BY id")]
            relations = [r[0] for r in conn.execute(f"SELECT record FROM {s}.relations ORDER BY id")]
            try:
                kg = KnowledgeGraph.from_records(entities, relations, chunks, documents)
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise IndexFormatError(
                    f"{self}#{s}", f"records are inconsistent ({type(exc).__name__}: {exc})"
                ) from exc
            communities = self._communities(conn, rows.get("communities"))
            tables = {
                kind: self._table(
                    conn,
                    f"""SELECT p.{key}, v.text_hash, v.embedding FROM {s}.{vectors} v
                        JOIN {s}.{parent} p ON p.id = v.id ORDER BY p.id""",
                    meta.dim,
                )
                for kind, vectors, parent, key in (
                    ("entities", "entity_vectors", "entities", "key"),
                    ("facts", "fact_vectors", "relations", "rel_id"),
                    ("chunks", "chunk_vectors", "chunks", "chunk_id"),
                )
            }
        return GraphIndex(
            kg,
            tables["entities"],
            tables["facts"],
            tables["chunks"],
            meta.embedding_model,
            meta.type_prefix,
            report,
            kg.version,
            communities=communities,
        )

    def _communities(self, conn: Any, info: Any) -> Any:
        if not isinstance(info, dict):
            return None
        from kg_rag.communities.model import Community, CommunitySet

        rows = conn.execute(f"SELECT record FROM {self.schema}.communities ORDER BY level, id").fetchall()
        try:
            return CommunitySet(
                {c.id: c for c in (Community.from_record(r[0]) for r in rows)},
                dict(info.get("params") or {}),
                {str(k): int(v) for k, v in (info.get("usage") or {}).items()},
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise IndexFormatError(f"{self}#{self.schema}.communities", f"unreadable communities ({exc})") from exc

    @staticmethod
    def _table(conn: Any, sql: str, dim: int) -> VectorTable:
        ids, hashes, vectors = [], [], []
        with conn.cursor(binary=True) as cur:
            cur.execute(sql)
            for key, text_hash, vec in cur:
                ids.append(key)
                hashes.append(text_hash or "")
                vectors.append(np.asarray(vec.to_numpy() if hasattr(vec, "to_numpy") else vec, dtype=np.float32))
        if not ids:
            return VectorTable.empty(dim)
        return VectorTable(ids, hashes, np.stack(vectors))

    def backend(self) -> Any:
        from kg_rag.store.postgres.backend import PostgresBackend

        if not self.exists():  # a mistyped kg_schema would otherwise fail later, deep in a query
            raise self._not_found()
        return PostgresBackend(self)

    @_one_line
    def documents(self, ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
        only = "" if ids is None else "WHERE d.doc_id = ANY(%s)"
        with self.connect(autocommit=True) as conn:
            self.meta_rows(conn)
            rows = conn.execute(
                f"""SELECT d.record, count(c.id) FROM {self.schema}.documents d
                    LEFT JOIN {self.schema}.chunks c ON c.doc_id = d.doc_id {only} GROUP BY d.doc_id, d.record
                    ORDER BY d.doc_id""",
                None if ids is None else (list(map(str, ids)),),
            ).fetchall()
        return [{**record, "chunks": int(n)} for record, n in rows]

    @_one_line
    def chunks_of(self, doc_ids: Sequence[str]) -> dict[str, list[Chunk]]:
        with self.connect(autocommit=True) as conn:
            self.meta_rows(conn)
            rows = conn.execute(
                f"SELECT record FROM {self.schema}.chunks WHERE doc_id = ANY(%s) ORDER BY id", (list(doc_ids),)
            ).fetchall()
        out: dict[str, list[Chunk]] = {}
        for (record,) in rows:
            chunk = chunk_from_record(record)
            out.setdefault(chunk.doc_id, []).append(chunk)
        return out

    def drop(self) -> None:
        """Remove the whole index (the schema and everything in it)."""
        S.check_schema_owned(self.schema)
        with self.writing(), self.connect(autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {self.schema} CASCADE")


ANALYZED_TABLES = (
    "postings",
    "terms",
    "mentions",
    "evidence",
    "relations",
    "entities",
    "chunks",
    "entity_vectors",
    "fact_vectors",
    "chunk_vectors",
)
"""Vacuumed and analysed after a whole-index save (index-only scans need the visibility map; the planner needs
statistics). Row-level writes leave this to autovacuum."""


def _redact(location: str) -> str:
    """The location without a password."""
    parts = urlsplit(location)
    if parts.password:
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
        return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return location


__all__ = ["PostgresStore", "connect", "parse_location", "KGRagError"]
