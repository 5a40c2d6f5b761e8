"""Both stores pass the compliance suite shipped in ``kg_rag.testing``."""

from __future__ import annotations

import uuid

import pytest

from kg_rag.store import DirectoryStore
from kg_rag.testing.compliance import Capabilities, StoreComplianceSuite


class TestDirectoryStore(StoreComplianceSuite):
    capabilities = Capabilities(fixed_version_readers=True)  # a backend serves its generation until refresh()

    @pytest.fixture(scope="class")
    @classmethod
    def store_factory(cls, tmp_path_factory):
        return lambda: DirectoryStore(tmp_path_factory.mktemp("store") / "idx")


def postgres_factory(pg_server, search: str = "auto"):
    from kg_rag.store.postgres import PostgresStore

    made = []

    def make():
        made.append(PostgresStore(f"{pg_server}&kg_schema=t_{uuid.uuid4().hex[:10]}&kg_search={search}"))
        return made[-1]

    yield make
    for store in made:
        store.drop()


class TestPostgresStore(StoreComplianceSuite):
    @pytest.fixture(scope="class")
    @classmethod
    def store_factory(cls, pg_server):
        yield from postgres_factory(pg_server)


class TestPostgresStoreExact(TestPostgresStore):
    """The same with every vector search forced to an exact scan."""

    @pytest.fixture(scope="class")
    @classmethod
    def store_factory(cls, pg_server):
        yield from postgres_factory(pg_server, "exact")


class TestPostgresStoreHNSW(TestPostgresStore):
    """Every vector search through the HNSW indexes (exact on a graph this small: the test is of the plumbing)."""

    @pytest.fixture(scope="class")
    @classmethod
    def store_factory(cls, pg_server):
        yield from postgres_factory(pg_server, "hnsw")
