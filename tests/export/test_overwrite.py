"""``kg-rag export`` never overwrites silently: an existing file, or a folder that is not empty, is refused in one
line unless ``--force``; the library refuses it unless ``overwrite=True``."""

from __future__ import annotations

import pytest

from kg_rag.cli import main
from kg_rag.export import export_graph


@pytest.fixture
def idx(demo_index, tmp_path):
    from kg_rag import save_index

    save_index(demo_index, tmp_path / "idx")
    return str(tmp_path / "idx")


def test_an_existing_file_is_refused_unless_force(idx, tmp_path, capsys):
    out = tmp_path / "exp-jsonl"
    assert main(["export", idx, "--format", "jsonl", "--out", str(out)]) == 0
    before = out.read_bytes()
    assert main(["export", idx, "--format", "graphml", "--out", str(out)]) == 2
    assert out.read_bytes() == before  # untouched
    assert capsys.readouterr().err.strip() == f"kg-rag: error: {out}: the file exists; use --force to overwrite it"
    assert main(["export", idx, "--format", "graphml", "--out", str(out), "--force"]) == 0
    assert out.read_bytes().startswith(b"<?xml")


def test_a_folder_that_is_not_empty_is_refused_unless_force(idx, tmp_path, capsys):
    folder = tmp_path / "dir"
    folder.mkdir()
    (folder / "mine.txt").write_text("keep me")
    assert main(["export", idx, "--format", "neo4j", "--out", str(folder)]) == 2
    assert sorted(p.name for p in folder.iterdir()) == ["mine.txt"]
    err = capsys.readouterr().err.strip()
    assert err == f"kg-rag: error: {folder}: the folder is not empty; use --force to overwrite it"
    assert main(["export", idx, "--format", "neo4j", "--out", str(tmp_path / "empty")]) == 0  # a new folder is fine
    (tmp_path / "bare").mkdir()
    assert main(["export", idx, "--format", "neo4j", "--out", str(tmp_path / "bare")]) == 0  # so is an empty one

    # --force writes the export's own files and leaves the rest; a type file of an earlier export does not linger
    stale = folder / "relations_by_type" / "0099_GONE.csv"
    stale.parent.mkdir()
    stale.write_text("old")
    assert main(["export", idx, "--format", "neo4j", "--out", str(folder), "--force"]) == 0
    assert (folder / "mine.txt").read_text() == "keep me" and not stale.exists()
    assert {"entities.csv", "relations.csv", "load.cypher", "import.sh"} <= {p.name for p in folder.iterdir()}


def test_the_library_refuses_unless_overwrite(demo_index, tmp_path):
    out = tmp_path / "g.jsonl"
    export_graph(demo_index.kg, "jsonl", out)
    with pytest.raises(FileExistsError, match="overwrite=True"):
        export_graph(demo_index.kg, "jsonl", out)
    assert export_graph(demo_index.kg, "jsonl", out, overwrite=True)["relations"] == 28
