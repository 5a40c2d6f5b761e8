"""The one write path (``IndexWriter``) on both stores: what a re-index would delete, unknown ids refused before
anything changes, documents indexed against what is stored (unchanged ones cost nothing), whole-graph edits,
community refreshes that write only the communities, and row-level writes that never load the graph."""

from __future__ import annotations

import uuid

import pytest
from langchain_core.documents import Document

from kg_rag.indexing import IndexWriter
from kg_rag.model.change import GraphChange
from kg_rag.model.graph import KnowledgeGraph
from kg_rag.model.records import Chunk
from kg_rag.store import DirectoryStore
from kg_rag.testing.compliance import reference_index


@pytest.fixture(params=["directory", "postgres"])
def store(request, tmp_path, bow_embeddings):
    if request.param == "directory":
        made = DirectoryStore(tmp_path / "idx")
    else:
        from kg_rag.store.postgres import PostgresStore

        made = PostgresStore(f"{request.getfixturevalue('pg_server')}&kg_schema=t_{uuid.uuid4().hex[:10]}")
    made.save(reference_index(bow_embeddings))
    yield made
    if request.param == "postgres":
        made.drop()


def test_removals_list_what_a_reindex_would_delete(store, bow_embeddings):
    writer = IndexWriter(store, bow_embeddings)
    assert writer.removals(["orders.md", "org.md", "new.md"]) == ["misc.md", "ops.md"]
    assert writer.removals([]) == sorted(d["id"] for d in store.documents())
    assert [d["id"] for d in writer.documents(["org.md", "nope"])] == ["org.md"]


def test_deleting_unknown_ids_changes_nothing(store, bow_embeddings):
    before = store.stats()
    with pytest.raises(KeyError, match="'nope'"):
        IndexWriter(store, bow_embeddings).delete_documents(["org.md", "nope"])
    assert store.stats() == before


def test_indexing_documents_against_the_store(store, bow_embeddings):
    """``index_documents`` plans against the stored documents: an unchanged document is not redone, a changed
    one is replaced, and with ``sync`` the others are removed — one atomic write."""
    docs = [
        Document(page_content="Alpha precedes Beta. Beta precedes Gamma.", metadata={"doc_id": "greek.md"}),
        Document(page_content="One comes before two.", metadata={"doc_id": "numbers.md"}),
    ]
    writer = IndexWriter(store, bow_embeddings)
    changes = writer.index_documents(docs)
    assert changes.added == ["greek.md", "numbers.md"] and not changes.removed
    again = writer.index_documents(
        docs[:1] + [Document(page_content="Two comes after one.", metadata={"doc_id": "numbers.md"})]
    )
    assert again.unchanged == ["greek.md"] and again.replaced == ["numbers.md"]
    with IndexWriter(store, bow_embeddings) as held:  # the lock is held across planning and writing

        def guard(plan):  # sees the plan before anything is extracted or written
            assert set(plan.changes.removed) == set(held.removals(["greek.md"])) >= {"numbers.md"}

        held.index_documents(docs[:1], sync=True, guard=guard)
    assert [d["id"] for d in store.documents()] == ["greek.md"]
    assert store.stats()["documents"] == 1


def test_a_whole_graph_edit_and_a_retype(store, bow_embeddings):
    writer = IndexWriter(store, bow_embeddings)
    writer.edit(lambda index: index.kg.add_relation("Memo A", "Maria Chen", "ADDRESSED_TO", chunk_id="c7"))
    assert store.load().kg.find_relations("Memo A", "Maria Chen", "ADDRESSED_TO")
    from kg_rag.model.relation_types import RelationTyper

    done = writer.retype(RelationTyper(min_support=1))
    assert {"retyped", "merged", "embedded", "before", "after"} <= set(done)
    assert store.stats()["relations"] == done["after"]["relations"]


def test_refreshing_communities_writes_only_them(store, bow_embeddings):
    writer = IndexWriter(store, bow_embeddings)
    writer.replace_documents(_fragment())  # some communities go stale
    before = store.load()
    assert before.communities.stale
    communities, stats, _ = writer.refresh_communities()
    after = store.load()
    assert not after.communities.stale and after.communities.to_dict() == communities.to_dict()
    for part in ("entity_records", "relation_records", "chunk_records"):
        assert sorted(map(repr, getattr(after.kg, part)())) == sorted(map(repr, getattr(before.kg, part)()))
    assert store.stats()["stale_communities"] == 0


def test_postgres_document_writes_never_load_the_graph(pg_schema_uri, bow_embeddings, monkeypatch):
    from kg_rag.store.postgres import PostgresStore

    store = PostgresStore(pg_schema_uri)
    store.save(reference_index(bow_embeddings))

    def refuse(*args, **kwargs):
        raise AssertionError("a document write loaded the whole graph")

    monkeypatch.setattr(PostgresStore, "load", refuse)
    monkeypatch.setattr(PostgresStore, "save", refuse)
    writer = IndexWriter(store, bow_embeddings)
    writer.replace_documents(_fragment())
    assert writer.delete_documents(["misc.md"])["chunks"] == 2
    writer.apply(GraphChange().remove(["ops.md"]))
    assert store.last_write["kind"] == "rows"
    assert {d["id"] for d in store.documents()} == {"orders.md", "org.md"}


def test_another_embedding_model_takes_the_whole_graph_path(pg_schema_uri, bow_embeddings):
    from langchain_core.embeddings import DeterministicFakeEmbedding

    from kg_rag.store.postgres import PostgresStore

    store = PostgresStore(pg_schema_uri)
    store.save(reference_index(DeterministicFakeEmbedding(size=512)))  # the same dimension, another model
    IndexWriter(store, bow_embeddings).replace_documents(_fragment())
    assert store.last_write["kind"] == "save"  # every vector changes: re-embedded and saved whole
    assert store.stats()["embedding_model"] == store.load().embedding_model


def _fragment() -> KnowledgeGraph:
    kg = KnowledgeGraph()
    kg.add_chunk(Chunk("c1-v2", "Directive 2019-03 supersedes Directive 2023-07.", "orders.md"))
    kg.add_relation("Directive 2019-03", "Directive 2023-07", "SUPERSEDES", chunk_id="c1-v2")
    return kg
