"""Whole-index saves into PostgreSQL: a first save bulk-loads, a later one writes the difference.

- **First save** (the schema does not exist yet): tables are created with their keys only, every row is
  streamed in with binary ``COPY``, then foreign keys and secondary indexes are added (one validating pass
  each), and the HNSW indexes are built last, with parallel workers (``max_parallel_maintenance_workers``) and
  ``maintenance_work_mem`` sized to the largest vector table so the build stays in memory.
- **Saving over an index** (a rebuild, a re-typing, a community refresh of an old index): every row carries a
  hash of its record, so only changed rows are written; derived columns (degrees, mention counts) are recomputed
  for the entities those rows touch.

Adding, replacing or deleting documents does not come here: see :mod:`~kg_rag.store.postgres.changes`.
"""

from __future__ import annotations

import logging
import os
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import kg_rag.store.postgres.rows as R
import kg_rag.store.postgres.tables as S
from kg_rag.errors import InputError
from kg_rag.index.build import GraphIndex
from kg_rag.index.meta import IndexMeta
from kg_rag.model.records import chunk_to_record

logger = logging.getLogger(__name__)

BUILD_MAX_MB = int(os.environ.get("KG_RAG_PG_BUILD_MAX_MB", "4096"))
"""Upper bound of the ``maintenance_work_mem`` a bulk load asks for while it builds the HNSW indexes."""
BUILD_WORKERS = int(os.environ.get("KG_RAG_PG_BUILD_WORKERS", "-1"))
"""Parallel workers per HNSW build (``max_parallel_maintenance_workers``); -1: the server's cores minus one,
at least one (the build is CPU-bound; PostgreSQL's default of 2 leaves larger servers idle)."""


def build_memory_mb(conn: Any, rows: int, dim: int) -> int:
    """``maintenance_work_mem`` (MB) for building the HNSW index of ``rows`` vectors: enough for the whole
    graph (vector plus ~0.5 KB of neighbour lists per row, +10 %), since pgvector builds many times faster
    when it fits (a 1 M-row table otherwise crawls through on-disk inserts); never below the server's own
    setting, never above :data:`BUILD_MAX_MB`."""
    need = int(rows * (4 * dim + 512) * 1.1 / 2**20) + 64
    current = int(
        conn.execute(
            "SELECT setting::bigint * 1024 / 1048576 FROM pg_settings WHERE name = 'maintenance_work_mem'"
        ).fetchone()[0]
    )  # setting is in kB
    return max(current, min(need, BUILD_MAX_MB))


def build_workers(conn: Any) -> int:
    """Parallel maintenance workers for an index build (see :data:`BUILD_WORKERS`), within what the
    server allows (``max_worker_processes``)."""
    if BUILD_WORKERS >= 0:
        wanted = BUILD_WORKERS
    else:
        wanted = max(1, (os.cpu_count() or 2) - 1)  # the embedded server shares this machine
    limit = int(conn.execute("SELECT setting::int FROM pg_settings WHERE name = 'max_worker_processes'").fetchone()[0])
    return max(0, min(wanted, limit - 1))


class FullSave:
    """One whole-index save (see the module docstring); :meth:`run` returns the new write version."""

    def __init__(self, store: Any, conn: Any, index: GraphIndex) -> None:
        self.store, self.conn, self.index, self.s = store, conn, index, store.schema
        self.timings: dict[str, float] = {}
        self.bulk = False
        """Whether this save created the schema (its rows were copied frozen: no vacuum needed)."""

    def _timed(self, name: str, started: float) -> float:
        now = time.perf_counter()
        self.timings[name] = round(now - started, 2)
        return now

    def run(self) -> int:
        conn, s, index = self.conn, self.s, self.index
        S.check_schema_owned(s)  # before reading anything there: public.meta may be someone else's table
        dim = index.dim or 1
        has_meta = conn.execute("SELECT to_regclass(%s)", (f"{s}.meta",)).fetchone()[0] is not None
        meta = R.read_meta_rows(conn, s) if has_meta else {}
        if meta:
            stored_dim = int((meta.get("embedding") or {}).get("dim") or 0)
            if stored_dim and index.dim and stored_dim != index.dim:
                raise InputError(
                    f"{self.store}: schema {s} holds {stored_dim}-dimensional vectors, this index has {index.dim}; "
                    "use another schema (?kg_schema=NAME) or the same embedding model"
                )
            version = meta.get("schema_version")
            if isinstance(version, int):
                for sql in S.migration_steps(s, version):
                    conn.execute(sql)
            dim = stored_dim or dim
        new_schema = not has_meta and conn.execute("SELECT to_regclass(%s)", (f"{s}.entities",)).fetchone()[0] is None
        if new_schema:
            self._bulk(dim)
        else:
            for sql in S.create_statements(s, dim):
                conn.execute(sql)
            R.register_vector(conn)
            fresh = conn.execute(
                f"SELECT NOT EXISTS (SELECT 1 FROM {s}.entities) AND NOT EXISTS (SELECT 1 FROM {s}.chunks)"
            ).fetchone()[0]
            if fresh:  # empty tables (an emptied index): load in bulk, build the vector indexes once, sized
                for _, name, _ in conn.execute(S.VECTOR_INDEX_QUERY, (s,)).fetchall():
                    conn.execute(f"DROP INDEX {name}")
                self._load_all()
                self._build_vector_indexes(dim)
            else:
                self._diff()
                self._build_vector_indexes(dim, missing_only=True)  # an index older releases left without one
        kinds = {table: kind for table, _, kind in conn.execute(S.VECTOR_INDEX_QUERY, (s,)).fetchall()}
        R.write_meta(conn, s, {"vector_indexes": kinds})  # what searches go through (full save only)
        version = int(meta.get("version") or 0) + 1
        n, total = conn.execute(f"SELECT count(*), coalesce(sum(n_terms), 0) FROM {s}.chunks").fetchone()
        R.write_meta(
            conn,
            s,
            R.meta_values(
                IndexMeta.of_index(index, S.SCHEMA_VERSION),
                version=version,
                report=index.report,
                bm25={"n": int(n), "total": int(total), "avgdl": float(total) / n if n else 0.0},
                communities=R.community_meta(index.communities),
            ),
        )
        return version

    # ------------------------------------------------------------------ first save
    def _bulk(self, dim: int) -> None:
        conn = self.conn
        self.bulk = True
        before, after = S.bulk_load_statements(self.s, dim)
        for sql in before:
            conn.execute(sql)
        R.register_vector(conn)
        t = time.perf_counter()
        self._load_all()
        t = self._timed("copy_s", t)
        for sql in after:
            conn.execute(sql)
        t = self._timed("constraints_and_indexes_s", t)
        self._build_vector_indexes(dim)
        logger.info("PostgreSQL bulk load of schema %s: %s", self.s, self.timings)

    def _build_vector_indexes(self, dim: int, *, missing_only: bool = False) -> None:
        """An index per vector table, its kind by the table's size (:func:`schema.vector_index_statement`),
        built with parallel workers and enough ``maintenance_work_mem`` to stay in memory."""
        conn, index = self.conn, self.index
        have = {table for table, _, _ in conn.execute(S.VECTOR_INDEX_QUERY, (self.s,)).fetchall()}
        sizes = {
            "entity_vectors": len(index.entities),
            "fact_vectors": len(index.facts),
            "chunk_vectors": len(index.chunks),
        }
        todo = [t for t in S.VECTOR_TABLES if not (missing_only and t in have)]
        if not todo:
            return
        conn.execute(f"SET LOCAL maintenance_work_mem = '{build_memory_mb(conn, max(sizes.values()), dim)}MB'")
        conn.execute(f"SET LOCAL max_parallel_maintenance_workers = {build_workers(conn)}")
        for table in todo:
            kind, sql = S.vector_index_statement(self.s, table, sizes[table], dim)
            t = time.perf_counter()
            conn.execute(sql)
            self._timed(f"{kind}_{table}_s", t)

    def _order(self) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
        """Handles of a fresh store: rows in the order of the saved index (vector table order first), as every
        backend numbers them, so ties broken by handle break the same way everywhere."""
        index, kg = self.index, self.index.kg
        chunk_order = list(index.chunks.ids) + [c for c in kg.chunks if c not in index.chunks.position]
        node_order = list(index.entities.ids) + [k for k in kg.graph.nodes if k not in index.entities.position]
        chunks = {c: i for i, c in enumerate(c for c in chunk_order if c in kg.chunks)}
        entities = {k: i for i, k in enumerate(k for k in node_order if k in kg.graph)}
        relations = {r: i for i, (_, _, r) in enumerate(kg.graph.edges(keys=True))}
        return chunks, entities, relations

    def _load_all(self) -> None:
        """Stream every row into empty tables with binary ``COPY`` (nothing is collected in memory first)."""
        conn, s, index, kg = self.conn, self.s, self.index, self.index.kg

        def copy(table: str, columns: list[str], types: list[str], rows: Any) -> None:
            R.copy_rows(conn, f"{s}.{table}", columns, types, rows, freeze=self.bulk)

        with kg.lock:
            chunk_ids, ent_ids, rel_ids = self._order()
            term_df: Counter[str] = Counter()
            tokens: dict[int, tuple[Counter[str], int]] = {}

            def chunk_rows() -> Iterator[tuple]:
                for cid, handle in chunk_ids.items():
                    tokens[handle] = R.postings(kg.chunks[cid])
                    yield R.chunk_row(handle, chunk_to_record(kg.chunks[cid]), tokens[handle][1])

            def posting_rows() -> Iterator[tuple]:
                for handle, (counts, n) in tokens.items():
                    term_df.update(counts.keys())
                    for term, tf in counts.items():
                        yield (term, handle, tf, n)

            copy("chunks", R.CHUNK_COLUMNS, R.CHUNK_TYPES, chunk_rows())
            copy("postings", ["term", "chunk", "tf", "dl"], ["text", "int8", "int4", "int4"], posting_rows())
            copy("terms", ["term", "df"], ["text", "int4"], iter(term_df.items()))
            term_df.clear()
            tokens.clear()
            graph = kg.graph

            def entity_rows() -> Iterator[tuple]:
                for rec in kg.entity_records():
                    mentions = sum(1 for c in dict.fromkeys(rec["chunk_ids"]) if c in chunk_ids)
                    key = rec["key"]
                    yield (*R.entity_row(ent_ids[key], rec), mentions, graph.out_degree(key), graph.in_degree(key))

            columns = [*R.ENTITY_COLUMNS, "n_chunks", "out_degree", "in_degree"]
            copy("entities", columns, [*R.ENTITY_TYPES, "int4", "int4", "int4"], entity_rows())

            def mention_rows() -> Iterator[tuple]:
                for key, attrs in graph.nodes(data=True):
                    for c in dict.fromkeys(attrs["chunk_ids"]):
                        if c in chunk_ids:
                            yield (ent_ids[key], chunk_ids[c])

            copy("mentions", ["entity", "chunk"], ["int8", "int8"], mention_rows())
            types: dict[str, int] = {}
            for _, _, a in graph.edges(data=True):
                types.setdefault(a.get("relation_type") or "RELATED", len(types))
            R.copy_rows(
                conn, f"{s}.relation_types", ["id", "name"], ["int4", "text"], ((i, n) for n, i in types.items())
            )

            def relation_rows() -> Iterator[tuple]:
                for rec in kg.relation_records():
                    src, dst = ent_ids[rec["source"]], ent_ids[rec["target"]]
                    yield R.relation_row(rel_ids[rec["id"]], rec, src, dst, types[R.relation_type(rec)])

            copy("relations", R.RELATION_COLUMNS, R.RELATION_TYPES, relation_rows())

            def all_evidence() -> Iterator[tuple]:
                for rec in kg.relation_records():
                    yield from R.evidence_rows(rel_ids[rec["id"]], rec, chunk_ids)

            copy("evidence", R.EVIDENCE_COLUMNS, R.EVIDENCE_TYPES, all_evidence())

            def document_rows() -> Iterator[tuple]:
                for rec in kg.document_records():
                    rec = {k: v for k, v in rec.items() if k != "chunks"}
                    yield (rec["id"], R.jsonb(rec), R.record_hash(rec))

            R.copy_rows(
                conn, f"{s}.documents", ["doc_id", "record", "rec_hash"], ["text", "jsonb", "text"], document_rows()
            )
        for table, vectors, ids in (
            ("entity_vectors", index.entities, ent_ids),
            ("fact_vectors", index.facts, rel_ids),
            ("chunk_vectors", index.chunks, chunk_ids),
        ):
            rows = (
                (ids[key], vectors.hashes[i], vectors.vectors[i]) for i, key in enumerate(vectors.ids) if key in ids
            )
            copy(table, ["id", "text_hash", "embedding"], ["int8", "text", "vector"], rows)
        write_communities(conn, s, index.communities)

    # ------------------------------------------------------------------ saving over an index
    def _stored(self, table: str, key: str) -> dict[str, tuple[int, str]]:
        return {k: (i, h) for k, i, h in self.conn.execute(f"SELECT {key}, id, rec_hash FROM {self.s}.{table}")}

    def _plan(self, table: str, key: str, new: dict[str, Any]) -> tuple[dict[str, int], list[str], list[int], set]:
        """(handles by key, changed keys, removed handles, stored keys): new rows get the next free handles."""
        stored = self._stored(table, key)
        ids: dict[str, int] = {}
        changed: list[str] = []
        next_id = max((i for i, _ in stored.values()), default=-1) + 1
        for k, record in new.items():
            old = stored.get(k)
            if old is not None:
                ids[k] = old[0]
                if old[1] != R.record_hash(record):
                    changed.append(k)
                continue
            ids[k] = next_id
            next_id += 1
            changed.append(k)
        removed = [i for k, (i, _) in stored.items() if k not in new]
        return ids, changed, removed, set(stored)

    def _diff(self) -> None:
        conn, s, index, kg = self.conn, self.s, self.index, self.index.kg
        with kg.lock:
            chunks = {c.id: chunk_to_record(c) for c in kg.chunks.values()}
            entities = {r["key"]: r for r in kg.entity_records()}
            relations = {r["id"]: r for r in kg.relation_records()}
            documents = {}
            for rec in kg.document_records():
                rec = {k: v for k, v in rec.items() if k != "chunks"}
                documents[rec["id"]] = rec
            chunk_objects = dict(kg.chunks)
        chunk_ids, chunks_changed, chunks_removed, chunks_stored = self._plan("chunks", "chunk_id", chunks)
        ent_ids, ents_changed, ents_removed, _ = self._plan("entities", "key", entities)
        rel_ids, rels_changed, rels_removed, _ = self._plan("relations", "rel_id", relations)
        logger.info(
            "PostgreSQL save over schema %s: changed/removed chunks %d/%d, entities %d/%d, relations %d/%d",
            s,
            len(chunks_changed),
            len(chunks_removed),
            len(ents_changed),
            len(ents_removed),
            len(rels_changed),
            len(rels_removed),
        )
        recount: set[int] = {ent_ids[k] for k in ents_changed}
        # ---- deletions first (relations, then chunks and entities; what hangs on them cascades)
        if rels_removed or ents_removed:
            recount |= {
                e
                for pair in conn.execute(
                    f"""SELECT source, target FROM {s}.relations
                        WHERE id = ANY(%s) OR source = ANY(%s) OR target = ANY(%s)""",
                    (rels_removed, ents_removed, ents_removed),
                )
                for e in pair
            }
        term_delta: Counter[str] = Counter()
        redo = chunks_removed + [chunk_ids[c] for c in chunks_changed if c in chunks_stored]
        if redo:
            for term, n in conn.execute(
                f"SELECT term, count(*) FROM {s}.postings WHERE chunk = ANY(%s) GROUP BY term", (redo,)
            ):
                term_delta[term] -= n
            conn.execute(f"DELETE FROM {s}.postings WHERE chunk = ANY(%s)", (redo,))
        for table, removed in (("relations", rels_removed), ("chunks", chunks_removed), ("entities", ents_removed)):
            if removed:
                conn.execute(f"DELETE FROM {s}.{table} WHERE id = ANY(%s)", (removed,))
        doc_rows = {k: h for k, h in conn.execute(f"SELECT doc_id, rec_hash FROM {s}.documents")}
        gone = [k for k in doc_rows if k not in documents]
        if gone:
            conn.execute(f"DELETE FROM {s}.documents WHERE doc_id = ANY(%s)", (gone,))
        R.upsert_rows(
            conn,
            s,
            "documents",
            "doc_id",
            ["doc_id", "record", "rec_hash"],
            ["text", "jsonb", "text"],
            [(k, R.jsonb(r), R.record_hash(r)) for k, r in documents.items() if doc_rows.get(k) != R.record_hash(r)],
        )
        # ---- chunks and their postings
        chunk_rows, posting_rows = [], []
        for cid in chunks_changed:
            counts, n = R.postings(chunk_objects[cid])
            chunk_rows.append(R.chunk_row(chunk_ids[cid], chunks[cid], n))
            posting_rows += [(t, chunk_ids[cid], tf, n) for t, tf in counts.items()]
            term_delta.update(counts.keys())
        R.upsert_rows(conn, s, "chunks", "id", R.CHUNK_COLUMNS, R.CHUNK_TYPES, chunk_rows)
        R.copy_rows(
            conn, f"{s}.postings", ["term", "chunk", "tf", "dl"], ["text", "int8", "int4", "int4"], posting_rows
        )
        R.adjust_terms(conn, s, term_delta)
        # ---- entities and mentions
        R.upsert_rows(
            conn, s, "entities", "id", R.ENTITY_COLUMNS, R.ENTITY_TYPES,
            [R.entity_row(ent_ids[k], entities[k]) for k in ents_changed],
        )  # fmt: skip
        changed_ents = [ent_ids[k] for k in ents_changed]
        if changed_ents:
            conn.execute(f"DELETE FROM {s}.mentions WHERE entity = ANY(%s)", (changed_ents,))
        mentions = {
            (ent_ids[k], chunk_ids[c])
            for k in ents_changed
            for c in dict.fromkeys(entities[k]["chunk_ids"])
            if c in chunk_ids
        }
        R.copy_rows(conn, f"{s}.mentions", ["entity", "chunk"], ["int8", "int8"], iter(sorted(mentions)))
        # ---- relation types, relations, evidence
        types = {n: i for i, n in conn.execute(f"SELECT id, name FROM {s}.relation_types")}
        new_types = []
        for rid in rels_changed:
            t = R.relation_type(relations[rid])
            if t not in types:
                types[t] = len(types)
                new_types.append((types[t], t))
        R.copy_rows(conn, f"{s}.relation_types", ["id", "name"], ["int4", "text"], iter(new_types))
        rel_rows = []
        for rid in rels_changed:
            rec = relations[rid]
            src, dst = ent_ids[rec["source"]], ent_ids[rec["target"]]
            recount |= {src, dst}
            rel_rows.append(R.relation_row(rel_ids[rid], rec, src, dst, types[R.relation_type(rec)]))
        R.upsert_rows(conn, s, "relations", "id", R.RELATION_COLUMNS, R.RELATION_TYPES, rel_rows)
        changed_rels = [rel_ids[r] for r in rels_changed]
        if changed_rels:
            conn.execute(f"DELETE FROM {s}.evidence WHERE relation = ANY(%s)", (changed_rels,))
        R.copy_rows(
            conn,
            f"{s}.evidence",
            R.EVIDENCE_COLUMNS,
            R.EVIDENCE_TYPES,
            (row for rid in rels_changed for row in R.evidence_rows(rel_ids[rid], relations[rid], chunk_ids)),
        )
        # ---- vectors whose text changed (a removed parent took its vector with it)
        for table, parent, key, vectors, ids in (
            ("entity_vectors", "entities", "key", index.entities, ent_ids),
            ("fact_vectors", "relations", "rel_id", index.facts, rel_ids),
            ("chunk_vectors", "chunks", "chunk_id", index.chunks, chunk_ids),
        ):
            stored = {
                k: h
                for k, h in conn.execute(
                    f"SELECT p.{key}, v.text_hash FROM {s}.{table} v JOIN {s}.{parent} p ON p.id = v.id"
                )
            }
            position = vectors.position
            rows = [
                (ids[k], vectors.hashes[p], vectors.vectors[p])
                for k, p in position.items()
                if k in ids and stored.get(k) != vectors.hashes[p]
            ]
            R.write_vectors(conn, s, table, rows)
            gone = [ids[k] for k in stored if k in ids and k not in position]
            if gone:
                conn.execute(f"DELETE FROM {s}.{table} WHERE id = ANY(%s)", (gone,))
        R.recount_entities(conn, s, recount - set(ents_removed))
        write_communities(conn, s, index.communities)


def write_communities(conn: Any, schema: str, cs: Any) -> None:
    """Make the stored communities equal to ``cs`` (``None``: none), writing only changed ones."""
    s = schema
    stored = dict(conn.execute(f"SELECT id, rec_hash FROM {s}.communities").fetchall())
    new = {c.id: c for c in cs} if cs is not None else {}
    gone = [i for i in stored if i not in new]
    if gone:
        conn.execute(f"DELETE FROM {s}.communities WHERE id = ANY(%s)", (gone,))
    rows, members = [], []
    for cid, c in new.items():
        record = c.to_record()
        h = R.record_hash(record)
        if stored.get(cid) == h:
            continue
        rows.append((cid, c.level, R.jsonb(record), h))
        members += [(cid, key, c.level) for key in c.entities]
    if rows:
        changed = [r[0] for r in rows]
        conn.execute(f"DELETE FROM {s}.community_members WHERE community = ANY(%s)", (changed,))
        columns, types = ["id", "level", "record", "rec_hash"], ["text", "int4", "jsonb", "text"]
        R.upsert_rows(conn, s, "communities", "id", columns, types, rows)
        columns, types = ["community", "entity_key", "level"], ["text", "text", "int4"]
        R.copy_rows(conn, f"{s}.community_members", columns, types, iter(members))
