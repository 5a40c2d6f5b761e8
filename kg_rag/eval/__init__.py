"""Stage 7: evaluation — datasets, retrieval methods under one interface, metrics, and the runner."""

from kg_rag.eval.datasets import EvalQuestion, load_musique_questions
from kg_rag.eval.methods import build_method
from kg_rag.eval.metrics import answer_in_text, normalise_answer
from kg_rag.eval.runner import evaluate
from kg_rag.index.lexical import BM25Index

__all__ = [
    "BM25Index",
    "EvalQuestion",
    "answer_in_text",
    "build_method",
    "evaluate",
    "load_musique_questions",
    "normalise_answer",
]
