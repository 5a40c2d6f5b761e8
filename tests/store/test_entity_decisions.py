"""Merge and split by hand, recorded with the index so the decision survives re-indexing and updates — on both
backends (``IndexWriter.merge_entities`` / ``split_entities``; ``kg-rag entities``). Issue 43 §5."""

from __future__ import annotations

import pytest

from kg_rag import Chunk, KnowledgeGraph, build_index
from kg_rag.errors import EntityResolutionError
from kg_rag.index.resolution import resolve_index
from kg_rag.indexing import IndexWriter
from kg_rag.store import open_store

from ..index.test_resolution import ConceptEmbeddings

EMB = ConceptEmbeddings(dict.fromkeys(["United States", "U.S.", "USA", "United States of America"], "usa"))


def corpus(extra: bool = False) -> KnowledgeGraph:
    kg = KnowledgeGraph()
    facts = [
        ("c0", "United States", "BORDERS", "Canada"),
        ("c1", "U.S.", "SIGNED", "Treaty of Paris"),
        ("c2", "USA", "WON", "gold"),
        ("c3", "Dominion", "JOINED", "League of Nations"),
        ("c6", "United States of America", "FOUNDED_IN", "1776"),
    ]
    if extra:
        facts.append(("c4", "Dominion", "HOSTED", "Expo 67"))
        facts.append(("c5", "U.S.", "HOSTED", "Expo 74"))
    for cid, a, rtype, b in facts:
        kg.add_chunk(Chunk(cid, f"{a} {rtype.lower()} {b}.", f"d{cid}"))
        kg.add_relation(a, b, rtype, chunk_id=cid)
    return kg


def rebuild(writer: IndexWriter, kg: KnowledgeGraph) -> None:
    """What ``kg-rag index`` does without ``--update``: a new index, resolved with the stored decisions."""
    index, _ = resolve_index(build_index(kg, EMB), EMB, writer.decisions())
    writer.save(index)


def entities(location: str) -> dict[str, list[str]]:
    kg = open_store(location).load().kg
    return {key: sorted(kg.chunks_of_entity(key)) for key in kg.graph.nodes}


@pytest.fixture(params=["directory", "postgres"])
def location(request, tmp_path) -> str:
    return str(tmp_path / "idx") if request.param == "directory" else request.getfixturevalue("pg_schema_uri")


def test_merges_and_splits_by_hand_survive_updates_and_re_indexing(location):
    with IndexWriter(open_store(location), EMB) as writer:
        rebuild(writer, corpus())
        assert {"u s", "usa", "united states of america"}.isdisjoint(entities(location))  # resolved at index time
        with open_store(location).backend().reader() as view:  # a name merged away still finds its entity
            found = view.lookup_entities(["u s", "united states", "usa"])
            assert found["u s"] == found["usa"] == found["united states"]
        writer.merge_entities("Canada", "Dominion")
        writer.split_entities("United States", "USA")
        ents = entities(location)
        assert "dominion" not in ents and ents["canada"] == ["c0", "c3"]
        assert ents["usa"] == ["c2"] and "c2" not in ents["united states"]
        # an update naming the variants again: resolved as decided
        fragment = corpus(extra=True)
        writer.replace_documents(fragment)
        ents = entities(location)
        assert "dominion" not in ents and "c4" in ents["canada"]
        assert "u s" not in ents and "c5" in ents["united states"]
        assert ents["usa"] == ["c2"]
        # a re-index of the same input: the decisions hold, the automatic merges are found again
        rebuild(writer, corpus(extra=True))
        ents = entities(location)
        assert "dominion" not in ents and ents["usa"] == ["c2"] and "u s" not in ents
        merges = {m.name: (m.into_name, m.how) for m in writer.entity_merges()}
        assert merges["Dominion"] == ("Canada", "manual") and merges["U.S."][0] == "United States"
        assert ("united states", "usa") in writer.decisions().apart


def test_a_merge_or_split_the_index_cannot_make_is_refused(location):
    with IndexWriter(open_store(location), EMB) as writer:
        rebuild(writer, corpus())
        with pytest.raises(EntityResolutionError, match="no entity named 'Atlantis'"):
            writer.merge_entities("Canada", "Atlantis")
        with pytest.raises(EntityResolutionError, match="was not merged"):
            writer.split_entities("Canada", "gold")
        with pytest.raises(EntityResolutionError, match="one entity already"):
            writer.merge_entities("U.S.", "United States")
