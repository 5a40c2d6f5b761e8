"""What every ``kg-rag`` command shares (``kg_rag/cli/common.py``, ``kg_rag/cli/__init__.py``): one-line errors with
exit status 2 and no traceback, counts and limits checked at parse time by the flag's name, embedding specs."""

from __future__ import annotations

import pytest

from kg_rag.cli import main
from kg_rag.demo import DEMO_CORPUS

from ..cli_support import one_line_error, refused_by_parser, run


@pytest.mark.parametrize(
    "argv, message",
    [
        (["stats", "/nonexistent/idx"], "/nonexistent/idx: no such index directory"),
        (
            ["index", "--openie", "/nonexistent/o.json", "--out", "{tmp}/x", "--embeddings", "fake"],
            "/nonexistent/o.json",
        ),
        (["index", "--out", "{tmp}/x"], "give exactly one input"),
        (
            ["index", "--docs", "{tmp}", "--out", "{tmp}/x", "--extractor", "llm", "--embeddings", "fake"],
            "no chat model configured",
        ),
        (
            ["index", "--extractions", "{tmp}/bad.json", "--out", "{tmp}/x", "--embeddings", "fake"],
            "bad.json: not valid JSON",
        ),
        (
            ["index", "--extractions", str(DEMO_CORPUS), "--out", "{tmp}/x", "--embeddings", "nope"],
            "unknown embeddings",
        ),
        (["delete", "{tmp}/idx", "--doc", "nope", "--embeddings", "fake"], "no such index directory"),
    ],
)
def test_errors_are_one_line_without_traceback(argv, message, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    (tmp_path / "bad.json").write_text("{")
    code, _, err = run(capsys, *[a.replace("{tmp}", str(tmp_path)) for a in argv])
    assert code == 2
    assert err.startswith("kg-rag: error: ") and message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_embeddings_spec_that_is_not_embeddings(demo_idx, capsys):
    argv = ["query", str(demo_idx), "who?", "--embeddings", "json:dumps"]
    one_line_error(capsys, argv, "'json:dumps' is not a LangChain Embeddings")
    one_line_error(capsys, ["query", str(demo_idx), "who?", "--embeddings", "fake:x"], "positive integer DIM")


def test_counts_are_checked_by_the_flag_name(tmp_path, capsys):
    for argv, flag in (
        (["query", str(tmp_path), "who?", "--k", "0"], "--k"),
        (["query", str(tmp_path), "who?", "--max-hops", "-1"], "--max-hops"),
        (["eval", "--questions", "q.json", "--index", str(tmp_path), "--limit", "0"], "--limit"),
        (["stats", str(tmp_path), "--top", "-1"], "--top"),
    ):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        err = capsys.readouterr().err
        assert exc.value.code == 2 and f"argument {flag}: must be at least" in err


# ----------------------------------------------------------------------------- limits at parse time
@pytest.mark.parametrize(
    "argv, flag",
    [
        (["index", "--docs", "d", "--out", "x", "--chunk-size", "0"], "--chunk-size"),
        (["index", "--docs", "d", "--out", "x", "--chunk-overlap", "-1"], "--chunk-overlap"),
        (["index", "--docs", "d", "--out", "x", "--max-concurrency", "0"], "--max-concurrency"),
        (["index", "--docs", "d", "--out", "x", "--wait", "-5"], "--wait"),
        (["delete", "idx", "--doc", "a", "--wait", "-5"], "--wait"),
        (["copy", "a", "b", "--wait", "-5"], "--wait"),
        (["retype", "idx", "--wait", "nan"], "--wait"),
        (["retype", "idx", "--min-support", "0"], "--min-support"),
        (["communities", "idx", "--wait", "-0.5"], "--wait"),
        (["communities", "idx", "--level", "-1"], "--level"),
        (["communities", "idx", "--max-cluster-size", "1"], "--max-cluster-size"),
        (["global", "idx", "q", "--level", "-1"], "--level"),
    ],
)
def test_limits_are_checked_by_the_flag_name(argv, flag, capsys):
    refused_by_parser(capsys, argv, f"argument {flag}: must be")
