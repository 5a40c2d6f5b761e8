"""Seed matching (``kg_rag/query/seeds.py``): what a question names — whole tokens, matching case, the longest name
first, never a generic word.

Issue 26 §4: generic words are never listed as entities the question names."""

from __future__ import annotations

import numpy as np
import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from kg_rag import Chunk, KnowledgeGraph, build_index
from kg_rag.model.names import canonical_key
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


def _pattern_spans(gram: str, query: str) -> list[tuple[int, int]]:
    """The n-gram's spans as a pattern search finds them (what :func:`gram_spans` does for non-ASCII text)."""
    import re

    words = gram.split()
    pattern = r"(?<![^\W_])" + r"[\W_]+".join(re.escape(w) for w in words) + r"(?![^\W_])"
    return [m.span() for m in re.finditer(pattern, query, flags=re.IGNORECASE)]


@pytest.mark.parametrize(
    "gram, query",
    [
        ("hello love", "Who sang Hello Love's B-side, hello_love, or HELLO--LOVE?"),
        ("eo 14028", "What did EO_14028 replace? And eo-14028b?"),
        ("new new", "new new new New"),
        ("a", "A a_a aa a"),
        ("c", "Is C++ older than C# or C?"),
        ("straße", "Who lives on the Hauptstraße or the STRASSE?"),
        ("istanbul", "İstanbul or Istanbul?"),
    ],
)
def test_gram_spans_find_what_a_pattern_search_finds(gram, query):
    """The word-run matching of ASCII text finds the spans the case-insensitive pattern finds, in order and
    non-overlapping; other text still goes through the pattern."""
    from kg_rag.query.seeds import gram_spans

    assert gram_spans(gram, query) == _pattern_spans(gram, query)


def test_gram_spans_agree_with_the_pattern_on_random_ascii_text():
    """Every n-gram of random ASCII questions (letters, digits, underscores, punctuation, repeats)."""
    from kg_rag.query.seeds import gram_spans

    rng = np.random.default_rng(7)
    vocab = ["ab", "AB", "Ab", "x1", "12", "ab12", "the", "The"]
    seps = [" ", "_", "-", "'s ", ", ", "--", "__", "", ".", " ("]
    checked = 0
    for _ in range(300):
        parts = [str(rng.choice(vocab)) + str(rng.choice(seps)) for _ in range(int(rng.integers(1, 9)))]
        query = "".join(parts)
        words = [w.lower() for w in query.replace("_", " ").replace("-", " ").replace("'", " ").split()]
        for n in (1, 2, 3):
            for i in range(max(0, len(words) - n + 1)):
                gram = " ".join(w.strip(".,()") for w in words[i : i + n])
                if gram.strip() and all(w.isalnum() for w in gram.split()):
                    assert gram_spans(gram, query) == _pattern_spans(gram, query), (gram, query)
                    checked += 1
    assert checked > 500


@pytest.mark.parametrize(
    "name, query",
    [
        ("US", "Is the US in USA? US_1 and US."),
        ("US", "USA, US2, _US, (US)"),
        ("C#", "C#9 or C# or C##"),
        ("WHO", "Who is WHO's head?"),
        ("R", "R&D or R2 or Ré or R"),
        ("3M", "3Ms and 33M, 3M."),
        ("Ré", "éRé, Réé, Ré!"),
        ("AB", "ABAB AB"),
    ],
)
def test_a_short_name_is_found_whole_as_a_pattern_finds_it(name, query):
    """``written_alone`` agrees with the case-sensitive pattern ``(?<![\\w])name(?![\\w])`` it replaces."""
    import re

    from kg_rag.query.seeds import written_alone

    expected = re.search(r"(?<![\w])" + re.escape(name) + r"(?![\w])", query) is not None
    assert written_alone(name, query) == expected
    for i in range(len(query) + 1):  # and on every prefix and suffix
        for text in (query[:i], query[i:]):
            assert written_alone(name, text) == (
                re.search(r"(?<![\w])" + re.escape(name) + r"(?![\w])", text) is not None
            )
