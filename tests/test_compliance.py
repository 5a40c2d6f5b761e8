"""Both stores pass the compliance suite shipped in ``kg_rag.testing``."""

from __future__ import annotations

import uuid

import pytest

from kg_rag.store import DirectoryStore
from kg_rag.testing.compliance import StoreComplianceSuite


class TestDirectoryStore(StoreComplianceSuite):
    @pytest.fixture
    def store_factory(self, tmp_path):
        return lambda: DirectoryStore(tmp_path / uuid.uuid4().hex[:8])


class TestPostgresStore(StoreComplianceSuite):
    @pytest.fixture
    def store_factory(self, pg_server):
        from kg_rag.store.postgres import PostgresStore

        made = []

        def make():
            made.append(PostgresStore(f"{pg_server}&kg_schema=t_{uuid.uuid4().hex[:10]}"))
            return made[-1]

        yield make
        for store in made:
            store.drop()


class TestPostgresStoreExact(TestPostgresStore):
    """The same with every vector search forced to an exact scan."""

    @pytest.fixture
    def store_factory(self, pg_server):
        from kg_rag.store.postgres import PostgresStore

        made = []

        def make():
            made.append(PostgresStore(f"{pg_server}&kg_schema=t_{uuid.uuid4().hex[:10]}&kg_search=exact"))
            return made[-1]

        yield make
        for store in made:
            store.drop()


class TestPostgresStoreHNSW(TestPostgresStore):
    """Every vector search through the HNSW indexes (exact on a graph this small: the test is of the plumbing)."""

    @pytest.fixture
    def store_factory(self, pg_server):
        from kg_rag.store.postgres import PostgresStore

        made = []

        def make():
            made.append(PostgresStore(f"{pg_server}&kg_schema=t_{uuid.uuid4().hex[:10]}&kg_search=hnsw"))
            return made[-1]

        yield make
        for store in made:
            store.drop()
