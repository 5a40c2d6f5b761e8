"""Issue 26 §5: answer-in-context matches whole words, and a short alias only as the code it is."""

from __future__ import annotations

import pytest

from kg_rag.eval.metrics import answer_in_text

NORWAY = ["Norway", "NO", "NOR", "no"]
ITALY = ["seemingly in Italy", "IT", "ITA", "it"]
AMERICA = ["America", "US"]


@pytest.mark.parametrize(
    "answers, text",
    [
        (NORWAY, "There is no record of the play."),  # the word "no" is not Norway
        (ITALY, "It was built in 1900 and it burned down."),  # nor "it" Italy
        (AMERICA, "Between us and them."),
        (["Norway"], "A Norwegian playwright."),  # whole words: Norwegian is not Norway
        (["Italy"], "Italyan restaurants."),
        (["Nor"], "Neither this nor that."),
    ],
)
def test_a_short_alias_or_part_of_a_word_is_not_the_answer(answers, text):
    assert not answer_in_text(answers, text)


@pytest.mark.parametrize(
    "answers, text",
    [
        (NORWAY, "Its ISO code is NO."),
        (NORWAY, "He was a citizen of Norway."),
        (ITALY, "Cars registered in IT carry the code."),
        (AMERICA, "Born in the U.S. in 1950."),
        (["United Kingdom", "G B", "UK"], "Exports to the U.K. rose."),
        (["Oz"], "The Wizard of Oz."),  # a short name in mixed case counts as written
        (["35"], "There are 35 stores."),  # numbers are no code
        (["the Anglican Communion"], "part of the Anglican Communion."),
    ],
)
def test_the_answer_or_a_code_written_as_one_is_found(answers, text):
    assert answer_in_text(answers, text)
