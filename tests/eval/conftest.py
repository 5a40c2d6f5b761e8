"""Fixtures of the evaluation tests: a four-passage graph with two MuSiQue-style questions, indexed and saved."""

from __future__ import annotations

import json

import pytest

from kg_rag import Chunk, KnowledgeGraph, build_index, save_index

from ..conftest import BagOfWordsEmbeddings

PASSAGES = {
    "p0": "The Brandon play was written by Henrik Ibsen.",
    "p1": "Henrik Ibsen was a Norwegian citizen.",
    "p2": "Bergen is a city in Norway with a rainy climate.",
    "p3": "Oslo is the capital of Norway.",
}


QUESTIONS = [
    {
        "id": "2hop__1_2",
        "question": "What country was the author of the Brandon play a citizen of?",
        "answer": "Norway",
        "answer_aliases": ["Norwegian"],
        "paragraphs": [
            {"paragraph_text": PASSAGES["p0"], "is_supporting": True},
            {"paragraph_text": PASSAGES["p1"], "is_supporting": True},
            {"paragraph_text": PASSAGES["p2"], "is_supporting": False},
        ],
    },
    {
        "id": "3hop1__1_2_3",
        "question": "What is the capital of Norway?",
        "answer": "Oslo",
        "answer_aliases": [],
        "paragraphs": [{"paragraph_text": PASSAGES["p3"], "is_supporting": True}],
    },
]


@pytest.fixture
def small_eval(tmp_path):
    kg = KnowledgeGraph()
    for cid, text in PASSAGES.items():
        kg.add_chunk(Chunk(cid, text, cid))
    kg.add_relation("Brandon play", "Henrik Ibsen", "CREATED", chunk_id="p0")
    kg.add_relation("Henrik Ibsen", "Norway", "RELATED", chunk_id="p1", predicate="citizen of")
    kg.add_relation("Bergen", "Norway", "LOCATED_IN", chunk_id="p2")
    kg.add_relation("Oslo", "Norway", "RELATED", chunk_id="p3", predicate="capital of")
    emb = BagOfWordsEmbeddings()
    index = build_index(kg, emb)
    (tmp_path / "q.json").write_text(json.dumps(QUESTIONS))
    save_index(index, tmp_path / "idx")
    return index, emb, tmp_path
