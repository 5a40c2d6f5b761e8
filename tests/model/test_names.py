"""Names (``kg_rag/model/names.py``): canonical keys merge spellings of one name and keep distinct names apart in
every script; UPPER_SNAKE types; placeholder names."""

from __future__ import annotations

import pytest

from kg_rag.model.names import RELATED, canonical_key, upper_snake


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


def test_placeholder_names():
    from kg_rag.model.names import is_placeholder

    dropped = ["unknown", "Unknown", "UNKNOWN", " N/A ", "NULL", "None", "not specified", "it", "they", "her"]
    dropped += ["(unknown)", "Unknown.", "n.a.", "they."]
    kept = ["It", "Her", "US", "us", "i", "I", "Unknown (2011 film)", "Na", "Nothing Hill", "itinerary"]
    assert [n for n in dropped if not is_placeholder(n)] == []
    assert [n for n in kept if is_placeholder(n)] == []


@pytest.mark.parametrize(
    "names",
    [
        ("राम", "रीमा", "रूम"),  # Devanagari vowel signs are letters of the name, not punctuation
        ("Release 1.5", "Release 1-5", "Release 1/5"),
        ("-40", "40"),
        ("C♯", "C"),
        ("@openai", "openai"),
        ("C#", "C", "C++"),
    ],
)
def test_distinct_names_keep_distinct_keys(names):
    keys = [canonical_key(n) for n in names]
    assert len(set(keys)) == len(keys), keys
    assert all(keys)


@pytest.mark.parametrize(
    "a, b",
    [
        ("مُحَمَّد", "محمد"),  # Arabic harakat are folded
        ("İstanbul", "istanbul"),  # not "i stanbul"
        ("ISTANBUL", "Istanbul"),
        ("Ｆｕｌｌ Ｗｉｄｔｈ", "Full Width"),  # NFKC
        ("Straße", "STRASSE"),  # casefold
        ("Apple  Inc.", "apple inc"),
    ],
)
def test_spellings_of_one_name_merge(a, b):
    assert canonical_key(a) == canonical_key(b)
    assert " " not in canonical_key("İstanbul")
