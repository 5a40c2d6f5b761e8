"""The chain metrics (``kg_rag/eval/chain.py``): does the graph half show the chain that answers? Issue 43 §2."""

from __future__ import annotations

import math
from types import SimpleNamespace

from kg_rag.eval import evaluate, load_musique_questions
from kg_rag.eval.chain import Hop, chain_metrics, question_hops, stands_for, writes
from kg_rag.eval.methods import BUILTIN
from kg_rag.model.results import GraphPath, PathStep
from kg_rag.store.memory import LiveBackend

DECOMPOSED = {
    "id": "3hop1__1_2_3",
    "question": "Who was in charge of the country where the composer of Aschenbrodel was a citizen?",
    "answer": "Karl Renner",
    "answer_aliases": ["Renner"],
    "question_decomposition": [
        {"question": "Aschenbrödel >> composer", "answer": "Johann Strauss II"},
        {"question": "#1 >> country of citizenship", "answer": "Austria"},
        {"question": "Who was in charge of #2 ?", "answer": "Karl Renner"},
    ],
}


def test_a_decomposition_is_read_as_hops_from_subject_through_each_bridge_to_the_answer():
    hops = question_hops(DECOMPOSED)
    assert [h.sources for h in hops] == [("Aschenbrödel",), ("Johann Strauss II",), ("Austria",)]
    assert [h.targets for h in hops] == [("Johann Strauss II",), ("Austria",), ("Karl Renner", "Renner")]
    worded = question_hops(
        {
            "answer": "Tulsa",
            "question_decomposition": [{"question": "Where is the Philbrook Museum?", "answer": "Tulsa"}],
        }
    )
    assert worded == [Hop((), ("Tulsa",), "Where is the Philbrook Museum?")]  # it names what it starts from
    branched = question_hops(
        {
            "answer": "UK",
            "question_decomposition": [
                {"question": "Mount Sulivan >> country", "answer": "Falkland Islands"},
                {"question": "where was the conference held", "answer": "London"},
                {"question": "Representative of #1 , #2 >> country", "answer": "UK"},
            ],
        }
    )
    assert branched[2].sources == ("Falkland Islands", "London")
    assert question_hops({"question_decomposition": [{"question": "#2 >> x", "answer": "y"}]}) == []


def test_an_entity_stands_for_a_chain_element_as_named_or_written_in_its_name():
    assert stands_for("Nashville, Tennessee", ["Tennessee"])
    assert stands_for("London", ["in London"])  # an answer written with its preposition
    assert stands_for("Johnnycake", ["Johnnycake, West Virginia"])  # an encyclopedia title's name
    assert stands_for("Barry Jarvis Wesson", ["Barry Wesson"])  # the words in order, a middle name between
    assert not stands_for("Tennessee Williams", ["Kansas"])
    assert not stands_for("us", ["US"])  # a short code counts only as written in capitals


def _context(rows, paths=(), names=None):
    relations = [SimpleNamespace(relation_id=rid, source=a, target=b) for a, b, rid in rows]
    result = SimpleNamespace(relations=relations, paths=list(paths), names=names or {})
    formatted = SimpleNamespace(relations=[rid for _, _, rid in rows], paths=list(range(len(paths))))
    return result, formatted


def test_chain_coverage_counts_hops_joined_by_a_row_a_path_step_or_two_of_them():
    hops = question_hops(DECOMPOSED)
    rows = [
        ("Aschenbrödel", "Johann Strauss II", "r1"),  # hop 1, one row
        ("Johann Strauss II", "Vienna", "r2"),  # hop 2, two rows through Vienna
        ("Vienna", "Austria", "r3"),
        ("Aschenbrödel", "ballet", "r4"),  # about the question's entity, on no hop
    ]
    result, formatted = _context(rows)
    m = chain_metrics(hops, result, formatted, stated=[])
    assert m["chain_coverage"] == 2 / 3 and m["chain_complete"] == 0.0
    assert m["chain_rows"] == 1 / 4  # only r1 joins a hop's two ends by itself
    assert m["chain_reachable"] == 2 / 3
    path = GraphPath("austria", [PathStep("r5", "karl renner", "austria", "PRESIDENT_OF", False)])
    result, formatted = _context(rows, [path], {"austria": "Austria", "karl renner": "Karl Renner"})
    m = chain_metrics(hops, result, formatted, stated=[])
    assert m["chain_coverage"] == 1.0 and m["chain_complete"] == 1.0
    assert m["chain_shown"] == 2 / 5  # r1 and the path's step, of five relations shown
    reach = chain_metrics(hops, *_context(rows[:1]), stated=[("Austria", "Karl Renner", "r9")])
    assert reach["chain_coverage"] == 1 / 3 and reach["chain_reachable"] == 2 / 3  # the returned passages state it
    assert all(math.isnan(v) for v in chain_metrics([], result, formatted).values())


def test_the_runner_reports_the_chain_metrics_of_graph_methods(small_eval):
    index, emb, tmp = small_eval
    data = [dict(q) for q in __import__("json").loads((tmp / "q.json").read_text())]
    data[0]["question_decomposition"] = [
        {"question": "Brandon play >> author", "answer": "Henrik Ibsen"},
        {"question": "What country was #1 a citizen of?", "answer": "Norway"},
    ]
    qs = load_musique_questions(data, index.kg.chunks.values())
    assert [h.targets for h in qs[0].hops] == [("Henrik Ibsen",), ("Norway", "Norwegian")]
    report = evaluate(qs, LiveBackend(index, emb), emb, [BUILTIN["dense"], BUILTIN["kg-rag"]], (2,), progress=False)
    kg, dense = report["methods"]["kg-rag"], report["methods"]["dense"]
    assert kg["chain_coverage"] == 1.0 and kg["chain_reachable"] == 1.0  # both hops are rows of the context
    assert kg["chain_rows"] > 0
    assert dense["chain_coverage"] is None  # a chunk-only method shows no graph half


def test_a_passage_writes_a_chain_element_by_the_same_rule():
    """``writes`` (where a hop's ends are written, evaluation/chain_misses.py) reads a passage as ``stands_for`` reads
    a name: whole words, a leading preposition and an encyclopedia qualifier dropped."""
    text = "Henry Worrall died in Topeka, Kansas, in 1902."
    assert writes(text, ["Kansas"]) and writes(text, ["in Topeka"]) and writes(text, ["Topeka, Kansas"])
    assert not writes(text, ["Kan"]) and not writes(text, ["Wichita"]) and not writes(text, [])
