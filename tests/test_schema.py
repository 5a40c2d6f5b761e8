from __future__ import annotations

import pytest

from kg_rag.schema import RELATED, RelationTypeNormalizer, canonical_key, normalise_predicate, upper_snake


@pytest.mark.parametrize("a, b", [("EO_14028", "eo 14028"), ("EO-14028.", "Eo  14028"), ("New\nYork", "new york")])
def test_canonical_key_merges_variants(a, b):
    assert canonical_key(a) == canonical_key(b)


def test_canonical_key_keeps_distinct_names_apart_and_never_empty():
    assert canonical_key("C++") != canonical_key("C")
    assert canonical_key("!!!") == "!!!"


@pytest.mark.parametrize(
    "raw, expected",
    [("reports to", "REPORTS_TO"), (None, RELATED), ("", RELATED), ("->|,", RELATED), ("Part-Of", "PART_OF")],
)
def test_upper_snake(raw, expected):
    assert upper_snake(raw) == expected


def test_predicate_patterns_and_passives():
    norm = RelationTypeNormalizer()
    assert norm("is located in") == norm("located in") == norm("Was located in") == "LOCATED_IN"
    assert norm("supersedes") == "SUPERSEDES"
    # passive phrasing would invert the edge if mapped to the active type: kept RELATED
    assert norm("superseded by") == RELATED
    assert norm("born in") == RELATED
    assert RelationTypeNormalizer(keep_unknown=True)("born in") == "BORN_IN"
    assert normalise_predicate("  Is   Part of. ") == "part of"
