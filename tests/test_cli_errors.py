"""Issue 11, item 10: inputs that used to crash give one line on stderr and exit 2 (no traceback)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kg_rag.cli import main
from kg_rag.demo import DEMO_CORPUS

DEEP = "[" * 200_000 + "]" * 200_000


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory) -> Path:
    idx = tmp_path_factory.mktemp("cli") / "idx"
    assert main(["index", "--extractions", str(DEMO_CORPUS), "--out", str(idx), "--embeddings", "fake:16", "-q"]) == 0
    return idx


def copy_index(src: Path, dst: Path) -> Path:
    import shutil

    shutil.copytree(src, dst)
    return dst


def one_line_error(capsys, argv: list[str], message: str) -> None:
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("kg-rag: error: ") and message in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_deeply_nested_extractions(tmp_path, capsys):
    (tmp_path / "deep.json").write_text(DEEP)
    argv = ["index", "--extractions", str(tmp_path / "deep.json"), "--out", str(tmp_path / "x"), "--embeddings", "fake"]
    one_line_error(capsys, argv, "deep.json: JSON is nested too deeply")


def test_deeply_nested_pointer_and_manifest(demo_dir, tmp_path, capsys):
    idx = copy_index(demo_dir, tmp_path / "p")
    (idx / "kg-rag-index.json").write_text(DEEP)
    one_line_error(capsys, ["stats", str(idx)], "kg-rag-index.json: JSON is nested too deeply")
    idx = copy_index(demo_dir, tmp_path / "m")
    manifest = next(idx.glob("gen-*")) / "manifest.json"
    manifest.write_text(DEEP)
    one_line_error(capsys, ["query", str(idx), "who?", "--embeddings", "fake:16"], "manifest.json: JSON is nested")


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("files", ["chunks.jsonl"], "no valid file list"),
        ("schema_version", "2", "invalid schema_version"),
        ("stats", [1], "stats must be a JSON object"),
        ("embedding", "x", "embedding must be a JSON object"),
    ],
)
def test_manifest_with_wrong_field_types(demo_dir, tmp_path, capsys, field, value, message):
    idx = copy_index(demo_dir, tmp_path / "idx")
    path = next(idx.glob("gen-*")) / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest[field] = value
    path.write_text(json.dumps(manifest))
    one_line_error(capsys, ["query", str(idx), "who?", "--embeddings", "fake:16"], message)


def test_embeddings_spec_that_is_not_embeddings(demo_dir, capsys):
    argv = ["query", str(demo_dir), "who?", "--embeddings", "json:dumps"]
    one_line_error(capsys, argv, "'json:dumps' is not a LangChain Embeddings")
    one_line_error(capsys, ["query", str(demo_dir), "who?", "--embeddings", "fake:x"], "positive integer DIM")


def test_unknown_preset_is_named(demo_dir, capsys):
    argv = ["query", str(demo_dir), "who?", "--preset", "bogus", "--embeddings", "fake:16"]
    one_line_error(capsys, argv, "unknown preset 'bogus'; choose one of default, seed003")


def test_extractions_that_are_not_a_regular_file(tmp_path, capsys):
    argv = ["index", "--extractions", "/dev/null", "--out", str(tmp_path / "x"), "--embeddings", "fake"]
    one_line_error(capsys, argv, "--extractions /dev/null: not a regular file")
    argv = ["index", "--extractions", str(tmp_path), "--out", str(tmp_path / "x"), "--embeddings", "fake"]
    one_line_error(capsys, argv, "not a regular file")


def test_query_on_an_empty_index_says_so(tmp_path, capsys):
    from langchain_core.embeddings import DeterministicFakeEmbedding

    from kg_rag import EntityBasedKGRAG, KnowledgeGraph

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "empty.txt").write_text("   \n")
    argv = ["index", "--docs", str(tmp_path / "docs"), "--no-extract", "--out", str(tmp_path / "idx")]
    assert main([*argv, "--embeddings", "fake:16", "-q"]) == 2  # no document: nothing to build
    assert "no document could be read from the input (1 items skipped); nothing was written" in capsys.readouterr().err
    # at most the writer's lock file is left (removing a lock file another writer may be waiting on is unsafe),
    # and a later build there is not refused because of it
    assert [p.name for p in (tmp_path / "idx").iterdir()] == [".kg-rag-writer.lock"]
    (tmp_path / "docs" / "one.txt").write_text("One line of text.")
    assert main([*argv, "--embeddings", "fake:16", "-q"]) == 0
    assert main(["delete", str(tmp_path / "idx"), "--doc", "docs/one.txt"]) == 0  # every document deleted: empty index
    capsys.readouterr()
    code = main(["query", str(tmp_path / "idx"), "who?", "--embeddings", "fake:16"])
    out, err = capsys.readouterr()
    assert code == 0 and "warning: the index has no chunks" in err and "Traceback" not in err
    retriever = EntityBasedKGRAG.from_graph(KnowledgeGraph(), DeterministicFakeEmbedding(size=16))
    assert retriever.invoke("who?") == []


def test_stats_into_a_closed_pipe_is_quiet(tmp_path):
    """More output than a pipe buffers (4 000 relation types), read by ``head -1``."""
    rels = [{"source": f"A{i}", "target": f"B{i}", "type": f"TYPE_NUMBER_{i:05d}"} for i in range(4000)]
    text = " ".join(f"A{i} relates to B{i}." for i in range(4000))
    docs = [{"id": "d", "text": text, "extraction": {"relations": rels}}]
    (tmp_path / "x.json").write_text(json.dumps({"documents": docs}))
    idx = tmp_path / "idx"
    assert main(["index", "--extractions", str(tmp_path / "x.json"), "--out", str(idx), "--embeddings", "fake:8"]) == 0
    proc = subprocess.run(
        f"{sys.executable} -m kg_rag.cli stats {idx} --types | head -1",
        shell=True,
        capture_output=True,
        text=True,
    )
    assert proc.stdout.startswith("chunks")
    assert proc.stderr == ""
    assert (
        len(
            subprocess.run(
                [sys.executable, "-m", "kg_rag.cli", "stats", str(idx), "--types"], capture_output=True
            ).stdout
        )
        > 1 << 17
    )


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


def test_a_rebuild_from_input_that_yields_nothing_leaves_the_index_alone(tmp_path, capsys):
    docs, bad = tmp_path / "docs", tmp_path / "bad"
    docs.mkdir()
    bad.mkdir()
    for i in range(3):
        (docs / f"d{i}.txt").write_text(f"Document number {i} about Oslo.")
    (bad / "blob.txt").write_bytes(b"\x00\x01\x02" * 100)
    idx = str(tmp_path / "idx")
    assert main(["index", "--docs", str(docs), "--no-extract", "--embeddings", "fake:16", "--out", idx, "-q"]) == 0
    capsys.readouterr()
    assert main(["index", "--docs", str(bad), "--no-extract", "--out", idx, "-q"]) == 2
    assert f"(1 items skipped); {idx} was not changed" in capsys.readouterr().err
    assert main(["stats", idx, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["documents"] == 3


def test_index_reports_this_runs_skips_and_repairs_unstorable_text(tmp_path, capsys):
    """Skip counts printed by ``index`` are this run's; an undecodable file name and control characters or
    lone surrogates in the input are repaired, not fatal after all the work is done."""
    import os

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Alpha text.")
    (docs / "blob.txt").write_bytes(b"\x00\x01\x02" * 100)
    for name, data in (
        (b"caf\xe9.txt", b"Cafe text."),
        (b"caf\xe8.txt", b"Other text."),
        (b"bin\xe9.txt", b"\x00" * 50),
    ):
        with open(os.path.join(os.fsencode(docs), name), "wb") as fh:  # Latin-1 names on a UTF-8 system
            fh.write(data)
    idx = str(tmp_path / "idx")
    argv = ["index", "--docs", str(docs), "--no-extract", "--embeddings", "fake:16", "--out", idx]
    assert main(argv) == 0
    assert "not read (binary data): 2 files" in capsys.readouterr().out  # one of them under an undecodable name
    assert main([*argv[:-4], "--out", idx, "--update"]) == 0
    assert "not read (binary data): 2 files" in capsys.readouterr().out  # not 4: the first run's are not repeated
    assert main(["stats", idx, "--docs"]) == 0
    listed = capsys.readouterr().out
    assert "docs/caf\\xe9.txt" in listed and "docs/caf\\xe8.txt" in listed  # bytes as escapes: ids stay apart
    oie = {
        "docs": [
            {"idx": 0, "passage": "Ali\x00ce met B\ud800ob.", "extracted_triples": [["Ali\x00ce", "met", "B\ud800ob"]]}
        ]
    }
    (tmp_path / "oie.json").write_text(json.dumps(oie))
    assert (
        main(
            [
                "index",
                "--openie",
                str(tmp_path / "oie.json"),
                "--embeddings",
                "fake:16",
                "--out",
                str(tmp_path / "o"),
                "-q",
            ]
        )
        == 0
    )
    assert main(["query", str(tmp_path / "o"), "Alice", "--no-answer"]) == 0
    out = capsys.readouterr().out
    assert "Ali ce" in out and "B\ufffdob" in out  # a control character reads as a space, as keys always did


def test_edge_type_spellings_and_an_empty_allow_list(tmp_path, capsys, bow_embeddings, demo_index):
    from kg_rag import EntityBasedKGRAG

    r = EntityBasedKGRAG(index=demo_index, embeddings=bow_embeddings)
    result = r.retrieve("Who does Lars Eriksen report to?", edge_types=["reports to"])
    assert not result.warnings and {x.relation_type for x in result.relations} == {"REPORTS_TO"}
    result = r.retrieve("Who does Lars Eriksen report to?", edge_types=[])
    assert "edge_types is empty: no relation may be walked or shown" in result.warnings and not result.relations
    assert main(["query", str(tmp_path), "who?", "--edge-types", ","]) == 2
    assert "--edge-types names no relation type" in capsys.readouterr().err


def test_a_query_that_retrieves_nothing_says_why(bow_embeddings, demo_index):
    from kg_rag import EntityBasedKGRAG

    r = EntityBasedKGRAG(index=demo_index, embeddings=bow_embeddings, preset="seed003")
    result = r.retrieve("zebra quantum marmalade")
    assert not result.chunks
    (warning,) = result.warnings  # issue 26: the threshold and the closest entity, not a bare "nothing matched"
    assert warning.startswith("no chunk was retrieved for this query: no entity is at least 0.7 similar to it")


def test_a_folder_that_is_not_an_index_is_refused_before_any_work(tmp_path, capsys):
    docs, target = tmp_path / "docs", tmp_path / "mine"
    docs.mkdir()
    target.mkdir()
    (docs / "a.txt").write_text("Alpha text.")
    (target / "notes.txt").write_text("my own file")
    argv = ["index", "--docs", str(docs), "--no-extract", "--embeddings", "fake:16", "--out", str(target), "-q"]
    assert main(argv) == 2
    assert "holds no kg-rag index; refusing to write" in capsys.readouterr().err
    assert sorted(p.name for p in target.iterdir()) == ["notes.txt"]  # no lock file left behind
