"""The floor (a query's vector searches alone) and kg-rag's ratio to it, in ``kg-rag bench`` and ``kg-rag eval``.
Times are never asserted: only that the searches recorded are the query's, and that the reports carry the floor,
the ratio computed from the figures they report, and the stage medians."""

from __future__ import annotations

import numpy as np
import pytest

from kg_rag import Chunk, KnowledgeGraph, build_index
from kg_rag.eval import evaluate
from kg_rag.eval.bench import markdown_table, run_benchmark, synthetic_index
from kg_rag.eval.datasets import EvalQuestion
from kg_rag.eval.floor import floor_ms, recording_searches
from kg_rag.eval.methods import BUILTIN
from kg_rag.query.engine import QueryEngine
from kg_rag.query.params import get_preset
from kg_rag.store.memory import LiveBackend
from kg_rag.testing import BagOfWordsEmbeddings


class _VectorsOnly:
    def embed_query(self, text):
        raise RuntimeError("vectors are passed directly")

    embed_documents = embed_query


def test_the_recorded_searches_are_the_querys_and_the_backend_is_left_as_it_was():
    s = synthetic_index(300, 2000, dim=16, n_queries=2)
    engine = QueryEngine.for_index(s.index, _VectorsOnly(), get_preset("default"))
    backend = engine.backend
    with recording_searches(backend) as searches:
        engine.retrieve_by_vector(s.queries[0], s.query_texts[0])
    kinds = [c.kind for c in searches]
    assert "entities" in kinds and "chunks" in kinds  # the seeds' and the candidates' searches
    assert all(np.array_equal(c.query, s.queries[0]) for c in searches)
    assert "reader" not in vars(backend)  # the wrapper is gone
    with backend.reader() as view:
        assert "search" not in vars(view)
    ms, again = floor_ms(backend, lambda: engine.retrieve_by_vector(s.queries[0], s.query_texts[0]))
    assert ms > 0 and [(c.kind, c.k, c.min_score) for c in again] == [(c.kind, c.k, c.min_score) for c in searches]


def test_bench_reports_the_floor_and_the_ratio_in_memory_and_served():
    r = run_benchmark(300, 2000, n_queries=3, dim=16, strategies=("chain",), seed003_queries=2)
    for prefix, latency in (("", "latency_ms_p50"), ("loaded_", "loaded_latency_ms_p50")):
        assert r[f"{prefix}floor_ms_p50"] > 0
        assert r[f"{prefix}floor_ratio"] == round(r[latency] / r[f"{prefix}floor_ms_p50"], 2)
        stages = r[f"{prefix}stages_ms_p50"]
        assert {"seeds", "score", "select", "context", "total"} <= set(stages)
        assert "expand" not in stages  # the chain strategy does not read the expansion: it never ran
        assert r[f"{prefix}context_ms_p50"] == stages["context"]
    table = markdown_table([r])
    assert "floor p50" in table and "× floor" in table and f"{r['floor_ms_p50']:.2f}" in table


def test_eval_reports_the_floor_and_the_ratio_per_method():
    kg = KnowledgeGraph()
    texts = {"p0": "The Brandon play was written by Henrik Ibsen.", "p1": "Henrik Ibsen was a Norwegian citizen."}
    for cid, text in texts.items():
        kg.add_chunk(Chunk(cid, text, cid))
    kg.add_relation("Brandon play", "Henrik Ibsen", "CREATED", chunk_id="p0")
    kg.add_relation("Henrik Ibsen", "Norway", "CITIZEN_OF", chunk_id="p1")
    emb = BagOfWordsEmbeddings()
    backend = LiveBackend(build_index(kg, emb), emb)
    q = EvalQuestion("q1", "Which country was the author of the Brandon play a citizen of?", ["Norway"], ["p0", "p1"])
    methods = [BUILTIN[m] for m in ("dense", "bm25", "kg-rag")]
    report = evaluate([q, q], backend, emb, methods, (2,), progress=False)["methods"]
    kg_rag = report["kg-rag"]
    assert kg_rag["floor_ms_p50"] > 0
    assert kg_rag["floor_ratio"] == pytest.approx(kg_rag["latency_ms_p50"] / kg_rag["floor_ms_p50"])
    assert kg_rag["stages_ms_p50"]["context"] == pytest.approx(kg_rag["context_ms_p50"], abs=1e-3)  # rounded to µs
    assert report["bm25"]["floor_ms_p50"] is None and report["bm25"]["floor_ratio"] is None  # no vector search
    assert report["dense"]["floor_ms_p50"] > 0
