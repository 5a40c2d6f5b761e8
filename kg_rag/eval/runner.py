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
from kg_rag.eval.metrics import answer_in_text, percentile, recall_at, reciprocal_rank
from kg_rag.index import GraphIndex

logger = logging.getLogger(__name__)


def _mean(values: list[float]) -> float:
    vals = [v for v in values if not math.isnan(v)]
    return float(sum(vals) / len(vals)) if vals else float("nan")


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
                row[f"recall@{k}"] = recall_at(ranked, q.gold_chunks, k)
                context = "\n".join(texts[c].text for c in ranked[:k] if c in texts)
                row[f"answer_in_context@{k}"] = float(answer_in_text(q.answers, context)) if q.answers else math.nan
            row["mrr"] = reciprocal_rank(ranked, q.gold_chunks) if q.gold_chunks else math.nan
            for key, value in row.items():
                per[key].append(value)
                groups[q.group][key].append(value)
        result = {key: _mean(vals) for key, vals in per.items()}
        result["latency_ms_p50"] = percentile(latencies, 50)
        result["latency_ms_p95"] = percentile(latencies, 95)
        result["by_group"] = {
            g: {"questions": len(vals["mrr"]), **{key: _mean(v) for key, v in vals.items()}}
            for g, vals in sorted(groups.items())
        }
        result["description"] = spec.description
        report["methods"][spec.name] = result
        logger.info("%s: %s", spec.name, {k: round(v, 3) for k, v in result.items() if isinstance(v, float)})
    return report
