"""Text that is not UTF-8: strict UTF-8 first, then a guessed encoding that is named per file (the file and the
encoding used), or the encoding the caller forces."""

from __future__ import annotations

import logging

import pytest

from kg_rag.ingest import IngestReport, load_documents
from kg_rag.ingest.documents import decode_bytes

CLARA = "Clara Nordström föddes i Karlskrona 1850 och dog i Göteborg."

LEGACY = [  # (text, how it was saved): short texts, where guessing from letter statistics goes wrong
    pytest.param(CLARA, "cp1252", id="swedish-cp1252"),
    pytest.param("Clara Nordström föddes i Karlskrona…", "cp1252", id="swedish-short"),
    pytest.param("L'été dernier, François a visité la cathédrale — très belle.", "cp1252", id="french-cp1252"),
    pytest.param("El niño comió piñata en Logroño, ¿verdad?", "cp1252", id="spanish-cp1252"),
    pytest.param("Grüße aus München", "latin-1", id="german-latin1"),
    pytest.param("Zażółć gęślą jaźń. Łódź jest dużym miastem.", "cp1250", id="polish-cp1250"),
    pytest.param("Москва — столица России.", "cp1251", id="russian-cp1251"),
    pytest.param("Η Αθήνα είναι η πρωτεύουσα της Ελλάδας.", "cp1253", id="greek-cp1253"),
    pytest.param("東京は日本の首都です。", "shift_jis", id="japanese-shift-jis"),
]


@pytest.mark.parametrize(("text", "saved_as"), LEGACY)
def test_legacy_text_is_decoded_as_written_and_the_guess_is_named(text, saved_as):
    decoded, guessed = decode_bytes(text.encode(saved_as))
    assert decoded == text
    assert guessed  # the caller is told the encoding was a guess


def test_utf8_is_tried_strictly_first_and_is_not_a_guess():
    assert decode_bytes(CLARA.encode("utf-8")) == (CLARA, None)
    assert decode_bytes(b"\xef\xbb\xbf" + CLARA.encode("utf-8")) == (CLARA, None)


def test_load_documents_reports_each_guessed_file_with_its_encoding(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "clara.txt").write_bytes(CLARA.encode("cp1252"))
    (root / "utf8.md").write_text(CLARA, encoding="utf-8")
    (root / "people.csv").write_bytes(f"name,text\nClara,{CLARA}\n".encode("cp1252"))
    (root / "page.html").write_bytes(f"<html><body><p>{CLARA}</p></body></html>".encode("cp1252"))
    (root / "declared.html").write_bytes(
        f"<html><head><meta charset='windows-1252'></head><body><p>{CLARA}</p></body></html>".encode("cp1252")
    )
    report = IngestReport()
    docs = {d.metadata["doc_id"]: d.page_content for d in load_documents(root, report=report)}
    assert docs["docs/clara.txt"] == CLARA and docs["docs/utf8.md"] == CLARA
    assert f"text: {CLARA}" in docs["docs/people.csv"]
    assert docs["docs/page.html"] == CLARA and docs["docs/declared.html"] == CLARA
    assert report.warnings["guessed_encoding"] == 3  # not the UTF-8 file, not the HTML that declares its charset
    assert sorted(report.examples["guessed_encoding"]) == [
        f"{root / name} (windows-1252)" for name in ("clara.txt", "page.html", "people.csv")
    ]
    (line,) = [x for x in report.file_lines() if "guessed" in x]
    assert f"3 files: {root / 'clara.txt'} (windows-1252)" in line and "--encoding" in line


def test_without_a_report_the_guess_is_logged_per_file(tmp_path, caplog):
    (tmp_path / "clara.txt").write_bytes(CLARA.encode("cp1252"))
    with caplog.at_level(logging.WARNING, logger="kg_rag.ingest.documents"):
        (doc,) = load_documents(tmp_path / "clara.txt")
    assert doc.page_content == CLARA
    assert "clara.txt: not UTF-8; decoded as windows-1252" in caplog.text


def test_a_forced_encoding_is_used_strictly(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    polish = "Zażółć gęślą jaźń"
    (root / "pl.txt").write_bytes(polish.encode("cp1250"))
    (root / "ru.txt").write_bytes("Москва".encode())  # bytes cp1250 leaves undefined (0x81)
    (root / "page.html").write_bytes(f"<p>{polish}</p>".encode("cp1250"))
    report = IngestReport()
    docs = {d.metadata["doc_id"]: d.page_content for d in load_documents(root, report=report, encoding="cp1250")}
    assert docs == {"docs/pl.txt": polish, "docs/page.html": polish}
    assert not report.warnings["guessed_encoding"]  # forced, not guessed
    assert report.examples["unreadable"] == [f"{root / 'ru.txt'}: not valid cp1250 (byte 0x81 at offset 5)"]

    report = IngestReport()
    docs = {d.metadata["doc_id"] for d in load_documents(root, report=report, encoding="utf-8")}
    assert docs == {"docs/ru.txt"}  # the cp1250 files are not valid UTF-8: skipped and named, not mangled
    assert report.skipped["unreadable"] == 2
    assert any("pl.txt: not valid utf-8 (byte 0xbf at offset 2)" in x for x in report.examples["unreadable"])


def test_an_unknown_encoding_is_refused_before_anything_is_read(tmp_path):
    (tmp_path / "a.txt").write_text("text")
    with pytest.raises(ValueError, match="unknown encoding 'klingon'"):
        load_documents(tmp_path, encoding="klingon")
