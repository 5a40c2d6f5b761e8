"""PostgreSQL as a serving backend: connections, one read-only transaction per query, and the search helpers.

Every query runs in one read-only ``REPEATABLE READ`` transaction (:meth:`PostgresBackend.reader`), so it reads
one committed version however many writers commit meanwhile, and the next query reads the newest; the query
operations themselves are :class:`~kg_rag.store.postgres.view.PostgresView`'s.

Each thread uses its own connection (psycopg connections are not shared between threads). A query's vector
searches run at once (:meth:`PostgresView.search_ahead`): up to :data:`SEARCH_WORKERS` helper threads, each with a
connection of its own, search in transactions that import the query's snapshot, so they read the same version.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import kg_rag.store.postgres.rows as R
from kg_rag.errors import InputError
from kg_rag.index.meta import IndexMeta
from kg_rag.store.base import BackendInfo, VersionedBackend
from kg_rag.store.postgres.view import HNSW_MIN_EF, IVF_NPROBE, PostgresView

__all__ = ["SEARCH_WORKERS", "PostgresBackend", "PostgresView"]

logger = logging.getLogger(__name__)


def _workers(raw: str) -> int:
    """``KG_RAG_PG_SEARCH_WORKERS`` as a count, or a one-line error naming it."""
    try:
        n = int(raw)
    except ValueError:
        n = -1
    if n < 0:
        raise InputError(f"KG_RAG_PG_SEARCH_WORKERS must be a whole number of helper threads (0 or more), got {raw!r}")
    return n


SEARCH_WORKERS = _workers(os.environ.get("KG_RAG_PG_SEARCH_WORKERS", "2"))
"""Helper threads (each with its own connection), shared by the backend's serving threads, that run a query's
other searches while its own connection runs one (``KG_RAG_PG_SEARCH_WORKERS``; 0 runs them one after another).
A search still queued when the query's own is done runs on the query's connection, so under load (every helper
busy with other queries) a query waits no longer than running its searches in turn. Behind a transaction-mode
pooler (PgBouncer), helpers need server connections of their own: size the pool for them, or set 0."""
SEARCHER_THREADS = "kg-rag-pg-search"


class PostgresBackend(VersionedBackend):
    """Queries an index stored in PostgreSQL (see the module docstring)."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.schema = store.schema
        self._local = threading.local()
        self._connections: list[Any] = []
        self._lock = threading.Lock()
        self._types: tuple[int, list[str], dict[str, int]] | None = None
        self._aliases: tuple[int, dict[str, str]] | None = None
        self._meta: tuple[Any, dict[str, Any], IndexMeta, BackendInfo] | None = None
        self._seen_version: str | None = None
        self._searchers: ThreadPoolExecutor | None = None
        self._warmed = False

    # ------------------------------------------------------------------ connections
    def _connection(self) -> Any:
        conn = getattr(self._local, "conn", None)
        if conn is None or conn.closed:
            import psycopg

            conn = self.store.connect()
            # every query transaction begins as REPEATABLE READ READ ONLY (no extra round trip to set it)
            conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
            conn.read_only = True
            with conn.transaction():
                conn.execute(f"SET hnsw.ef_search = {HNSW_MIN_EF}")  # per session; raised per search when k needs it
                conn.execute(f"SET ivfflat.probes = {IVF_NPROBE}")  # large tables: an inverted file, as in process
                # queries here are short and index-driven: compiling them (JIT) costs more than it saves
                conn.execute("SET jit = off")
                # a handful of statements, each run many times with small arrays: planning them once (generic
                # plans of the prepared statements) instead of per call halves the server time spent planning
                conn.execute("SET plan_cache_mode = force_generic_plan")
            self._local.conn = conn
            with self._lock:
                self._connections.append(conn)
        return conn

    def warm_up(self) -> None:
        """Open this thread's connection and each helper's, so the first query does not pay for connecting.
        Best effort: a server that cannot be reached is reported by the first query."""
        try:
            self._connection()
            with self._lock:  # once per backend: engines built on many threads at once share the helpers
                if self._warmed or SEARCH_WORKERS <= 0:
                    return
                self._warmed = True
            together = threading.Barrier(SEARCH_WORKERS)  # each task waits for the others: one per thread

            def connect() -> None:
                try:
                    together.wait(timeout=2)
                except threading.BrokenBarrierError:  # a helper busy with a query: it connects when it is free
                    pass
                self._connection()

            for future in [self.searchers().submit(connect) for _ in range(SEARCH_WORKERS)]:
                future.result(timeout=30)
        except Exception as exc:  # noqa: BLE001 - the first query reports it
            logger.debug("warming up the PostgreSQL connections failed: %s", exc)

    def helpers(self) -> int:
        """How many helper threads run a query's other searches (:data:`SEARCH_WORKERS`, read when asked)."""
        return SEARCH_WORKERS

    def searchers(self) -> ThreadPoolExecutor:
        """The helper threads of :meth:`PostgresView.search_ahead` (started on first use)."""
        with self._lock:
            if self._searchers is None:
                self._searchers = ThreadPoolExecutor(SEARCH_WORKERS, thread_name_prefix=SEARCHER_THREADS)
            return self._searchers

    def in_snapshot(self, snapshot: str, meta: Any, method: str, *args: Any) -> Any:
        """A :class:`PostgresView` method (a search) on this thread's connection, in a transaction that imports
        ``snapshot`` (the asking query's): it reads exactly what that query reads."""
        from psycopg import sql

        conn = self._connection()
        try:
            with conn.transaction():
                conn.execute(sql.SQL("SET TRANSACTION SNAPSHOT {}").format(sql.Literal(snapshot)))
                view = PostgresView(self, conn)
                view._meta = meta
                return getattr(view, method)(*args)
        except Exception as exc:
            import psycopg

            if isinstance(exc, psycopg.OperationalError):  # a dropped connection: reconnect next time
                self._local.conn = None
            raise

    def close(self) -> None:
        with self._lock:
            searchers, self._searchers = self._searchers, None
            self._warmed = False
        if searchers is not None:  # (from a helper thread itself when it held the last reference: no self-join)
            searchers.shutdown(wait=not threading.current_thread().name.startswith(SEARCHER_THREADS))
        with self._lock:
            for conn in self._connections:
                try:
                    conn.close()
                except Exception:  # noqa: BLE001 - closing is best effort
                    pass
            self._connections = []

    def __del__(self) -> None:
        self.close()

    @contextmanager
    def reader(self) -> Iterator[PostgresView]:
        """One read-only REPEATABLE READ transaction: a consistent view for one query."""
        conn = self._connection()
        depth = getattr(self._local, "depth", 0)
        self._local.depth = depth + 1
        try:
            with conn.transaction():
                view = PostgresView(self, conn)
                if depth:  # a reader inside a reader is a savepoint, which cannot export its snapshot to helpers
                    view.concurrent_searches = False
                yield view
        except Exception as exc:
            import psycopg

            if isinstance(exc, psycopg.OperationalError):  # a dropped connection: reconnect next time
                self._local.conn = None
            if isinstance(exc, psycopg.Error) and not depth:
                from kg_rag.store.postgres.store import store_error

                raise store_error(exc, str(self.store), writing=False) from exc
            raise
        finally:
            self._local.depth = depth

    # --------------------------------------------------------------- lifecycle
    def refresh(self) -> bool:
        """Always current (each query reads the newest committed version); returns whether the data changed
        since the last call."""
        version = self.info().version
        changed = self._seen_version is not None and version != self._seen_version
        self._seen_version = version
        return changed

    def knowledge_graph(self) -> Any:
        """The whole graph as an editable :class:`~kg_rag.model.graph.KnowledgeGraph` (reads every record)."""
        return self.store.load().kg

    def to_index(self) -> Any:
        return self.store.load()

    def meta(self, conn: Any) -> tuple[dict[str, Any], IndexMeta, BackendInfo]:
        """The index's meta rows, validated :class:`IndexMeta` and :class:`BackendInfo`, read again only when
        the write version changed (one small query otherwise)."""
        row = conn.execute(f"SELECT value FROM {self.schema}.meta WHERE key = 'version'").fetchone()
        version = row[0] if row else None
        cached = self._meta
        if cached is None or cached[0] != version:
            rows = conn.execute(
                f"SELECT key, value FROM {self.schema}.meta WHERE key IN "
                "('schema_version', 'embedding', 'stats', 'bm25', 'version', 'communities', 'vector_indexes')"
            ).fetchall()
            data = dict(rows)
            meta = R.parse_meta(data, self.store.where, self.schema)
            cached = (version, data, meta, meta.info(backend="postgres"))
            with self._lock:
                self._meta = cached
        return cached[1], cached[2], cached[3]

    def aliases(self, conn: Any, version: int) -> dict[str, str]:
        """Entity keys merged into another entity -> that one's key (the ingest report's resolution record), read
        again only when the write version changed."""
        cached = self._aliases
        if cached is None or cached[0] != version:
            from kg_rag.model.resolution import Resolution

            row = conn.execute(f"SELECT value -> 'resolution' FROM {self.schema}.meta WHERE key = 'report'").fetchone()
            try:
                aliases = Resolution.from_dict(row[0] if row else None).aliases()
            except ValueError:
                aliases = {}  # an unreadable record resolves nothing; the report itself says what is wrong
            cached = (version, aliases)
            self._aliases = cached
        return cached[1]

    def type_names(self, conn: Any, version: int) -> tuple[list[str], dict[str, int]]:
        cached = self._types
        if cached is None or cached[0] != version:
            rows = conn.execute(f"SELECT id, name FROM {self.schema}.relation_types ORDER BY id").fetchall()
            size = (max((i for i, _ in rows), default=-1)) + 1
            names = [""] * size
            for i, n in rows:
                names[i] = n
            cached = (version, names, {n: i for i, n in rows})
            self._types = cached
        return cached[1], cached[2]
