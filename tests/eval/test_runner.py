"""The evaluation runner (``kg_rag/eval/runner.py``): every metric reported, graph-connection F1, the graph half,
single-hop steps asked on their own, reachable gold relations."""

from __future__ import annotations

import json

from kg_rag.cli import main
from kg_rag.eval import evaluate, load_musique_questions
from kg_rag.eval.datasets import single_hop_questions
from kg_rag.eval.methods import BUILTIN
from kg_rag.store.memory import LiveBackend

from ..conftest import REPO
from .conftest import PASSAGES


def test_runner_reports_every_metric(small_eval):
    index, emb, tmp = small_eval
    qs = load_musique_questions(tmp / "q.json", index.kg.chunks.values())
    report = evaluate(
        qs, LiveBackend(index, emb), emb, [BUILTIN["dense"], BUILTIN["bm25"], BUILTIN["kg-rag"]], (1, 2), progress=False
    )
    assert report["questions"] == 2
    for name in ("dense", "bm25", "kg-rag"):
        m = report["methods"][name]
        for key in ("recall@1", "recall@2", "answer_in_context@2", "mrr", "latency_ms_p50", "latency_ms_p95"):
            assert key in m
        assert 0.0 <= m["recall@2"] <= 1.0
        assert set(m["by_group"]) == {"2hop", "3hop"}
    assert report["methods"]["kg-rag"]["recall@2"] == 1.0  # the chain follows the Henrik Ibsen bridge
    assert report["methods"]["dense"]["recall@2"] < 1.0


def test_graph_connection_f1_counts_bridges_joining_retrieved_chunks(small_eval):
    from kg_rag.eval.runner import connection_f1

    index, _, _ = small_eval
    kg = index.kg
    mentions = {c: kg.entities_of_chunk(c) for c in kg.chunks}
    texts = {c: chunk.text for c, chunk in kg.chunks.items()}
    known = set(kg.graph.nodes)
    assert connection_f1(mentions, texts, known, ["p0", "p1"], ["Henrik Ibsen"]) == 1.0  # both mention the bridge
    assert connection_f1(mentions, texts, known, ["p0", "p2"], ["Henrik Ibsen"]) == 0.0


def test_an_answer_in_a_relationship_row_counts_as_in_the_graph_half():
    """Answer normalisation deletes punctuation, so the table's "|" must not glue cells into one word."""
    from types import SimpleNamespace

    from kg_rag.eval.runner import graph_context_metrics

    text = (
        "-----Relationships-----\nid|source|target|description|relation_type|weight|rank\n"
        "0|Madonna|Andrew Morton|written by|WRITTEN_BY|1|21\n"
        "-----Entities-----\nid|entity|type|description|rank\n0|Oslo|ENTITY||1.0\n"
        "-----Sources-----\n[1] chunk=c doc=d\n| Bergen is in Norway."
    )
    formatted = SimpleNamespace(relations=["r0"], paths=[], text=text, tokens=40)
    result = SimpleNamespace(relations=[SimpleNamespace(relation_id="r0", relation_type="WRITTEN_BY")], paths=[])
    assert graph_context_metrics(result, formatted, {"r0"}, ["Andrew Morton"])["answer_in_graph_context"] == 1.0
    for elsewhere in ("Oslo", "Bergen"):  # the Entities and Sources sections are not the graph half
        assert graph_context_metrics(result, formatted, {"r0"}, [elsewhere])["answer_in_graph_context"] == 0.0


def test_a_context_without_rows_has_an_empty_graph_half():
    """A context with no paths and no rows opens with its entity table: a figure in an entity's description is not
    an answer written in the graph half."""
    from types import SimpleNamespace

    from kg_rag.eval.runner import graph_context_metrics

    text = (
        "-----Entities-----\nid|entity|type|description|rank\n0|Revenue|ENTITY|$ 7,192 Operating income|1.8\n"
        "-----Sources-----\n[1] chunk=c doc=d\n| Revenue was $ 7,192 million."
    )
    formatted = SimpleNamespace(relations=[], paths=[], text=text, tokens=30)
    result = SimpleNamespace(relations=[], paths=[])
    assert graph_context_metrics(result, formatted, set(), ["7,192"])["answer_in_graph_context"] == 0.0


def test_single_hop_steps_are_asked_on_their_own(small_eval):
    """``--dataset musique-steps``: each step of a decomposition becomes a question with its own gold passage,
    earlier answers written in; knowledge-base steps read as questions; unresolvable and repeated steps go."""
    _, _, tmp = small_eval
    paragraphs = [
        {"idx": 0, "paragraph_text": PASSAGES["p0"], "is_supporting": True},
        {"idx": 1, "paragraph_text": PASSAGES["p1"], "is_supporting": True},
    ]
    steps = [
        {"question": "Brandon play >> author", "answer": "Henrik Ibsen", "paragraph_support_idx": 0},
        {"question": "What country was #1 a citizen of?", "answer": "Norway", "paragraph_support_idx": 1},
        {"question": "What is the capital of #3?", "answer": "Oslo", "paragraph_support_idx": 1},  # no step 3 yet
        {"question": "Who lived in #2?", "answer": "someone", "paragraph_support_idx": 7},  # no such paragraph
    ]
    data = [
        {
            "id": "2hop__a",
            "question": "…",
            "answer": "Norway",
            "paragraphs": paragraphs,
            "question_decomposition": steps,
        },
        {
            "id": "2hop__b",
            "question": "…",
            "answer": "Norway",
            "paragraphs": paragraphs,
            "question_decomposition": steps,
        },
    ]
    derived = single_hop_questions(data)
    assert [(q["id"], q["question"], q["answer"]) for q in derived] == [
        ("1hop__2hop__a__1", "What is the author of Brandon play?", "Henrik Ibsen"),
        ("1hop__2hop__a__2", "What country was Henrik Ibsen a citizen of?", "Norway"),
    ]
    assert [p["paragraph_text"] for p in derived[1]["paragraphs"]] == [PASSAGES["p1"]]
    sharp = [
        {"question": "Which language is Brandon written in?", "answer": "C#", "paragraph_support_idx": 0},
        {"question": "Who created #1?", "answer": "Anders", "paragraph_support_idx": 1},
    ]
    item = {"id": "2hop__c", "paragraphs": paragraphs, "question_decomposition": sharp}
    assert [q["question"] for q in single_hop_questions([item])][1] == "Who created C#?"  # a "#" in an answer
    (tmp / "steps.json").write_text(json.dumps(data))
    out = tmp / "S.json"
    args = ["eval", "--questions", str(tmp / "steps.json"), "--dataset", "musique-steps", "--index", str(tmp / "idx")]
    args += ["--methods", "dense", "--k", "1", "--out", str(out), "--embeddings", "tests.conftest:BagOfWordsEmbeddings"]
    assert main([*args, "-q"]) == 0
    report = json.loads(out.read_text())
    assert report["questions"] == 2 and report["dataset"] == "musique-steps"
    assert set(report["methods"]["dense"]["by_group"]) == {"1hop"}
    assert 0 < report["methods"]["dense"]["mrr"] <= 1  # each step has its one gold passage to find


def test_reachable_gold_relations_are_those_the_returned_passages_state(small_eval):
    """Reachable tells a row selection that misses from passages never found: with one passage returned, only
    that passage's gold relation can reach the context, and recall can never exceed it."""
    index, emb, tmp = small_eval
    qs = load_musique_questions(tmp / "q.json", index.kg.chunks.values())[:1]  # gold: p0 and p1, one relation each
    backend = LiveBackend(index, emb)
    for k, expected in ((1, 0.5), (2, 1.0)):
        m = evaluate(qs, backend, emb, [BUILTIN["kg-rag"]], (k,), progress=False)["methods"]["kg-rag"]
        assert m["gold_relation_reachable"] == expected
        assert m["gold_relation_recall"] <= m["gold_relation_reachable"]
    dense = evaluate(qs, backend, emb, [BUILTIN["dense"]], (2,), progress=False)["methods"]["dense"]
    assert dense["gold_relation_reachable"] is None  # chunk-only methods have no graph half


def test_cli_eval_writes_results(small_eval, capsys):
    _, _, tmp = small_eval
    out = tmp / "R.json"
    code = main(
        [
            "eval",
            "--questions",
            str(tmp / "q.json"),
            "--index",
            str(tmp / "idx"),
            "--methods",
            "dense,bm25,seed003,kg-rag",
            "--k",
            "1,2",
            "--out",
            str(out),
            "--embeddings",
            "tests.conftest:BagOfWordsEmbeddings",
            "--methods-dir",
            str(REPO / "methods"),
            "-q",
        ]
    )
    assert code == 0
    data = json.loads(out.read_text())
    assert data["questions"] == 2 and set(data["methods"]) == {"dense", "bm25", "seed003", "kg-rag"}
    assert "recall@2" in capsys.readouterr().out
    assert main(["eval", "--questions", str(tmp / "q.json"), "--index", str(tmp / "idx"), "--methods", "nope"]) == 2


def test_every_method_is_timed_with_the_text_memos_empty():
    """Methods run one after another on the same questions: each starts with the process-wide text memos
    emptied, so a later method is not timed on what an earlier one worked out. Every such memo in the package
    is listed (the tokenizer's encoding object, the spaCy pipeline and simplemma's lemmatizer are kept: loading them is
    a process's start-up, not a query's)."""
    import functools
    import importlib
    import pkgutil

    import kg_rag
    from kg_rag.eval.runner import TEXT_CACHES, clear_text_caches
    from kg_rag.model.names import canonical_key

    found = set()
    for info in pkgutil.walk_packages(kg_rag.__path__, "kg_rag."):
        if any(part in info.name for part in (".explorer", ".langchain", ".serving", "__main__")):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if isinstance(value, functools._lru_cache_wrapper) and value.__module__ == info.name:
                found.add(f"{info.name}:{name}")
    assert found - set(TEXT_CACHES) == {
        "kg_rag.tokens:get_encoding",
        "kg_rag.ingest.nlp.loading:load_pipeline",
        "kg_rag.model.lemmas:_lemmatizer",
    }
    assert set(TEXT_CACHES) <= found
    canonical_key("Some Name")
    assert canonical_key.cache_info().currsize > 0
    clear_text_caches()
    assert canonical_key.cache_info().currsize == 0
