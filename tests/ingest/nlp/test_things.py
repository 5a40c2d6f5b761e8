"""Which common-noun descriptions a passage uses as a thing's name (``kg_rag.ingest.nlp.things``)."""

from __future__ import annotations

import pytest

from kg_rag.ingest.nlp.mentions import find_mentions
from kg_rag.ingest.nlp.parse import Parse
from kg_rag.ingest.nlp.things import find_things

CASES = [
    # (case, text, names taken for things)
    (
        "a compound description written twice",
        "The checkout service failed. The checkout service restarted.",
        {"checkout service"},
    ),
    (
        "a hyphenated modifier, singular and plural",
        "The payment-gateway service failed. Then the payment-gateway services restarted.",
        {"payment-gateway service"},
    ),
    (
        "introduced with a, then the",
        "A sensor network was built in 2019. The sensor network is funded by the state.",
        {"sensor network"},
    ),
    ("never definite: one of a kind, twice", "A snow event hit Seattle. A snow event hit Tacoma.", set()),
    ("written once: a passing mention", "The checkout service failed at noon.", set()),
    ("a bare noun refers, it does not name", "The service failed. The service restarted.", set()),
    ("an adjective describes, it does not name", "The new service failed. The new service restarted.", set()),
    ("a bare plural speaks of the kind", "Tuition fees rose in 1998. Tuition fees fell in 2004.", set()),
    ("another one of a kind", "A snow event hit Seattle. Another snow event hit Tacoma.", set()),
    (
        "a name among the modifiers makes it that name's",
        "The Japan net sales decrease was small. The China net sales decrease was large.",
        set(),
    ),
    (
        "cut inside a hyphenated word",
        "The long-term investments grew. The long-term investments fell.",
        set(),
    ),
    (
        "told apart in two ways: two of a kind",
        "The load balancer in Frankfurt failed. The load balancer in Virginia failed.",
        set(),
    ),
    ("old and new: two of a kind", "The old payment service was slow. The new payment service is fast.", set()),
    (
        "counted by a number",
        "Vestas installed 4930 wind turbines. The wind turbines were built by GE. The wind turbines are tall.",
        set(),
    ),
    ("several of a kind", "Acme has several data centers. The data center opened. The data center closed.", set()),
    (
        "a description written before the name it describes",
        "The chip maker Nvidia reported revenue. The chip maker is led by Jensen Huang.",
        set(),
    ),
    (
        "told apart once: still one thing",
        "The sensor network was built in 2019. The group's sensor network is funded by the state.",
        {"sensor network"},
    ),
    ("a proper name is a name already", "The Orders Database failed. The Orders Database restarted.", set()),
    (
        "said of a name: the name's kind",
        "WXYZ is a radio station. The radio station plays jazz.",
        set(),
    ),
]


@pytest.mark.parametrize("case, text, expected", CASES, ids=[c[0] for c in CASES])
def test_things(extractor, case, text, expected):
    doc = Parse(extractor.nlp(text))
    mentions, _ = find_mentions(doc, None)
    assert set(find_things(doc, mentions).values()) == expected, case


def test_each_use_is_a_mention_of_one_thing(extractor):
    doc = Parse(extractor.nlp("The checkout service failed. The checkout services restarted."))
    found = find_things(doc, find_mentions(doc, None)[0])
    assert [doc.text[h] for h in sorted(found)] == ["service", "services"]
    assert set(found.values()) == {"checkout service"}
