"""CLI inputs from a user trial: damaged indexes, empty selections, limits checked at parse time, odd paths, a
corpus that does not match its OpenIE file, and folders a failed ``index`` run leaves behind."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kg_rag.cli import main
from kg_rag.demo import DEMO_CORPUS

OPENIE = {
    "docs": [
        {
            "passage": "Alpha\nAlpha supersedes Beta.",
            "extracted_entities": ["Alpha", "Beta"],
            "extracted_triples": [["Alpha", "supersedes", "Beta"]],
        }
    ]
}
CORPUS = [{"title": "Alpha", "text": "Alpha supersedes Beta."}]


@pytest.fixture(scope="module")
def demo_idx(tmp_path_factory) -> Path:
    """The demo corpus indexed with fake embeddings (module-wide: copy it before changing it)."""
    idx = tmp_path_factory.mktemp("inputs") / "idx"
    assert main(["index", "--extractions", str(DEMO_CORPUS), "--out", str(idx), "--embeddings", "fake:16", "-q"]) == 0
    return idx


@pytest.fixture
def no_chat_model(monkeypatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "KG_RAG_CHAT_MODEL"):
        monkeypatch.delenv(name, raising=False)


def one_line_error(capsys, argv: list[str], message: str) -> str:
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("kg-rag: error: ") and message in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    return err


def refused_by_parser(capsys, argv: list[str], message: str) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and message in err, err


def entities_file(idx: Path) -> Path:
    return next(idx.glob("gen-*")) / "entities.jsonl"


# ----------------------------------------------------------------------------- 1. stats verifies
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


# ----------------------------------------------------------------------------- 2. eval's method selection
@pytest.mark.parametrize("methods", ["", ",", " , "])
def test_eval_with_no_method_is_an_error(methods, demo_idx, tmp_path, capsys):
    argv = ["eval", "--questions", str(tmp_path / "q.json"), "--index", str(demo_idx), "--methods", methods]
    one_line_error(capsys, argv, "--methods names no method")


def test_eval_methods_dir_must_exist(demo_idx, tmp_path, capsys):
    q = str(tmp_path / "q.json")
    argv = ["eval", "--questions", q, "--index", str(demo_idx), "--methods-dir", str(tmp_path / "nonexist")]
    one_line_error(capsys, argv, "nonexist: no such folder")
    (tmp_path / "file.json").write_text("{}")
    argv = ["eval", "--questions", q, "--index", str(demo_idx), "--methods-dir", str(tmp_path / "file.json")]
    one_line_error(capsys, argv, "file.json: not a folder")


def test_eval_unknown_method_says_when_there_is_no_methods_folder(demo_idx, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    argv = ["eval", "--questions", "q.json", "--index", str(demo_idx), "--methods", "kg-path"]
    err = one_line_error(capsys, argv, "unknown method(s) kg-path; known: bm25, dense, kg-rag, seed003")
    assert "(no methods/ folder here; pass --methods-dir)" in err
    (tmp_path / "methods").mkdir()
    err = one_line_error(capsys, argv, "unknown method(s) kg-path")
    assert "no methods/ folder" not in err


def test_eval_cutoffs_must_be_positive(demo_idx, tmp_path, capsys):
    for k in (",", "0,5"):
        argv = ["eval", "--questions", str(tmp_path / "q.json"), "--index", str(demo_idx), "--k", k]
        one_line_error(capsys, argv, "--k takes comma-separated integers >= 1")


# ----------------------------------------------------------------------------- 3. limits at parse time
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


def test_chunk_overlap_is_checked_before_documents_load(tmp_path, capsys):
    """The documents folder does not exist: an error about the overlap proves nothing was loaded first."""
    argv = ["index", "--docs", str(tmp_path / "nonexist"), "--no-extract", "--out", str(tmp_path / "x")]
    one_line_error(capsys, [*argv, "--chunk-size", "10"], "--chunk-overlap must be smaller than --chunk-size")
    assert not (tmp_path / "x").exists()


def test_communities_level_above_the_highest_names_the_levels(demo_idx, tmp_path, capsys, no_chat_model):
    idx = shutil.copytree(demo_idx, tmp_path / "idx")
    assert main(["communities", str(idx), "--json"]) == 0
    levels = sorted({c["level"] for c in json.loads(capsys.readouterr().out)["communities"]})
    assert levels and levels[0] == 0
    shown = ", ".join(map(str, levels))
    err = one_line_error(capsys, ["communities", str(idx), "--level", "5"], "--level 5: the index has no communities")
    assert f"(it has levels {shown})" in err
    assert main(["communities", str(idx), "--level", "0"]) == 0
    assert " level 0 " in capsys.readouterr().out
    one_line_error(capsys, ["global", str(idx), "q", "--level", "5"], f"(the index has levels {shown})")


# ----------------------------------------------------------------------------- 4. small things
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
    (tmp_path / "o.json").write_text(json.dumps(OPENIE))
    (tmp_path / "c.json").write_text(json.dumps(CORPUS))
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


def test_global_checks_the_index_before_the_chat_model(tmp_path, demo_idx, capsys, no_chat_model):
    one_line_error(capsys, ["global", str(tmp_path / "nonexist"), "x"], "nonexist: no such index directory")
    one_line_error(capsys, ["global", str(demo_idx), "x"], "no community reports (run `kg-rag communities")


# ----------------------------------------------------------------------------- 5. mismatched corpus, failed runs
def test_openie_that_matches_no_corpus_passage_is_an_error(tmp_path, capsys):
    (tmp_path / "o.json").write_text(json.dumps(OPENIE))
    (tmp_path / "c.json").write_text(json.dumps([{"title": "Other", "text": "Something else entirely."}]))
    out = tmp_path / "idx"
    argv = ["index", "--openie", str(tmp_path / "o.json"), "--corpus", str(tmp_path / "c.json"), "--out", str(out)]
    one_line_error(capsys, [*argv, "--embeddings", "fake:8", "-q"], "o.json: none of its passages is in the corpus")
    assert not out.exists()


def test_openie_mismatch_leaves_the_graph_unchanged(tmp_path):
    from kg_rag import KnowledgeGraph, import_openie

    kg = KnowledgeGraph()
    import_openie(kg, OPENIE, CORPUS)
    before = kg.stats()
    with pytest.raises(ValueError, match="none of its passages is in the corpus"):
        import_openie(kg, OPENIE, [{"title": "Other", "text": "Something else."}])
    assert kg.stats() == before and before["relations"] == 1


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
    (tmp_path / "o.json").write_text(json.dumps(OPENIE))
    (tmp_path / "c.json").write_text(json.dumps(CORPUS))
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


def test_bench_refuses_pg_without_the_postgres_store(capsys):
    assert main(["bench", "--entities", "10", "--edges", "10", "--pg", "postgresql://localhost/x"]) == 2
    assert "--pg is for --store postgres" in capsys.readouterr().err


def test_query_budget_below_the_minimum_is_refused_by_the_flag(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["query", "idx", "question", "--max-context-tokens", "5"])
    assert exit_info.value.code == 2 and "at least 50" in capsys.readouterr().err


def test_query_with_an_empty_index_path_says_so(capsys):
    assert main(["query", "", "Who approved it?"]) == 2
    assert "the index path is empty" in capsys.readouterr().err
