"""Whether an extracted name is mentioned in its chunk (``kg_rag/ingest/grounding.py``): names the model completed,
normalised or abbreviated stay; names the chunk has no word of are not mentioned."""

from __future__ import annotations

import pytest

from kg_rag.ingest.grounding import ChunkText

TEXT = (
    "Apple's board approved the plan. The Securities and Exchange Commission (the Commission) reviewed "
    "Directive 2019-03; the U.S. Treasury agreed. 東京都庁は新宿にある。"
)


@pytest.mark.parametrize(
    "name",
    [
        "Apple Inc.",  # completed
        "apple",  # case
        "The Board of Directors",  # a word of the chunk
        "SEC",  # the acronym of chunk words
        "Directive 2019-03",
        "US Treasury",
        "東京都庁",  # a script without spaces: the name occurs in the text
        "Commissions",  # a final s
    ],
)
def test_names_the_chunk_mentions(name):
    assert ChunkText(TEXT).mentions(name)


@pytest.mark.parametrize(
    "name",
    ["Zorblax Unseen", "Quux Phantom", "Directive 2023-07", "Zorblax Inc.", "Phantom Securities Fund", "大阪府", "ZXQ"],
)
def test_names_the_chunk_does_not_mention(name):
    assert not ChunkText(TEXT).mentions(name)


def test_the_chunk_holds_the_acronym_of_a_name():
    assert ChunkText("The SEC fined them.").mentions("Securities and Exchange Commission")
    assert not ChunkText("The SEC fined them.").mentions("Federal Reserve")


def test_a_defined_term_mentions_the_name_it_stands_for():
    text = ChunkText("The Company acquired Mellanox.", {"company": "NVIDIA Corporation"})
    assert text.mentions("NVIDIA Corporation") and text.mentions("Mellanox")
    assert not ChunkText("Revenue grew.", {"company": "NVIDIA Corporation"}).mentions("NVIDIA Corporation")
    assert not ChunkText("The Company acquired Mellanox.").mentions("NVIDIA Corporation")
