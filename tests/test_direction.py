"""Direction is meaning: source -> target survives every path, and sorted endpoints would fail these tests.

The names are chosen so that alphabetical order inverts the true direction:
``"EO_13800" < "EO_14028"`` and ``"REGULATION_2020" < "STATUTE_2021"``.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kg_rag import Chunk, KnowledgeGraph, build_index, load_index, save_index
from kg_rag.ingest import LLMExtractor, import_graph_documents

FACTS = [("EO_14028", "SUPERSEDES", "EO_13800"), ("STATUTE_2021", "REVOKES", "REGULATION_2020")]
TEXT = "EO_14028 supersedes EO_13800. STATUTE_2021 revokes REGULATION_2020."


def assert_directed(kg: KnowledgeGraph) -> None:
    for source, rtype, target in FACTS:
        assert source > target, "the fixture must be alphabetically inverted"
        forward = kg.find_relations(source, target, rtype)
        assert len(forward) == 1, f"{source} -[{rtype}]-> {target} missing"
        rel = forward[0]
        assert kg.graph.nodes[rel.source]["name"] == source
        assert kg.graph.nodes[rel.target]["name"] == target
        assert kg.find_relations(target, source) == [], f"{target} -> {source} must not exist"
        assert kg.graph.has_edge(rel.source, rel.target) and not kg.graph.has_edge(rel.target, rel.source)


def extraction_response(_: str) -> dict:
    return {
        "entities": [{"name": n, "type": "REGULATION"} for f in FACTS for n in (f[0], f[2])],
        "relations": [
            {"source": s, "target": t, "type": r, "evidence": f"{s} {r.lower()} {t}", "confidence": 0.9}
            for s, r, t in FACTS
        ],
    }


def graph_documents() -> list:
    def node(name: str) -> SimpleNamespace:
        return SimpleNamespace(id=name, type="Regulation", properties={})

    return [
        SimpleNamespace(
            nodes=[node(n) for f in FACTS for n in (f[0], f[2])],
            relationships=[SimpleNamespace(source=node(s), target=node(t), type=r, properties={}) for s, r, t in FACTS],
            source=SimpleNamespace(page_content=TEXT, metadata={"source": "orders.txt"}),
        )
    ]


@pytest.fixture
def extracted(scripted_llm) -> KnowledgeGraph:
    kg = KnowledgeGraph()
    report = LLMExtractor(scripted_llm(extraction_response), retry_initial_wait=0).ingest(
        kg, [Chunk("c1", TEXT, "orders")]
    )
    assert not report.failures
    return kg


def test_llm_extraction_keeps_direction(extracted):
    assert_directed(extracted)
    rel = extracted.find_relations("EO_14028", "EO_13800")[0]
    assert rel.evidence_quote == "EO_14028 supersedes EO_13800"
    assert (rel.chunk_id, rel.doc_id, rel.confidence) == ("c1", "orders", 0.9)


def test_graph_document_import_keeps_direction():
    kg = KnowledgeGraph()
    import_graph_documents(kg, graph_documents())
    assert_directed(kg)


def test_save_load_add_delete_keep_direction(extracted, tmp_path, fake_embeddings):
    index = build_index(extracted, fake_embeddings)
    save_index(index, tmp_path / "idx")
    loaded = load_index(tmp_path / "idx")
    assert_directed(loaded.kg)

    # incremental add: a second document restating the facts, plus an unrelated one
    import_graph_documents(loaded.kg, graph_documents())
    loaded.kg.add_chunk(Chunk("c9", "Other text.", "other"))
    loaded.kg.add_relation("ZETA", "ALPHA", "PRECEDED", chunk_id="c9")
    assert_directed(loaded.kg)
    merged = loaded.kg.find_relations("EO_14028", "EO_13800")
    assert len(merged) == 1 and len(merged[0].evidence) == 2  # one relation, evidence from both documents
    refreshed = loaded.refresh(fake_embeddings)
    save_index(refreshed, tmp_path / "idx")
    again = load_index(tmp_path / "idx")
    assert_directed(again.kg)
    assert again.kg.find_relations("ZETA", "ALPHA", "PRECEDED")
    assert not again.kg.find_relations("ALPHA", "ZETA")

    # delete: the unrelated doc goes, the directed facts stay (still supported by the others)
    removed = again.kg.remove_document("other")
    assert removed == {"chunks": 1, "relations": 1, "entities": 2, "descriptions": 0}
    assert_directed(again.kg)
    again.kg.remove_document("orders")
    assert_directed(again.kg)  # still supported by the GraphDocument chunk


def test_reversed_pair_is_a_different_relation():
    kg = KnowledgeGraph()
    a = kg.add_relation("B", "A", "SUPERSEDES")
    b = kg.add_relation("A", "B", "SUPERSEDES")
    assert a != b
    assert [r.source for r in kg.find_relations("B", "A")] == ["b"]
    assert [r.source for r in kg.find_relations("A", "B")] == ["a"]


def test_direction_property_over_many_random_pairs():
    import random

    rng = random.Random(7)
    kg = KnowledgeGraph()
    pairs = set()
    for _ in range(300):
        s, t = (f"N{rng.randrange(60):02d}" for _ in range(2))
        if s != t:
            kg.add_relation(s, t, "PRECEDED")
            pairs.add((s.lower(), t.lower()))
    stored = {(r.source, r.target) for r in kg.relations()}
    assert stored == pairs
    assert any(s > t for s, t in stored) and any(s < t for s, t in stored)
