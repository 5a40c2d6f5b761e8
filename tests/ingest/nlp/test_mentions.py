"""Names: what the extractor takes for entities, and one name per thing (the lever for ranking)."""

from __future__ import annotations

import pytest

from kg_rag.ingest.extract import ExtractedEntity, ExtractionResult, ParsedRelation
from kg_rag.ingest.nlp.extractor import harmonise
from kg_rag.ingest.nlp.mentions import title_name
from kg_rag.ingest.nlp.parse import mask_codes


def names(result):
    return {e.name for e in result.entities}


@pytest.mark.parametrize(
    "text, wanted",
    [
        ('Life After Beth is a film. "Life After Beth" premiered at Sundance.', {"Life After Beth"}),  # quoted title
        ("The road joins U.S. Route 219 near Elkins.", {"U.S. Route 219"}),  # a name with its number, not cut
        ("The 1924 Winter Olympics were held in Chamonix.", {"1924 Winter Olympics", "Chamonix"}),
        ("The University of Copenhagen hired him.", {"University of Copenhagen"}),  # "of" inside one entity
        ("It rises in the Guiana Highlands of Venezuela.", {"Guiana Highlands", "Venezuela"}),  # two entities
        ("The walk starts in the Ecker valley.", {"Ecker valley"}),  # a place name with its kind
        ("Memphis is the state's largest city.", {"Memphis"}),  # a first word that is a name
        ("Larry Page and Sergey Brin met at Stanford.", {"Larry Page", "Sergey Brin"}),  # a list is not one name
        ("The pilot was Colonel Paul Tibbets.", {"Paul Tibbets"}),  # a person's name, not the rank
        ("The album was released by The Beatles in 1969.", {"The Beatles"}),  # the article that is part of a name
        ("Directive 2023-07 supersedes Directive 2019-03.", {"Directive 2023-07", "Directive 2019-03"}),
        ("It is known as the Pax Romana, or ``Roman Peace ''.", {"Roman Peace"}),  # LaTeX-style quotes
        ("Ana Souza founded Keel Labs.", {"Ana Souza"}),  # a given name the dictionary knows (*ana*)
        (
            "Quillon Software, Inc. hired Goldman Sachs & Co. LLC.",
            {"Quillon Software, Inc.", "Goldman Sachs & Co. LLC"},
        ),
        ("The Travel and Expense Policy applies to all staff.", {"Travel and Expense Policy"}),  # one name, one head
        (  # two names, each with its head
            "A copy is kept at the British Film Institute and American Film Institute.",
            {"British Film Institute", "American Film Institute"},
        ),
    ],
)
def test_names(extractor, text, wanted):
    got = names(extractor.parse(text))
    assert wanted <= got, f"missing {wanted - got}; got {got}"


def test_no_name_keeps_a_quote_mark(extractor):
    got = names(extractor.parse("He starred in ``Big Brother ''`` Licensed to Drill'' and `Red' in 1981."))
    assert got and not any(n[:1] in "`'\"" or n[-1:] in "`'\"" for n in got), got


def test_names_inside_a_longer_name_are_linked_too(extractor):
    got = names(extractor.parse("The plane landed in the Brahmaputra valley."))
    assert {"Brahmaputra valley", "Brahmaputra"} <= got
    got = names(extractor.parse("Wind power in the United States grew quickly.", "Wind power in the United States"))
    assert {"Wind power in the United States", "United States"} <= got


def test_recognised_names_run_together_are_not_one_name(extractor):
    got = names(extractor.parse("Bank Founded Metzler Bank Frankfurt Germany 1690 Barclays England 1692"))
    assert not any("Frankfurt" in n and "Barclays" in n for n in got)


def test_a_surname_or_an_acronym_names_the_full_entity(extractor):
    result = extractor.parse(
        "Hank Snow was a singer. Snow moved to Nashville in 1949. "
        "The American Institute of Physics (AIP) publishes it. AIP is based in Maryland."
    )
    got = {(r.source, r.target) for r in result.relations}
    assert ("Hank Snow", "Nashville") in got and ("American Institute of Physics", "Maryland") in got
    assert not {"Snow", "AIP"} & names(result)


def test_the_topic_is_named_as_the_text_writes_it(extractor):
    assert title_name("Hello Love (song)", '"Hello Love" is a 1974 single.') == "Hello Love"
    assert title_name("Johnnycake, West Virginia", "Johnnycake is a community.") == "Johnnycake"
    assert title_name("Person-centered therapy", "Person - centered therapy is a form.") == "Person-centered therapy"
    assert title_name("Organisation chart: engineering", "Priya Nair reports to Daniel Okafor.") is None
    result = extractor.parse("It was built in 1936.", "Linville Falls Tavern")
    assert "Linville Falls Tavern" not in names(result)  # a heading the text never writes names no entity


def test_a_corpus_title_is_the_topic_even_unwritten(extractor):
    from kg_rag.model import Chunk

    chunk = Chunk(
        "c", "It was built in 1936 and restored in 1990.", "c", {"title": "Linville Falls Tavern", "titled": True}
    )
    result = extractor.extract([chunk]).results["c"]
    assert ("Linville Falls Tavern", "BUILT_IN", "1936") in {(r.source, r.type, r.target) for r in result.relations}


def test_codes_are_masked_at_the_same_length():
    text = "Incident IR-2023-14 and Directive 2019-03 in March 2019-03; in 1990-91, EO 14028 and Release 1.5.2."
    masked = mask_codes(text)
    assert len(masked) == len(text)
    assert "IR-2023-14" not in masked and "2019-03 in" not in masked and "14028" not in masked
    assert "March 2019-03" in masked and "in 1990-91" in masked  # a date after a month, a range after "in"


@pytest.mark.parametrize(
    ("word", "system"),
    [
        ("payments-api", True),
        ("checkout-service", True),
        ("us-east-1", True),
        ("auth_service", True),
        ("python3-dev", True),
        ("long-term", False),
        ("e-mail", False),
        ("self-service", False),
        ("mid-2000s", False),
        ("top-10", False),
        ("co-worker", False),
        ("customer-service", False),
        ("post-covid-19", False),
    ],
)
def test_lower_case_system_names_are_masked_and_english_compounds_are_not(word, system):
    text = f"The {word} depends on Redis."
    masked = mask_codes(text)
    assert len(masked) == len(text)
    assert (word not in masked) == system


@pytest.mark.parametrize(
    "text",
    [
        "Elizabeth I was the daughter of Henry VIII.",
        "The Earl was executed by Elizabeth I.",
        "King Albert I of Belgium",
        "Nicholas I, Lord of Mecklenburg",
        "Charles I was executed in 1649.",
    ],
)
def test_a_regnal_numeral_is_masked(text):
    masked = mask_codes(text)
    assert len(masked) == len(text) and masked != text


@pytest.mark.parametrize(
    "text",
    [
        "When I joined Acme, I met Bob.",
        "On Monday I visited the Louvre.",
        "Sunday I was in Boston.",
        "At Microsoft I led the Windows team.",
        "Paris I loved.",
        "Dear Maria I hope so.",
    ],
)
def test_a_first_person_i_after_a_name_stays_a_pronoun(text):
    assert mask_codes(text) == text


def test_harmonise_gives_one_name_and_one_type_per_thing():
    """The form most passages write wins: two write "The Beatles", one "Beatles"; one title's "The United States"
    does not turn every "United States" into it."""
    c = ExtractionResult(entities=[ExtractedEntity(name="The Beatles"), ExtractedEntity(name="The United States")])
    d = ExtractionResult(entities=[ExtractedEntity(name="United States")])
    e = ExtractionResult(entities=[ExtractedEntity(name="United States")])
    a = ExtractionResult(
        entities=[ExtractedEntity(name="The Beatles", type="GROUP")],
        relations=[ParsedRelation(source="John Lennon", target="The Beatles", predicate="joined")],
    )
    b = ExtractionResult(
        entities=[ExtractedEntity(name="Beatles", type="ORGANIZATION"), ExtractedEntity(name="Beatles", type="GROUP")],
        relations=[ParsedRelation(source="Beatles", target="Liverpool", predicate="formed in")],
    )
    harmonise([a, b, c, d, e])
    assert {x.name for x in b.entities} == {"The Beatles"} and b.relations[0].source == "The Beatles"
    assert {x.type for x in a.entities + b.entities} == {"GROUP"}
    assert {x.name for x in c.entities} == {"The Beatles", "United States"}


@pytest.mark.parametrize(
    "title, text, wanted, unwanted",
    [
        # a corpus passage that starts mid-article names its subject by surname only
        (
            "James Glisson",
            "Glisson was born in Jackson County.",
            ("James Glisson", "BORN_IN", "Jackson County"),
            "Glisson",
        ),
        ("Judith Viorst", "Viorst signed the pledge in 1968.", ("Judith Viorst", "SIGNED_PLEDGE_IN", "1968"), "Viorst"),
        # the full name with middle names is the titled person, whatever type the recogniser gives it
        (
            "Kevin Durant",
            "Kevin Wayne Durant (born September 29, 1988) is a basketball player. "
            "He played nine seasons in Oklahoma City.",
            ("Kevin Durant", "PLAYED_IN", "Oklahoma City"),
            "Kevin Wayne Durant",
        ),
        (
            "Waylon Payne",
            "Waylon Malloy Payne (born April 5, 1972) is a singer. He is the son of the country singer Sammi Smith.",
            ("Waylon Payne", "SON_OF", "Sammi Smith"),
            "Waylon Malloy Payne",
        ),
        # the first full name is the subject; a later, longer one is a relative
        (
            "George W. Bush",
            "George Walker Bush is a politician. He is the eldest son of George Herbert Walker Bush.",
            ("George W. Bush", "SON_OF", "George Herbert Walker Bush"),
            "George Walker Bush",
        ),
        # where the title is written, a longer name is someone else
        (
            "John Adams",
            "John Adams was a president. His son John Quincy Adams was also president.",
            ("John Adams", "HAS_SON", "John Quincy Adams"),
            "John Quincy Adams",
        ),
        # a surname after an honorific is a relative; as an object, someone else
        ("James Glisson", "Mrs. Glisson died in Tampa in 1990.", ("Glisson", "DIED_IN", "Tampa"), "James Glisson"),
        ("Hillary Clinton", "She married Clinton in 1975.", ("Hillary Clinton", "MARRIED", "Clinton"), None),
        (
            "Martin Luther King Jr.",
            "King was born in Atlanta.",
            ("Martin Luther King Jr.", "BORN_IN", "Atlanta"),
            "King",
        ),
        # a place's last word is no surname: Virginia is not West Virginia
        ("West Virginia", "Virginia joined the Union in 1788.", ("Virginia", "JOINED_IN", "1788"), "West Virginia"),
        ("Lake Colac", "Colac lies near the lake.", None, "Lake Colac"),
    ],
)
def test_a_titled_persons_short_or_full_name_is_that_person(extractor, title, text, wanted, unwanted):
    from kg_rag.model import Chunk

    result = extractor.extract([Chunk("c", text, "c", {"title": title, "titled": True})]).results["c"]
    got = {(r.source, r.type, r.target) for r in result.relations}
    if wanted is not None:
        assert wanted in got, got
    assert not any(unwanted == s for s, _, _ in got), got


@pytest.mark.parametrize(
    "title, expected",
    [
        ("Hank Snow", True),
        ("George W. Bush", True),
        ("James Glisson", True),
        ("Lake Colac", False),
        ("Kansas City", False),
        ("Cape of Good Hope", False),
        ("West Virginia", False),
        ("Seven Years' War", False),
        ("Madonna", False),
        ("1920 Summer Olympics", False),
    ],
)
def test_a_title_is_a_persons_name_only_when_nothing_says_otherwise(title, expected):
    from kg_rag.ingest.nlp.kinds import person_like

    assert person_like(title) is expected
