"""Evaluation metrics (``kg_rag/eval/metrics.py``): EM, F1, recall and MRR, numeric answers and set F1,
answer-in-context.

Issue 26 §5: answer-in-context matches whole words, and a short alias only as the code it is."""

from __future__ import annotations

import math

import pytest

from kg_rag.eval import answer_in_text, normalise_answer
from kg_rag.eval.datasets import hop_group
from kg_rag.eval.metrics import exact_match, f1, recall_at, reciprocal_rank

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


def test_metrics():
    assert normalise_answer("The  Anglican-Communion!") == "anglicancommunion"
    assert answer_in_text(["Norway"], "He was born in norway.") and not answer_in_text(["Norway"], "Norwayan")
    assert recall_at(["a", "b", "c"], ["c", "z"], 2) == 0 and recall_at(["a", "b", "c"], ["c", "z"], 3) == 0.5
    assert math.isnan(recall_at(["a"], [], 1))
    assert reciprocal_rank(["a", "b"], ["b"]) == 0.5 and reciprocal_rank(["a"], ["x"]) == 0.0
    assert exact_match("the Oslo", ["Oslo"]) == 1.0 and f1("Oslo city", ["Oslo"]) == pytest.approx(2 / 3)
    assert hop_group("2hop__1") == "2hop" and hop_group("4hop3__9") == "4hop" and hop_group("x") == "other"


def test_numeric_answers_and_set_f1():
    from kg_rag.eval.metrics import numbers_in, numeric_answer_in_text, set_f1

    assert numbers_in("Net sales were $94,836 million, (1,234) and 35.4%") == [94836.0, 1234.0, 35.4]
    assert numeric_answer_in_text(94836, "total $94,836 million")
    assert numeric_answer_in_text(-1234, "a loss of (1,234)")
    assert not numeric_answer_in_text(948, "total $94,836 million")
    assert set_f1({"a", "b"}, {"b", "c"}) == (0.5, 0.5, 0.5) and set_f1(set(), {"a"}) == (0.0, 0.0, 0.0)
