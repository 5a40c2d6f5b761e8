"""Runs methods over questions and aggregates metrics into the ``R.json`` shape."""

from __future__ import annotations

import logging
import math
import re
import time
from collections import defaultdict
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from kg_rag.context.format import format_context
from kg_rag.errors import InputError
from kg_rag.eval.chain import CHAIN_METRICS, chain_metrics
from kg_rag.eval.datasets import EvalQuestion
from kg_rag.eval.floor import floor_ms, stage_medians
from kg_rag.eval.methods import MethodSpec, build_method
from kg_rag.eval.metrics import (
    answer_in_text,
    numeric_answer_in_text,
    percentile,
    recall_at,
    reciprocal_rank,
    set_f1,
)
from kg_rag.model.names import canonical_key
from kg_rag.model.predicates import names_relation
from kg_rag.store.base import EdgeFilter, QueryBackend

logger = logging.getLogger(__name__)


def _mean(values: list[float]) -> float | None:
    """Mean over defined values; ``None`` (JSON null) when a metric is undefined for every question."""
    vals = [v for v in values if not math.isnan(v)]
    return float(sum(vals) / len(vals)) if vals else None


def connection_f1(
    mentions: dict[str, set[str]],
    texts: dict[str, str],
    known: set[str],
    chunk_ids: Sequence[str],
    bridges: Sequence[str],
) -> float:
    """Graph Connection F1: do the retrieved chunks connect through the gold chain's bridge entities?

    Predicted connections: entities mentioned by at least two retrieved chunks (they join retrieved
    evidence). Gold: the bridge entities (intermediate answers). A gold bridge that is not a graph entity
    (not in ``known``) counts as predicted when its name occurs in the text of two retrieved chunks.
    ``mentions`` maps chunk id -> keys of the entities it mentions.
    """
    counts: dict[str, int] = defaultdict(int)
    for c in chunk_ids:
        for key in mentions.get(c, ()):
            counts[key] += 1
    predicted = {k for k, n in counts.items() if n >= 2}
    gold = {canonical_key(b) for b in bridges if b.strip()}
    for b in bridges:
        key = canonical_key(b)
        if key not in known and sum(answer_in_text([b], texts.get(c, "")) for c in chunk_ids) >= 2:
            predicted.add(key)
    return set_f1(predicted, gold)[2]


GRAPH_METRICS = (
    "answer_in_graph_context",
    "context_relation_precision",
    "gold_relation_recall",
    "gold_relation_reachable",
    "typed_relation_share",
    "gold_path_share",
    "context_relation_rows",
    "context_tokens",
    *CHAIN_METRICS,
)
"""Graph-context metrics (see evaluation/README.md); ``None`` for chunk-only methods."""


def _graph_half(text: str) -> str:
    """The context before its entity table and its sources: the paths and the relationship rows. A context with
    neither opens with the entity table, and its graph half is empty (the table's descriptions are no relation)."""
    cut = len(text)
    for header in ("-----Entities-----", "-----Sources-----"):
        at = text.find(header)
        while at > 0 and text[at - 1] != "\n":  # a header starts a line
            at = text.find(header, at + 1)
        if at >= 0:
            cut = min(cut, at)
    return text[:cut]


def graph_context_metrics(
    result: Any, formatted: Any, gold: set[str], answers: Sequence[str] = (), stated: set[str] | None = None
) -> dict[str, float]:
    """How much of the context's graph half is about the question.

    A *gold relation* has an evidence record in one of the question's supporting passages. Precision: shown
    relationship rows that are gold. Recall: gold relations that reach the context (as a row or a step of a
    shown path). Reachable: gold relations that the returned passages state (``stated``, the ids of the
    relations evidenced in them) or that reach the context anyway (a relation between two entities the question
    names is shown whatever passage states it): the recall a perfect choice of rows would reach, an upper bound of
    recall that tells a selection that misses from passages that were never found. Typed share: shown rows whose type
    names a relation (:func:`~kg_rag.model.relation_types.names_relation`: not ``RELATED``, and not a bare function
    word such as ``IN`` or ``THAN``). Gold paths: shown paths whose every step is gold. Rows and tokens: what the
    context holds.
    """
    rows = list(formatted.relations)
    types = {r.relation_id: r.relation_type for r in result.relations}
    shown_paths = [result.paths[i] for i in formatted.paths if result.paths[i].steps]
    reached = set(rows) | {s.relation_id for pa in shown_paths for s in pa.steps}
    graph_text = _graph_half(formatted.text)
    # table cells are delimited by "|", which answer normalisation deletes: "|Madonna|Andrew Morton|" would
    # read "madonnaandrew mortonwritten", so cells are split apart before matching
    graph_text = graph_text.replace("|", " ")
    out = {
        "answer_in_graph_context": float(answer_in_text(answers, graph_text)) if answers else math.nan,
        "context_relation_rows": float(len(rows)),
        "context_tokens": float(formatted.tokens),
        "context_relation_precision": (sum(r in gold for r in rows) / len(rows)) if rows else math.nan,
        "gold_relation_recall": (len(reached & gold) / len(gold)) if gold else math.nan,
        "gold_relation_reachable": (len(gold & (stated | reached)) / len(gold))
        if gold and stated is not None
        else math.nan,
        "typed_relation_share": (sum(names_relation(types.get(r)) for r in rows) / len(rows)) if rows else math.nan,
        "gold_path_share": (
            sum(all(s.relation_id in gold for s in pa.steps) for pa in shown_paths) / len(shown_paths)
            if shown_paths
            else math.nan
        ),
    }
    return out


class Corpus:
    """What the metrics read about chunks, fetched from the backend once per question."""

    def __init__(self, backend: QueryBackend) -> None:
        self.backend = backend
        self.texts: dict[str, str] = {}
        self.docs: dict[str, str] = {}
        self.mentions: dict[str, set[str]] = {}
        self.known: set[str] = set()

    def load(self, chunk_ids: Sequence[str], bridges: Sequence[str]) -> None:
        todo = [c for c in dict.fromkeys(chunk_ids) if c not in self.texts]
        with self.backend.reader() as view:
            if todo:
                handles = view.chunk_handles(todo)
                ids = np.asarray([handles[c] for c in todo if c in handles], dtype=np.int64)
                for chunk in view.chunks(ids):
                    if chunk is not None:
                        self.texts[chunk.id] = chunk.text
                        self.docs[chunk.id] = chunk.doc_id
                pairs = view.chunk_entities(ids)
                ents = np.unique(pairs.right)
                keys = {int(h): e.key for h, e in zip(ents.tolist(), view.entities(ents)) if e is not None}
                by_handle = {h: c for c, h in handles.items()}
                for c, e in zip(pairs.left.tolist(), pairs.right.tolist()):
                    if e in keys:
                        self.mentions.setdefault(by_handle[c], set()).add(keys[e])
            wanted = [canonical_key(b) for b in bridges if b.strip()]
            self.known |= set(view.lookup_entities(wanted))

    def relations_stated_by(self, chunk_ids: Sequence[str]) -> set[str]:
        """Ids of the relations evidenced in the given chunks (synonym links are not relations)."""
        return {rid for _, _, rid in self.edges_stated_by(chunk_ids)}

    def edges_stated_by(self, chunk_ids: Sequence[str]) -> list[tuple[str, str, str]]:
        """``(source name, target name, relation id)`` of the relations evidenced in the given chunks."""
        with self.backend.reader() as view:
            handles = view.chunk_handles(list(chunk_ids))
            ids = np.asarray(list(handles.values()), dtype=np.int64)
            _, edges = view.chunk_relations(ids, EdgeFilter())
            keep = np.flatnonzero(~edges.synonym)
            src, dst = edges.src[keep], edges.dst[keep]
            ends = np.unique(np.concatenate([src, dst]))
            names = {h: label[1] for h, label in zip(ends.tolist(), view.labels(ends)) if label is not None}
            out = []
            for r, a, b in zip(view.relations(edges.ids[keep]), src.tolist(), dst.tolist()):
                if r is not None and a in names and b in names:
                    out.append((names[a], names[b], r.id))
            return out


TEXT_CACHES = (
    "kg_rag.model.names:canonical_key",
    "kg_rag.model.lemmas:lemma",
    "kg_rag.model.predicates:analyse",
    "kg_rag.model.lemmas:known_word",
    "kg_rag.query.relation_match:_type_words",
    "kg_rag.query.relation_match:matches",
    "kg_rag.query.roles:type_voice",
    "kg_rag.tokens:_count_cached",
    "kg_rag.query.seeds:_word_runs",
)
"""The process-wide memos keyed by text (names, predicates, the question's words, context lines)."""


def clear_text_caches() -> None:
    """Empty :data:`TEXT_CACHES`. Methods are timed one after another on the same questions, so without this
    every method after the first found the question's n-grams, words and lines already worked out, so the same
    code ran faster later in a run (measured: evaluation/design-figures.md) and an ablation looked faster than
    the method it ablates."""
    import importlib

    for path in TEXT_CACHES:
        module, name = path.split(":")
        getattr(importlib.import_module(module), name).cache_clear()
    re.purge()  # compiled patterns are text memos too (a short name's, looked up whole in the question)


def evaluate(
    questions: Sequence[EvalQuestion],
    backend: QueryBackend,
    embeddings: Any,
    methods: Sequence[MethodSpec],
    ks: Sequence[int] = (2, 5),
    *,
    progress: bool = True,
    query_vectors: np.ndarray | None = None,
) -> dict[str, Any]:
    """Evaluate every method on every question. Latency is retrieval (ranking and choosing the graph context),
    excluding the shared query embedding; formatting the context is timed apart (``context_ms_p50``), and so is
    each stage (``stages_ms_p50``). The floor (``floor_ms_p50``) is the same question's vector searches alone,
    timed after an untimed rerun that records them (:mod:`kg_rag.eval.floor`); ``floor_ratio`` is the retrieval
    p50 over it."""
    from tqdm.auto import tqdm

    if not questions:
        raise InputError("no questions to evaluate")
    ks = sorted({int(k) for k in ks})
    if not ks or ks[0] < 1:
        raise InputError("k values must be positive integers")
    kmax = max(ks)
    if query_vectors is None:
        from kg_rag.index.embeddings import normalise_rows

        raw = embeddings.embed_documents([q.question for q in questions])
        query_vectors = normalise_rows(np.asarray(raw, dtype=np.float32))
    corpus = Corpus(backend)
    report: dict[str, Any] = {"questions": len(questions), "k": ks, "methods": {}}
    for spec in methods:
        rank = build_method(spec, backend, embeddings)
        clear_text_caches()  # every method starts as the first one would: the same questions, nothing remembered
        rank(questions[0].question, query_vectors[0], kmax)  # warm-up, not timed
        per: dict[str, list[float]] = defaultdict(list)
        groups: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        latencies: list[float] = []
        context_ms: list[float] = []
        floors: list[float] = []
        stages: list[dict[str, float]] = []
        for q, vec in tqdm(list(zip(questions, query_vectors)), desc=spec.name, disable=not progress):
            t0 = time.perf_counter()
            run = rank(q.question, vec, kmax)
            elapsed = 1000 * (time.perf_counter() - t0)
            # retrieval is timed apart from the context (the engine formats it as its last stage)
            formatting = run.result.timings_ms.get("context", 0.0) if run.result is not None else 0.0
            latencies.append(elapsed - formatting)
            if run.result is not None and "context" in run.result.timings_ms:
                context_ms.append(formatting)
                stages.append(run.result.timings_ms)
            floor, searches = floor_ms(backend, partial(rank, q.question, vec, kmax))  # untimed rerun
            if searches:
                floors.append(floor)
            ranked = run.chunk_ids
            corpus.load(ranked[:kmax], q.gold_entities)
            texts = corpus.texts
            row: dict[str, float] = {}
            for k in ks:
                row[f"recall@{k}"] = recall_at(ranked, q.gold_chunks, k) if q.gold_chunks else math.nan
                context = "\n".join(texts[c] for c in ranked[:k] if c in texts)
                if q.numeric_answer is not None:
                    row[f"answer_in_context@{k}"] = float(numeric_answer_in_text(q.numeric_answer, context))
                else:
                    row[f"answer_in_context@{k}"] = float(answer_in_text(q.answers, context)) if q.answers else math.nan
            row["mrr"] = reciprocal_rank(ranked, q.gold_chunks) if q.gold_chunks else math.nan
            top = [c for c in ranked[:kmax] if c in texts]
            if q.gold_docs:
                row[f"graph_doc_f1@{kmax}"] = set_f1({corpus.docs[c] for c in top}, set(q.gold_docs))[2]
            if q.gold_entities:
                row[f"graph_connection_f1@{kmax}"] = connection_f1(
                    corpus.mentions, texts, corpus.known, top, q.gold_entities
                )
            if run.result is not None:
                formatted = run.result.formatted or format_context(run.result, run.params)
                gold = corpus.relations_stated_by(q.gold_chunks) if q.gold_chunks else set()
                returned = corpus.edges_stated_by([c.id for c in run.result.chunks]) if gold or q.hops else []
                stated = {rid for _, _, rid in returned} if gold else None
                row.update(graph_context_metrics(run.result, formatted, gold, q.answers, stated))
                row.update(chain_metrics(q.hops, run.result, formatted, returned))
            for key, value in row.items():
                per[key].append(value)
                groups[q.group][key].append(value)
        result: dict[str, Any] = {key: _mean(vals) for key, vals in per.items()}
        for key in GRAPH_METRICS:
            result.setdefault(key, None)
        result["latency_ms_p50"] = percentile(latencies, 50)
        result["latency_ms_p95"] = percentile(latencies, 95)
        result["context_ms_p50"] = percentile(context_ms, 50) if context_ms else None
        # the floor: the same question's vector searches alone (kg_rag.eval.floor), and retrieval's p50 over it
        result["floor_ms_p50"] = percentile(floors, 50) if floors else None
        floor = result["floor_ms_p50"]
        result["floor_ratio"] = result["latency_ms_p50"] / floor if floor else None
        if stages:
            result["stages_ms_p50"] = stage_medians(stages)
        result["by_group"] = {
            g: {"questions": len(next(iter(vals.values()))), **{key: _mean(v) for key, v in vals.items()}}
            for g, vals in sorted(groups.items())
        }
        result["description"] = spec.description
        report["methods"][spec.name] = result
        logger.info("%s: %s", spec.name, {k: round(v, 3) for k, v in result.items() if isinstance(v, float)})
    return report
