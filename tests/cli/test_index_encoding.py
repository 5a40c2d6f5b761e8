"""``kg-rag index --docs``: a file that is not UTF-8 is read with a guessed encoding named per file, or with
``--encoding``; a file that is not read is named once (not again as a warning, not again at the end)."""

from __future__ import annotations

import subprocess
import sys

from kg_rag.cli import main
from kg_rag.store.directory import load_index

CLARA = "Clara Nordström föddes i Karlskrona 1850 och dog i Göteborg."
FAKE = ["--no-extract", "--embeddings", "fake:16", "-q"]


def chunk_texts(idx) -> set[str]:
    return {c.text for c in load_index(idx).kg.chunks.values()}


def test_a_cp1252_file_is_read_right_and_the_guess_is_named(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "clara.txt").write_bytes(CLARA.encode("cp1252"))
    (tmp_path / "docs" / "utf8.txt").write_text("Henrik Ibsen föddes i Skien.", encoding="utf-8")
    assert main(["index", "--docs", "docs", "--out", "idx", *FAKE]) == 0
    out = capsys.readouterr().out
    guessed = "read with a guessed encoding (not UTF-8; --encoding forces one): 1 file: docs/clara.txt (windows-1252)"
    assert guessed in out
    assert "utf8.txt" not in out
    assert chunk_texts(tmp_path / "idx") == {CLARA, "Henrik Ibsen föddes i Skien."}


def test_encoding_forces_one_and_is_checked_first(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    polish = "Zażółć gęślą jaźń, Łódź."
    (tmp_path / "docs" / "pl.txt").write_bytes(polish.encode("cp1250"))
    assert main(["index", "--docs", "docs", "--out", "idx", "--encoding", "cp1250", *FAKE]) == 0
    assert "guessed" not in capsys.readouterr().out
    assert chunk_texts(tmp_path / "idx") == {polish}

    assert main(["index", "--docs", "docs", "--out", "idx2", "--encoding", "klingon", *FAKE]) == 2
    (tmp_path / "c.json").write_text("[]")
    assert main(["index", "--corpus", "c.json", "--out", "idx2", "--encoding", "cp1250"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "kg-rag: error: --encoding: unknown encoding 'klingon' (a Python codec name, such as cp1252 or latin-1)",
        "kg-rag: error: --encoding is for --docs (JSON inputs are UTF-8)",
    ]
    assert not (tmp_path / "idx2").exists()


def test_a_binary_file_is_named_once(tmp_path):
    """The "not read" line names it; no log warning and no end-of-run count repeat it (a real process, so the
    logging configuration is the CLI's own)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Alpha text.")
    (docs / "blob.txt").write_bytes(bytes(range(256)) * 20)
    run = subprocess.run(
        [sys.executable, "-m", "kg_rag.cli", "index", "--docs", "docs", "--out", "idx", *FAKE],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    both = run.stdout + run.stderr
    assert "not read (binary data): 1 file: docs/blob.txt" in run.stdout
    assert both.count("blob.txt") == 1 and "binary_file" not in both
