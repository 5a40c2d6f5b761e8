"""A streaming hot standby serves queries while the primary takes updates (issue 27 §6).

The test starts a primary and a standby of its own from the embedded PostgreSQL (``pg_basebackup -R``), saves
an index on the primary, and runs eight reader threads against the standby while the primary adds, replaces
and deletes documents: no query fails, every query sees one committed version (whole documents, versions
never going back), and once the standby has caught up its answers equal the primary's.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from kg_rag.eval.bench_writes import Readers
from kg_rag.model.graph import KnowledgeGraph
from kg_rag.model.records import Chunk

from .readers import check_view

WRITES = 12


def caught_up(primary, standby, timeout: float = 60.0) -> str:
    """Wait until the standby serves the primary's newest version; returns it."""
    deadline = time.monotonic() + timeout
    want = primary.read_meta().version
    while time.monotonic() < deadline:
        if standby.read_meta().version == want:
            return want
        time.sleep(0.05)
    raise AssertionError(f"the standby did not reach {want} in {timeout} s (it is at {standby.read_meta().version})")


def document(n: int) -> KnowledgeGraph:
    kg = KnowledgeGraph()
    doc = f"update-{n}.md"
    for i in range(3):
        cid = f"{doc}#{i}"
        a, b = f"Order {n}-{i}", f"Order {n}-{i + 1}"
        kg.add_chunk(Chunk(cid, f"{a} supersedes {b}. Priya Nair signed {a}.", doc))
        kg.add_relation(a, b, "SUPERSEDES", chunk_id=cid, evidence=f"{a} supersedes {b}")
        kg.add_relation("Priya Nair", a, "SIGNED", chunk_id=cid, evidence=f"Priya Nair signed {a}")
    return kg


@pytest.fixture
def servers(tmp_path):
    from kg_rag.store.postgres.embedded import EmbeddedPostgres

    try:
        primary = EmbeddedPostgres(tmp_path / "primary")
        primary_uri = primary.start()
    except Exception as exc:  # noqa: BLE001 - as the session fixture: no server, no test
        pytest.skip(f"PostgreSQL could not start: {type(exc).__name__}: {exc}")
    standby = EmbeddedPostgres(tmp_path / "standby")
    try:
        yield primary, primary_uri, standby
    finally:
        standby.stop()
        primary.stop()


def test_a_hot_standby_serves_every_committed_version_and_catches_up(servers, bow_embeddings):
    from kg_rag.context import format_context
    from kg_rag.indexing.writer import IndexWriter
    from kg_rag.query.engine import QueryEngine
    from kg_rag.store.postgres import PostgresStore
    from kg_rag.testing.compliance import QUESTIONS, reference_index

    primary_server, primary_uri, standby_server = servers
    primary = PostgresStore(f"{primary_uri}&kg_schema=replicated")
    primary.save(reference_index(bow_embeddings))
    standby_uri = standby_server.replicate(primary_server)
    standby = PostgresStore(f"{standby_uri}&kg_schema=replicated")
    caught_up(primary, standby)
    backend = standby.backend()
    queries = np.asarray([bow_embeddings.embed_query(q) for q in QUESTIONS], np.float32)
    writer = IndexWriter(primary, bow_embeddings)
    with Readers(backend, queries, check=check_view) as readers:
        for n in range(WRITES):
            writer.replace_documents(document(n))
            if n % 3 == 2:
                writer.replace_documents(document(n - 1))  # the same content again: a replace
            if n % 4 == 3:
                writer.delete_documents([f"update-{n - 2}.md"])
            time.sleep(0.05)
        assert not readers.errors, readers.errors[:3]
    backend.close()
    assert not readers.errors, readers.errors[:3]
    assert readers.count >= WRITES, readers.count
    version = caught_up(primary, standby)
    assert standby.stats() == primary.stats() and standby.stats()["generation"] == version
    on_primary, on_standby = (
        QueryEngine(primary.backend(), bow_embeddings),
        QueryEngine(standby.backend(), bow_embeddings),
    )
    with on_standby.backend.reader() as view:
        check_view(view)
    for question in QUESTIONS:
        a, b = on_primary.retrieve(question), on_standby.retrieve(question)
        assert [c.id for c in b.chunks] == [c.id for c in a.chunks], question
        assert format_context(b).text == format_context(a).text, question
    with pytest.raises(Exception, match="read-only|recovery"):  # writers belong on the primary
        IndexWriter(standby, bow_embeddings).replace_documents(document(99))
