"""Issue 29: HTML, DOCX, CSV and Markdown through maintained loaders; every file not read is counted and named."""

from __future__ import annotations

import pytest

from kg_rag.ingest import IngestReport, load_documents
from kg_rag.ingest.formats import markdown_title, read_csv, read_docx, read_html


def docx_bytes(tmp_path, title: str = "Statutes") -> bytes:
    import docx

    document = docx.Document()
    document.core_properties.title = title
    document.add_heading("Statutes in force", 1)
    document.add_paragraph("Statute 2021 revokes Regulation 2020.")
    document.add_paragraph("applies from 1 March", style="List Bullet")
    table = document.add_table(rows=2, cols=2)
    for (r, c), text in {(0, 0): "Law", (0, 1): "Year", (1, 0): "Statute 2021", (1, 1): "2021"}.items():
        table.cell(r, c).text = text
    document.add_paragraph("Policy Two supersedes Policy One.")
    path = tmp_path / "made.docx"
    document.save(path)
    return path.read_bytes()


def test_html_keeps_sentences_whole_and_drops_what_is_not_text():
    page = (
        "<html><head><meta charset='iso-8859-1'><title>Reporting   lines</title><style>p{}</style>"
        "<script>var x = 'Evil supersedes Good';</script></head><body><h2>Team</h2>"
        "<p>Lars Eriksen <b>reports to</b> <a href='/m'>Maria Chen</a>.</p><ul><li>Caf\xe9 M\xfcller</li></ul>"
        "<table><tr><th>Name</th><th>Role</th></tr><tr><td>Maria</td><td>Head_of_ops</td></tr></table>"
        "<img src='chart.png' alt='chart'></body></html>"
    ).encode("latin-1")
    text, title = read_html(page)
    assert title == "Reporting lines"
    assert "Lars Eriksen reports to Maria Chen." in text  # no ** or link target inside the sentence
    assert "## Team" in text and "- Café Müller" in text  # the declared encoding is honoured
    assert "| Maria | Head_of_ops |" in text
    assert "Evil" not in text and "p{}" not in text and "chart" not in text and "/m" not in text


def test_docx_paragraphs_headings_lists_and_tables_in_document_order(tmp_path):
    text, title = read_docx(docx_bytes(tmp_path))
    assert title == "Statutes"
    assert text.split("\n\n") == [
        "# Statutes in force",
        "Statute 2021 revokes Regulation 2020.",
        "- applies from 1 March",
        "| Law | Year |\n| Statute 2021 | 2021 |",
        "Policy Two supersedes Policy One.",
    ]
    with pytest.raises(ValueError, match="cannot read Word document"):
        read_docx(b"PK\x03\x04 not really a zip")


def test_csv_rows_become_records_that_name_their_columns():
    text, _ = read_csv("name;reports_to;team\nLars Eriksen;Maria Chen;Ops\nMaria Chen;Priya Nair;\n", ".csv")
    assert text == "name: Lars Eriksen\nreports_to: Maria Chen\nteam: Ops\n\nname: Maria Chen\nreports_to: Priya Nair"
    text, _ = read_csv("a\tb\n1\t2\t3\n", ".tsv")  # a cell beyond the header gets a column number
    assert text == "a: 1\nb: 2\ncolumn 3: 3"
    assert read_csv("only,a,header\n", ".csv")[0] == ""
    quoted, _ = read_csv('law,note\n"Statute 2021","revokes Regulation 2020, in full"\n', ".csv")
    assert quoted == "law: Statute 2021\nnote: revokes Regulation 2020, in full"


def test_a_folder_of_every_format_loads_and_names_what_it_skips(tmp_path):
    root = tmp_path / "mixed"
    (root / "sub").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]")
    (root / ".DS_Store").write_bytes(b"\x00\x01")
    (root / "a.md").write_text("Policy Two supersedes Policy One.")
    (root / "b.md").write_text("# Policy *Two*\n\nIt supersedes Policy One.")
    (root / "page.html").write_text("<title>T</title><p>Lars reports to Maria.</p>")
    (root / "sub" / "laws.docx").write_bytes(docx_bytes(tmp_path))
    (root / "people.csv").write_text("name,manager\nLars,Maria\n")
    (root / "sheet.xlsx").write_bytes(b"PK\x03\x04")
    (root / "LICENSE").write_text("MIT")
    (root / "broken.docx").write_bytes(b"not a docx")
    (root / "header.csv").write_text("a,b\n")
    report = IngestReport()
    docs = {d.metadata["doc_id"]: d for d in load_documents(root, report=report)}
    assert set(docs) == {"mixed/a.md", "mixed/b.md", "mixed/page.html", "mixed/sub/laws.docx", "mixed/people.csv"}
    assert "title" not in docs["mixed/a.md"].metadata and docs["mixed/b.md"].metadata["title"] == "Policy Two"
    assert docs["mixed/page.html"].metadata["title"] == "T"
    assert docs["mixed/sub/laws.docx"].metadata["title"] == "Statutes"
    assert docs["mixed/people.csv"].page_content == "name: Lars\nmanager: Maria"
    assert report.skipped["unsupported_format"] == 2
    assert report.examples["unsupported_format"] == [str(root / "LICENSE"), str(root / "sheet.xlsx")]
    assert report.skipped["hidden"] == 2 and report.examples["hidden"] == [f"{root}/.git/", f"{root}/.DS_Store"]
    assert report.skipped["unreadable"] == 1 and "broken.docx" in report.examples["unreadable"][0]
    assert report.skipped["empty_file"] == 1 and "header.csv" in report.examples["empty_file"][0]
    lines = report.file_lines()
    assert f"not read (unsupported format): 2 files: {root}/LICENSE, {root}/sheet.xlsx" in lines
    assert any(line.startswith("not read (unreadable): 1 file: ") and "broken.docx" in line for line in lines)


def test_only_unsupported_files_is_an_error_that_names_them(tmp_path, caplog):
    (tmp_path / "a.xlsx").write_bytes(b"PK")
    (tmp_path / "b.pptx").write_bytes(b"PK")
    with pytest.raises(ValueError) as err:
        load_documents(tmp_path)
    message = str(err.value)
    assert "no .txt, .md, .pdf, .html, .docx or .csv files found" in message
    assert "2 unsupported file(s) not read (1 .pptx, 1 .xlsx)" in message and "a.xlsx" in message
    (tmp_path / "ok.md").write_text("fine")
    with caplog.at_level("WARNING"):
        load_documents(tmp_path)  # no report given: the unsupported files are named in the log instead
    assert "2 unsupported file(s) not read" in caplog.text


def test_a_single_unsupported_file(tmp_path):
    (tmp_path / "deck.pptx").write_bytes(b"PK")
    with pytest.raises(ValueError, match="1 unsupported file"):
        load_documents(tmp_path / "deck.pptx")


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("# Waylon Payne\n\nWaylon Malloy Payne is a singer.", "Waylon Payne"),
        ("Setext Title\n===\n\ntext", "Setext Title"),
        ("Notes first.\n\n## Career\n\n# *Main* [Title](https://example.org) #\n", "Main Title"),
        ("```bash\n# install it\n```\n\n# Real Title\n", "Real Title"),  # a comment in a code block
        ("## Only a section\n\ntext", None),
        ("#hashtag, no heading\n", None),
        ("plain text", None),
        ("Kevin Durant\r\n===\r\n\r\ntext", "Kevin Durant"),  # Windows line endings
        ("# Title #\r\ntext", "Title"),  # a closing run of #
        ("# ** **\n\n# Second", "Second"),  # an empty heading is passed over
        ("# my_module", "my_module"),  # an underscore inside a word is no emphasis
        ("# C#", "C#"),
        ("# " + "x" * 400 + "\n\n# Short", "Short"),  # a sentence set as a heading is no title
        ("# x" + " " * 100_000 + "y", "x y"),  # a long run of spaces is read in one pass
    ],
)
def test_a_markdown_documents_title_is_its_first_level_one_heading(text, title):
    assert markdown_title(text) == title
