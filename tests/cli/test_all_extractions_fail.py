"""When every extraction fails, ``kg-rag index`` keeps nothing of the run, and its summary says so: nothing added
(not "2 added" followed by "was not changed"), no document said to be added or deleted."""

from __future__ import annotations

from kg_rag.cli import main
from kg_rag.store import DirectoryStore


def run(capsys, *argv):
    code = main(["index", *argv, "--embeddings", "fake:16", "-q", "--llm-retries", "0"])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_new_index_every_extraction_failing_adds_nothing(openai_server, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("Policy Two supersedes Policy One.\n")
    (tmp_path / "docs" / "b.md").write_text("Rule B revokes Rule A.\n")
    openai_server.mode = "error"
    code, out, err = run(capsys, "--docs", "docs", "--out", "idx")
    assert code == 1
    summary = out.splitlines()[0]
    assert summary.startswith("documents: none added, replaced or removed (every extraction failed)")
    assert "chunks extracted 0, failed 2" in summary
    assert "2 added" not in out and "  added docs/" not in out
    assert "  not added docs/a.md:" in out and "  not added docs/b.md:" in out
    model = f"chat model openai:fake-model at {openai_server.base_url}"  # which server failed, named
    assert err.strip().splitlines()[-1].startswith(f"kg-rag: every extraction failed ({model}")
    assert err.strip().splitlines()[-1].endswith("); no index was written")
    assert not DirectoryStore("idx").exists()


def test_a_rebuild_every_extraction_failing_deletes_nothing(openai_server, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("Policy Two supersedes Policy One.\n")
    (tmp_path / "docs" / "gone.md").write_text("Rule B revokes Rule A.\n")
    assert run(capsys, "--docs", "docs", "--out", "idx")[0] == 0
    (tmp_path / "docs" / "gone.md").unlink()  # a rebuild would delete it...
    (tmp_path / "docs" / "a.md").write_text("Policy Three supersedes Policy Two.\n")
    openai_server.mode = "error"  # ...but every extraction fails, so the run is not kept
    code, out, err = run(capsys, "--docs", "docs", "--out", "idx")
    assert code == 1
    assert out.startswith("documents: none added, replaced or removed (every extraction failed)")
    assert "deleted" not in out and "kept the old version of docs/a.md" in out
    model = f"chat model openai:fake-model at {openai_server.base_url}"
    assert err.strip().splitlines()[-1].startswith(f"kg-rag: every extraction failed ({model}")
    assert err.strip().splitlines()[-1].endswith("); idx was not changed")
    assert sorted(d["id"] for d in DirectoryStore("idx").documents()) == ["docs/a.md", "docs/gone.md"]
