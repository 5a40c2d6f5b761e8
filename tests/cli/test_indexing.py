"""``kg-rag index``, ``stats``, ``delete`` and ``retype`` (``kg_rag/cli/indexing.py``): builds and updates, damaged or
foreign folders and bad inputs refused in one line, nothing lost when a run fails."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kg_rag.cli import main
from kg_rag.demo import DEMO_CORPUS

from ..cli_support import one_line_error, run
from ..conftest import require_musique
from ..ingest.test_openie import ALPHA_CORPUS, ALPHA_OPENIE

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


DEEP = "[" * 200_000 + "]" * 200_000


def test_deeply_nested_extractions(tmp_path, capsys):
    (tmp_path / "deep.json").write_text(DEEP)
    argv = ["index", "--extractions", str(tmp_path / "deep.json"), "--out", str(tmp_path / "x"), "--embeddings", "fake"]
    one_line_error(capsys, argv, "deep.json: JSON is nested too deeply")


def test_extractions_that_are_not_a_regular_file(tmp_path, capsys):
    argv = ["index", "--extractions", "/dev/null", "--out", str(tmp_path / "x"), "--embeddings", "fake"]
    one_line_error(capsys, argv, "--extractions /dev/null: not a regular file")
    argv = ["index", "--extractions", str(tmp_path), "--out", str(tmp_path / "x"), "--embeddings", "fake"]
    one_line_error(capsys, argv, "not a regular file")


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
    assert f"(1 item skipped); {idx} was not changed" in capsys.readouterr().err
    assert main(["stats", idx, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["documents"] == 3


def test_index_reports_this_runs_skips_and_repairs_unstorable_text(tmp_path, capsys):
    """Skip counts printed by ``index`` are this run's; an undecodable file name and control characters or
    lone surrogates in the input are repaired, not fatal after all the work is done."""

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


def entities_file(idx: Path) -> Path:
    return next(idx.glob("gen-*")) / "entities.jsonl"


# ----------------------------------------------------------------------------- stats verifies
def test_stats_reports_a_truncated_index(demo_idx, tmp_path, capsys):
    idx = shutil.copytree(demo_idx, tmp_path / "idx")
    assert main(["stats", str(idx)]) == 0
    capsys.readouterr()
    with entities_file(idx).open("r+b") as f:
        f.truncate(100)
    for argv in (["stats", str(idx)], ["stats", str(idx), "--json"], ["stats", str(idx), "--no-verify"]):
        one_line_error(capsys, argv, "entities.jsonl: size differs from the manifest (truncated or modified)")


def test_stats_checks_sha256_unless_no_verify(demo_idx, tmp_path, capsys):
    idx = shutil.copytree(demo_idx, tmp_path / "idx")
    path = entities_file(idx)
    data = bytearray(path.read_bytes())
    data[5] ^= 1  # same size, different content
    path.write_bytes(bytes(data))
    one_line_error(capsys, ["stats", str(idx)], "entities.jsonl: sha256 differs from the manifest")
    assert main(["stats", str(idx), "--no-verify", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["documents"] > 0


def test_chunk_overlap_is_checked_before_documents_load(tmp_path, capsys):
    """The documents folder does not exist: an error about the overlap proves nothing was loaded first."""
    argv = ["index", "--docs", str(tmp_path / "nonexist"), "--no-extract", "--out", str(tmp_path / "x")]
    one_line_error(capsys, [*argv, "--chunk-size", "10"], "--chunk-overlap must be smaller than --chunk-size")
    assert not (tmp_path / "x").exists()


# ----------------------------------------------------------------------------- small things
def test_stats_typed_share_is_computed_from_the_counts_once(tmp_path, capsys):
    """14 typed of 17: 82.35...%, shown 82.4% (rounding to 4 places first gave 82.3%)."""
    docs = [
        {
            "id": f"d{i}",
            "title": f"D{i}",
            "text": f"A{i} and B{i}.",
            "extraction": {
                "entities": [{"name": f"A{i}", "type": "THING"}, {"name": f"B{i}", "type": "THING"}],
                "relations": [{"source": f"A{i}", "type": "RELATED" if i < 3 else "SUPERSEDES", "target": f"B{i}"}],
            },
        }
        for i in range(17)
    ]
    (tmp_path / "ex.json").write_text(json.dumps({"format": "kg-rag-extractions", "version": 1, "documents": docs}))
    idx = str(tmp_path / "idx")
    assert main(["index", "--extractions", str(tmp_path / "ex.json"), "--out", idx, "--embeddings", "fake:8"]) == 0
    capsys.readouterr()
    assert main(["stats", idx]) == 0
    assert "typed_share          82.4% (not RELATED or a bare preposition)" in capsys.readouterr().out


def test_stats_of_a_file_or_an_empty_path(tmp_path, capsys, monkeypatch):
    (tmp_path / "file.json").write_text("{}")
    one_line_error(capsys, ["stats", str(tmp_path / "file.json")], "file.json: not a directory")
    monkeypatch.chdir(tmp_path)
    one_line_error(capsys, ["stats", ""], "the index path is empty")
    one_line_error(capsys, ["stats", " "], "the index path is empty")


def test_stats_docs_json_shows_passage_titles(tmp_path, capsys):
    (tmp_path / "o.json").write_text(json.dumps(ALPHA_OPENIE))
    (tmp_path / "c.json").write_text(json.dumps(ALPHA_CORPUS))
    idx = str(tmp_path / "idx")
    argv = ["index", "--openie", str(tmp_path / "o.json"), "--corpus", str(tmp_path / "c.json"), "--out", idx]
    assert main([*argv, "--embeddings", "fake:8", "-q"]) == 0
    capsys.readouterr()
    assert main(["stats", idx, "--docs", "--json"]) == 0
    docs = json.loads(capsys.readouterr().out)
    assert [(d["id"], d["title"]) for d in docs] == [("passage-00000", "Alpha")]


def test_stats_docs_json_of_an_older_index_takes_titles_from_its_chunks(tmp_path, capsys):
    """Indexes built before OpenIE import recorded titles on documents keep them only in chunk metadata."""
    from kg_rag import KnowledgeGraph, build_index
    from kg_rag.model.records import Chunk
    from kg_rag.store import DirectoryStore
    from kg_rag.testing import BagOfWordsEmbeddings

    kg = KnowledgeGraph()
    kg.add_chunk(Chunk("passage-00000", "Alpha supersedes Beta.", "passage-00000", {"title": "Alpha"}))
    DirectoryStore(tmp_path / "idx").save(build_index(kg, BagOfWordsEmbeddings()))
    assert main(["stats", str(tmp_path / "idx"), "--docs", "--json"]) == 0
    assert [(d["id"], d["title"]) for d in json.loads(capsys.readouterr().out)] == [("passage-00000", "Alpha")]


# ----------------------------------------------------------------------------- mismatched corpus, failed runs
def test_openie_that_matches_no_corpus_passage_is_an_error(tmp_path, capsys):
    (tmp_path / "o.json").write_text(json.dumps(ALPHA_OPENIE))
    (tmp_path / "c.json").write_text(json.dumps([{"title": "Other", "text": "Something else entirely."}]))
    out = tmp_path / "idx"
    argv = ["index", "--openie", str(tmp_path / "o.json"), "--corpus", str(tmp_path / "c.json"), "--out", str(out)]
    one_line_error(capsys, [*argv, "--embeddings", "fake:8", "-q"], "o.json: none of its passages is in the corpus")
    assert not out.exists()


@pytest.mark.parametrize(
    "inputs, message",
    [
        (["--extractions", "{tmp}/bad.json"], "bad.json: not valid JSON"),
        (["--extractions", "{tmp}/list.json"], 'list.json: expected {"documents": [...]}'),
        (["--openie", "{tmp}/bad.json", "--corpus", "{tmp}/c.json"], "bad.json: not valid JSON"),
        (["--openie", "{tmp}/o.json", "--corpus", "{tmp}/bad.json"], "bad.json: not valid JSON"),
        (["--openie", "{tmp}/list.json"], 'list.json: expected {"docs": [...]}'),
        (["--corpus", "{tmp}/o.json"], "o.json: expected a list of {title, text} passages"),
        (["--docs", "{tmp}/nonexist", "--no-extract"], "--docs {tmp}/nonexist: no such file or folder"),
    ],
)
def test_a_bad_input_fails_before_the_out_folder_is_created(inputs, message, tmp_path, capsys):
    (tmp_path / "bad.json").write_text("{")
    (tmp_path / "list.json").write_text("[]")
    (tmp_path / "o.json").write_text(json.dumps(ALPHA_OPENIE))
    (tmp_path / "c.json").write_text(json.dumps(ALPHA_CORPUS))
    out = tmp_path / "new" / "deeper" / "idx"
    argv = ["index", *(a.replace("{tmp}", str(tmp_path)) for a in inputs), "--out", str(out), "--embeddings", "fake:8"]
    one_line_error(capsys, argv, message.replace("{tmp}", str(tmp_path)))
    assert not (tmp_path / "new").exists()


def test_a_failed_index_run_keeps_what_was_there(tmp_path, demo_idx, capsys):
    (tmp_path / "bad.json").write_text("{")
    bad = ["index", "--extractions", str(tmp_path / "bad.json"), "--embeddings", "fake:16", "-q"]
    (tmp_path / "empty").mkdir()
    one_line_error(capsys, [*bad, "--out", str(tmp_path / "empty")], "bad.json: not valid JSON")
    assert (tmp_path / "empty").is_dir() and not any((tmp_path / "empty").iterdir())
    idx = shutil.copytree(demo_idx, tmp_path / "idx")
    one_line_error(capsys, [*bad, "--out", str(idx), "--update"], "bad.json: not valid JSON")
    assert main(["stats", str(idx), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["documents"] > 0


def test_stats_lists_types_or_documents_not_both(demo_idx, capsys):
    """``--types --docs`` printed the documents and silently dropped ``--types``."""
    with pytest.raises(SystemExit) as exit_info:
        main(["stats", str(demo_idx), "--types", "--docs"])
    assert exit_info.value.code == 2
    assert "argument --docs: not allowed with argument --types" in capsys.readouterr().err


def test_a_corpus_indexed_without_a_graph_warns_before_embedding(small_files, capsys):
    """A new user's report: ``--corpus`` alone embedded 1 890 passages (85 s) into an index of 0 entities with no
    word. Now ``--corpus`` alone extracts a graph with the NLP extractor; chunks only is ``--no-extract``, still
    indexed (a dense-only index is a use), with a warning first."""
    corpus, openie, fake = str(small_files / "c.json"), str(small_files / "o.json"), ["--embeddings", "fake:16", "-q"]
    code, out, err = run(capsys, "index", "--corpus", corpus, "--no-extract", "--out", str(small_files / "i"), *fake)
    assert code == 0
    assert "warning: --corpus with --no-extract: the passages are indexed with no graph" in err
    code, _, err = run(capsys, "index", "--corpus", corpus, "--openie", openie, "--out", str(small_files / "j"), *fake)
    assert code == 0 and "no graph" not in err


def test_invented_entities_are_not_stored_and_their_count_is_printed(tmp_path, capsys):
    """Issue 46: an extraction naming ``Zorblax Unseen -[SUPERSEDES]-> Quux Phantom``, absent from its chunk, was
    stored and served, exit 0, nothing counted. It is dropped, and the run says how many were."""
    doc = {
        "id": "memo.md",
        "text": "Directive 2023-07 supersedes Directive 2019-03.",
        "extraction": {
            "entities": [{"name": "Zorblax Unseen", "type": "ORGANIZATION"}],
            "relations": [
                {"source": "Zorblax Unseen", "target": "Quux Phantom", "type": "SUPERSEDES"},
                {"source": "Directive 2023-07", "target": "Directive 2019-03", "type": "SUPERSEDES"},
            ],
        },
    }
    (tmp_path / "x.json").write_text(json.dumps({"documents": [doc]}))
    idx = str(tmp_path / "idx")
    code, out, err = run(
        capsys, "index", "--extractions", str(tmp_path / "x.json"), "--out", idx, "--embeddings", "fake:16"
    )
    assert code == 0, err
    assert "indexed 1 chunk, 2 entities, 1 relation" in out
    assert "skipped: entity_not_in_text=1, member_not_in_text=1" in out
    code, out, err = run(capsys, "query", idx, "What supersedes what?", "--no-answer", "--embeddings", "fake:16")
    assert code == 0 and "0|Directive 2023-07|Directive 2019-03|" in out and "|SUPERSEDES|" in out
    assert "Zorblax" not in out + err and "Quux" not in out + err


def test_invalid_entries_of_an_extraction_file_are_said_and_exit_1(tmp_path, capsys):
    """Issue 46: an ``--extractions`` file with invalid entries exited 0 and showed the failures only in ``stats``."""
    docs = [
        {"id": "good", "text": "Order B supersedes Order A.", "extraction": {"relations": [
            {"source": "Order B", "target": "Order A", "type": "SUPERSEDES"}]}},
        {"id": "bad", "text": "Order C revokes Order D.", "extraction": {"relations": [{"source": "Order C"}]}},
    ]  # fmt: skip
    (tmp_path / "x.json").write_text(json.dumps({"documents": docs}))
    idx = str(tmp_path / "idx")
    code, out, err = run(
        capsys, "index", "--extractions", str(tmp_path / "x.json"), "--out", idx, "--embeddings", "fake:16"
    )
    assert code == 1 and "indexed 2 chunks, 2 entities, 1 relation" in out
    assert err.strip().splitlines()[-1] == (
        f"kg-rag: 1 document of {tmp_path / 'x.json'} had an invalid extraction and was indexed without a graph: bad "
        "(invalid extraction in document 1: 1 error)"
    )
    code, out, err = run(capsys, "index", "--extractions", str(tmp_path / "x.json"), "--out", idx, "--update")
    assert code == 1 and "had an invalid extraction" in err
