"""Retrieval metrics: recall@k, answer-in-context@k, MRR, and answer EM/F1."""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence

import numpy as np

_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalise_answer(text: str) -> str:
    """SQuAD-style normalisation: lower case, no punctuation or articles, single spaces."""
    text = str(text).lower()
    text = "".join(ch for ch in text if ch not in string.punctuation)
    return " ".join(_ARTICLES.sub(" ", text).split())


def answer_in_text(answers: Sequence[str], text: str) -> bool:
    """True when any normalised answer occurs (on word boundaries) in the normalised text."""
    hay = f" {normalise_answer(text)} "
    return any(f" {a} " in hay for a in (normalise_answer(x) for x in answers) if a)


def recall_at(ranked: Sequence[str], gold: Sequence[str], k: int) -> float:
    if not gold:
        return float("nan")
    return len(set(ranked[:k]) & set(gold)) / len(set(gold))


def reciprocal_rank(ranked: Sequence[str], gold: Sequence[str]) -> float:
    gold_set = set(gold)
    for i, cid in enumerate(ranked):
        if cid in gold_set:
            return 1.0 / (i + 1)
    return 0.0


def exact_match(prediction: str, answers: Sequence[str]) -> float:
    p = normalise_answer(prediction)
    return float(any(p == normalise_answer(a) for a in answers))


def f1(prediction: str, answers: Sequence[str]) -> float:
    best = 0.0
    pred = normalise_answer(prediction).split()
    for a in answers:
        gold = normalise_answer(a).split()
        common = Counter(pred) & Counter(gold)
        same = sum(common.values())
        if same:
            precision, recall = same / len(pred), same / len(gold)
            best = max(best, 2 * precision * recall / (precision + recall))
    return best


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=np.float64), q)) if len(values) else float("nan")


_NUMBER = re.compile(r"(?<![\w.])[-+]?\$?\(?\d[\d,]*(?:\.\d+)?")


def numbers_in(text: str) -> list[float]:
    """Numbers written in ``text`` (thousands separators, ``$`` and accounting parentheses allowed)."""
    out = []
    for raw in _NUMBER.findall(text):
        cleaned = raw.replace(",", "").replace("$", "").replace("(", "").replace("+", "")
        try:
            out.append(float(cleaned))
        except ValueError:
            continue
    return out


def numeric_answer_in_text(answer: float, text: str, rel_tol: float = 1e-6) -> bool:
    """True when the number ``answer`` (or its negative, for accounting notation) is written in ``text``."""
    target = abs(float(answer))
    return any(abs(abs(x) - target) <= rel_tol * max(1.0, target) for x in numbers_in(text))


def set_f1(predicted: set[str], gold: set[str]) -> tuple[float, float, float]:
    """Precision, recall and F1 of two sets (all 0 when either is empty)."""
    if not predicted or not gold:
        return 0.0, 0.0, 0.0
    hit = len(predicted & gold)
    if not hit:
        return 0.0, 0.0, 0.0
    p, r = hit / len(predicted), hit / len(gold)
    return p, r, 2 * p * r / (p + r)
