"""A date or number is a value, not a thing: two passages that write the same year share it by coincidence, so a
path never passes through a value and a value is no bridge (*Johann Strauss II* died in 1899, *Finlandia* was
written in 1899: the context showed ``Johann Strauss II -[DIED_IN]-> 1899 <-[WRITTEN_IN]- Finlandia``)."""

from __future__ import annotations

import pytest

from kg_rag import Chunk, EntityBasedKGRAG, KnowledgeGraph
from kg_rag.query.senses import value_name
from tests.query.test_senses import _paths


@pytest.mark.parametrize(
    "name, value",
    [
        ("1899", True),
        ("March 3, 1974", True),
        ("1 January 2001", True),
        ("the 1990s", True),
        ("mid-1970s", True),
        ("the 12th century", True),
        ("19th-century", True),
        ("c. 1500 BC", True),
        ("1974–75", True),
        ("$1.2 billion", True),
        ("25%", True),
        ("35", True),
        # a thing whose name holds a number is a thing
        ("Apollo 11", False),
        ("U.S. Route 52", False),
        ("2010 FIFA World Cup", False),
        ("1,231 retail locations", False),
        ("B-52", False),
        ("Hank Snow", False),
        ("century", False),  # no digit: a kind, not a value
        ("", False),
    ],
)
def test_a_value_is_a_date_or_a_number(name, value):
    assert value_name(name) is value


def strauss_graph() -> KnowledgeGraph:
    kg = KnowledgeGraph()
    docs = {
        "ballet": (
            "Aschenbrodel is a ballet written by Johann Strauss II, who died in 1899.",
            [("Aschenbrodel", "WRITTEN_BY", "Johann Strauss II"), ("Johann Strauss II", "DIED_IN", "1899")],
        ),
        "hymn": (
            "Finlandia was written in 1899 by a composer who was a citizen of a country.",
            [("Finlandia", "WRITTEN_IN", "1899")],
        ),
        "citizen": (
            "Johann Strauss II was an Austrian citizen of Vienna.",
            [("Johann Strauss II", "CITIZEN_OF", "Austria")],
        ),
        "other": ("Texas is a large state.", [("Texas", "IS_A", "state")]),
    }
    for cid, (text, rels) in docs.items():
        kg.add_chunk(Chunk(cid, text, cid))
        for s, t, o in rels:
            kg.add_relation(s, o, t, chunk_id=cid)
    return kg


QUESTION = "When did the composer of Aschenbrodel die?"


def test_a_path_never_joins_two_passages_at_a_value():
    assert _paths(strauss_graph(), "Johann Strauss II", "Finlandia") == []
    assert _paths(strauss_graph(), "Aschenbrodel", "1899") == [
        "Aschenbrodel -[WRITTEN_BY]-> Johann Strauss II -[DIED_IN]-> 1899"  # a path may end at a value
    ]


def test_the_context_shows_no_path_through_a_shared_year(bow_embeddings):
    r = EntityBasedKGRAG.from_graph(strauss_graph(), bow_embeddings)
    graph_half = r.retrieve(QUESTION, k=4).context.split("-----Sources-----")[0]
    assert "Johann Strauss II -[DIED_IN]-> 1899" in graph_half
    assert not [line for line in graph_half.splitlines() if "Finlandia" in line and "Strauss" in line]
