"""Question-set loaders (``kg_rag/eval/datasets.py``): MuSiQue gold passages matched by text, SEC 10-Q questions."""

from __future__ import annotations

import json

import pytest

from kg_rag import Chunk, KnowledgeGraph, build_index, save_index
from kg_rag.eval import evaluate, load_musique_questions
from kg_rag.eval.methods import BUILTIN
from kg_rag.store.memory import LiveBackend

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


def test_loader_matches_gold_by_text(small_eval):
    index, _, tmp = small_eval
    qs = load_musique_questions(tmp / "q.json", index.kg.chunks.values())
    assert qs[0].gold_chunks == ["p0", "p1"] and qs[0].answers == ["Norway", "Norwegian"] and qs[0].group == "2hop"
    bad = tmp / "bad.json"
    bad.write_text(json.dumps([{**QUESTIONS[1], "paragraphs": [{"paragraph_text": "missing", "is_supporting": True}]}]))
    with pytest.raises(ValueError, match="not in the index"):
        load_musique_questions(bad, index.kg.chunks.values())


def test_sec10q_loader_and_doc_f1(tmp_path):
    import csv

    from kg_rag.eval.datasets import load_sec10q_questions

    kg = KnowledgeGraph()
    kg.add_chunk(Chunk("a#0", "Apple total net sales were $94,836 million.", "2023_Q2_AAPL.pdf"))
    kg.add_chunk(Chunk("n#0", "NVIDIA revenue was $13,507 million.", "2023_Q3_NVDA.pdf"))
    path = tmp_path / "questions.csv"
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, ["Question", "Source Docs", "Question Type", "New Question", "New Answer"])
        w.writeheader()
        w.writerow(
            {
                "Question": "q",
                "Source Docs": "*2023 Q2 AAPL*",
                "Question Type": "Single-Doc",
                "New Question": "Apple total net sales in 2023 Q2?",
                "New Answer": "94836",
            }
        )
        w.writerow(
            {
                "Question": "q",
                "Source Docs": "*NVDA*",
                "Question Type": "Multi-Doc",
                "New Question": "NVIDIA revenue?",
                "New Answer": "13507",
            }
        )
    qs = load_sec10q_questions(path, kg.chunks.values())
    assert qs[0].gold_docs == ["2023_Q2_AAPL.pdf"] and qs[1].gold_docs == ["2023_Q3_NVDA.pdf"]
    assert qs[0].numeric_answer == 94836.0 and qs[0].gold_chunks == []
    emb = BagOfWordsEmbeddings()
    report = evaluate(qs, LiveBackend(build_index(kg, emb), emb), emb, [BUILTIN["bm25"]], (1,), progress=False)
    m = report["methods"]["bm25"]
    assert m["recall@1"] is None and m["answer_in_context@1"] == 1.0 and m["graph_doc_f1@1"] == 1.0
