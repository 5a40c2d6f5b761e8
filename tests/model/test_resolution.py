"""Entity resolution decisions (``kg_rag/model/resolution.py``): a merge moves mentions, descriptions and relations
and records what was the merged entity's; a split gives exactly that back; the record survives a round trip and
resolves a later fragment the same way. Issue 43 §4–5."""

from __future__ import annotations

import pytest

from kg_rag import Chunk, KnowledgeGraph
from kg_rag.model.report import IngestReport
from kg_rag.model.resolution import Resolution, merge_entities, resolve_graph, split_entity


def _graph() -> KnowledgeGraph:
    kg = KnowledgeGraph()
    kg.add_chunk(Chunk("c0", "The United States borders Canada.", "d0"))
    kg.add_chunk(Chunk("c1", "The USA won gold; the United States hosted.", "d1"))
    kg.add_chunk(Chunk("c2", "The USA signed the treaty.", "d2"))
    kg.add_relation("United States", "Canada", "BORDERS", chunk_id="c0")
    kg.add_relation("USA", "gold", "WON", chunk_id="c1")
    kg.add_relation("United States", "Olympics", "HOSTED", chunk_id="c1")
    kg.add_relation("USA", "treaty", "SIGNED", chunk_id="c2")
    kg.add_relation("United States", "USA", "RELATED", chunk_id="c1")  # between the two: a self-loop once merged
    kg.add_entity("USA", description="a country", chunk_id="c2")
    return kg


def _edges(kg: KnowledgeGraph) -> set[tuple[str, str, str]]:
    return {(r.source, r.relation_type, r.target) for r in kg.relations()}


def test_a_merge_moves_everything_and_a_split_gives_exactly_it_back():
    kg = _graph()
    before = _edges(kg) - {("united states", "RELATED", "usa")}
    merge = merge_entities(kg, "united states", "usa")
    assert "usa" not in kg.graph and sorted(kg.chunks_of_entity("United States")) == ["c0", "c1", "c2"]
    assert ("united states", "WON", "gold") in _edges(kg) and ("united states", "RELATED", "united states") not in (
        _edges(kg)
    )
    assert kg.get_entity("United States").descriptions == ["a country"]
    assert (merge.chunks, merge.shared) == (["c1", "c2"], ["c1"])
    moved = split_entity(kg, merge)
    assert _edges(kg) == before  # c1 named both: its WON evidence goes back all the same, as recorded
    assert moved["evidence"] == 2 and sorted(kg.chunks_of_entity("USA")) == ["c1", "c2"]
    assert kg.chunks_of_entity("United States") == ["c0", "c1"]  # c1 named both, so both keep its mention
    assert kg.get_entity("USA").descriptions == ["a country"]


def test_the_record_round_trips_and_resolves_a_later_fragment_the_same_way():
    kg = _graph()
    resolution = Resolution()
    resolution.record(merge_entities(kg, "united states", "usa"))
    report = IngestReport(resolution=resolution)
    stored = IngestReport.from_dict(report.to_dict()).resolution
    assert stored.to_dict() == resolution.to_dict() and stored.canonical("usa") == "united states"
    fragment = KnowledgeGraph()  # an update: a new document naming the variant, and not the entity merged into
    fragment.add_chunk(Chunk("c9", "The USA joined NATO.", "d9"))
    fragment.add_relation("USA", "NATO", "JOINED", chunk_id="c9")
    assert resolve_graph(fragment, stored) == ["usa"]
    assert ("united states", "JOINED", "nato") in _edges(fragment)
    assert fragment.get_entity("united states").name == "United States"
    assert "c9" in stored.merges["usa"].chunks  # a later split gives its evidence back too
    stored.forget_chunks({"c9"})
    assert "c9" not in stored.merges["usa"].chunks
    assert IngestReport().to_dict() == {k: v for k, v in IngestReport().to_dict().items() if k != "resolution"}


def test_a_split_is_remembered_and_a_merge_by_hand_overrides_it():
    resolution = Resolution()
    kg = _graph()
    merge = merge_entities(kg, "united states", "usa", how="acronym")
    resolution.record(merge)
    assert resolution.forget("usa", "united states") is merge and resolution.kept_apart("united states", "usa")
    assert resolution.forget("usa", "united states") is None
    resolution.record(merge)  # merging them by hand again
    assert not resolution.kept_apart("usa", "united states")
    with pytest.raises(ValueError):
        Resolution.from_dict({"merges": [{"key": "a"}]})
