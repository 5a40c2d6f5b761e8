"""The PostgreSQL store: an index in a PostgreSQL schema, written transactionally, read by any number of
processes (see :mod:`kg_rag.store.postgres.schema` for the tables).

Writes. ``save(index)`` makes the stored index equal to ``index`` in one transaction, writing only what
changed: every row carries a hash of its record (and of the text its vector embeds), so an update that adds
one document touches that document's rows, the entities and relations it changes, and nothing else; the
HNSW indexes are maintained by PostgreSQL. Writers hold a session advisory lock for the whole
read-modify-write (``with store.writing(wait):``), so two processes writing at once lose nothing; the second
waits up to ``wait`` seconds, then fails with :class:`~kg_rag.store.locking.IndexLockedError` naming the
holder. A write materialises the graph in the writer (``load()``); queries never do.

Reads. :meth:`backend` serves the query protocol; every query is one read-only ``REPEATABLE READ``
transaction, so it sees one committed version, and the next query sees the next one — nothing to reload.

Location: ``postgresql://user@host/db?kg_schema=NAME&kg_search=MODE`` — ``kg_schema`` (default ``kg_rag``)
names the schema holding the index; ``kg_search`` is ``auto`` (default: exact scans for vector tables up to
``EXACT_MAX_ROWS`` rows, HNSW above), ``exact`` or ``hnsw``; both are removed before connecting.
Needs the ``postgres`` extra (psycopg 3, pgvector).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import numpy as np

from kg_rag.errors import ConfigurationError, IndexFormatError, IndexNotFoundError, KGRagError
from kg_rag.index.build import GraphIndex, chunk_text
from kg_rag.index.lexical import tokenize
from kg_rag.index.vectors import VectorTable
from kg_rag.ingest.report import IngestReport
from kg_rag.model.graph import KnowledgeGraph
from kg_rag.model.records import EXTRACTED, SYNONYM_KIND, chunk_to_record
from kg_rag.model.schema import RELATED
from kg_rag.store.locking import IndexLockedError, default_wait
from kg_rag.store.postgres import schema as S
from kg_rag.store.writes import DocumentWrites

logger = logging.getLogger(__name__)

KG_PARAMS = ("kg_schema", "kg_search")
SEARCH_MODES = ("auto", "exact", "hnsw")


HNSW_BUILD_MAX_MB = 4096
"""Upper bound of the ``maintenance_work_mem`` a bulk load asks for while it builds the HNSW indexes."""


def _build_memory_mb(conn: Any, rows: int, dim: int) -> int:
    """``maintenance_work_mem`` (MB) for building the HNSW index of ``rows`` vectors: enough for the whole
    graph (vector plus ~0.5 KB of neighbour lists per row, +10 %), since pgvector builds many times faster
    when it fits (a 1 M-row table otherwise crawls through on-disk inserts); never below the server's own
    setting, never above :data:`HNSW_BUILD_MAX_MB`."""
    need = int(rows * (4 * dim + 512) * 1.1 / 2**20) + 64
    current = int(
        conn.execute(
            "SELECT setting::bigint * 1024 / 1048576 FROM pg_settings WHERE name = 'maintenance_work_mem'"
        ).fetchone()[0]
    )  # setting is in kB
    return max(current, min(need, HNSW_BUILD_MAX_MB))


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
        raise ValueError(f"kg_search must be one of {', '.join(SEARCH_MODES)}, got {search!r}")
    conninfo = urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(rest, safe="/"), parts.fragment))
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


def _hash(*parts: Any) -> str:
    data = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()[:32]


def _lock_key(schema: str) -> int:
    return int.from_bytes(hashlib.sha256(f"kg-rag:{schema}".encode()).digest()[:8], "big", signed=True)


class PostgresStore(DocumentWrites):
    """An index in PostgreSQL (see the module docstring)."""

    def __init__(self, location: str, *, verify: bool = True, search: str | None = None) -> None:
        self.location = location
        self.conninfo, self.schema, parsed = parse_location(location)
        self.search = parsed if search is None else search
        if self.search not in SEARCH_MODES:
            raise ValueError(f"search must be one of {', '.join(SEARCH_MODES)}, got {self.search!r}")
        self._lock_key = _lock_key(self.schema)
        self._local = threading.local()
        self._guard = threading.RLock()

    def __repr__(self) -> str:
        return f"PostgresStore(schema={self.schema!r})"

    def __str__(self) -> str:
        return _redact(self.location)

    # ------------------------------------------------------------------- basics
    def connect(self, **kwargs: Any) -> Any:
        return connect(self.conninfo, **kwargs)

    def exists(self) -> bool:
        with self.connect(autocommit=True, vector=False) as conn:
            found = conn.execute("SELECT to_regclass(%s)", (f"{self.schema}.meta",)).fetchone()[0]
            if found is None:
                return False
            row = conn.execute(f"SELECT value FROM {self.schema}.meta WHERE key = 'schema_version'").fetchone()
            return row is not None

    def _not_found(self) -> IndexNotFoundError:
        return IndexNotFoundError(str(self), f"no kg-rag index there (schema {self.schema!r})")

    def meta(self, conn: Any) -> dict[str, Any]:
        """The index's metadata; :class:`IndexNotFoundError` when the schema holds no index."""
        if conn.execute("SELECT to_regclass(%s)", (f"{self.schema}.meta",)).fetchone()[0] is None:
            raise self._not_found()
        rows = conn.execute(f"SELECT key, value FROM {self.schema}.meta").fetchall()
        meta = {k: v for k, v in rows}
        version = meta.get("schema_version")
        if version is None:
            raise self._not_found()
        if not isinstance(version, int):
            raise IndexFormatError(f"{self}#{self.schema}.meta", f"missing or invalid schema_version {version!r}")
        if version > S.SCHEMA_VERSION:
            raise IndexFormatError(
                f"{self}#{self.schema}.meta",
                f"schema version {version} is newer than this kg-rag ({S.SCHEMA_VERSION}); upgrade kg-rag",
            )
        return meta

    # ------------------------------------------------------------------ writing
    @contextmanager
    def writing(self, wait: float | None = None) -> Iterator[PostgresStore]:
        """Hold the index's writer lock (a session advisory lock) for a whole read–modify–write."""
        wait = default_wait() if wait is None else wait
        with self._guard:
            depth = getattr(self._local, "depth", 0)
            if depth:
                self._local.depth += 1
                try:
                    yield self
                finally:
                    self._local.depth -= 1
                return
            conn = self.connect(autocommit=True)
            try:
                self._acquire(conn, wait)
                self._local.conn, self._local.depth = conn, 1
                try:
                    yield self
                finally:
                    self._local.conn, self._local.depth = None, 0
                    conn.execute("SELECT pg_advisory_unlock(%s)", (self._lock_key,))
            finally:
                conn.close()

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
        """Make the stored index equal to ``index`` in one transaction; returns the new data version.

        ``forget`` is accepted for parity with the directory store: PostgreSQL keeps no older versions
        (deleted rows are gone once the transaction commits and vacuum runs).
        """
        with self.writing(wait):
            conn = self._local.conn
            with conn.transaction():
                version = _Sync(self, conn, index).run()
            for table in (
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
            ):
                conn.execute(f"VACUUM (ANALYZE) {self.schema}.{table}")  # index-only scans need the visibility map
        logger.info("saved index to PostgreSQL schema %s (version %s)", self.schema, version)
        return str(version)

    # ------------------------------------------------------------------ reading
    def load(self) -> GraphIndex:
        """The stored index as an editable :class:`GraphIndex` (records and vectors read into memory)."""
        with self.connect() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            meta = self.meta(conn)
            s = self.schema
            documents = [r[0] for r in conn.execute(f"SELECT record FROM {s}.documents ORDER BY doc_id")]
            chunks = [r[0] for r in conn.execute(f"SELECT record FROM {s}.chunks ORDER BY id")]
            entities = [r[0] for r in conn.execute(f"SELECT record FROM {s}.entities ORDER BY id")]
            relations = [r[0] for r in conn.execute(f"SELECT record FROM {s}.relations ORDER BY id")]
            try:
                kg = KnowledgeGraph.from_records(entities, relations, chunks, documents)
            except (KeyError, TypeError, ValueError) as exc:
                raise IndexFormatError(
                    f"{self}#{s}", f"records are inconsistent ({type(exc).__name__}: {exc})"
                ) from exc
            communities = None
            info = meta.get("communities")
            if isinstance(info, dict):
                from kg_rag.communities.model import Community, CommunitySet

                rows = conn.execute(f"SELECT record FROM {s}.communities ORDER BY level, id").fetchall()
                communities = CommunitySet(
                    {r[0]["id"]: Community.from_record(r[0]) for r in rows},
                    dict(info.get("params") or {}),
                    {str(k): int(v) for k, v in (info.get("usage") or {}).items()},
                )
            dim = int((meta.get("embedding") or {}).get("dim") or 0)
            tables = {
                kind: self._table(
                    conn,
                    f"""SELECT p.{key}, v.text_hash, v.embedding FROM {s}.{vectors} v
                                          JOIN {s}.{parent} p ON p.id = v.id ORDER BY p.id""",
                    dim,
                )
                for kind, vectors, parent, key in (
                    ("entities", "entity_vectors", "entities", "key"),
                    ("facts", "fact_vectors", "relations", "rel_id"),
                    ("chunks", "chunk_vectors", "chunks", "chunk_id"),
                )
            }
        emb = meta.get("embedding") or {}
        return GraphIndex(
            kg,
            tables["entities"],
            tables["facts"],
            tables["chunks"],
            str(emb.get("model", "")),
            bool(emb.get("type_prefix", True)),
            IngestReport.from_dict(meta.get("report") or {}),
            kg.version,
            communities=communities,
        )

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

    def stats(self) -> dict[str, Any]:
        with self.connect(autocommit=True) as conn:
            meta = self.meta(conn)
        stats = dict(meta.get("stats") or {})
        report = IngestReport.from_dict(meta.get("report") or {})
        emb = meta.get("embedding") or {}
        stats["skipped"] = dict(sorted(report.skipped.items()))
        stats["extraction_failures"] = len(report.failures)
        stats["embedding_model"] = str(emb.get("model", ""))
        stats["dim"] = int(emb.get("dim", 0) or 0)
        stats["generation"] = f"{self.schema}@{meta.get('version', 0)}"
        return stats

    def documents(self) -> list[dict[str, Any]]:
        with self.connect(autocommit=True) as conn:
            self.meta(conn)
            rows = conn.execute(
                f"""SELECT d.record, count(c.id) FROM {self.schema}.documents d
                    LEFT JOIN {self.schema}.chunks c ON c.doc_id = d.doc_id GROUP BY d.doc_id, d.record
                    ORDER BY d.doc_id"""
            ).fetchall()
        return [{**record, "chunks": int(n)} for record, n in rows]

    def drop(self) -> None:
        """Remove the whole index (the schema and everything in it)."""
        S.check_schema_owned(self.schema)
        with self.writing(), self.connect(autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {self.schema} CASCADE")


def _redact(location: str) -> str:
    """The location without a password."""
    parts = urlsplit(location)
    if parts.password:
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
        return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return location


# ---------------------------------------------------------------------------------------------- sync
class _Sync:
    """One save: compute the rows of ``index``, compare their hashes with what is stored, write the difference."""

    def __init__(self, store: PostgresStore, conn: Any, index: GraphIndex) -> None:
        self.store, self.conn, self.index, self.s = store, conn, index, store.schema

    def run(self) -> int:
        conn, s, index = self.conn, self.s, self.index
        S.check_schema_owned(s)  # before reading anything there: public.meta may be someone else's table
        dim = index.dim or 1
        found = conn.execute("SELECT to_regclass(%s)", (f"{s}.meta",)).fetchone()[0]
        if found is not None:
            meta = {k: v for k, v in conn.execute(f"SELECT key, value FROM {s}.meta")}
            stored_dim = int((meta.get("embedding") or {}).get("dim") or 0)
            if stored_dim and index.dim and stored_dim != index.dim:
                raise ValueError(
                    f"{self.store}: schema {s} holds {stored_dim}-dimensional vectors, this index has {index.dim}; "
                    "use another schema (?kg_schema=NAME) or the same embedding model"
                )
            version = meta.get("schema_version")
            if isinstance(version, int):
                for sql in S.migration_steps(s, version):
                    conn.execute(sql)
            dim = stored_dim or dim
        else:
            meta = {}
        for sql in S.create_statements(s, dim):
            conn.execute(sql)
        _psycopg()[1](conn)  # the vector type exists now
        fresh = conn.execute(
            f"SELECT NOT EXISTS (SELECT 1 FROM {s}.entities) AND NOT EXISTS (SELECT 1 FROM {s}.chunks)"
        ).fetchone()[0]
        if fresh:  # bulk load: build the HNSW indexes once, after the rows are in
            for sql in S.drop_vector_index_statements(s):
                conn.execute(sql)
        with index.kg.lock:
            rows = self._rows()
        self._write(rows, fresh)
        if fresh:
            rows_max = max(len(index.entities), len(index.facts), len(index.chunks))
            conn.execute(f"SET LOCAL maintenance_work_mem = '{_build_memory_mb(conn, rows_max, dim)}MB'")
            for sql in S.vector_index_statements(s):
                conn.execute(sql)
        version = int(meta.get("version") or 0) + 1
        self._write_meta(version)
        return version

    # ------------------------------------------------------------------ rows
    def _rows(self) -> dict[str, Any]:
        index, kg = self.index, self.index.kg
        ent_pos, fact_pos, chunk_pos = index.entities.position, index.facts.position, index.chunks.position
        chunk_ids = list(index.chunks.ids) if len(index.chunks) else list(kg.chunks)
        chunk_rank = {c: i for i, c in enumerate(chunk_ids)}
        chunk_ids += [c for c in kg.chunks if c not in chunk_rank]
        chunks = {}
        for cid in chunk_ids:
            chunk = kg.chunks[cid]
            record = chunk_to_record(chunk)
            p = chunk_pos.get(cid)
            text_hash = index.chunks.hashes[p] if p is not None else None
            chunks[cid] = {
                "record": record,
                "doc_id": chunk.doc_id,
                "text_hash": text_hash,
                "vector": index.chunks.vectors[p] if p is not None else None,
                "hash": _hash(record, text_hash),
                "text": chunk_text(chunk),
            }
        entities = {}
        node_order = list(index.entities.ids) + [k for k in kg.graph.nodes if k not in ent_pos]
        for rec in kg.entity_records():
            key = rec["key"]
            p = ent_pos.get(key)
            text_hash = index.entities.hashes[p] if p is not None else None
            mentions = [c for c in dict.fromkeys(rec["chunk_ids"]) if c in kg.chunks]
            out_d, in_d = kg.graph.out_degree(key), kg.graph.in_degree(key)
            entities[key] = {
                "record": rec,
                "text_hash": text_hash,
                "vector": index.entities.vectors[p] if p is not None else None,
                "mentions": mentions,
                "out": out_d,
                "in": in_d,
                "hash": _hash(rec, text_hash, mentions, out_d, in_d),
            }
        relations = {}
        for rec in kg.relation_records():
            rid = rec["id"]
            p = fact_pos.get(rid)
            is_syn = rec.get("kind", EXTRACTED) == SYNONYM_KIND
            evidence = rec.get("evidence") or []
            weight = 1.0 if is_syn else float(sum(e.get("weight", 1.0) for e in evidence) or 1.0)
            text_hash = index.facts.hashes[p] if p is not None else None
            relations[rid] = {
                "record": rec,
                "type": str(rec.get("relation_type") or RELATED),
                "synonym": is_syn,
                "weight": weight,
                "text_hash": text_hash,
                "vector": index.facts.vectors[p] if p is not None else None,
                "hash": _hash(rec, text_hash),
            }
        documents = {}
        for rec in kg.document_records():
            rec = {k: v for k, v in rec.items() if k != "chunks"}
            documents[rec["id"]] = {"record": rec, "hash": _hash(rec)}
        return {
            "chunks": chunks,
            "entities": {k: entities[k] for k in node_order if k in entities},
            "relations": relations,
            "documents": documents,
        }

    # ----------------------------------------------------------------- write
    def _stored(self, table: str, key: str) -> dict[str, tuple[int, str]]:
        return {k: (i, h) for k, i, h in self.conn.execute(f"SELECT {key}, id, rec_hash FROM {self.s}.{table}")}

    @staticmethod
    def _plan(new: dict[str, dict], stored: dict[str, tuple[int, str]], fresh: bool):
        """(ids by key, changed keys, removed ids); fresh stores number rows by position."""
        ids: dict[str, int] = {}
        changed: list[str] = []
        next_id = (max((i for i, _ in stored.values()), default=-1) + 1) if stored else 0
        for pos, (key, row) in enumerate(new.items()):
            old = stored.get(key)
            if old is not None:
                ids[key] = old[0]
                if old[1] != row["hash"]:
                    changed.append(key)
                continue
            ids[key] = pos if fresh else next_id
            if not fresh:
                next_id += 1
            changed.append(key)
        removed = [i for k, (i, _) in stored.items() if k not in new]
        return ids, changed, removed

    def _copy(self, table: str, columns: list[str], types: list[str], rows: Iterator[tuple]) -> int:
        n = 0
        with self.conn.cursor() as cur:
            with cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN WITH (FORMAT BINARY)") as cp:
                cp.set_types(types)
                for row in rows:
                    cp.write_row(row)
                    n += 1
        return n

    def _upsert(self, table: str, key: str, columns: list[str], types: list[str], rows: list[tuple]) -> None:
        """Insert or replace whole rows (by ``key``) through a temporary table filled by binary COPY."""
        if not rows:
            return
        tmp = f"kg_tmp_{table}"
        self.conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS {tmp} (LIKE {self.s}.{table}) ON COMMIT DROP")
        self.conn.execute(f"TRUNCATE {tmp}")
        self._copy(tmp, columns, types, iter(rows))
        updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in columns if c != key)
        self.conn.execute(
            f"INSERT INTO {self.s}.{table} ({', '.join(columns)}) SELECT {', '.join(columns)} FROM {tmp} "
            f"ON CONFLICT ({key}) DO UPDATE SET {updates}"
        )

    def _write(self, rows: dict[str, Any], fresh: bool) -> None:
        conn, s = self.conn, self.s
        J = _json
        # ---- plan every table against what is stored
        plans = {
            "documents": self._plan_documents(rows["documents"]),
            "chunks": self._plan(rows["chunks"], self._stored("chunks", "chunk_id"), fresh),
            "entities": self._plan(rows["entities"], self._stored("entities", "key"), fresh),
            "relations": self._plan(rows["relations"], self._stored("relations", "rel_id"), fresh),
        }
        chunk_ids, chunks_changed, chunks_removed = plans["chunks"]
        ent_ids, ents_changed, ents_removed = plans["entities"]
        rel_ids, rels_changed, rels_removed = plans["relations"]
        stats = {
            k: {"changed": len(plans[k][1]), "removed": len(plans[k][2])} for k in ("chunks", "entities", "relations")
        }
        logger.info("PostgreSQL save: %s", stats)
        # ---- deletions first (relations, then chunks and entities; children cascade)
        old_text = (
            {
                cid: h
                for cid, h in conn.execute(
                    f"SELECT c.chunk_id, v.text_hash FROM {s}.chunks c LEFT JOIN {s}.chunk_vectors v ON v.id = c.id"
                )
            }
            if not fresh
            else {}
        )
        retext = [c for c in chunks_changed if c not in old_text or old_text[c] != rows["chunks"][c]["text_hash"]]
        dropped_terms_from = chunks_removed + [chunk_ids[c] for c in retext if c in old_text]
        affected_terms: set[str] = set()
        if dropped_terms_from:
            affected_terms |= {
                t
                for (t,) in conn.execute(
                    f"SELECT DISTINCT term FROM {s}.postings WHERE chunk = ANY(%s)", (dropped_terms_from,)
                )
            }
        if rels_removed:
            conn.execute(f"DELETE FROM {s}.relations WHERE id = ANY(%s)", (rels_removed,))
        if chunks_removed:
            conn.execute(f"DELETE FROM {s}.chunks WHERE id = ANY(%s)", (chunks_removed,))
        if ents_removed:
            conn.execute(f"DELETE FROM {s}.entities WHERE id = ANY(%s)", (ents_removed,))
        doc_upserts, doc_removed = plans["documents"]
        if doc_removed:
            conn.execute(f"DELETE FROM {s}.documents WHERE doc_id = ANY(%s)", (doc_removed,))
        # ---- documents, chunks, entities
        self._upsert(
            "documents",
            "doc_id",
            ["doc_id", "record", "rec_hash"],
            ["text", "jsonb", "text"],
            [(k, J(rows["documents"][k]["record"]), rows["documents"][k]["hash"]) for k in doc_upserts],
        )
        chunk_rows = []
        term_rows = []
        retext_set = set(retext)
        for cid in chunks_changed:
            r = rows["chunks"][cid]
            counts = Counter(tokenize(r["text"]))
            chunk_rows.append((chunk_ids[cid], cid, r["doc_id"], J(r["record"]), r["hash"], int(sum(counts.values()))))
            if cid in retext_set:
                length = int(sum(counts.values()))
                term_rows += [(t, chunk_ids[cid], n, length) for t, n in counts.items()]
                affected_terms |= set(counts)
        self._upsert(
            "chunks",
            "id",
            ["id", "chunk_id", "doc_id", "record", "rec_hash", "n_terms"],
            ["int8", "text", "text", "jsonb", "text", "int4"],
            chunk_rows,
        )
        redo_postings = [chunk_ids[c] for c in retext if c in old_text]
        if redo_postings:
            conn.execute(f"DELETE FROM {s}.postings WHERE chunk = ANY(%s)", (redo_postings,))
        if term_rows:
            self._copy(
                f"{s}.postings", ["term", "chunk", "tf", "dl"], ["text", "int8", "int4", "int4"], iter(term_rows)
            )
        self._upsert(
            "entities",
            "id",
            ["id", "key", "name", "entity_type", "record", "rec_hash", "n_chunks", "out_degree", "in_degree"],
            ["int8", "text", "text", "text", "jsonb", "text", "int4", "int4", "int4"],
            [
                (
                    ent_ids[k],
                    k,
                    r["record"]["name"],
                    r["record"]["entity_type"],
                    J(r["record"]),
                    r["hash"],
                    len(r["mentions"]),
                    r["out"],
                    r["in"],
                )
                for k in ents_changed
                for r in (rows["entities"][k],)
            ],
        )
        changed_ents = [ent_ids[k] for k in ents_changed]
        if changed_ents and not fresh:
            conn.execute(f"DELETE FROM {s}.mentions WHERE entity = ANY(%s)", (changed_ents,))
        self._copy(
            f"{s}.mentions",
            ["entity", "chunk"],
            ["int8", "int8"],
            (
                (ent_ids[k], chunk_ids[c])
                for k in ents_changed
                for c in rows["entities"][k]["mentions"]
                if c in chunk_ids
            ),
        )
        # ---- relation types, relations, evidence
        types = {n: i for i, n in conn.execute(f"SELECT id, name FROM {s}.relation_types")}
        new_types = []
        for rid in rels_changed:
            t = rows["relations"][rid]["type"]
            if t not in types:
                types[t] = len(types)
                new_types.append((types[t], t))
        if new_types:
            self._copy(f"{s}.relation_types", ["id", "name"], ["int4", "text"], iter(new_types))
        rel_rows = []
        for rid in rels_changed:
            r = rows["relations"][rid]
            rec = r["record"]
            rel_rows.append(
                (
                    rel_ids[rid],
                    rid,
                    ent_ids[rec["source"]],
                    ent_ids[rec["target"]],
                    types[r["type"]],
                    r["synonym"],
                    float(r["weight"]),
                    J(rec),
                    r["hash"],
                )
            )
        self._upsert(
            "relations",
            "id",
            ["id", "rel_id", "source", "target", "type_id", "is_synonym", "weight", "record", "rec_hash"],
            ["int8", "text", "int8", "int8", "int4", "bool", "float4", "jsonb", "text"],
            rel_rows,
        )
        # ---- vectors whose text changed (a removed parent took its vector with it)
        for table, parent, key, new, ids in (
            ("entity_vectors", "entities", "key", rows["entities"], ent_ids),
            ("fact_vectors", "relations", "rel_id", rows["relations"], rel_ids),
            ("chunk_vectors", "chunks", "chunk_id", rows["chunks"], chunk_ids),
        ):
            self._write_vectors(table, parent, key, new, ids, fresh)
        changed_rels = [rel_ids[r] for r in rels_changed]
        if changed_rels and not fresh:
            conn.execute(f"DELETE FROM {s}.evidence WHERE relation = ANY(%s)", (changed_rels,))

        def evidence_rows() -> Iterator[tuple]:
            for rid in rels_changed:
                for i, ev in enumerate(rows["relations"][rid]["record"].get("evidence") or []):
                    cid = ev.get("chunk_id")
                    conf = ev.get("confidence")
                    yield (
                        rel_ids[rid],
                        i,
                        chunk_ids.get(cid) if cid is not None else None,
                        ev.get("quote"),
                        None if conf is None else float(conf),
                        float(ev.get("weight", 1.0)),
                    )

        self._copy(
            f"{s}.evidence",
            ["relation", "ord", "chunk", "quote", "confidence", "weight"],
            ["int8", "int4", "int8", "text", "float4", "float4"],
            evidence_rows(),
        )
        # ---- BM25 document frequencies of the terms whose postings changed
        if fresh:
            conn.execute(f"INSERT INTO {s}.terms SELECT term, count(*) FROM {s}.postings GROUP BY term")
        elif affected_terms:
            terms = sorted(affected_terms)
            conn.execute(f"DELETE FROM {s}.terms WHERE term = ANY(%s)", (terms,))
            conn.execute(
                f"INSERT INTO {s}.terms SELECT term, count(*) FROM {s}.postings WHERE term = ANY(%s) GROUP BY term",
                (terms,),
            )
        self._write_communities()
        self.stats = stats

    def _write_communities(self) -> None:
        conn, s = self.conn, self.s
        cs = self.index.communities
        stored = dict(conn.execute(f"SELECT id, rec_hash FROM {s}.communities").fetchall())
        new = {c.id: c for c in cs} if cs is not None else {}
        gone = [i for i in stored if i not in new]
        if gone:
            conn.execute(f"DELETE FROM {s}.communities WHERE id = ANY(%s)", (gone,))
        rows, members = [], []
        for cid, c in new.items():
            record = c.to_record()
            h = _hash(record)
            if stored.get(cid) == h:
                continue
            rows.append((cid, c.level, _json(record), h))
            members += [(cid, key, c.level) for key in c.entities]
        if rows:
            changed = [r[0] for r in rows]
            conn.execute(f"DELETE FROM {s}.community_members WHERE community = ANY(%s)", (changed,))
            columns, types = ["id", "level", "record", "rec_hash"], ["text", "int4", "jsonb", "text"]
            self._upsert("communities", "id", columns, types, rows)
            columns, types = ["community", "entity_key", "level"], ["text", "text", "int4"]
            self._copy(f"{s}.community_members", columns, types, iter(members))

    def _write_vectors(self, table: str, parent: str, key: str, new: dict, ids: dict, fresh: bool) -> None:
        conn, s = self.conn, self.s
        stored = (
            {}
            if fresh
            else {
                k: h
                for k, h in conn.execute(
                    f"SELECT p.{key}, v.text_hash FROM {s}.{table} v JOIN {s}.{parent} p ON p.id = v.id"
                )
            }
        )
        upserts = [k for k, r in new.items() if r["vector"] is not None and stored.get(k) != r["text_hash"]]
        gone = [ids[k] for k in stored if k in new and new[k]["vector"] is None]
        if gone:
            conn.execute(f"DELETE FROM {s}.{table} WHERE id = ANY(%s)", (gone,))
        self._upsert(
            table,
            "id",
            ["id", "text_hash", "embedding"],
            ["int8", "text", "vector"],
            [(ids[k], new[k]["text_hash"], new[k]["vector"]) for k in upserts],
        )

    def _plan_documents(self, new: dict[str, dict]) -> tuple[list[str], list[str]]:
        stored = {k: h for k, h in self.conn.execute(f"SELECT doc_id, rec_hash FROM {self.s}.documents")}
        upserts = [k for k, r in new.items() if stored.get(k) != r["hash"]]
        return upserts, [k for k in stored if k not in new]

    def _write_meta(self, version: int) -> None:
        conn, s, index = self.conn, self.s, self.index
        n, avg = conn.execute(f"SELECT count(*), coalesce(avg(n_terms), 0) FROM {s}.chunks").fetchone()
        type_counts = dict(
            conn.execute(
                f"""SELECT t.name, count(*) FROM {s}.relations r JOIN {s}.relation_types t ON t.id = r.type_id
                    WHERE NOT r.is_synonym GROUP BY t.name"""
            ).fetchall()
        )
        values = {
            "schema_version": S.SCHEMA_VERSION,
            "format": "kg-rag-index",
            "embedding": {"model": index.embedding_model, "dim": index.dim, "type_prefix": index.type_prefix},
            "stats": {
                **index.kg.stats(),
                **(
                    {"communities": len(index.communities), "stale_communities": len(index.communities.stale)}
                    if index.communities is not None
                    else {}
                ),
            },
            "report": index.report.to_dict(),
            "bm25": {"n": int(n), "avgdl": float(avg)},
            "type_counts": type_counts,
            "communities": None
            if index.communities is None
            else {
                "count": len(index.communities),
                "levels": index.communities.levels,
                "params": index.communities.params,
                "usage": index.communities.usage,
            },
            "version": version,
            "saved": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        for key, value in values.items():
            conn.execute(
                f"INSERT INTO {s}.meta (key, value) VALUES (%s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                (key, _json(value)),
            )


def _json(value: Any) -> Any:
    from psycopg.types.json import Jsonb

    return Jsonb(value)


__all__ = ["PostgresStore", "connect", "parse_location", "KGRagError"]
