"""Issue 29: ``kg-rag index --docs`` reads .md, .html, .docx and .csv through the local OpenAI-compatible server,
and says which files it did not read, by name, before extracting anything."""

from __future__ import annotations

from pathlib import Path

from kg_rag.cli import main
from kg_rag.store import DirectoryStore
from kg_rag.store.directory import load_index


def test_a_folder_of_every_format_is_indexed_and_the_rest_is_named(openai_server, tmp_path, monkeypatch, capsys):
    import docx

    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "a.md").write_text("Policy Two supersedes Policy One.\n")
    (folder / "page.html").write_text(
        "<html><head><title>Team</title><script>x = 'Evil supersedes Good'</script></head>"
        "<body><p>Lars <b>reports to</b> Maria.</p></body></html>"
    )
    document = docx.Document()
    document.add_paragraph("Statute 2021 revokes Regulation 2020.")
    document.save(folder / "laws.docx")
    (folder / "rules.csv").write_text("id,statement\n1,Rule B revokes Rule A\n2,Order Nine supersedes Order Eight\n")
    (folder / "budget.xlsx").write_bytes(b"PK\x03\x04")
    (folder / "notes.odt").write_bytes(b"PK\x03\x04")

    code = main(["index", "--docs", "mixed", "--out", "idx", "--embeddings", "fake:16", "-q", "--llm-retries", "0"])
    out = capsys.readouterr().out
    assert code == 0
    assert "not read (unsupported format): 2 files: mixed/budget.xlsx, mixed/notes.odt" in out
    assert out.index("not read") < out.index("documents: 4 added")  # named before the extraction starts
    assert out.count("budget.xlsx") == 1 and "unsupported_format" not in out  # named once, not again at the end
    ids = sorted(d["id"] for d in DirectoryStore("idx").documents())
    assert ids == ["mixed/a.md", "mixed/laws.docx", "mixed/page.html", "mixed/rules.csv"]
    kg = load_index(Path("idx")).kg
    assert {(r.source, r.relation_type, r.target) for r in kg.relations()} == {
        ("policy two", "SUPERSEDES", "policy one"),
        ("lars", "REPORTS_TO", "maria"),  # the bold tag did not split the sentence
        ("statute 2021", "REVOKES", "regulation 2020"),
        ("rule b", "REVOKES", "rule a"),
        ("order nine", "SUPERSEDES", "order eight"),
    }
    assert not any("evil" in key for key in kg.graph.nodes)  # the script was not text
    sent = [str(r["messages"][-1]["content"]) for r in openai_server.requests]
    assert any("statement: Rule B revokes Rule A\n\nid: 2\nstatement: Order Nine" in s for s in sent)
