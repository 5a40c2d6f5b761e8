"""The benchmark command runs end to end on a tiny graph and reports every promised field."""

from __future__ import annotations

import json

import numpy as np

from kg_rag.cli import main
from kg_rag.eval.bench import Seed003Reference, synthetic_index
from kg_rag.query.engine import QueryEngine
from kg_rag.query.params import get_preset


def test_bench_json_has_every_field(capsys):
    assert main(["bench", "--entities", "300", "--edges", "2000", "--queries", "5", "--dim", "16", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    for key in (
        "entities",
        "edges",
        "latency_ms_p50",
        "latency_ms_p95",
        "seed003_latency_ms_p50",
        "speedup_vs_seed003",
        "build_s",
        "load_s",
        "peak_rss_mb",
    ):
        assert key in result, key
    assert result["entities"] == 300 and result["edges"] == 2000 and result["peak_rss_mb"] > 0


def test_synthetic_graph_shape_is_power_law_and_typed():
    s = synthetic_index(2000, 20000, dim=8, n_queries=3)
    kg = s.index.kg
    degrees = np.array([d for _, d in kg.graph.degree()])
    assert degrees.max() > 20 * np.median(degrees)  # hubs exist
    assert len(kg.stats()["relation_types"]) >= 30
    mentions = np.array([len(e.chunk_ids) for e in kg.entities()])
    assert mentions.mean() > 2 and (mentions >= 1).all()


def test_seed003_reference_and_kg_rag_preset_agree_on_matched_entities():
    """The faithful reimplementation and kg-rag's seed003 preset pick chunks by the same rule."""
    s = synthetic_index(500, 3000, dim=16, n_queries=5, seed=3)
    ref = Seed003Reference(s.index)

    class _V:
        def embed_query(self, t):
            raise RuntimeError

        embed_documents = embed_query

    params = get_preset("seed003")
    engine = QueryEngine.for_index(s.index, _V(), params)
    for q, text in zip(s.queries, s.query_texts):
        ours = [c.id for c in engine.retrieve_by_vector(q, text, params).chunks]
        assert set(ours) == set(ref.retrieve(q))


def test_bench_sizes_prints_a_table_and_writes_files(tmp_path, capsys):
    code = main(["bench", "--sizes", "200:1000,300:1500", "--queries", "3", "--dim", "8", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0 and out.count("\n| 2") + out.count("\n| 3") == 2 and "speed-up" in out
    assert sorted(p.name for p in tmp_path.glob("bench-*.json")) == ["bench-200-1000.json", "bench-300-1500.json"]
    assert main(["bench", "--sizes", "nonsense"]) == 2
