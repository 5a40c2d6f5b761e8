"""Golden pins: for each strategy on fixed graphs, the ranked chunk ids and scores, entities, paths, relationship
rows and context are checked in (``tests/query/golden/pins.json``). A refactor keeps them; a change of method
rewrites them, and its commit says why each one changed.

Rewrite after an intended change: ``python -m tests.query.test_golden`` (from the repository root).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

PINS = Path(__file__).parent / "golden" / "pins.json"
DEMO_QUESTIONS = (
    "Which directive replaced Directive 2019-03?",
    "Who does Lars Eriksen ultimately report to?",
    "What caused the freeze on new storage buckets, and what did the freeze block?",
    "Which regulation did Statute 2021 revoke, and which policy had implemented it?",
    "Who owns Project Atlas and where is it located?",
)
DEMO_CASES: dict[str, dict[str, Any]] = {
    "chain": {},
    "frequency": {"strategy": "frequency"},
    "path": {"strategy": "path"},
    "ppr": {"strategy": "ppr"},
    "chain-filtered": {
        "edge_types": ["REPORTS_TO", "MANAGES", "SUPERSEDES"],
        "exclude_entities": ["Priya Nair"],
        "direction": "out",
        "max_hops": 1,
        "k": 3,
        "max_context_tokens": 600,
    },
    "ppr-in": {"strategy": "ppr", "direction": "in", "exclude_edge_types": ["OWNS"]},
}
SYNTHETIC_STRATEGIES = ("chain", "frequency", "path", "ppr")


class _VectorsOnly:
    def embed_query(self, text: str) -> list[float]:
        raise RuntimeError("vectors only")

    embed_documents = embed_query


def _record(result: Any, full_context: bool) -> dict[str, Any]:
    from kg_rag.context import render_path

    out = {
        "chunks": [[c.id, round(c.score, 6), round(c.graph_score, 6), round(c.dense_score, 6)] for c in result.chunks],
        "entities": [e.key for e in result.entities],
        "paths": [render_path(result.names, p) for p in result.paths],
        "relations": [r.relation_id for r in result.relations],
        "warnings": list(result.warnings),
    }
    if full_context:
        out["context"] = result.context
    else:
        out["context_sha256"] = hashlib.sha256(result.context.encode()).hexdigest()
    return out


def snapshot() -> dict[str, Any]:
    """What the pins hold, computed now."""
    from kg_rag import EntityBasedKGRAG, get_preset
    from kg_rag.context import format_context
    from kg_rag.demo import demo_graph
    from kg_rag.eval.bench import synthetic_index
    from kg_rag.query.engine import QueryEngine
    from kg_rag.query.params import QueryParams
    from kg_rag.testing import BagOfWordsEmbeddings

    pins: dict[str, Any] = {"demo": {}, "synthetic": {}}
    retriever = EntityBasedKGRAG.from_graph(demo_graph(), BagOfWordsEmbeddings())
    for name, settings in {**DEMO_CASES, "seed003": None}.items():
        runs = []
        for q in DEMO_QUESTIONS:
            if settings is None:
                result = retriever.retrieve(q, **{k: v for k, v in get_preset("seed003").to_dict().items()})
            else:
                result = retriever.retrieve(q, **settings)
            runs.append(_record(result, full_context=True))
        pins["demo"][name] = runs
    s = synthetic_index(400, 3000, dim=32, n_queries=12, seed=7)
    engine = QueryEngine.for_index(s.index, _VectorsOnly(), QueryParams())
    for strategy in SYNTHETIC_STRATEGIES:
        p = QueryParams(strategy=strategy, max_context_tokens=1500)
        runs = []
        for q, text in zip(s.queries, s.query_texts):
            result = engine.retrieve_by_vector(q, text, p)
            if not result.context:
                formatted = format_context(result, p)
                result.context = formatted.text
            runs.append(_record(result, full_context=False))
        pins["synthetic"][strategy] = runs
    return pins


def _diff(expected: Any, got: Any, where: str = "") -> list[str]:
    if isinstance(expected, dict) and isinstance(got, dict):
        out = []
        for k in sorted(set(expected) | set(got)):
            out += _diff(expected.get(k), got.get(k), f"{where}.{k}")
        return out
    if isinstance(expected, list) and isinstance(got, list) and len(expected) == len(got):
        return [d for i, (a, b) in enumerate(zip(expected, got)) for d in _diff(a, b, f"{where}[{i}]")]
    if isinstance(expected, float) and isinstance(got, float):
        return [] if abs(expected - got) <= 1e-5 * max(1.0, abs(expected)) else [f"{where}: {expected} != {got}"]
    return [] if expected == got else [f"{where}: {str(expected)[:300]!r} != {str(got)[:300]!r}"]


def test_results_match_the_golden_pins():
    expected = json.loads(PINS.read_text())
    problems = _diff(expected, snapshot())
    assert not problems, f"{len(problems)} differences from the golden pins, first: " + "\n".join(problems[:8])


if __name__ == "__main__":
    PINS.write_text(json.dumps(snapshot(), indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {PINS}")
