"""Earlier turns are context for a follow-up question, not part of it: an unrelated earlier question must not
take retrieval over (folding the turns into one text did: MuSiQue Recall@5 fell from 74.0 to 44.6), while a
question that only refers back ("and who approved it?") still finds what it refers to."""

from __future__ import annotations

import pytest

from kg_rag import EntityBasedKGRAG
from kg_rag.demo import DEMO_QUESTIONS, demo_graph
from kg_rag.testing import BagOfWordsEmbeddings


@pytest.fixture(scope="module")
def retriever() -> EntityBasedKGRAG:
    return EntityBasedKGRAG.from_graph(demo_graph(), BagOfWordsEmbeddings(), k=3)


def test_a_new_question_after_an_unrelated_one_is_retrieved_for_itself(retriever):
    first = retriever.retrieve("Who does Lars Eriksen report to?", history=[])
    follow = retriever.retrieve("And who approved Directive 2023-07?", history=["Who does Lars Eriksen report to?"])
    alone = retriever.retrieve("And who approved Directive 2023-07?")
    assert follow.chunks[0].id == alone.chunks[0].id != first.chunks[0].id
    assert not any("Lars Eriksen" in p for p in [*follow.context.splitlines()[:3]])
    assert follow.query == "And who approved Directive 2023-07?"


@pytest.mark.parametrize("i", range(1, len(DEMO_QUESTIONS)))
def test_the_demo_questions_keep_their_top_passage_after_the_one_before(retriever, i):
    question, before = DEMO_QUESTIONS[i], DEMO_QUESTIONS[i - 1]
    alone = retriever.retrieve(question)
    after = retriever.retrieve(question, history=[before])
    assert after.chunks[0].id == alone.chunks[0].id


def test_a_question_that_refers_back_finds_what_it_refers_to(retriever):
    follow = retriever.retrieve("And who approved it?", history=["Tell me about the 2025 security budget"])
    assert follow.chunks[0].id == "doc-10"
    assert retriever.retrieve("And who approved it?").chunks[0].id != "doc-10"
