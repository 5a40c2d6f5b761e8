"""Issue 29, §2: ``kg-rag demo`` without ``--out`` leaves no temporary folder behind, also when it fails."""

from __future__ import annotations

import tempfile

import pytest

from kg_rag.cli import main

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
