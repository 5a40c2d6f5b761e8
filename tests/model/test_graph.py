"""The knowledge graph (``kg_rag/model/graph.py``): parallel typed relations, merged entities, removals, synonyms,
names in any script, type conflicts logged."""

from __future__ import annotations

import logging

import pytest

from kg_rag import RELATED, SYNONYM, Chunk, KnowledgeGraph, build_index


def make_kg() -> KnowledgeGraph:
    kg = KnowledgeGraph()
    kg.add_chunk(Chunk("c1", "Alice manages Bob. Alice mentors Bob.", "d1"))
    kg.add_chunk(Chunk("c2", "Alice manages Bob.", "d2"))
    kg.add_relation("Alice", "Bob", "MANAGES", chunk_id="c1", evidence="Alice manages Bob")
    kg.add_relation("Alice", "Bob", "mentors", chunk_id="c1")
    kg.add_relation("alice ", "BOB", "manages", chunk_id="c2", confidence=0.5)
    return kg


def test_multidigraph_keeps_parallel_relations_and_merges_evidence():
    kg = make_kg()
    rels = kg.find_relations("Alice", "Bob")
    assert sorted(r.relation_type for r in rels) == ["MANAGES", "MENTORS"]
    manages = kg.find_relations("Alice", "Bob", "MANAGES")[0]
    assert manages.chunk_ids == ["c1", "c2"] and manages.doc_ids == ["d1", "d2"]
    assert manages.weight == 2.0 and manages.confidence == 0.5
    assert manages.evidence_quote == "Alice manages Bob"


def test_missing_type_is_related_and_types_are_upper_snake():
    kg = KnowledgeGraph()
    kg.add_relation("A", "B", None)
    kg.add_relation("A", "C", "  reports to ")
    kg.add_relation("A", "D", "-[X]->")
    assert {r.relation_type for r in kg.relations()} == {RELATED, "REPORTS_TO", "X"}


def test_entities_merge_variants_types_and_descriptions():
    kg = KnowledgeGraph()
    k1 = kg.add_entity("EO_14028", None, "an order", chunk_id="c1")
    k2 = kg.add_entity("eo-14028.", "policy", "An order", chunk_id="c2")
    assert k1 == k2
    e = kg.get_entity("EO 14028")
    assert e.entity_type == "POLICY" and e.descriptions == ["an order"] and e.chunk_ids == ["c1", "c2"]
    assert kg.entities_of_chunk("c2") == {k1}


def test_remove_document_drops_only_unsupported_things():
    kg = make_kg()
    assert kg.remove_document("d1") == {"chunks": 1, "relations": 1, "entities": 0, "descriptions": 0}
    assert [r.relation_type for r in kg.find_relations("Alice", "Bob")] == ["MANAGES"]
    assert kg.find_relations("Alice", "Bob")[0].chunk_ids == ["c2"]
    assert kg.remove_document("d2") == {"chunks": 1, "relations": 1, "entities": 2, "descriptions": 0}
    assert len(kg) == 0 and kg.graph.number_of_edges() == 0
    assert kg.remove_document("missing") == {"chunks": 0, "relations": 0, "entities": 0, "descriptions": 0}


def test_synonyms_are_distinct_from_extracted_relations():
    kg = make_kg()
    kg.add_synonym("Alice", "Bob", 0.93)
    assert kg.stats()["relations"] == 2 and kg.stats()["synonym_links"] == 2
    assert all(r.relation_type != SYNONYM for r in kg.relations())
    assert sum(r.relation_type == SYNONYM for r in kg.relations(include_synonyms=True)) == 2
    with pytest.raises(ValueError, match="reserved"):
        kg.add_relation("Alice", "Bob", SYNONYM)


@pytest.mark.parametrize(
    "kwargs, match",
    [({"confidence": 1.5}, "confidence"), ({"weight": -1}, "weight")],
)
def test_invalid_relation_values_raise_value_error(kwargs, match):
    with pytest.raises(ValueError, match=match):
        KnowledgeGraph().add_relation("A", "B", "X", **kwargs)


def test_empty_names_raise_value_error():
    with pytest.raises(ValueError, match="non-empty"):
        KnowledgeGraph().add_entity(" \n ")


def test_stats_counts():
    s = make_kg().stats()
    assert s == {
        "chunks": 2,
        "documents": 2,
        "entities": 2,
        "relations": 2,
        "relation_types": {"MANAGES": 1, "MENTORS": 1},
        "synonym_links": 0,
    }


def test_synonym_links_never_join_different_numbers():
    """Embeddings put 1963 next to 1964 and one date next to another; names that both carry numbers must
    carry the same ones to be linked, while a name with numbers may still match one without."""
    from langchain_core.embeddings import Embeddings

    from kg_rag.index.synonyms import link_synonyms

    class Same(Embeddings):  # every text the same vector: only the number rule separates them
        def embed_documents(self, texts):
            return [[1.0, 0.0, 0.0, 0.0] for _ in texts]

        def embed_query(self, text):
            return [1.0, 0.0, 0.0, 0.0]

    kg = KnowledgeGraph()
    kg.add_chunk(Chunk("c", "text", "d"))
    names = (
        "1963",
        "1964",
        "27 November 1956",
        "19 June 1956",
        "World War 2",
        "Second World War",
        "Release 1.5",
        "Release 5.1",
    )
    for name in names:
        kg.add_entity(name, chunk_id="c")
    index = build_index(kg, Same())
    link_synonyms(index, 0.9)
    linked = {
        frozenset((r.source, r.target)) for r in kg.relations(include_synonyms=True) if r.relation_type == SYNONYM
    }
    assert frozenset(("1963", "1964")) not in linked
    assert frozenset(("27 november 1956", "19 june 1956")) not in linked
    assert frozenset(("release 1.5", "release 5.1")) not in linked  # the same numbers in another order
    assert frozenset(("world war 2", "second world war")) in linked


def test_relation_between_two_devanagari_names_is_kept():
    kg = KnowledgeGraph()
    kg.add_chunk(Chunk("c", "राम रीमा से मिला", "d"))
    kg.add_relation("राम", "रीमा", "MET", chunk_id="c")
    assert [(r.source, r.target) for r in kg.relations()] == [("राम", "रीमा")]


def test_type_conflict_is_logged_at_warning_and_the_first_type_kept(caplog):
    kg = KnowledgeGraph()
    with caplog.at_level(logging.WARNING, logger="kg_rag"):
        kg.add_entity("Apple", "ORGANIZATION")
        kg.add_entity("apple", "PRODUCT")
    assert kg.get_entity("apple").entity_type == "ORGANIZATION"
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "ORGANIZATION" in warnings[0].getMessage() and "PRODUCT" in warnings[0].getMessage()
