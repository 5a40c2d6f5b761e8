"""A date or number is a value, not a thing: two passages that write the same year share it by coincidence, so a
value links no passages, joins no path and is no bridge (*Johann Strauss II* died in 1899, *Finlandia* was written
in 1899; "In which state did the singer of Hello Love die?" showed 8 rows about Horace Parlan, linked by 1974)."""

from __future__ import annotations

import pytest

from kg_rag import Chain, Chunk, EntityBasedKGRAG, KnowledgeGraph
from kg_rag.query.senses import coarse_value, value_name
from tests.query.test_chain import graph_boosts
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


@pytest.mark.parametrize(
    "name, coarse",
    [
        ("1899", True),
        ("the 1990s", True),
        ("12th century", True),
        ("35", True),
        ("March 3, 1974", False),  # a day: in a filing, the period its tables report
        ("1 January 2001", False),
        ("$1.2 billion", False),
        ("25%", False),
        ("Apollo 11", False),
    ],
)
def test_a_coarse_value_is_a_year_or_a_bare_number(name, coarse):
    assert coarse_value(name) is coarse


def test_a_shared_full_date_still_links(bow_embeddings):
    """Two chunks of one filing share the period's date; on SEC 10-Q unlinking full dates lost 4 of 37 answers."""
    kg = KnowledgeGraph()
    docs = {
        "sales": ("Acme reported net sales for the quarter ended April 1, 2023.", "April 1, 2023"),
        "table": ("Total net sales were 94,836 for the period ended April 1, 2023.", "April 1, 2023"),
        "other": ("Texas is a large state.", "Texas"),
    }
    for cid, (text, value) in docs.items():
        kg.add_chunk(Chunk(cid, text, cid))
        kg.add_relation("Acme" if cid == "sales" else cid.title(), value, "REPORTED_FOR", chunk_id=cid)
    r = EntityBasedKGRAG.from_graph(kg, bow_embeddings)
    assert graph_boosts(r, "What did Acme report as net sales?")["table"] > 0


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


def test_a_shared_year_links_no_passages(bow_embeddings):
    r = EntityBasedKGRAG.from_graph(strauss_graph(), bow_embeddings)
    boosts = graph_boosts(r, QUESTION)
    assert boosts["citizen"] > 0  # the shared composer links the next hop
    assert boosts["hymn"] == 0  # the shared year does not (it tied with the top passage through it)
    assert graph_boosts(r, QUESTION, strategy=Chain(link_kinds=True))["hymn"] == 0  # a value is no kind


def test_a_path_never_joins_two_passages_at_a_value():
    assert _paths(strauss_graph(), "Johann Strauss II", "Finlandia") == []
    assert _paths(strauss_graph(), "Aschenbrodel", "1899") == [
        "Aschenbrodel -[WRITTEN_BY]-> Johann Strauss II -[DIED_IN]-> 1899"  # a path may end at a value
    ]


def test_the_graph_half_shows_nothing_of_a_passage_linked_by_a_year(bow_embeddings):
    r = EntityBasedKGRAG.from_graph(strauss_graph(), bow_embeddings)
    graph_half = r.retrieve(QUESTION, k=4).context.split("-----Sources-----")[0]
    assert "Johann Strauss II -[DIED_IN]-> 1899" in graph_half
    assert "Finlandia" not in graph_half
