"""Evaluation datasets: MuSiQue/HippoRAG-format questions matched to an index's chunks by exact text."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from kg_rag.errors import InputError, InputNotFoundError
from kg_rag.eval.chain import Hop, question_hops
from kg_rag.jsonio import load_json
from kg_rag.model.graph import KnowledgeGraph
from kg_rag.model.records import Chunk


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
    """Bridge entities of the gold reasoning chain (intermediate answers), for Graph Connection F1."""
    gold_docs: list[str] = field(default_factory=list)
    """Document ids of the gold evidence, for Graph Doc F1."""
    numeric_answer: float | None = None
    hops: list[Hop] = field(default_factory=list)
    """The gold reasoning chain, step by step (:func:`~kg_rag.eval.chain.question_hops`), for the chain metrics."""


def hop_group(question_id: str) -> str:
    """``2hop__...`` -> ``2hop``; ``3hop1__...`` -> ``3hop``; anything else -> ``other``."""
    m = re.match(r"(\d)hop", question_id)
    return f"{m.group(1)}hop" if m else "other"


def load_musique_questions(
    path: str | Path | list[dict[str, Any]], chunks: Iterable[Chunk], *, limit: int | None = None
) -> list[EvalQuestion]:
    """Read ``[{id, question, answer, answer_aliases, paragraphs: [{paragraph_text, is_supporting}]}]``.

    Gold passages are matched to chunks by exact text (titles repeat in MuSiQue). A supporting passage that
    is not in the index raises ``ValueError`` naming the question, since its recall would silently be 0.
    """
    data: Any = path if isinstance(path, list) else load_json(path)
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a list of questions")
    by_text: dict[str, str] = {}
    doc_of: dict[str, str] = {}
    for chunk in chunks:
        by_text.setdefault(chunk.text, chunk.id)
        by_text.setdefault(chunk.text.strip(), chunk.id)
        doc_of[chunk.id] = chunk.doc_id
    out: list[EvalQuestion] = []
    for item in data[:limit] if limit else data:
        if not isinstance(item, dict) or "question" not in item:
            raise InputError(
                f"{path}: every question needs a 'question' ('id', 'answer' and 'paragraphs' are optional)"
            )
        qid = str(item.get("id", len(out)))
        gold = []
        for para in item.get("paragraphs") or []:
            if para.get("is_supporting"):
                text = str(para.get("paragraph_text", ""))
                cid = by_text.get(text) or by_text.get(text.strip())
                if cid is None:
                    raise InputError(f"{path}: question {qid}: a supporting passage is not in the index")
                gold.append(cid)
        answers = [str(item.get("answer", ""))] + [str(a) for a in item.get("answer_aliases") or []]
        steps = item.get("question_decomposition") or []
        bridges = [str(st.get("answer", "")) for st in steps[:-1] if isinstance(st, dict) and st.get("answer")]
        out.append(
            EvalQuestion(
                qid,
                str(item["question"]),
                [a for a in answers if a.strip()],
                gold,
                hop_group(qid),
                gold_entities=bridges,
                gold_docs=list(dict.fromkeys(doc_of[c] for c in gold)),
                hops=question_hops(item),
            )
        )
    return out


def _answer_of(known: dict[str, str], m: re.Match[str]) -> str:
    """The answer of the step a ``#n`` placeholder names, else the placeholder as written."""
    return known.get(m.group(1), m.group(0))


def single_hop_questions(data: Any) -> list[dict[str, Any]]:
    """The single-hop steps of MuSiQue questions, as questions of their own (same format, one gold passage).

    A multi-hop question's ``question_decomposition`` lists its steps with their answers and supporting
    paragraph; ``#1`` in a later step is replaced by step 1's answer ("Who is the spouse of #1?" -> "... of Raoul
    Walsh?") and a knowledge-base step ``Hello Love >> performer`` reads "What is the performer of Hello
    Love?". Questions asked in a form the method was never tuned on, about the same passages. A step repeated
    by several questions is kept once; one whose placeholder or paragraph cannot be resolved is left out.
    """
    if not isinstance(data, list):
        raise InputError("expected a list of questions")
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for item in data:
        if not isinstance(item, dict):
            continue
        paragraphs = [p for p in item.get("paragraphs") or [] if isinstance(p, dict)]
        steps = [s for s in item.get("question_decomposition") or [] if isinstance(s, dict)]
        answers: dict[str, str] = {}
        for n, step in enumerate(steps, 1):
            question = str(step.get("question", ""))
            refs = re.findall(r"#(\d+)", question)
            text = re.sub(r"#(\d+)", partial(_answer_of, answers), question)
            answers[str(n)] = str(step.get("answer", ""))
            if any(r not in answers or r == str(n) for r in refs) or not text.strip() or not answers[str(n)].strip():
                continue
            if ">>" in text:
                subject, relation = (part.strip() for part in text.split(">>", 1))
                text = f"What is the {relation} of {subject}?"
            support = [p for p in paragraphs if p.get("idx") == step.get("paragraph_support_idx")]
            if len(support) != 1 or (text, str(support[0].get("paragraph_text"))) in seen:
                continue
            seen.add((text, str(support[0].get("paragraph_text"))))
            out.append(
                {
                    "id": f"1hop__{item.get('id', len(out))}__{n}",
                    "question": text,
                    "answer": answers[str(n)],
                    "paragraphs": [dict(support[0], is_supporting=True)],
                    "question_decomposition": [{"question": text, "answer": answers[str(n)]}],
                }
            )
    return out


def load_sec10q_questions(path: str | Path, chunks: Iterable[Chunk], *, limit: int | None = None) -> list[EvalQuestion]:
    """The seed's SEC 10-Q benchmark: ``questions.csv`` with ``New Question`` / numeric ``New Answer``.

    There is no passage-level gold, so recall is undefined (reported as missing); answer-in-context checks
    the number, and ``Source Docs`` patterns (``*2023 Q3 AAPL*``) give the gold documents for Doc F1.
    """
    import csv
    import fnmatch

    p = Path(path)
    if not p.is_file():
        raise InputNotFoundError(f"{p}: no such file")
    with p.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    need = {"New Question", "New Answer", "Source Docs"}
    if not rows or not need <= set(rows[0]):
        raise InputError(f"{p}: expected columns {', '.join(sorted(need))}")
    docs = list(dict.fromkeys(c.doc_id for c in chunks))
    out = []
    for i, row in enumerate(rows[:limit] if limit else rows):
        try:
            number = float(str(row["New Answer"]).replace(",", "").strip())
        except ValueError:
            number = None
        pattern = str(row["Source Docs"]).strip().replace(" ", "_").lower()
        gold_docs = [d for d in docs if fnmatch.fnmatch(d.lower(), pattern if "*" in pattern else f"*{pattern}*")]
        out.append(
            EvalQuestion(
                f"sec10q-{i:03d}",
                str(row["New Question"]),
                [str(row["New Answer"]).strip()],
                [],
                str(row.get("Question Type") or "all"),
                gold_docs=gold_docs,
                numeric_answer=number,
            )
        )
    return out


def musique_slice(
    corpus: str | Path, openie: str | Path, questions: str | Path, n: int
) -> tuple[KnowledgeGraph, list[dict[str, Any]]]:
    """A small, self-consistent slice of MuSiQue: the first ``n`` questions and only the passages they list.

    Used by the notebook and tests to exercise the whole harness in seconds. The slice corpus is far
    smaller than the full one, so its numbers are not comparable with full-corpus results.
    """
    from kg_rag.ingest.openie import import_openie

    qs = load_json(questions)[:n]
    wanted = {p["paragraph_text"] for q in qs for p in q.get("paragraphs", [])}
    passages = [p for p in load_json(corpus) if p.get("text") in wanted]
    docs = [d for d in load_json(openie)["docs"] if d.get("text") in wanted]
    kg = KnowledgeGraph()
    import_openie(kg, {"docs": docs}, passages)
    return kg, qs
