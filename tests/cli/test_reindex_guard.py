"""Issue 29: a re-index without ``--update`` that would delete documents of other sources refuses and names
them (before any chat call), unless ``--delete-others``; what it deletes of its own folder it names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kg_rag.cli import main
from kg_rag.store import DirectoryStore

INDEX = ("--out", "idx", "--embeddings", "fake:16", "-q", "--llm-retries", "0")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def doc_ids() -> list[str]:
    return sorted(d["id"] for d in DirectoryStore("idx").documents())


@pytest.fixture
def teams(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for team, fact in (("teamA", "Alpha supersedes Beta."), ("teamB", "Gamma supersedes Delta.")):
        (tmp_path / team).mkdir()
        (tmp_path / team / "README.md").write_text(fact)
        (tmp_path / team / "notes.md").write_text(f"{team} Lead reports to {team} Head.")
    return tmp_path


def test_a_rebuild_that_would_delete_another_folder_refuses_and_names_it(openai_server, teams, capsys):
    assert run(capsys, "index", "--docs", "teamA", *INDEX)[0] == 0
    assert run(capsys, "index", "--docs", "teamB", *INDEX, "--update")[0] == 0
    (teams / "teamA" / "new.md").write_text("Rule B revokes Rule A.")  # work the refused run must not pay for
    requests = len(openai_server.requests)
    generations = sorted(p.name for p in Path("idx").glob("gen-*"))

    code, out, err = run(capsys, "index", "--docs", "teamA", *INDEX)
    assert code == 2
    assert err.strip() == (
        "kg-rag: error: idx: re-indexing teamA without --update would delete 2 documents of other sources: "
        "teamB/README.md, teamB/notes.md; add --update to keep them, or --delete-others to delete them"
    )
    assert len(openai_server.requests) == requests  # refused before any chat call
    assert doc_ids() == ["teamA/README.md", "teamA/notes.md", "teamB/README.md", "teamB/notes.md"]
    assert sorted(p.name for p in Path("idx").glob("gen-*")) == generations  # nothing written

    code, out, _ = run(capsys, "index", "--docs", "teamA", *INDEX, "--delete-others")
    assert code == 0 and "1 added, 0 replaced, 2 unchanged, 2 removed" in out
    assert "  deleted teamB/README.md, teamB/notes.md" in out
    assert doc_ids() == ["teamA/README.md", "teamA/new.md", "teamA/notes.md"]


def test_files_gone_from_the_folder_itself_are_deleted_and_named(openai_server, teams, capsys):
    assert run(capsys, "index", "--docs", "teamA", *INDEX)[0] == 0
    (teams / "teamA" / "notes.md").unlink()
    code, out, _ = run(capsys, "index", "--docs", "teamA", *INDEX)  # its own file: no refusal
    assert code == 0 and "1 removed" in out and "  deleted teamA/notes.md" in out
    assert doc_ids() == ["teamA/README.md"]


def test_a_single_file_rebuild_protects_its_folder_siblings(openai_server, teams, capsys):
    assert run(capsys, "index", "--docs", "teamA", *INDEX)[0] == 0
    code, _, err = run(capsys, "index", "--docs", "teamA/README.md", *INDEX)
    assert code == 2 and "would delete 1 document of other sources: teamA/notes.md" in err


def test_a_corpus_or_extraction_rebuild_is_guarded_too(openai_server, teams, capsys):
    def extractions(name: str, ids: list[str]) -> str:
        docs = [{"id": i, "text": f"{i} supersedes Old {i}."} for i in ids]
        Path(name).write_text(json.dumps({"format": "kg-rag-extractions", "documents": docs}))
        return name

    assert run(capsys, "index", "--extractions", extractions("x.json", ["d1", "d2"]), *INDEX)[0] == 0
    assert run(capsys, "index", "--docs", "teamA", *INDEX, "--update")[0] == 0
    extractions("x.json", ["d1"])  # the file lost d2: its own document, deleted without asking
    code, _, err = run(capsys, "index", "--extractions", "./x.json", *INDEX)
    assert code == 2 and "would delete 2 documents of other sources: teamA/README.md, teamA/notes.md" in err
    assert "d2" not in err
    assert run(capsys, "index", "--extractions", "x.json", *INDEX, "--delete-others")[0] == 0
    assert doc_ids() == ["d1"]


def test_delete_others_with_update_is_refused(teams, capsys):
    code, _, err = run(capsys, "index", "--docs", "teamA", *INDEX, "--update", "--delete-others")
    assert code == 2 and "--delete-others is for a rebuild without --update" in err


def test_the_guard_in_python():
    from kg_rag.ingest.reindex import ReindexRefused, check_reindex, plan_deletions

    owns = lambda d: d.startswith("policies/")  # noqa: E731
    deletions = plan_deletions(["policies/a.md", "policies/gone.md", "hr/b.md"], ["policies/a.md"], owns)
    assert deletions.own == ["policies/gone.md"] and deletions.others == ["hr/b.md"]
    with pytest.raises(ReindexRefused) as err:
        check_reindex(["policies/a.md", "hr/b.md", "hr/c.md"], ["policies/a.md"], owns, where="idx", what="policies")
    assert err.value.documents == ["hr/b.md", "hr/c.md"] and isinstance(err.value, ValueError)
    assert check_reindex(["hr/b.md"], [], owns, confirmed=True).others == ["hr/b.md"]
