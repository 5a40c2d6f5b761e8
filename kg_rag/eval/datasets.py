"""Evaluation datasets: MuSiQue/HippoRAG-format questions matched to an index's chunks by exact text."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kg_rag.graph import KnowledgeGraph
from kg_rag.ingest.openie import read_json


@dataclass
class EvalQuestion:
    id: str
    question: str
    answers: list[str]
    gold_chunks: list[str]
    """Chunk ids of the supporting passages (empty when the dataset has no passage-level gold)."""
    group: str = "all"
    """Breakdown key, e.g. ``2hop`` / ``3hop`` / ``4hop`` for MuSiQue."""
    gold_entities: list[str] = field(default_factory=list)
    numeric_answer: float | None = None


def hop_group(question_id: str) -> str:
    """``2hop__...`` -> ``2hop``; ``3hop1__...`` -> ``3hop``; anything else -> ``other``."""
    m = re.match(r"(\d)hop", question_id)
    return f"{m.group(1)}hop" if m else "other"


def load_musique_questions(path: str | Path, kg: KnowledgeGraph, *, limit: int | None = None) -> list[EvalQuestion]:
    """Read ``[{id, question, answer, answer_aliases, paragraphs: [{paragraph_text, is_supporting}]}]``.

    Gold passages are matched to chunks by exact text (titles repeat in MuSiQue). A supporting passage that
    is not in the index raises ``ValueError`` naming the question, since its recall would silently be 0.
    """
    data: Any = read_json(path)
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a list of questions")
    by_text: dict[str, str] = {}
    for cid, chunk in kg.chunks.items():
        by_text.setdefault(chunk.text, cid)
        by_text.setdefault(chunk.text.strip(), cid)
    out = []
    for item in data[:limit] if limit else data:
        if not isinstance(item, dict) or "question" not in item:
            raise ValueError(f"{path}: every question needs at least 'id' and 'question'")
        qid = str(item.get("id", len(out)))
        gold = []
        for para in item.get("paragraphs") or []:
            if para.get("is_supporting"):
                text = str(para.get("paragraph_text", ""))
                cid = by_text.get(text) or by_text.get(text.strip())
                if cid is None:
                    raise ValueError(f"{path}: question {qid}: a supporting passage is not in the index")
                gold.append(cid)
        answers = [str(item.get("answer", ""))] + [str(a) for a in item.get("answer_aliases") or []]
        out.append(EvalQuestion(qid, str(item["question"]), [a for a in answers if a.strip()], gold, hop_group(qid)))
    return out
