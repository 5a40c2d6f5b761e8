"""Issue 29: ``kg-rag index --docs DIR --dry-run`` prints the chunks, the chat calls and the estimated tokens for
the chosen model before any call (the test server sees none); failed calls are counted in the usage summary."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kg_rag.cli import main
from kg_rag.demo import write_demo_corpus

INDEX = ("--out", "idx", "--embeddings", "fake:16", "-q", "--llm-retries", "0")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def number(pattern: str, text: str) -> int:
    match = re.search(pattern, text)
    assert match, f"{pattern!r} not in {text!r}"
    return int(match.group(1).replace(" ", ""))


@pytest.fixture
def corpus(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_demo_corpus(tmp_path)  # 12 real documents in docs/
    return tmp_path / "docs"


def test_dry_run_prints_the_estimate_and_calls_nothing(openai_server, corpus, capsys):
    code, out, err = run(capsys, "index", "--docs", "docs", *INDEX, "--dry-run", "--chat-model", "gpt-4o-mini")
    assert code == 0, err
    assert openai_server.requests == [] and not Path("idx").exists()  # no call, nothing written
    assert out.startswith("dry run: nothing is sent to a chat model and nothing is written\n")
    assert "documents: 12 new, 0 changed, 0 unchanged" in out
    assert number(r"chunks to extract: ([\d ]+) \(", out) == 12
    assert "llm calls: 12; at most 12 if every call is retried 0 times" in out
    assert "estimated tokens for gpt-4o-mini:" in out and "tokeniser: tiktoken cl100k_base" in out
    estimated = number(r"for gpt-4o-mini: ([\d ]+) prompt \(counted\)", out)

    code, out, _ = run(capsys, "index", "--docs", "docs", *INDEX)  # the real run: the server counts what it got
    assert code == 0 and len(openai_server.requests) == 12
    spent = openai_server.tokens["prompt_tokens"]
    assert abs(estimated - spent) <= 0.01 * spent, (estimated, spent)  # the prompt is counted, not guessed

    code, out, _ = run(capsys, "index", "--docs", "docs", *INDEX, "--dry-run")
    assert code == 0 and "documents: 0 new, 0 changed, 12 unchanged" in out and "chunks to extract: 0; no chat" in out


def test_gleaning_retries_and_the_index_history_are_in_the_estimate(openai_server, corpus, capsys):
    Path("schema.yaml").write_text("gleaning: 1\n")
    code, out, _ = run(
        capsys, "index", "--docs", "docs", *INDEX, "--dry-run", "--schema", "schema.yaml", "--llm-retries", "2"
    )
    assert code == 0
    assert "llm calls: 24 (1 extraction + 1 gleaning per chunk); at most 72 if every call is retried 2 times" in out
    assert "5 x the chunk's tokens" in out  # no history yet: the documented rate

    (corpus / "doc-01.md").write_text("Directive 2031-01 supersedes Directive 2023-07.\n")
    assert run(capsys, "index", "--docs", "docs", *INDEX)[0] == 0
    (corpus / "doc-01.md").write_text("Directive 2032-01 supersedes Directive 2031-01.\n")
    code, out, _ = run(capsys, "index", "--docs", "docs", *INDEX, "--dry-run")
    assert "documents: 0 new, 1 changed, 11 unchanged" in out and "chunks to extract: 1 (" in out
    completion = openai_server.tokens["completion_tokens"]
    assert (
        f"~{round(completion / 12)} completion (estimate: {round(completion / 12)} per call, the mean of this "
        "index's 12 earlier extraction calls)" in out
    )
    assert len(openai_server.requests) == 12  # only the real run called the model


def test_dry_run_needs_no_chat_model_and_reports_a_refusal(corpus, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code, out, _ = run(capsys, "index", "--docs", "docs", *INDEX, "--no-extract")
    assert code == 0
    (Path("other")).mkdir()
    (Path("other") / "x.md").write_text("Other text.")
    code, out, err = run(capsys, "index", "--docs", "other", *INDEX, "--dry-run", "--extractor", "llm")
    assert "chunks to extract: 1 (" in out  # the estimate is printed first ...
    assert code == 2 and "would delete 12 documents of other sources: docs/doc-01.md" in err  # ... then the refusal
    code, out, err = run(capsys, "index", "--docs", "other", *INDEX, "--dry-run")  # no chat model: the NLP extractor
    assert "chunks to extract: 1 with the NLP extractor; no chat calls" in out and code == 2
    code, out, err = run(capsys, "index", "--docs", "docs", *INDEX, "--no-extract", "--dry-run")
    assert code == 0 and "no chat calls (--no-extract)" in out
    # a chat model named on the command line is the one wanted: its cost is estimated with no key (indexing.md)
    code, out, err = run(capsys, "index", "--docs", "other", *INDEX, "--dry-run", "--chat-model", "gpt-4o-mini")
    assert "llm calls: 1;" in out and "estimated tokens for gpt-4o-mini" in out and code == 2


def test_a_schema_without_a_chat_model_says_which_is_missing(corpus, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("KG_RAG_CHAT_MODEL", raising=False)
    Path("schema.yaml").write_text("entity_types: [PERSON]\n")
    code, _, err = run(capsys, "index", "--docs", "docs", *INDEX, "--schema", "schema.yaml")
    assert code == 2 and err.count("\n") == 1
    assert "--schema is for a chat model, and none is configured: set KG_RAG_CHAT_MODEL or OPENAI_API_KEY" in err


@pytest.mark.parametrize(
    ("extra", "refusal"),
    [
        (("--out", "notes"), "notes: directory is not empty and holds no kg-rag index; refusing to write"),
        (("--out", "idx", "--llm-timeout", "0"), "LLM timeout must be a positive number of seconds, got 0.0"),
    ],
)
def test_dry_run_refuses_before_estimating_what_the_run_refuses_before_any_work(corpus, capsys, extra, refusal):
    Path("notes").mkdir()
    (Path("notes") / "todo.txt").write_text("not an index")
    code, out, err = run(capsys, "index", "--docs", "docs", "--embeddings", "fake:16", "-q", "--dry-run", *extra)
    assert code == 2 and refusal in err and "chunks to extract" not in out
    assert not Path("idx").exists() and sorted(p.name for p in Path("notes").iterdir()) == ["todo.txt"]


def test_dry_run_is_for_docs(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("x.json").write_text('{"format": "kg-rag-extractions", "documents": []}')
    code, _, err = run(capsys, "index", "--extractions", "x.json", "--out", "idx", "--dry-run")
    assert code == 2 and "--dry-run estimates the extraction of --docs" in err


# ---------------------------------------------------------------- failed calls in the usage summary
def test_failed_calls_are_counted_in_the_usage_summary(openai_server, corpus, capsys):
    openai_server.mode = "error"
    code, out, err = run(
        capsys, "index", "--docs", "docs", "--out", "idx", "--embeddings", "fake:16", "-q", "--llm-retries", "1"
    )
    assert code == 1 and len(openai_server.requests) == 24  # 12 chunks, each tried twice
    assert "llm usage: 24 chat calls (24 failed), 0 prompt + 0 completion tokens" in out

    openai_server.mode = "ok"
    real_reply = openai_server.reply
    seen: set[str] = set()

    def flaky(body):  # every chunk's first attempt fails, the retry succeeds
        key = str(body["messages"][-1]["content"])
        if key not in seen:
            seen.add(key)
            raise RuntimeError("boom")
        return real_reply(body)

    openai_server.requests.clear()
    openai_server.reply = flaky
    code, out, _ = run(
        capsys, "index", "--docs", "docs", "--out", "idx", "--embeddings", "fake:16", "-q", "--llm-retries", "1"
    )
    assert code == 0 and len(openai_server.requests) == 24
    tokens = openai_server.tokens
    assert f"llm usage: 24 chat calls (12 failed), {tokens['prompt_tokens']} prompt + " in out
