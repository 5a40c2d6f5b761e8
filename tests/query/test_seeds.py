"""Seed matching (``kg_rag/query/seeds.py``): what a question names — whole tokens, matching case, the longest name
first, never a generic word.

Issue 26 §4: generic words are never listed as entities the question names."""

from __future__ import annotations

import numpy as np
import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from kg_rag import Chunk, KnowledgeGraph, build_index
from kg_rag.model.schema import canonical_key
from kg_rag.query import QueryEngine
from kg_rag.query.params import QueryParams
from kg_rag.query.seeds import match_seeds
from kg_rag.store.base import EdgeFilter

GENERIC = ["country", "city", "first", "PAN", "current", "person", "author", "East"]
NAMES = ["Brand", "Mount Sulivan", "First Pan-African Conference"]


def _named(query: str) -> set[str]:
    kg = KnowledgeGraph()
    for i, name in enumerate(GENERIC + NAMES):  # each in one passage: "rare" by its mentions
        kg.add_chunk(Chunk(f"c{i}", f"{name} is mentioned here.", f"d{i}"))
        kg.add_entity(name, None, chunk_id=f"c{i}")
    for i in range(12):  # ... but passages write "country", "city" and "author" everywhere
        kg.add_chunk(Chunk(f"w{i}", f"A country, its city and an author, number {i}.", f"w{i}"))
    embeddings = DeterministicFakeEmbedding(size=32)
    engine = QueryEngine.for_index(build_index(kg, embeddings), embeddings)
    with engine.backend.reader() as view:
        q = np.asarray(embeddings.embed_query(query), dtype=np.float32)
        seeds = match_seeds(view, q, query, QueryParams(similarity_threshold=0.99), EdgeFilter.build())
        names = {view.lookup_entities([canonical_key(n)])[canonical_key(n)]: n for n in GENERIC + NAMES}
    return {names[h] for h in seeds.named}


def test_question_words_are_not_entities_the_question_names():
    """The MuSiQue index lists "country", "city", "person" as entities of a few passages; the question uses them
    as words. "PAN" is not "Pan-African", "East" is not "the east of"."""
    questions = {
        "What country was the author of Brand a citizen of?": {"Brand"},
        "Which person was first in the current city?": set(),
        "Which state borders the east of the city where the First Pan-African Conference was held?": {
            "First Pan-African Conference"
        },
        "In which country is Mount Sulivan?": {"Mount Sulivan"},
    }
    for question, named in questions.items():
        assert _named(question) == named, question


def test_in_a_query_typed_in_lower_case_a_generic_word_is_still_not_named():
    """Case says nothing there, so a lower-case name counts when it is specific — by its mentions and by the
    passages that write it: "country" is written by a dozen passages, "brand" by one."""
    assert _named("what country was the author of brand a citizen of?") == {"Brand"}


@pytest.fixture(scope="module")
def short_names():
    kg = KnowledgeGraph()
    for i, name in enumerate(["WHO", "US", "EU", "C#", "3M", "R", "Geneva"]):
        kg.add_chunk(Chunk(f"c{i}", f"{name} is mentioned here.", f"d{i}"))
        kg.add_entity(name, "ORGANIZATION", chunk_id=f"c{i}")
    embeddings = DeterministicFakeEmbedding(size=32)
    return QueryEngine.for_index(build_index(kg, embeddings), embeddings)


@pytest.mark.parametrize(
    "query, expected",
    [
        ("What did the WHO and the EU say to the US?", {"WHO", "EU", "US"}),
        ("who wrote C# and R code at 3M?", {"C#", "R", "3M"}),
        ("who are us and eu", set()),  # stop words in lower case are words of the question, not names
        ("Is Rust better than Go?", set()),  # R inside a word is not R
    ],
)
def test_short_and_stop_word_names_link_as_whole_tokens_with_matching_case(short_names, query, expected):
    result = short_names.retrieve(query, similarity_threshold=0.99)  # lexical linking only
    assert {e.name for e in result.entities if e.seed} == expected


@pytest.mark.parametrize(
    "query, proper, named",
    [
        # "Meehan" is written only inside "Meehan Bonnar": the question names the person, not the place
        ("Of what church is the diocese of the birthplace of Meehan Bonnar?", {"Meehan Bonnar"}, {"Meehan Bonnar"}),
        # "President" is a name in the index, but the question writes "president" as a word (issue 26: not named)
        ("Who was the first president of Damerjog's country?", {"Damerjog"}, {"Damerjog"}),
        ("Where does Meehan lie, and whom did the President meet?", {"Meehan", "President"}, {"Meehan", "President"}),
        # "Beatles song" is not written as one name ("song"), so it does not stand for the band
        ("Which Beatles song came first?", {"Beatles", "Beatles song"}, {"Beatles", "Beatles song"}),
        # a title keeps its small words and stands for the names inside it
        ("When was What a Wonderful World made?", {"What a Wonderful World"}, {"What a Wonderful World"}),
        ("What did EO_14028 replace?", {"EO 14028"}, {"EO 14028"}),  # "_" separates words, as keys read it
        # typed all in lower case: case says nothing, so the names count as written (longest still first)
        (
            "where was meehan bonnar born, and who was president?",
            {"Meehan Bonnar", "President"},
            {"Meehan Bonnar", "President"},
        ),
    ],
)
def test_a_question_names_what_it_writes_as_a_name_longest_first(query, proper, named):
    """Proper names are what the question writes with a capital, the longest match winning; a capitalised
    entity the question writes in lower case is a word of the question, not named (it may name a relation:
    "president" ~ PRESIDENT_OF)."""
    import numpy as np

    from kg_rag.query.params import QueryParams
    from kg_rag.query.seeds import match_seeds
    from kg_rag.store.base import EdgeFilter

    entities = ["Meehan Bonnar", "Meehan", "President", "Damerjog", "Beatles", "Beatles song", "John Lennon"]
    entities += ["What a Wonderful World", "Wonderful World", "EO 14028", "EO"]
    kg = KnowledgeGraph()
    for i, name in enumerate(entities):
        kg.add_chunk(Chunk(f"c{i}", f"{name} is mentioned here.", f"d{i}"))
        kg.add_entity(name, None, chunk_id=f"c{i}")
    embeddings = DeterministicFakeEmbedding(size=32)
    engine = QueryEngine.for_index(build_index(kg, embeddings), embeddings)
    with engine.backend.reader() as view:
        q = np.asarray(embeddings.embed_query(query), dtype=np.float32)
        seeds = match_seeds(view, q, query, QueryParams(similarity_threshold=0.99), EdgeFilter.build())
        names = {view.lookup_entities([canonical_key(n)])[canonical_key(n)]: n for n in entities}
    assert {names[h] for h in seeds.proper} == proper
    assert {names[h] for h in seeds.named} == named
