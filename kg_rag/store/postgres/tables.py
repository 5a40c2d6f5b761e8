"""The PostgreSQL schema of a kg-rag index, its version, and the migrations between versions.

One index lives in one PostgreSQL schema (``kg_rag`` unless the URI says ``?kg_schema=NAME``):

- ``meta`` (key -> jsonb): schema version, embedding model and dimension, counts, BM25 statistics, the ingest
  report, and ``version`` (incremented by every write, so readers can tell that something changed);
- ``documents`` / ``chunks`` / ``entities`` / ``relations``: one row per record, the full record as ``jsonb``
  plus the columns queries use; ``relations.source``/``target`` are stored as extracted, never sorted, and
  ``CHECK (source <> target)`` holds;
- ``evidence`` (relation x chunk: quote, confidence, weight) and ``mentions`` (entity x chunk): the incidences
  queries walk;
- ``postings`` / ``terms``: the BM25 inverted index (tokenised exactly as the in-process index does);
- ``relation_types``: type names and their codes;
- ``communities`` / ``community_members``: community records (with their reports) and membership by entity key.

Vectors live in narrow tables (``entity_vectors``, ``fact_vectors``, ``chunk_vectors``: id, text hash, pgvector
column) with HNSW indexes (inner product on normalised vectors = cosine). Searches scan exactly below
``EXACT_MAX_ROWS`` rows and use HNSW above; ``?kg_search=exact`` or ``=hnsw`` forces one of them.
Handles (``id``) are ``bigint`` keys: an index copied
from a directory keeps the directory's row numbers, new rows get the next free number.
"""

from __future__ import annotations

import math
import os
import re

from kg_rag.errors import InputError

SCHEMA_VERSION = 1
"""The layout this release writes and reads (``meta.schema_version``)."""

DEFAULT_SCHEMA = "kg_rag"
_IDENT = re.compile(r"[a-z_][a-z0-9_]{0,62}")
"""Matched whole (``fullmatch``): with ``match`` and ``$``, ``name\\n`` passed (``$`` matches before a final
line break) and named the same schema as ``name`` under another writer-lock key."""


_RESERVED = frozenset(
    """all analyse analyze and any array as asc asymmetric authorization binary both case cast check collate
    collation column concurrently constraint create cross current_catalog current_date current_role
    current_schema current_time current_timestamp current_user default deferrable desc distinct do else end
    except false fetch for foreign freeze from full grant group having ilike in initially inner intersect into is
    isnull join lateral leading left like limit localtime localtimestamp natural not notnull null offset on only
    or order outer overlaps placing primary references returning right select session_user similar some
    symmetric system_user table tablesample then to trailing true union unique user using variadic verbose when
    where window with""".split()
)
"""Words PostgreSQL reserves (``pg_get_keywords()`` categories R and T): not usable as a bare schema name."""


def check_schema_name(name: str) -> str:
    """A schema name kg-rag can use in its SQL: an identifier that is not a reserved word."""
    if not isinstance(name, str) or not _IDENT.fullmatch(name):
        raise InputError(f"PostgreSQL schema name must match [a-z_][a-z0-9_]*, got {name!r}")
    if name in _RESERVED:
        raise InputError(f"PostgreSQL schema name {name!r} is an SQL reserved word; choose another, e.g. kg_{name}")
    return name


def check_schema_owned(name: str) -> str:
    """A schema kg-rag may create, write and drop: not a system or shared one (dropping or replacing an index
    drops its whole schema). Checked on every write (a new index or an update) and drop, not when reading: an
    index an older release wrote into ``public`` can still be read, and copied out to a schema of its own."""
    check_schema_name(name)
    if name.startswith("pg_") or name in ("information_schema", "public"):
        raise InputError(
            f"PostgreSQL schema {name!r} is a system or shared schema; kg-rag needs a schema of its own "
            "(dropping or replacing an index drops its schema; kg-rag copy moves an index to another)"
        )
    return name


def create_statements(schema: str, dim: int) -> list[str]:
    """DDL for an empty index of vector dimension ``dim`` in ``schema`` (idempotent): tables with their keys,
    foreign keys and secondary indexes. The vector indexes depend on the tables' sizes
    (:func:`vector_index_statement`)."""
    return [*table_statements(schema, dim, foreign_keys=True), *index_statements(schema)]


def bulk_load_statements(schema: str, dim: int) -> tuple[list[str], list[str]]:
    """``(before, after)`` a first bulk load: tables with their primary and unique keys only, then the foreign
    keys and secondary indexes, added once the rows are in (one validating pass each instead of a check and an
    index insertion per copied row). The vector indexes are built last (:func:`vector_index_statement`)."""
    s = check_schema_owned(schema)
    after = [
        f"ALTER TABLE {s}.{table} ADD CONSTRAINT {table}_{column}_fkey FOREIGN KEY ({column}) "
        f"REFERENCES {s}.{parent} (id){' ON DELETE CASCADE' if cascade else ''}"
        for table, column, parent, cascade in FOREIGN_KEYS
    ]
    return table_statements(schema, dim, foreign_keys=False), [*after, *index_statements(schema)]


FOREIGN_KEYS = (
    ("relations", "source", "entities", True),
    ("relations", "target", "entities", True),
    ("relations", "type_id", "relation_types", False),
    ("evidence", "relation", "relations", True),
    ("evidence", "chunk", "chunks", True),
    ("mentions", "entity", "entities", True),
    ("mentions", "chunk", "chunks", True),
    ("postings", "chunk", "chunks", True),
    ("community_members", "community", "communities", True),
    ("entity_vectors", "id", "entities", True),
    ("fact_vectors", "id", "relations", True),
    ("chunk_vectors", "id", "chunks", True),
)
"""``(table, column, parent, on delete cascade)``: deleting a chunk, entity or relation takes what hangs on it."""


def table_statements(schema: str, dim: int, *, foreign_keys: bool = True) -> list[str]:
    """The extension, the schema and its tables (``IF NOT EXISTS``), with foreign keys inline or not."""
    s = check_schema_owned(schema)
    if not isinstance(dim, int) or isinstance(dim, bool) or not 0 < dim <= 16_000:
        raise InputError(f"vector dimension must be a positive integer up to 16000, got {dim!r}")

    def ref(table: str, column: str) -> str:
        if not foreign_keys:
            return ""
        for t, c, parent, cascade in FOREIGN_KEYS:
            if (t, c) == (table, column):
                return f" REFERENCES {s}.{parent} (id)" + (" ON DELETE CASCADE" if cascade else "")
        raise KeyError((table, column))

    return [
        "CREATE EXTENSION IF NOT EXISTS vector",
        f"CREATE SCHEMA IF NOT EXISTS {s}",
        f"CREATE TABLE IF NOT EXISTS {s}.meta (key text PRIMARY KEY, value jsonb NOT NULL)",
        f"""CREATE TABLE IF NOT EXISTS {s}.documents (
            doc_id text PRIMARY KEY,
            record jsonb NOT NULL,
            rec_hash text NOT NULL)""",
        f"""CREATE TABLE IF NOT EXISTS {s}.chunks (
            id bigint PRIMARY KEY,
            chunk_id text NOT NULL UNIQUE,
            doc_id text NOT NULL,
            record jsonb NOT NULL,
            rec_hash text NOT NULL,
            n_terms integer NOT NULL DEFAULT 0)""",
        f"""CREATE TABLE IF NOT EXISTS {s}.entities (
            id bigint PRIMARY KEY,
            key text NOT NULL UNIQUE,
            name text NOT NULL,
            entity_type text NOT NULL,
            record jsonb NOT NULL,
            rec_hash text NOT NULL,
            n_chunks integer NOT NULL DEFAULT 0,
            out_degree integer NOT NULL DEFAULT 0,
            in_degree integer NOT NULL DEFAULT 0)""",
        f"CREATE TABLE IF NOT EXISTS {s}.relation_types (id integer PRIMARY KEY, name text NOT NULL UNIQUE)",
        f"""CREATE TABLE IF NOT EXISTS {s}.relations (
            id bigint PRIMARY KEY,
            rel_id text NOT NULL UNIQUE,
            source bigint NOT NULL{ref("relations", "source")},
            target bigint NOT NULL{ref("relations", "target")},
            type_id integer NOT NULL{ref("relations", "type_id")},
            is_synonym boolean NOT NULL DEFAULT false,
            weight real NOT NULL DEFAULT 1,
            record jsonb NOT NULL,
            rec_hash text NOT NULL,
            CHECK (source <> target))""",
        f"""CREATE TABLE IF NOT EXISTS {s}.evidence (
            relation bigint NOT NULL{ref("evidence", "relation")},
            ord integer NOT NULL,
            chunk bigint{ref("evidence", "chunk")},
            quote text,
            confidence real,
            weight real NOT NULL DEFAULT 1,
            PRIMARY KEY (relation, ord))""",
        f"""CREATE TABLE IF NOT EXISTS {s}.mentions (
            entity bigint NOT NULL{ref("mentions", "entity")},
            chunk bigint NOT NULL{ref("mentions", "chunk")},
            PRIMARY KEY (entity, chunk))""",
        f"""CREATE TABLE IF NOT EXISTS {s}.postings (
            term text NOT NULL,
            chunk bigint NOT NULL{ref("postings", "chunk")},
            tf integer NOT NULL,
            dl integer NOT NULL,
            PRIMARY KEY (term, chunk) INCLUDE (tf, dl))""",
        f"CREATE TABLE IF NOT EXISTS {s}.terms (term text PRIMARY KEY, df integer NOT NULL)",
        f"""CREATE TABLE IF NOT EXISTS {s}.communities (
            id text PRIMARY KEY,
            level integer NOT NULL,
            record jsonb NOT NULL,
            rec_hash text NOT NULL)""",
        f"""CREATE TABLE IF NOT EXISTS {s}.community_members (
            community text NOT NULL{ref("community_members", "community")},
            entity_key text NOT NULL,
            level integer NOT NULL,
            PRIMARY KEY (entity_key, level, community))""",
        *(
            f"""CREATE TABLE IF NOT EXISTS {s}.{table} (
                id bigint PRIMARY KEY{ref(table, "id")},
                text_hash text NOT NULL,
                embedding vector({dim}) NOT NULL)"""
            for table in VECTOR_TABLES
        ),
        *(f"ALTER TABLE {s}.{table} ALTER COLUMN embedding SET STORAGE PLAIN" for table in VECTOR_TABLES),
    ]


def index_statements(schema: str) -> list[str]:
    """Secondary indexes (idempotent). The relation indexes cover a traversal step: after VACUUM it reads the
    index only, never the table."""
    s = check_schema_name(schema)
    return [
        f"CREATE INDEX IF NOT EXISTS chunks_doc ON {s}.chunks (doc_id)",
        f"CREATE INDEX IF NOT EXISTS relations_out ON {s}.relations (source) INCLUDE (id, target, type_id, is_synonym)",
        f"CREATE INDEX IF NOT EXISTS relations_in ON {s}.relations (target) INCLUDE (id, source, type_id, is_synonym)",
        f"CREATE INDEX IF NOT EXISTS evidence_chunk ON {s}.evidence (chunk, relation)",
        f"CREATE INDEX IF NOT EXISTS mentions_chunk ON {s}.mentions (chunk, entity)",
        f"CREATE INDEX IF NOT EXISTS postings_chunk ON {s}.postings (chunk)",
        f"CREATE INDEX IF NOT EXISTS community_members_community ON {s}.community_members (community)",
    ]


VECTOR_TABLES = {"entity_vectors": "entities", "fact_vectors": "relations", "chunk_vectors": "chunks"}
"""Vectors live in narrow tables of their own (one row = one vector, never TOASTed), so scans read only
vectors; a fact's vector is keyed by its relation's id."""


IVF_MIN_ROWS = int(os.environ.get("KG_RAG_PG_IVF_MIN_ROWS", "250000"))
"""Vector tables with at least this many rows at a bulk load get an inverted-file index (``ivfflat``: √rows
lists, :data:`~kg_rag.index.vectors.IVF_NPROBE` probed per search, as the in-process backend's FAISS index);
smaller ones get HNSW. Building HNSW over the 1 M facts of the benchmark took 11–14 minutes on two cores, the
inverted file 37 s, and retrieval agreed with exact search as often as with HNSW there; below this size HNSW
builds in a minute or two and serves large ``k`` (the chain's 200 chunk candidates) with better recall on
unclustered vectors (``evaluation/benchmarks.md``)."""


def ivf_lists(rows: int) -> int:
    """Lists of an inverted file over ``rows`` vectors: √rows within [128, 2048], as FAISS's in the directory
    backend (never more than the rows)."""
    return max(1, min(rows, int(min(2048, max(128, math.sqrt(rows))))))


HALFVEC = os.environ.get("KG_RAG_PG_HALFVEC", "1") != "0"
"""HNSW indexes hold half-precision copies of the vectors (``halfvec``): half the size, at the recall of full
precision on real embeddings (measured: evaluation/design-figures.md); the candidates are re-scored at full
precision. ``KG_RAG_PG_HALFVEC=0`` builds full-precision HNSW."""
HALFVEC_MAX_DIM = 4000
"""The largest dimension pgvector indexes as ``halfvec`` (``vector`` HNSW indexes stop at 2000)."""


def vector_index_statement(schema: str, table: str, rows: int, dim: int) -> tuple[str, str]:
    """``(kind, DDL)`` of the vector index for ``table`` holding ``rows`` vectors of dimension ``dim`` (inner
    product on normalised vectors = cosine); ``kind`` is ``ivfflat``, ``hnsw-halfvec`` or ``hnsw``."""
    s = check_schema_name(schema)
    if table not in VECTOR_TABLES:
        raise InputError(f"not a vector table: {table!r}")
    if rows >= IVF_MIN_ROWS:
        return "ivfflat", (
            f"CREATE INDEX IF NOT EXISTS {table}_ivfflat ON {s}.{table} USING ivfflat (embedding vector_ip_ops) "
            f"WITH (lists = {ivf_lists(rows)})"
        )
    if HALFVEC and 0 < dim <= HALFVEC_MAX_DIM:
        return "hnsw-halfvec", (
            f"CREATE INDEX IF NOT EXISTS {table}_hnsw ON {s}.{table} "
            f"USING hnsw ((embedding::halfvec({int(dim)})) halfvec_ip_ops)"
        )
    return "hnsw", f"CREATE INDEX IF NOT EXISTS {table}_hnsw ON {s}.{table} USING hnsw (embedding vector_ip_ops)"


VECTOR_INDEX_QUERY = """SELECT c.relname, i.indexrelid::regclass::text,
        am.amname || CASE WHEN pg_get_indexdef(i.indexrelid) LIKE '%%halfvec%%' THEN '-halfvec' ELSE '' END
    FROM pg_index i
    JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_am am ON am.oid = ic.relam
    WHERE n.nspname = %s AND am.amname IN ('hnsw', 'ivfflat')"""
"""``(table, index, kind)`` of the vector indexes of a schema (parameter: the schema name)."""


MIGRATIONS: dict[int, list[str]] = {}
"""``to_version -> statements`` that upgrade a schema from ``to_version - 1`` (``{schema}`` is substituted).
Version 1 is the first layout, so there is nothing to migrate yet; a later release adds its steps here and
:func:`migration_steps` applies them in order inside the writer's transaction."""


def migration_steps(schema: str, current: int) -> list[str]:
    """The statements that bring a schema at ``current`` up to :data:`SCHEMA_VERSION`."""
    if current > SCHEMA_VERSION:
        raise InputError(
            f"the index in schema {schema!r} has schema version {current}, newer than this kg-rag "
            f"({SCHEMA_VERSION}); upgrade kg-rag"
        )
    steps: list[str] = []
    for version in range(current + 1, SCHEMA_VERSION + 1):
        steps += [sql.format(schema=check_schema_name(schema)) for sql in MIGRATIONS.get(version, [])]
    return steps
