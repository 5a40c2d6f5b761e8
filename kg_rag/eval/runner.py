"""Runs methods over questions and aggregates metrics into the ``R.json`` shape."""

from __future__ import annotations

import logging
import math
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from kg_rag.eval.datasets import EvalQuestion
from kg_rag.eval.methods import MethodSpec, build_method
from kg_rag.eval.metrics import (
    answer_in_text,
    numeric_answer_in_text,
    percentile,
    recall_at,
    reciprocal_rank,
    set_f1,
)
from kg_rag.index import GraphIndex
from kg_rag.schema import canonical_key

logger = logging.getLogger(__name__)


def _mean(values: list[float]) -> float | None:
    """Mean over defined values; ``None`` (JSON null) when a metric is undefined for every question."""
    vals = [v for v in values if not math.isnan(v)]
    return float(sum(vals) / len(vals)) if vals else None


def connection_f1(index: GraphIndex, chunk_ids: Sequence[str], bridges: Sequence[str]) -> float:
    """Graph Connection F1: do the retrieved chunks connect through the gold chain's bridge entities?

    Predicted connections: entities mentioned by at least two retrieved chunks (they join retrieved
    evidence). Gold: the bridge entities (intermediate answers). A gold bridge that is not a graph entity
    counts as predicted when its name occurs in the text of two retrieved chunks.
    """
    kg = index.kg
    counts: dict[str, int] = defaultdict(int)
    for c in chunk_ids:
        for key in kg.entities_of_chunk(c):
            counts[key] += 1
    predicted = {k for k, n in counts.items() if n >= 2}
    gold = {canonical_key(b) for b in bridges if b.strip()}
    for b in bridges:
        key = canonical_key(b)
        if key not in kg.graph and sum(answer_in_text([b], kg.chunks[c].text) for c in chunk_ids) >= 2:
            predicted.add(key)
    return set_f1(predicted, gold)[2]


def evaluate(
    questions: Sequence[EvalQuestion],
    index: GraphIndex,
    embeddings: Any,
    methods: Sequence[MethodSpec],
    ks: Sequence[int] = (2, 5),
    *,
    progress: bool = True,
    query_vectors: np.ndarray | None = None,
) -> dict[str, Any]:
    """Evaluate every method on every question. Latency excludes the (shared) query embedding."""
    from tqdm.auto import tqdm

    if not questions:
        raise ValueError("no questions to evaluate")
    ks = sorted({int(k) for k in ks})
    if not ks or ks[0] < 1:
        raise ValueError("k values must be positive integers")
    kmax = max(ks)
    if query_vectors is None:
        from kg_rag.embeddings import normalise_rows

        raw = embeddings.embed_documents([q.question for q in questions])
        query_vectors = normalise_rows(np.asarray(raw, dtype=np.float32))
    texts = index.kg.chunks
    report: dict[str, Any] = {"questions": len(questions), "k": ks, "methods": {}}
    for spec in methods:
        rank = build_method(spec, index, embeddings)
        rank(questions[0].question, query_vectors[0], kmax)  # warm-up, not timed
        per: dict[str, list[float]] = defaultdict(list)
        groups: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        latencies = []
        for q, vec in tqdm(list(zip(questions, query_vectors)), desc=spec.name, disable=not progress):
            t0 = time.perf_counter()
            ranked = rank(q.question, vec, kmax)
            latencies.append(1000 * (time.perf_counter() - t0))
            row: dict[str, float] = {}
            for k in ks:
                row[f"recall@{k}"] = recall_at(ranked, q.gold_chunks, k) if q.gold_chunks else math.nan
                context = "\n".join(texts[c].text for c in ranked[:k] if c in texts)
                if q.numeric_answer is not None:
                    row[f"answer_in_context@{k}"] = float(numeric_answer_in_text(q.numeric_answer, context))
                else:
                    row[f"answer_in_context@{k}"] = float(answer_in_text(q.answers, context)) if q.answers else math.nan
            row["mrr"] = reciprocal_rank(ranked, q.gold_chunks) if q.gold_chunks else math.nan
            top = [c for c in ranked[:kmax] if c in texts]
            if q.gold_docs:
                row[f"graph_doc_f1@{kmax}"] = set_f1({texts[c].doc_id for c in top}, set(q.gold_docs))[2]
            if q.gold_entities:
                row[f"graph_connection_f1@{kmax}"] = connection_f1(index, top, q.gold_entities)
            for key, value in row.items():
                per[key].append(value)
                groups[q.group][key].append(value)
        result = {key: _mean(vals) for key, vals in per.items()}
        result["latency_ms_p50"] = percentile(latencies, 50)
        result["latency_ms_p95"] = percentile(latencies, 95)
        result["by_group"] = {
            g: {"questions": len(next(iter(vals.values()))), **{key: _mean(v) for key, v in vals.items()}}
            for g, vals in sorted(groups.items())
        }
        result["description"] = spec.description
        report["methods"][spec.name] = result
        logger.info("%s: %s", spec.name, {k: round(v, 3) for k, v in result.items() if isinstance(v, float)})
    return report
