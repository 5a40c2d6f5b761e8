"""Issue 26 §3: ``kg-rag query`` answers when a chat model is configured — in ``--json`` too — once per question,
and ``--no-answer`` stops it."""

from __future__ import annotations

import json

from kg_rag.cli import main
from kg_rag.demo import DEMO_CORPUS
from kg_rag.store import DirectoryStore

from ..cli_support import run

Q = "Who does Lars Eriksen report to?"


def test_query_json_carries_the_answer_and_no_answer_leaves_it_out(openai_server, demo_index, tmp_path, capsys):
    idx = tmp_path / "idx"
    DirectoryStore(idx).save(demo_index)
    emb = ["--embeddings", "kg_rag.testing:BagOfWordsEmbeddings"]
    assert main(["query", str(idx), Q, "--json", *emb]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["answer"].startswith("According to [1]:") and "-[" in payload["answer"]
    assert payload["citations"] and payload["citations"][0]["chunk_id"] == payload["chunks"][0]["id"]
    assert len(openai_server.requests) == 1  # one answer, from the one retrieval
    assert main(["query", str(idx), Q, "--json", "--no-answer", *emb]) == 0
    assert "answer" not in json.loads(capsys.readouterr().out)
    assert len(openai_server.requests) == 1


def test_query_prints_answer_when_a_chat_model_is_configured(openai_server, tmp_path, capsys):
    idx = str(tmp_path / "idx")
    assert (
        run(
            capsys,
            "index",
            "--extractions",
            str(DEMO_CORPUS),
            "--out",
            idx,
            "--embeddings",
            "tests.conftest:BagOfWordsEmbeddings",
            "-q",
        )[0]
        == 0
    )
    code, out, err = run(
        capsys,
        "query",
        idx,
        "Who does Lars Eriksen report to?",
        "--embeddings",
        "tests.conftest:BagOfWordsEmbeddings",
        "--edge-types",
        "REPORTS_TO",
    )
    assert code == 0 and "answer: According to [1]: " in out
    assert "top chunks" in err and "top chunks" not in out  # stdout is the context and the answer only
    code, out, _ = run(
        capsys,
        "query",
        idx,
        "Who does Lars Eriksen report to?",
        "--embeddings",
        "tests.conftest:BagOfWordsEmbeddings",
        "--no-answer",
        "--json",
    )
    payload = json.loads(out)
    assert code == 0 and payload["chunks"] and "-[REPORTS_TO]->" in payload["context"]


def test_query_without_a_chat_model_says_why_no_answer_follows(demo_index, tmp_path, capsys, monkeypatch):
    """A new user's report: with no API key, ``query`` printed the context and stopped, with no word about the
    answer. It now says why on stderr (stdout stays the context); ``--no-answer`` asks for no such note."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "KG_RAG_CHAT_MODEL"):
        monkeypatch.delenv(name, raising=False)
    idx = tmp_path / "idx"
    DirectoryStore(idx).save(demo_index)
    emb = ["--embeddings", "kg_rag.testing:BagOfWordsEmbeddings"]
    code, out, err = run(capsys, "query", str(idx), Q, *emb)
    assert code == 0 and "-[REPORTS_TO]->" in out and "answer:" not in out
    assert "no answer: no chat model configured: set KG_RAG_CHAT_MODEL" in err and "OPENAI_API_KEY" in err
    assert "no chat model" not in out
    code, out, err = run(capsys, "query", str(idx), Q, "--no-answer", *emb)
    assert code == 0 and "no chat model" not in err
