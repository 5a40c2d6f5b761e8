"""``kg-rag eval`` and ``kg-rag bench`` (``kg_rag/cli/evaluation.py``): results written, and bad methods, cutoffs and
stores refused in one line."""

from __future__ import annotations

import pytest

from kg_rag.cli import main

from ..cli_support import one_line_error


# ----------------------------------------------------------------------------- eval's method selection
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


def test_eval_of_questions_without_gold_says_only_latency_is_measured(demo_idx, tmp_path, capsys):
    """A new user's report: questions with no gold passages and no answer gave '-' in every quality column with
    no word why; the malformed-file error also asked for an 'id' that is optional."""
    import json

    (tmp_path / "q.json").write_text(json.dumps([{"question": "Who does Lars Eriksen report to?"}]))
    argv = ["eval", "--questions", str(tmp_path / "q.json"), "--index", str(demo_idx), "--methods", "dense", "-q"]
    argv += ["--embeddings", "fake:16"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "no question has gold passages ('paragraphs' with 'is_supporting') or an 'answer'" in err
    (tmp_path / "q.json").write_text(json.dumps([{"id": "x"}]))
    one_line_error(capsys, argv, "every question needs a 'question' ('id', 'answer' and 'paragraphs' are optional)")
