"""The BM25 index (``kg_rag/index/lexical.py``)."""

from __future__ import annotations

import numpy as np

from kg_rag.eval import BM25Index

PASSAGES = {
    "p0": "The Brandon play was written by Henrik Ibsen.",
    "p1": "Henrik Ibsen was a Norwegian citizen.",
    "p2": "Bergen is a city in Norway with a rainy climate.",
    "p3": "Oslo is the capital of Norway.",
}


def test_bm25_ranks_term_matches_first():
    bm = BM25Index(list(PASSAGES.values()))
    scores = bm.scores("capital of Norway")
    assert int(np.argmax(scores)) == 3
    assert not bm.scores("zzzz").any()
