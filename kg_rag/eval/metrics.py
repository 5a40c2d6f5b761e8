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


SHORT_CODE_LETTERS = 3
"""An answer of at most this many letters and no digit ("NO", "it", "UK", "G B") is a code or abbreviation."""


def _words_as_written(text: str) -> str:
    """Text without punctuation, case kept, single spaces: "the U.S. flag" -> "the US flag"."""
    return " ".join("".join(ch for ch in str(text) if ch not in string.punctuation).split())


def _short_code(answer: str) -> str | None:
    """The form in which a short answer must appear: a code in capitals ("no" and "NO" -> "NO") or, written in
    mixed case ("Oz"), as written; ``None`` for a longer answer or one with a digit."""
    letters = [ch for ch in str(answer) if ch.isalnum()]
    if not letters or len(letters) > SHORT_CODE_LETTERS or any(ch.isdigit() for ch in letters):
        return None
    written = _words_as_written(answer)
    lower, upper = written.lower() == written, written.upper() == written
    return written.upper() if lower or upper else written


def answer_in_text(answers: Sequence[str], text: str) -> bool:
    """True when any answer occurs as whole words in the text (SQuAD-normalised). A short code (at most
    ``SHORT_CODE_LETTERS`` letters: "NO" for Norway, "IT" for Italy, "US") counts only as written in capitals,
    case kept — lower-cased it is the word "no", "it" or "us" of any sentence."""
    hay = f" {normalise_answer(text)} "
    written = None
    for answer in answers:
        code = _short_code(answer)
        if code is not None:
            written = written if written is not None else f" {_words_as_written(text)} "
            if f" {code} " in written:
                return True
            continue
        norm = normalise_answer(answer)
        if norm and f" {norm} " in hay:
            return True
    return False


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
