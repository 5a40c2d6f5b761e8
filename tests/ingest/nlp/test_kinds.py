"""A name's head noun says its kind over a small recogniser's guess of another kind (:mod:`kg_rag.ingest.nlp.kinds`)."""

from __future__ import annotations

import pytest

from kg_rag.ingest.nlp.kinds import head_word, kind_of, place_title

KINDS = [
    # (name, recogniser's label, kind)
    ("Victoria Falls", "PERSON", "LOCATION"),
    ("Cuyuni River", "ORGANIZATION", "LOCATION"),
    ("Humboldt Peak", "", "LOCATION"),
    ("Nuwara Eliya District", "PERSON", "LOCATION"),
    ("Los Angeles Unified School District", "ORGANIZATION", "ORGANIZATION"),  # a body named after a division
    ("Chippewa Salt Company", "PERSON", "ORGANIZATION"),
    ("Engineering department", "PERSON", "ORGANIZATION"),
    ("University of Missouri", "LOCATION", "ORGANIZATION"),  # the kind stands before "of"
    ("Battle of Cedar Creek", "EVENT", "EVENT"),
    ("Run to the Hills", "WORK", "WORK"),  # a title ends in any word
    ("Faith Hill", "ORGANIZATION", "ORGANIZATION"),  # a landform that is also a surname decides nothing
    ("Michael Bay", "PERSON", "PERSON"),
    ("Frank Ocean", "ORGANIZATION", "ORGANIZATION"),
    ("Montevideo Department", "LOCATION", "LOCATION"),  # a division named like a body stays a place
    ("Montevideo Department", "", ""),
    ("Manchester City", "ORGANIZATION", "ORGANIZATION"),  # a settlement noun decides nothing: clubs
    ("Rivers", "PERSON", "PERSON"),  # one word has no head noun of its own
]


@pytest.mark.parametrize("name, label, kind", KINDS, ids=[k[0] for k in KINDS])
def test_head_noun_kind(name, label, kind):
    assert kind_of(name, label) == kind


def test_head_word_before_of():
    assert head_word("Henrys Fork of the Snake River") == "fork"
    assert head_word("Snake River") == "river"


def test_extracted_entities_take_the_head_nouns_kind(extractor):
    result = extractor.parse("Victoria Falls is a waterfall on the Zambezi River.")
    assert {e.name: e.type for e in result.entities} == {"Victoria Falls": "LOCATION", "Zambezi River": "LOCATION"}


def test_a_name_headed_by_a_body_is_no_person_with_a_rank(extractor):
    result = extractor.parse("Sarah Kim leads the Engineering department.")
    got = {(r.source, r.type, r.target) for r in result.relations}
    assert ("Sarah Kim", "MANAGES", "Engineering department") in got


@pytest.mark.parametrize(
    "title, place",
    [
        ("Charleston, South Carolina", True),
        ("Midway, Floyd County, Iowa", True),
        ("Hank Snow", False),
        ("Mary, mother of Jesus", False),  # a lower-case qualifier is no unit
        ("Martin Luther King, Jr.", False),  # a name's suffix
        ("Peter Mandelson, Baron Mandelson", False),  # a peerage
        ("Hello Love (song)", False),
    ],
)
def test_a_title_qualified_by_a_unit_names_a_place(title, place):
    """A place is no person: *he* and *she* never refer to it (``Charleston, South Carolina`` ... "he granted")."""
    assert place_title(title) is place


def test_he_never_refers_to_a_place_title(extractor):
    from kg_rag.model import Chunk

    text = "In 1663, he granted the Province of Carolina to the Lords Proprietors."  # the title is never written
    run = extractor.extract([Chunk("c", text, "d", {"title": "Charleston, South Carolina", "titled": True})])
    assert not any(r.source.startswith("Charleston") and r.type == "GRANTED" for r in run.results["c"].relations)
