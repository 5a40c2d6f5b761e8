"""Rows of a PostgreSQL index, shared by the whole-index save (:mod:`~kg_rag.store.postgres.sync`) and the
row-level document writes (:mod:`~kg_rag.store.postgres.changes`): how a record becomes its row, its evidence
rows and its BM25 postings; binary ``COPY`` and upserts; derived columns (degrees, mention counts) recomputed
for the entities a write touched; and the ``meta`` rows.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import kg_rag.store.postgres.tables as S
from kg_rag.index.build import chunk_text
from kg_rag.index.lexical import tokenize
from kg_rag.index.meta import FORMAT, IndexMeta
from kg_rag.model.names import RELATED
from kg_rag.model.records import EXTRACTED, SYNONYM_KIND, relation_description


def record_hash(*parts: Any) -> str:
    """A short hash of a record (a row is rewritten by a whole-index save only when its hash changed)."""
    data = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()[:32]


def register_vector(conn: Any) -> None:
    """Teach this connection pgvector's types (once the extension exists)."""
    from pgvector.psycopg import register_vector as register

    register(conn)


def jsonb(value: Any) -> Any:
    from psycopg.types.json import Jsonb

    return Jsonb(value)


# ---------------------------------------------------------------------------------------------- records
def is_synonym(record: Mapping[str, Any]) -> bool:
    return record.get("kind", EXTRACTED) == SYNONYM_KIND


def relation_type(record: Mapping[str, Any]) -> str:
    return str(record.get("relation_type") or RELATED)


def relation_weight(record: Mapping[str, Any]) -> float:
    """What traversal weighs a relation by: its evidence weights summed (1 for synonym links and no evidence)."""
    if is_synonym(record):
        return 1.0
    return float(sum(float(e.get("weight", 1.0)) for e in record.get("evidence") or []) or 1.0)


def with_evidence(record: Mapping[str, Any], evidence: list[dict[str, Any]]) -> dict[str, Any]:
    """A relation record with new evidence (its description is derived from the evidence, as the model does)."""
    out = dict(record)
    out["evidence"] = evidence
    if not is_synonym(out):
        out["description"] = relation_description(evidence, out.get("predicate"))
    return out


def evidence_rows(handle: int, record: Mapping[str, Any], chunk_handles: Mapping[str, int]) -> Iterator[tuple]:
    """``(relation, ord, chunk, quote, confidence, weight)`` rows of a relation's evidence."""
    for i, ev in enumerate(record.get("evidence") or []):
        cid = ev.get("chunk_id")
        conf = ev.get("confidence")
        yield (
            handle,
            i,
            chunk_handles.get(cid) if cid is not None else None,
            ev.get("quote"),
            None if conf is None else float(conf),
            float(ev.get("weight", 1.0)),
        )


def postings(chunk: Any) -> tuple[Counter[str], int]:
    """A chunk's term counts and length, tokenised exactly as the in-process BM25 index does."""
    counts = Counter(tokenize(chunk_text(chunk)))
    return counts, int(sum(counts.values()))


def signature_of_entity(record: Mapping[str, Any] | None) -> Any:
    """What a community report reads of an entity (its name, type and description texts): when it changes, the
    communities holding the entity are stale (:func:`kg_rag.communities.detect.signature`)."""
    if record is None:
        return None
    texts = sorted(d.get("text", "") if isinstance(d, dict) else str(d) for d in record.get("descriptions") or [])
    return (record.get("name"), record.get("entity_type"), tuple(texts))


def signature_of_relation(record: Mapping[str, Any] | None) -> Any:
    """What a community report reads of a relation among its members (type, kind, evidence)."""
    if record is None:
        return None
    evidence = sorted(
        (str(e.get("chunk_id")), str(e.get("quote") or ""), str(e.get("description") or ""))
        for e in record.get("evidence") or []
    )
    return (record.get("relation_type"), record.get("kind"), tuple(evidence))


# ---------------------------------------------------------------------------------------------- writing
def copy_rows(
    conn: Any, table: str, columns: Sequence[str], types: Sequence[str], rows: Iterable[tuple], *, freeze: bool = False
) -> int:
    """Binary ``COPY`` of ``rows`` into ``table`` (already schema-qualified); returns how many. ``freeze`` (a
    table created in this transaction) writes the rows frozen and all-visible, so no vacuum is needed after a
    bulk load for index-only scans."""
    n = 0
    with conn.cursor() as cur:
        options = "FORMAT BINARY, FREEZE" if freeze else "FORMAT BINARY"
        with cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN WITH ({options})") as cp:
            cp.set_types(list(types))
            for row in rows:
                cp.write_row(row)
                n += 1
    return n


def upsert_rows(
    conn: Any, schema: str, table: str, key: str, columns: Sequence[str], types: Sequence[str], rows: list[tuple]
) -> None:
    """Insert or replace whole rows (by ``key``) through a temporary table filled by binary ``COPY``."""
    if not rows:
        return
    tmp = f"kg_tmp_{table}"
    conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS {tmp} (LIKE {schema}.{table} INCLUDING DEFAULTS) ON COMMIT DROP")
    conn.execute(f"TRUNCATE {tmp}")
    copy_rows(conn, tmp, columns, types, rows)
    updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in columns if c != key)
    conn.execute(
        f"INSERT INTO {schema}.{table} ({', '.join(columns)}) SELECT {', '.join(columns)} FROM {tmp} "
        f"ON CONFLICT ({key}) DO UPDATE SET {updates}"
    )


ENTITY_COLUMNS = ["id", "key", "name", "entity_type", "record", "rec_hash"]
ENTITY_TYPES = ["int8", "text", "text", "text", "jsonb", "text"]
RELATION_COLUMNS = ["id", "rel_id", "source", "target", "type_id", "is_synonym", "weight", "record", "rec_hash"]
RELATION_TYPES = ["int8", "text", "int8", "int8", "int4", "bool", "float4", "jsonb", "text"]
CHUNK_COLUMNS = ["id", "chunk_id", "doc_id", "record", "rec_hash", "n_terms"]
CHUNK_TYPES = ["int8", "text", "text", "jsonb", "text", "int4"]
EVIDENCE_COLUMNS = ["relation", "ord", "chunk", "quote", "confidence", "weight"]
EVIDENCE_TYPES = ["int8", "int4", "int8", "text", "float4", "float4"]


def entity_row(handle: int, record: Mapping[str, Any]) -> tuple:
    return (handle, record["key"], record["name"], record["entity_type"], jsonb(record), record_hash(record))


def relation_row(handle: int, record: Mapping[str, Any], source: int, target: int, type_id: int) -> tuple:
    return (
        handle,
        record["id"],
        source,
        target,
        type_id,
        is_synonym(record),
        relation_weight(record),
        jsonb(record),
        record_hash(record),
    )


def chunk_row(handle: int, record: Mapping[str, Any], n_terms: int) -> tuple:
    return (handle, record["id"], record["doc_id"], jsonb(record), record_hash(record), n_terms)


def write_vectors(conn: Any, schema: str, table: str, rows: list[tuple]) -> None:
    """Insert or replace ``(id, text_hash, vector)`` rows of a vector table."""
    upsert_rows(conn, schema, table, "id", ["id", "text_hash", "embedding"], ["int8", "text", "vector"], rows)


def recount_entities(conn: Any, schema: str, ids: Iterable[int]) -> None:
    """Recompute the derived columns (chunks mentioning, degrees) of the given entities from their rows; only
    rows whose values changed are written."""
    ids = sorted(set(ids))
    if not ids:
        return
    s = schema
    conn.execute(
        f"""UPDATE {s}.entities e SET n_chunks = c.n, out_degree = c.o, in_degree = c.i
            FROM (SELECT u.id,
                         (SELECT count(*) FROM {s}.mentions m WHERE m.entity = u.id) AS n,
                         (SELECT count(*) FROM {s}.relations r WHERE r.source = u.id) AS o,
                         (SELECT count(*) FROM {s}.relations r WHERE r.target = u.id) AS i
                  FROM unnest(%s::int8[]) AS u(id)) c
            WHERE e.id = c.id AND (e.n_chunks, e.out_degree, e.in_degree) IS DISTINCT FROM (c.n, c.o, c.i)""",
        (ids,),
    )


def adjust_terms(conn: Any, schema: str, delta: Mapping[str, int]) -> None:
    """Apply document-frequency changes to the BM25 ``terms`` table (terms left in no chunk are removed)."""
    changed = {t: d for t, d in delta.items() if d}
    if not changed:
        return
    terms, deltas = list(changed), list(changed.values())
    conn.execute(
        f"""INSERT INTO {schema}.terms (term, df) SELECT * FROM unnest(%s::text[], %s::int4[])
            ON CONFLICT (term) DO UPDATE SET df = {schema}.terms.df + EXCLUDED.df""",
        (terms, deltas),
    )
    conn.execute(f"DELETE FROM {schema}.terms WHERE term = ANY(%s) AND df <= 0", (terms,))


# ---------------------------------------------------------------------------------------------- meta
def read_meta_rows(conn: Any, schema: str) -> dict[str, Any]:
    return {k: v for k, v in conn.execute(f"SELECT key, value FROM {schema}.meta")}


def parse_meta(rows: Mapping[str, Any], where: str, schema: str) -> IndexMeta:
    """The :class:`IndexMeta` of a database index, validated (types and ranges) before anything is sized."""
    from kg_rag.errors import IndexFormatError

    communities = rows.get("communities")
    if communities is not None and not isinstance(communities, dict):
        raise IndexFormatError(where, "meta 'communities' must be a JSON object or null")
    version = rows.get("version", 0)
    if not isinstance(version, int) or isinstance(version, bool) or version < 0:
        raise IndexFormatError(where, f"meta 'version' must be a non-negative integer, got {version!r}")
    bm25 = rows.get("bm25")
    if bm25 is not None and (not isinstance(bm25, dict) or not all(isinstance(v, (int, float)) for v in bm25.values())):
        raise IndexFormatError(where, "meta 'bm25' must be an object of numbers")
    return IndexMeta.parse(
        {
            "schema_version": rows.get("schema_version"),
            "embedding": rows.get("embedding"),
            "stats": rows.get("stats"),
            "community_levels": (communities or {}).get("levels") or [],
        },
        where,
        supported=S.SCHEMA_VERSION,
        version=f"{schema}@{version}",
    )


def write_meta(conn: Any, schema: str, values: Mapping[str, Any]) -> None:
    for key, value in values.items():
        conn.execute(
            f"INSERT INTO {schema}.meta (key, value) VALUES (%s, %s) "
            "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
            (key, jsonb(value)),
        )


def meta_values(meta: IndexMeta, *, version: int, report: Any, bm25: Mapping[str, Any], communities: Any) -> dict:
    """The ``meta`` rows of a database index: the :class:`IndexMeta` fields plus what only a database keeps
    (BM25 statistics, the ingest report, community settings, the write counter)."""
    return {
        **{k: v for k, v in meta.to_dict().items()},
        "format": FORMAT,
        "report": report.to_dict(),
        "bm25": dict(bm25),
        "type_counts": dict(meta.relation_types),
        "communities": communities,
        "version": version,
        "saved": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def community_meta(cs: Any) -> dict[str, Any] | None:
    if cs is None:
        return None
    return {"count": len(cs), "levels": cs.levels, "params": cs.params, "usage": cs.usage}
