"""``kg-rag eval`` and ``kg-rag bench`` (``kg_rag/cli/evaluation.py``): results written, and bad methods, cutoffs and
stores refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kg_rag import Chunk, KnowledgeGraph, build_index, save_index
from kg_rag.cli import main
from kg_rag.demo import DEMO_CORPUS

from ..conftest import REPO, BagOfWordsEmbeddings

PASSAGES = {
    "p0": "The Brandon play was written by Henrik Ibsen.",
    "p1": "Henrik Ibsen was a Norwegian citizen.",
    "p2": "Bergen is a city in Norway with a rainy climate.",
    "p3": "Oslo is the capital of Norway.",
}


QUESTIONS = [
    {
        "id": "2hop__1_2",
        "question": "What country was the author of the Brandon play a citizen of?",
        "answer": "Norway",
        "answer_aliases": ["Norwegian"],
        "paragraphs": [
            {"paragraph_text": PASSAGES["p0"], "is_supporting": True},
            {"paragraph_text": PASSAGES["p1"], "is_supporting": True},
            {"paragraph_text": PASSAGES["p2"], "is_supporting": False},
        ],
    },
    {
        "id": "3hop1__1_2_3",
        "question": "What is the capital of Norway?",
        "answer": "Oslo",
        "answer_aliases": [],
        "paragraphs": [{"paragraph_text": PASSAGES["p3"], "is_supporting": True}],
    },
]


@pytest.fixture
def small_eval(tmp_path):
    kg = KnowledgeGraph()
    for cid, text in PASSAGES.items():
        kg.add_chunk(Chunk(cid, text, cid))
    kg.add_relation("Brandon play", "Henrik Ibsen", "CREATED", chunk_id="p0")
    kg.add_relation("Henrik Ibsen", "Norway", "RELATED", chunk_id="p1", predicate="citizen of")
    kg.add_relation("Bergen", "Norway", "LOCATED_IN", chunk_id="p2")
    kg.add_relation("Oslo", "Norway", "RELATED", chunk_id="p3", predicate="capital of")
    emb = BagOfWordsEmbeddings()
    index = build_index(kg, emb)
    (tmp_path / "q.json").write_text(json.dumps(QUESTIONS))
    save_index(index, tmp_path / "idx")
    return index, emb, tmp_path


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


@pytest.fixture(scope="module")
def demo_idx(tmp_path_factory) -> Path:
    """The demo corpus indexed with fake embeddings (module-wide: copy it before changing it)."""
    idx = tmp_path_factory.mktemp("inputs") / "idx"
    assert main(["index", "--extractions", str(DEMO_CORPUS), "--out", str(idx), "--embeddings", "fake:16", "-q"]) == 0
    return idx


def one_line_error(capsys, argv: list[str], message: str) -> str:
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("kg-rag: error: ") and message in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    return err


# ----------------------------------------------------------------------------- 2. eval's method selection
@pytest.mark.parametrize("methods", ["", ",", " , "])
def test_eval_with_no_method_is_an_error(methods, demo_idx, tmp_path, capsys):
    argv = ["eval", "--questions", str(tmp_path / "q.json"), "--index", str(demo_idx), "--methods", methods]
    one_line_error(capsys, argv, "--methods names no method")


def test_eval_methods_dir_must_exist(demo_idx, tmp_path, capsys):
    q = str(tmp_path / "q.json")
    argv = ["eval", "--questions", q, "--index", str(demo_idx), "--methods-dir", str(tmp_path / "nonexist")]
    one_line_error(capsys, argv, "nonexist: no such folder")
    (tmp_path / "file.json").write_text("{}")
    argv = ["eval", "--questions", q, "--index", str(demo_idx), "--methods-dir", str(tmp_path / "file.json")]
    one_line_error(capsys, argv, "file.json: not a folder")


def test_eval_unknown_method_says_when_there_is_no_methods_folder(demo_idx, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    argv = ["eval", "--questions", "q.json", "--index", str(demo_idx), "--methods", "kg-path"]
    err = one_line_error(capsys, argv, "unknown method(s) kg-path; known: bm25, dense, kg-rag, seed003")
    assert "(no methods/ folder here; pass --methods-dir)" in err
    (tmp_path / "methods").mkdir()
    err = one_line_error(capsys, argv, "unknown method(s) kg-path")
    assert "no methods/ folder" not in err


def test_eval_cutoffs_must_be_positive(demo_idx, tmp_path, capsys):
    for k in (",", "0,5"):
        argv = ["eval", "--questions", str(tmp_path / "q.json"), "--index", str(demo_idx), "--k", k]
        one_line_error(capsys, argv, "--k takes comma-separated integers >= 1")


def test_bench_refuses_pg_without_the_postgres_store(capsys):
    assert main(["bench", "--entities", "10", "--edges", "10", "--pg", "postgresql://localhost/x"]) == 2
    assert "--pg is for --store postgres" in capsys.readouterr().err
