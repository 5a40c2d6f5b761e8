"""Row-level document writes on PostgreSQL: adding, replacing or deleting documents touches only the rows they
contribute, in one transaction, without loading the rest of the graph.

A :class:`~kg_rag.store.graph_store.GraphChange` is applied step by step with the rules of the in-memory model:

- **remove** documents: their chunks go (and with them, by cascade, their postings, vectors, mentions and
  evidence rows); the entities they mention lose those chunks and the descriptions the chunks gave, and are
  deleted when no chunk mentions them any more (with every relation at them); the relations they evidence lose
  that evidence and are deleted when none is left;
- **add** a fragment: its documents and chunks are inserted (or replace stored ones), its entities and
  relations merged into the stored ones by their stable keys (``entities.key`` and ``relations.rel_id`` are
  unique, so a merge never duplicates): a specific type replaces the generic one, new descriptions, chunk links
  and evidence are appended.

At the end, only texts that changed are embedded; degrees and mention counts are recomputed for the entities
touched; BM25 document frequencies, the counts in ``meta`` and the ingest report are updated by difference; and
the communities whose members or the relations among them changed are marked stale (their report dropped), as
:func:`kg_rag.communities.detect.mark_stale` decides in memory.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from typing import Any, cast

import numpy as np

import kg_rag.store.postgres.rows as R
from kg_rag.errors import InputError
from kg_rag.index.build import chunk_text, entity_text, fact_text_of
from kg_rag.index.embeddings import EmbeddingCache, model_id
from kg_rag.model.change import REMOVED_KINDS, GraphChange, update_report
from kg_rag.model.graph import KnowledgeGraph
from kg_rag.model.names import DEFAULT_ENTITY_TYPE
from kg_rag.model.records import chunk_from_record, chunk_to_record, entity_from_record, relation_from_record
from kg_rag.model.report import IngestReport

logger = logging.getLogger(__name__)


class RowChanges:
    """One row-level write inside the caller's transaction (see the module docstring)."""

    def __init__(self, store: Any, conn: Any, embeddings: Any, *, progress: bool = False) -> None:
        self.store, self.conn, self.s = store, conn, store.schema
        self.embeddings = embeddings
        self.progress = progress
        self.meta_rows = R.read_meta_rows(conn, self.s)
        self.meta = R.parse_meta(self.meta_rows, f"{store}#{self.s}.meta", self.s)
        self.model = model_id(embeddings)
        s = self.s
        self.next_id = {
            table: int(conn.execute(f"SELECT coalesce(max(id), -1) + 1 FROM {s}.{table}").fetchone()[0])
            for table in ("chunks", "entities", "relations")
        }
        self.types = {n: i for i, n in conn.execute(f"SELECT id, name FROM {s}.relation_types")}
        self.removed: Counter[str] = Counter({k: 0 for k in REMOVED_KINDS})
        self.dirty_entities: set[int] = set()
        self.dirty_facts: set[int] = set()
        self.dirty_chunks: set[int] = set()
        self.recount: set[int] = set()
        self.deleted_entities: set[int] = set()
        self.entity_before: dict[str, Any] = {}
        """Entity key -> what community reports read of it before this write (``None``: it did not exist)."""
        self.relation_before: dict[str, tuple[str, str, Any]] = {}
        """Relation id -> its ends and what reports read of it before this write."""
        self.forgotten_chunks: set[str] = set()
        self.counts: Counter[str] = Counter()
        self.type_delta: Counter[str] = Counter()
        self.term_delta: Counter[str] = Counter()
        self.timings: dict[str, float] = {}

    # ------------------------------------------------------------------ the write
    def apply(self, change: GraphChange) -> dict[str, int]:
        started = time.perf_counter()
        for kind, arg in change.steps:
            if kind == "remove":
                self.remove(arg)
            else:
                self.add(arg)
        self.timings["rows_s"] = round(time.perf_counter() - started, 3)
        self._embed_changed()
        t = time.perf_counter()
        R.recount_entities(self.conn, self.s, self.recount - self.deleted_entities)
        R.adjust_terms(self.conn, self.s, self.term_delta)
        self._mark_stale_communities()
        self._write_meta(change)
        self.timings["finish_s"] = round(time.perf_counter() - t, 3)
        logger.info("PostgreSQL row-level write to schema %s: removed %s; %s", self.s, dict(self.removed), self.timings)
        return dict(self.removed)

    # ------------------------------------------------------------------ bookkeeping
    def _seen_entity(self, key: str, record: dict[str, Any] | None) -> None:
        self.entity_before.setdefault(key, R.signature_of_entity(record))

    def _seen_relation(self, record: dict[str, Any]) -> None:
        if record["id"] not in self.relation_before:
            self.relation_before[record["id"]] = (record["source"], record["target"], R.signature_of_relation(record))

    def _relations_gone(self, rows: Iterable[tuple]) -> None:
        """Account for deleted relation rows ``(id, source, target, type_id, is_synonym, record)``."""
        names = {i: n for n, i in self.types.items()}
        for _, source, target, type_id, synonym, record in rows:
            self._seen_relation(record)
            self.recount |= {source, target}
            if synonym:
                self.counts["synonym_links"] -= 1
            else:
                self.type_delta[names[type_id]] -= 1

    def _chunk_handles(self, chunk_ids: Iterable[str]) -> dict[str, int]:
        ids = sorted(set(chunk_ids))
        if not ids:
            return {}
        rows = self.conn.execute(f"SELECT chunk_id, id FROM {self.s}.chunks WHERE chunk_id = ANY(%s)", (ids,))
        return dict(rows.fetchall())

    def _type_id(self, name: str) -> int:
        if name not in self.types:
            self.types[name] = max(self.types.values(), default=-1) + 1
            self.conn.execute(
                f"INSERT INTO {self.s}.relation_types (id, name) VALUES (%s, %s)", (self.types[name], name)
            )
        return self.types[name]

    def _allocate(self, table: str) -> int:
        handle = self.next_id[table]
        self.next_id[table] += 1
        return handle

    def _rewrite_evidence(self, relations: dict[int, dict[str, Any]]) -> None:
        """Replace the evidence rows of these relations (``handle -> record``)."""
        if not relations:
            return
        s = self.s
        self.conn.execute(f"DELETE FROM {s}.evidence WHERE relation = ANY(%s)", (sorted(relations),))
        chunks = self._chunk_handles(
            e["chunk_id"] for rec in relations.values() for e in rec.get("evidence") or [] if e.get("chunk_id")
        )
        R.copy_rows(
            self.conn,
            f"{s}.evidence",
            R.EVIDENCE_COLUMNS,
            R.EVIDENCE_TYPES,
            (row for handle, rec in relations.items() for row in R.evidence_rows(handle, rec, chunks)),
        )

    # ------------------------------------------------------------------ remove documents
    def remove(self, doc_ids: Sequence[str]) -> None:
        """Forget documents and everything they contributed (:meth:`KnowledgeGraph.remove_documents`)."""
        conn, s = self.conn, self.s
        docs = conn.execute(f"DELETE FROM {s}.documents WHERE doc_id = ANY(%s) RETURNING doc_id", (list(doc_ids),))
        self.counts["documents"] -= len(docs.fetchall())
        chunk_rows = conn.execute(
            f"SELECT id, chunk_id, n_terms FROM {s}.chunks WHERE doc_id = ANY(%s)", (list(doc_ids),)
        ).fetchall()
        if not chunk_rows:
            return
        handles = [r[0] for r in chunk_rows]
        gone = {r[1] for r in chunk_rows}
        self.forgotten_chunks |= gone
        self.removed["chunks"] += len(chunk_rows)
        for term, n in conn.execute(
            f"SELECT term, count(*) FROM {s}.postings WHERE chunk = ANY(%s) GROUP BY term", (handles,)
        ):
            self.term_delta[term] -= n
        # the entities the chunks mention lose them, and the descriptions they gave
        touched = conn.execute(
            f"""SELECT e.id, e.record FROM {s}.entities e
                WHERE e.id IN (SELECT m.entity FROM {s}.mentions m WHERE m.chunk = ANY(%s)) ORDER BY e.id""",
            (handles,),
        ).fetchall()
        orphans: list[int] = []
        kept: dict[int, dict[str, Any]] = {}
        for handle, rec in touched:
            self._seen_entity(rec["key"], rec)
            chunk_ids = [c for c in rec.get("chunk_ids") or [] if c not in gone]
            descriptions = [d for d in rec.get("descriptions") or [] if d.get("chunk_id") not in gone]
            self.removed["descriptions"] += len(rec.get("descriptions") or []) - len(descriptions)
            if not chunk_ids:
                orphans.append(handle)
                continue
            if len(descriptions) != len(rec.get("descriptions") or []):
                self.dirty_entities.add(handle)  # the embedded text holds the descriptions
            kept[handle] = {**rec, "chunk_ids": chunk_ids, "descriptions": descriptions}
            self.recount.add(handle)
        # the relations they evidence (out of a touched entity, as the model walks them) lose that evidence
        touched_ids = [h for h, _ in touched]
        evidenced = conn.execute(
            f"""SELECT r.id, r.source, r.target, r.type_id, r.is_synonym, r.record FROM {s}.relations r
                WHERE r.id IN (SELECT ev.relation FROM {s}.evidence ev WHERE ev.chunk = ANY(%s))
                  AND r.source = ANY(%s) AND NOT r.is_synonym ORDER BY r.id""",
            (handles, touched_ids),
        ).fetchall()
        dead: list[int] = []
        changed: dict[int, tuple] = {}
        for row in evidenced:
            handle, rec = row[0], row[5]
            evidence = rec.get("evidence") or []
            left = [e for e in evidence if e.get("chunk_id") not in gone]
            if len(left) == len(evidence):
                continue
            self._seen_relation(rec)
            if left:
                changed[handle] = (*row[:5], R.with_evidence(rec, left))
            else:
                dead.append(handle)
        self.removed["relations"] += len(dead)
        if dead:
            self._relations_gone(
                conn.execute(
                    f"""DELETE FROM {s}.relations WHERE id = ANY(%s)
                        RETURNING id, source, target, type_id, is_synonym, record""",
                    (dead,),
                ).fetchall()
            )
        if orphans:  # an entity no chunk mentions goes, with every relation at it
            self._relations_gone(
                conn.execute(
                    f"""DELETE FROM {s}.relations WHERE source = ANY(%s) OR target = ANY(%s)
                        RETURNING id, source, target, type_id, is_synonym, record""",
                    (orphans, orphans),
                ).fetchall()
            )
            conn.execute(f"DELETE FROM {s}.entities WHERE id = ANY(%s)", (orphans,))
            self.deleted_entities |= set(orphans)
            self.removed["entities"] += len(orphans)
            self.counts["entities"] -= len(orphans)
        R.upsert_rows(
            conn, s, "entities", "id", R.ENTITY_COLUMNS, R.ENTITY_TYPES,
            [R.entity_row(h, rec) for h, rec in kept.items()],
        )  # fmt: skip
        changed = {h: row for h, row in changed.items() if not {row[1], row[2]} & self.deleted_entities}
        R.upsert_rows(
            conn, s, "relations", "id", R.RELATION_COLUMNS, R.RELATION_TYPES,
            [R.relation_row(h, rec, src, dst, type_id) for h, (_, src, dst, type_id, _, rec) in changed.items()],
        )  # fmt: skip
        self._rewrite_evidence({h: row[5] for h, row in changed.items()})
        conn.execute(f"DELETE FROM {s}.chunks WHERE id = ANY(%s)", (handles,))
        self.counts["chunks"] -= len(chunk_rows)
        self.counts["bm25_total"] -= sum(int(r[2]) for r in chunk_rows)

    # ------------------------------------------------------------------ add a fragment
    def add(self, fragment: KnowledgeGraph) -> None:
        """Merge ``fragment`` into the stored rows (:meth:`KnowledgeGraph.merge`)."""
        with fragment.lock:
            documents = [asdict(d) for d in fragment.docs.values()]
            chunks = list(fragment.chunks.values())
            entities = list(fragment.entity_records())
            relations = list(fragment.relation_records())
        self._add_documents(documents)
        chunk_handles = self._add_chunks(chunks)
        entity_handles, links = self._add_entities(entities)
        chunk_handles.update(self._chunk_handles(c for _, c in links if c not in chunk_handles))
        mentions = sorted({(e, chunk_handles[c]) for e, c in links if c in chunk_handles})
        if mentions:
            self.conn.execute(
                f"""INSERT INTO {self.s}.mentions (entity, chunk) SELECT * FROM unnest(%s::int8[], %s::int8[])
                    ON CONFLICT DO NOTHING""",
                ([m[0] for m in mentions], [m[1] for m in mentions]),
            )
        self._add_relations(relations, entity_handles)

    def _add_documents(self, documents: list[dict[str, Any]]) -> None:
        conn, s = self.conn, self.s
        stored = dict(
            conn.execute(
                f"SELECT doc_id, record FROM {s}.documents WHERE doc_id = ANY(%s)", ([d["id"] for d in documents],)
            ).fetchall()
        )
        rows = []
        for doc in documents:
            old = stored.get(doc["id"])
            if old is None:
                new = doc
                self.counts["documents"] += 1
            else:  # add_document: given fields replace, metadata is updated
                new = dict(old)
                for name in ("source", "content_hash", "title"):
                    if doc.get(name) is not None:
                        new[name] = doc[name]
                if doc.get("metadata"):
                    new["metadata"] = {**(old.get("metadata") or {}), **doc["metadata"]}
                if new == old:
                    continue
            rows.append((new["id"], R.jsonb(new), R.record_hash(new)))
        R.upsert_rows(conn, s, "documents", "doc_id", ["doc_id", "record", "rec_hash"], ["text", "jsonb", "text"], rows)

    def _add_chunks(self, chunks: list[Any]) -> dict[str, int]:
        conn, s = self.conn, self.s
        stored = {
            cid: (handle, record, n)
            for cid, handle, record, n in conn.execute(
                f"SELECT chunk_id, id, record, n_terms FROM {s}.chunks WHERE chunk_id = ANY(%s)",
                ([c.id for c in chunks],),
            )
        }
        handles: dict[str, int] = {}
        rows, postings, redo = [], [], []
        for chunk in chunks:
            record = chunk_to_record(chunk)
            old = stored.get(chunk.id)
            if old is not None and old[1] == record:
                handles[chunk.id] = old[0]
                continue
            counts, n = R.postings(chunk)
            if old is None:
                handle = self._allocate("chunks")
                self.counts["chunks"] += 1
            else:
                handle = old[0]
                if chunk_text(chunk_from_record(old[1])) == chunk_text(chunk):
                    rows.append(R.chunk_row(handle, record, n))
                    handles[chunk.id] = handle
                    continue
                redo.append(handle)
                self.counts["bm25_total"] -= int(old[2])
            handles[chunk.id] = handle
            rows.append(R.chunk_row(handle, record, n))
            postings += [(t, handle, tf, n) for t, tf in counts.items()]
            self.term_delta.update(counts.keys())
            self.counts["bm25_total"] += n
            self.dirty_chunks.add(handle)
        if redo:
            for term, k in conn.execute(
                f"SELECT term, count(*) FROM {s}.postings WHERE chunk = ANY(%s) GROUP BY term", (redo,)
            ):
                self.term_delta[term] -= k
            conn.execute(f"DELETE FROM {s}.postings WHERE chunk = ANY(%s)", (redo,))
        R.upsert_rows(conn, s, "chunks", "id", R.CHUNK_COLUMNS, R.CHUNK_TYPES, rows)
        R.copy_rows(conn, f"{s}.postings", ["term", "chunk", "tf", "dl"], ["text", "int8", "int4", "int4"], postings)
        return handles

    def _add_entities(self, entities: list[dict[str, Any]]) -> tuple[dict[str, int], list[tuple[int, str]]]:
        """Merge entity records; returns handles by key and the ``(entity, chunk id)`` links added."""
        conn, s = self.conn, self.s
        stored = {
            key: (handle, record)
            for key, handle, record in conn.execute(
                f"SELECT key, id, record FROM {s}.entities WHERE key = ANY(%s)", ([e["key"] for e in entities],)
            )
        }
        handles: dict[str, int] = {}
        links: list[tuple[int, str]] = []
        rows = []
        for rec in entities:
            key = rec["key"]
            old = stored.get(key)
            if old is None:
                handle = self._allocate("entities")
                new = {
                    "key": key,
                    "name": rec["name"],
                    "entity_type": rec["entity_type"],
                    "descriptions": _unique(rec["descriptions"]),
                    "chunk_ids": list(dict.fromkeys(rec["chunk_ids"])),
                }
                self._seen_entity(key, None)
                self.counts["entities"] += 1
                added = new["chunk_ids"]
                self.dirty_entities.add(handle)
            else:
                handle, old_rec = old
                new = {**old_rec, "descriptions": list(old_rec.get("descriptions") or [])}
                new["chunk_ids"] = list(old_rec.get("chunk_ids") or [])
                if new.get("entity_type") == DEFAULT_ENTITY_TYPE:
                    new["entity_type"] = rec["entity_type"]
                for d in rec["descriptions"]:
                    if d not in new["descriptions"]:
                        new["descriptions"].append(d)
                present = set(new["chunk_ids"])
                added = [c for c in dict.fromkeys(rec["chunk_ids"]) if c not in present]
                new["chunk_ids"] += added
                stored[key] = (handle, new)
                if new == old_rec:
                    handles[key] = handle
                    continue
                self._seen_entity(key, old_rec)
                if (new["entity_type"], new["descriptions"]) != (
                    old_rec.get("entity_type"),
                    old_rec.get("descriptions"),
                ):
                    self.dirty_entities.add(handle)
            handles[key] = handle
            links += [(handle, c) for c in added]
            rows.append(R.entity_row(handle, new))
            self.recount.add(handle)
        R.upsert_rows(conn, s, "entities", "id", R.ENTITY_COLUMNS, R.ENTITY_TYPES, rows)
        return handles, links

    def _add_relations(self, relations: list[dict[str, Any]], entity_handles: dict[str, int]) -> None:
        conn, s = self.conn, self.s
        stored = {
            rid: row
            for rid, *row in conn.execute(
                f"""SELECT rel_id, id, source, target, type_id, record FROM {s}.relations WHERE rel_id = ANY(%s)""",
                ([r["id"] for r in relations],),
            )
        }
        rows = []
        evidence: dict[int, dict[str, Any]] = {}
        for rec in relations:
            old = stored.get(rec["id"])
            if old is None:
                handle = self._allocate("relations")
                src, dst = entity_handles[rec["source"]], entity_handles[rec["target"]]
                type_id = self._type_id(R.relation_type(rec))
                new = dict(rec)
                self.relation_before.setdefault(rec["id"], (rec["source"], rec["target"], None))
                if R.is_synonym(rec):
                    self.counts["synonym_links"] += 1
                else:
                    self.type_delta[R.relation_type(rec)] += 1
                    self.dirty_facts.add(handle)
                self.recount |= {src, dst}
            else:
                handle, src, dst, type_id, old_rec = old
                merged = list(old_rec.get("evidence") or [])
                for ev in rec.get("evidence") or []:
                    if ev not in merged:
                        merged.append(ev)
                if len(merged) == len(old_rec.get("evidence") or []):
                    continue
                self._seen_relation(old_rec)
                new = R.with_evidence(old_rec, merged)
                stored[rec["id"]] = [handle, src, dst, type_id, new]
            rows.append(R.relation_row(handle, new, src, dst, type_id))
            evidence[handle] = new
        R.upsert_rows(conn, s, "relations", "id", R.RELATION_COLUMNS, R.RELATION_TYPES, rows)
        self._rewrite_evidence(evidence)

    # ------------------------------------------------------------------ vectors
    def _embed_changed(self) -> None:
        """Embed the texts of new and changed rows that no stored vector holds; write those vectors."""
        conn, s = self.conn, self.s
        todo: list[tuple[str, int, str, str]] = []  # (table, handle, text, hash)
        ents = sorted(self.dirty_entities - self.deleted_entities)
        if ents:
            for handle, record, stored in conn.execute(
                f"""SELECT e.id, e.record, v.text_hash FROM {s}.entities e
                    LEFT JOIN {s}.entity_vectors v ON v.id = e.id WHERE e.id = ANY(%s)""",
                (ents,),
            ):
                todo.append(
                    ("entity_vectors", handle, entity_text(entity_from_record(record), self.meta.type_prefix), stored)
                )
        if self.dirty_facts:
            for handle, record, src, dst, stored in conn.execute(
                f"""SELECT r.id, r.record, se.name, te.name, v.text_hash FROM {s}.relations r
                    JOIN {s}.entities se ON se.id = r.source JOIN {s}.entities te ON te.id = r.target
                    LEFT JOIN {s}.fact_vectors v ON v.id = r.id WHERE r.id = ANY(%s) AND NOT r.is_synonym""",
                (sorted(self.dirty_facts),),
            ):
                todo.append(("fact_vectors", handle, fact_text_of(relation_from_record(record), src, dst), stored))
        if self.dirty_chunks:
            for handle, record, stored in conn.execute(
                f"""SELECT c.id, c.record, v.text_hash FROM {s}.chunks c
                    LEFT JOIN {s}.chunk_vectors v ON v.id = c.id WHERE c.id = ANY(%s)""",
                (sorted(self.dirty_chunks),),
            ):
                todo.append(("chunk_vectors", handle, chunk_text(chunk_from_record(record)), stored))
        from kg_rag.index.embeddings import text_hash

        needed = [
            (table, handle, text) for table, handle, text, stored in todo if text_hash(self.model, text) != stored
        ]
        if not needed:
            self.timings["embed_s"] = 0.0
            return
        t = time.perf_counter()
        matrix, hashes = EmbeddingCache().embed(
            self.embeddings, [text for _, _, text in needed], progress=self.progress, desc="embedding new text"
        )
        if self.meta.dim and matrix.shape[1] != self.meta.dim:
            raise InputError(
                f"{self.store}: the embeddings give {matrix.shape[1]}-dimensional vectors, the index holds "
                f"{self.meta.dim}; use the index's embedding model"
            )
        self.timings["embed_s"] = round(time.perf_counter() - t, 3)
        self.counts["embedded"] = len(needed)
        by_table: dict[str, list[tuple]] = {}
        for (table, handle, _), h, vector in zip(needed, hashes, matrix):
            by_table.setdefault(table, []).append((handle, h, np.asarray(vector, np.float32)))
        for table, rows in by_table.items():
            R.write_vectors(conn, s, table, rows)

    # ------------------------------------------------------------------ communities
    def _mark_stale_communities(self) -> None:
        """Mark stale the communities whose members, or the relations among them, changed (their reports are
        dropped, and what of them the graph no longer holds): :func:`~kg_rag.communities.detect.mark_stale`."""
        if self.meta.communities is None or not (self.entity_before or self.relation_before):
            return
        conn, s = self.conn, self.s
        keys = sorted(self.entity_before)
        now = dict(conn.execute(f"SELECT key, record FROM {s}.entities WHERE key = ANY(%s)", (keys,)).fetchall())
        changed_keys = [k for k in keys if R.signature_of_entity(now.get(k)) != self.entity_before[k]]
        rel_ids = sorted(self.relation_before)
        now_rels = dict(conn.execute(f"SELECT rel_id, record FROM {s}.relations WHERE rel_id = ANY(%s)", (rel_ids,)))
        pairs = [
            (u, v)
            for r, (u, v, before) in self.relation_before.items()
            if R.signature_of_relation(now_rels.get(r)) != before
        ]
        affected: set[str] = set()
        if changed_keys:
            affected |= {
                c
                for (c,) in conn.execute(
                    f"SELECT DISTINCT community FROM {s}.community_members WHERE entity_key = ANY(%s)", (changed_keys,)
                )
            }
        if pairs:
            affected |= {
                c
                for (c,) in conn.execute(
                    f"""SELECT DISTINCT a.community FROM unnest(%s::text[], %s::text[]) AS p(u, v)
                        JOIN {s}.community_members a ON a.entity_key = p.u
                        JOIN {s}.community_members b ON b.entity_key = p.v AND b.community = a.community""",
                    ([p[0] for p in pairs], [p[1] for p in pairs]),
                )
            }
        if not affected:
            return
        from kg_rag.communities.detect import forget_report
        from kg_rag.communities.model import Community

        records = conn.execute(f"SELECT record FROM {s}.communities WHERE id = ANY(%s)", (sorted(affected),)).fetchall()
        communities = [Community.from_record(r[0]) for r in records]
        members = sorted({k for c in communities for k in c.entities})
        relations = sorted({r for c in communities for r in c.relations})
        present = _Present(
            {k for (k,) in conn.execute(f"SELECT key FROM {s}.entities WHERE key = ANY(%s)", (members,))},
            {r for (r,) in conn.execute(f"SELECT rel_id FROM {s}.relations WHERE rel_id = ANY(%s)", (relations,))},
        )
        rows, gone = [], []
        for c in communities:
            before = c.entities
            c.stale = True
            forget_report(c, cast(Any, present))  # what it reads of a graph: ``graph`` (present.graph)
            gone += [(c.id, k) for k in before if k not in present.graph]
            record = c.to_record()
            rows.append((c.id, c.level, R.jsonb(record), R.record_hash(record)))
        columns, types = ["id", "level", "record", "rec_hash"], ["text", "int4", "jsonb", "text"]
        R.upsert_rows(conn, s, "communities", "id", columns, types, rows)
        if gone:
            conn.execute(
                f"""DELETE FROM {s}.community_members m USING unnest(%s::text[], %s::text[]) AS g(c, k)
                    WHERE m.community = g.c AND m.entity_key = g.k""",
                ([g[0] for g in gone], [g[1] for g in gone]),
            )
        self.counts["communities_marked"] = len(rows)

    # ------------------------------------------------------------------ meta
    def _write_meta(self, change: GraphChange) -> None:
        conn, s, rows = self.conn, self.s, self.meta_rows
        report = IngestReport.from_dict(rows.get("report") or {})
        report.forget_chunks(self.forgotten_chunks)
        update_report(report, change)
        types = Counter(self.meta.relation_types)
        types.update(self.type_delta)
        relation_types = {t: n for t, n in types.items() if n > 0}
        bm25 = dict(rows.get("bm25") or {})
        if "total" not in bm25:  # written by an older release: the sum is taken once
            bm25["total"] = int(conn.execute(f"SELECT coalesce(sum(n_terms), 0) FROM {s}.chunks").fetchone()[0])
        else:
            bm25["total"] = int(bm25["total"]) + self.counts["bm25_total"]
        n = self.meta.chunks + self.counts["chunks"]
        bm25.update(n=n, avgdl=bm25["total"] / n if n else 0.0)
        communities = rows.get("communities")
        stale = None
        if communities is not None:
            stale = int(
                conn.execute(f"SELECT count(*) FROM {s}.communities WHERE (record->>'stale')::boolean").fetchone()[0]
            )
        meta = self.meta.with_(
            chunks=n,
            documents=self.meta.documents + self.counts["documents"],
            entities=self.meta.entities + self.counts["entities"],
            relations=sum(relation_types.values()),
            synonym_links=self.meta.synonym_links + self.counts["synonym_links"],
            relation_types=relation_types,
            stale_communities=stale,
        )
        version = int(rows.get("version") or 0) + 1
        R.write_meta(conn, s, R.meta_values(meta, version=version, report=report, bm25=bm25, communities=communities))


class _Present:
    """What :func:`~kg_rag.communities.detect.forget_report` asks of a graph: which members and relations exist."""

    def __init__(self, keys: set[str], relations: set[str]) -> None:
        self.graph = keys
        self._relations = relations

    def get_relation(self, rid: str) -> Any:
        return rid if rid in self._relations else None


def _unique(items: list[Any]) -> list[Any]:
    out: list[Any] = []
    for item in items:
        if item not in out:
            out.append(item)
    return out
