"""Issue 26 §4: the graph-half metrics count honestly."""

from __future__ import annotations

from types import SimpleNamespace

from kg_rag.eval.runner import graph_context_metrics


def _context(types: list[str]):
    rows = [f"r{i}" for i in range(len(types))]
    result = SimpleNamespace(
        relations=[SimpleNamespace(relation_id=r, relation_type=t) for r, t in zip(rows, types)], paths=[]
    )
    formatted = SimpleNamespace(relations=rows, paths=[], text="-----Relationships-----\n", tokens=10)
    return result, formatted


def test_typed_share_does_not_count_a_bare_preposition_as_a_type():
    """``Norris Mountain -[THAN]-> Triple Divide Peak`` is no more typed than ``RELATED``."""
    result, formatted = _context(["BORN_IN", "THAN", "IN", "RELATED", "IS_A", "HAS", "OF", "WRITTEN_BY"])
    share = graph_context_metrics(result, formatted, set())["typed_relation_share"]
    assert share == 4 / 8
