"""Question-set loaders (``kg_rag/eval/datasets.py``): MuSiQue gold passages matched by text, SEC 10-Q questions."""

from __future__ import annotations

import json

import pytest

from kg_rag import Chunk, KnowledgeGraph, build_index
from kg_rag.eval import evaluate, load_musique_questions
from kg_rag.eval.methods import BUILTIN
from kg_rag.store.memory import LiveBackend

from ..conftest import BagOfWordsEmbeddings
from .conftest import QUESTIONS


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
