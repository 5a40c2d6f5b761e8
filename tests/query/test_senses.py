"""Issue 26 §4: one name, two things. Same-name entities whose passages disagree are never joined into one path
(MuSiQue: "Consulate General of the United States" was one entity ``LOCATED_IN`` both Germany and China)."""

from __future__ import annotations

import pytest

from kg_rag import Chunk, EntityBasedKGRAG, KnowledgeGraph, QueryParams
from kg_rag.index.build import build_index
from kg_rag.model.notation import render_path
from kg_rag.query.paths import find_paths
from kg_rag.query.senses import title_sense
from kg_rag.store.memory import LiveBackend
from kg_rag.testing import BagOfWordsEmbeddings

CONSULATE = "Consulate General of the United States"


def _consulates() -> KnowledgeGraph:
    kg = KnowledgeGraph()
    for cid, city, country in (("f", "Frankfurt", "Germany"), ("s", "Shanghai", "China")):
        title = f"{CONSULATE}, {city}"
        kg.add_chunk(Chunk(cid, f"The {CONSULATE} in {city}, {country}.", cid, {"title": title}))
        kg.add_relation(CONSULATE, city, "LOCATED_IN", predicate="located in", chunk_id=cid)
        kg.add_relation(CONSULATE, country, "LOCATED_IN", predicate="located in", chunk_id=cid)
    kg.add_chunk(Chunk("t", "Big Ben is the clock tower of Westminster.", "t", {"title": "Big Ben"}))
    kg.add_chunk(Chunk("j", "The clock tower stands in Brighton.", "j", {"title": "Jubilee Clock Tower"}))
    kg.add_relation("clock tower", "Westminster", "LOCATED_IN", predicate="of", chunk_id="t")
    kg.add_relation("Big Ben", "clock tower", "IS_A", predicate="is", chunk_id="t")
    kg.add_relation("clock tower", "Brighton", "LOCATED_IN", predicate="stands in", chunk_id="j")
    return kg


@pytest.mark.parametrize(
    "title, sense",
    [
        ("Consulate General of the United States, Frankfurt", ("consulate general of the united states", "frankfurt")),
        ("Madonna (book)", ("madonna", "book")),
        ("Midway, Floyd County, Iowa", ("midway", "floyd county iowa")),
        ("The Good, the Bad and the Ugly (theme)", ("the good the bad and the ugly", "theme")),
        ("Boston", None),
        ("", None),
    ],
)
def test_a_title_that_tells_its_subject_apart(title, sense):
    assert title_sense(title) == sense


def _paths(kg: KnowledgeGraph, a: str, b: str) -> list[str]:
    backend = LiveBackend(build_index(kg, BagOfWordsEmbeddings()), BagOfWordsEmbeddings())
    with backend.reader() as view:
        h = view.lookup_entities([a.casefold(), b.casefold()])
        paths, names = find_paths(view, h[a.casefold()], h[b.casefold()], max_length=3)
    return [render_path(names, p) for p in paths]


def test_two_consulates_of_one_name_are_not_one_path():
    assert _paths(_consulates(), "Frankfurt", "Shanghai") == []
    assert _paths(_consulates(), "Germany", "China") == []
    assert _paths(_consulates(), "Frankfurt", "Germany") == [
        f"Frankfurt <-[LOCATED_IN]- {CONSULATE} -[LOCATED_IN]-> Germany"  # one passage: one consulate
    ]


def test_a_common_noun_joins_only_within_one_passage():
    assert _paths(_consulates(), "Westminster", "Brighton") == []  # two clock towers
    one_passage = "Big Ben -[IS_A]-> clock tower -[LOCATED_IN]-> Westminster"
    assert _paths(_consulates(), "Big Ben", "Westminster") == [one_passage]


def test_the_context_never_joins_two_things_of_one_name():
    params = QueryParams(similarity_threshold=0.2, relation_floor=0.0, top_k_chunks=4)
    retriever = EntityBasedKGRAG.from_graph(_consulates(), BagOfWordsEmbeddings(), params=params)
    context = retriever.retrieve("How are Frankfurt and Shanghai connected?").context
    joined = [line for line in context.splitlines() if "Frankfurt" in line and "Shanghai" in line]
    assert joined == [], joined
    assert f"Frankfurt <-[LOCATED_IN]- {CONSULATE}" in context  # each consulate's own facts still show


def test_an_index_without_case_still_joins_its_names():
    """Case is evidence only where the extraction writes it: all names in lower case say nothing."""
    kg = KnowledgeGraph()
    kg.add_chunk(Chunk("a", "alpha relates to bravo", "a"))
    kg.add_chunk(Chunk("b", "bravo relates to charlie", "b"))
    kg.add_relation("alpha", "bravo", "T1", chunk_id="a")
    kg.add_relation("bravo", "charlie", "T2", chunk_id="b")
    assert _paths(kg, "alpha", "charlie") == ["alpha -[T1]-> bravo -[T2]-> charlie"]
