"""Every store passes the compliance suite shipped in ``kg_rag.testing``: the directory, PostgreSQL, and a third,
in-memory store written in this folder against the seam alone (``memory_store.py``)."""

from __future__ import annotations

import uuid

import pytest

from kg_rag.store import SCHEMES, DirectoryStore, open_store, register_store
from kg_rag.store.graph_store import GraphStore
from kg_rag.testing.compliance import Capabilities, StoreComplianceSuite

from .memory_store import PREFIX, MemoryStore


class TestDirectoryStore(StoreComplianceSuite):
    capabilities = Capabilities(fixed_version_readers=True)  # a backend serves its generation until refresh()

    @pytest.fixture(scope="class")
    @classmethod
    def store_factory(cls, tmp_path_factory):
        return lambda: DirectoryStore(tmp_path_factory.mktemp("store") / "idx")


class TestMemoryStore(StoreComplianceSuite):
    """A store that implements only the four abstract methods (and ``version``): the query backend, documents,
    metadata and report are ``GraphStore``'s defaults."""

    @pytest.fixture(scope="class")
    @classmethod
    def store_factory(cls):
        return lambda: MemoryStore(f"{PREFIX}{uuid.uuid4().hex[:10]}")


def test_a_third_store_needs_four_methods_and_a_scheme_not_an_edit_of_open_store(monkeypatch):
    assert GraphStore.__abstractmethods__ == {"exists", "writing", "save", "load"}
    monkeypatch.setitem(SCHEMES, PREFIX, MemoryStore)  # undone after the test
    register_store(PREFIX, MemoryStore)
    store = open_store(f"{PREFIX}registered")
    assert isinstance(store, MemoryStore) and not store.exists()
    with pytest.raises(ValueError, match="prefix"):
        register_store("", MemoryStore)


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
