"""What a hostile file may cost (``kg_rag/ingest/limits.py``): a decompression bomb or a line too long to split is a
counted skip with a one-line reason, decided before the work, and the rest of the folder is read."""

from __future__ import annotations

import base64
import os

import pytest
from langchain_core.documents import Document

from kg_rag.ingest import IngestReport, load_documents, split_documents
from kg_rag.ingest import limits as L

from .hostile import docx_with_body, empty_paragraphs, inflating_stream, pdf
from .test_documents import tiny_pdf


def folder_with(tmp_path, name: str, data: bytes):
    root = tmp_path / "docs"
    root.mkdir()
    (root / name).write_bytes(data)
    (root / "good.md").write_text("Directive 2023-07 supersedes Directive 2019-03.\n")
    (root / "fine.pdf").write_bytes(tiny_pdf("Statute 2021 revokes Regulation 2020"))
    return root


def loaded(root) -> tuple[dict[str, str], IngestReport]:
    report = IngestReport()
    docs = {d.metadata["doc_id"]: d.page_content for d in load_documents(root, report=report)}
    return docs, report


def skipped_once(report: IngestReport, reason: str, name: str) -> str:
    """The one example line naming ``name`` under ``reason`` (and that it is one line)."""
    assert report.skipped[reason] == 1, report.skipped
    (line,) = report.examples[reason]
    assert name in line and "\n" not in line
    return line


def test_a_pdf_stream_that_inflates_past_pypdfs_limit_is_skipped_and_the_folder_read(tmp_path):
    """A 75 KB stream that inflates to 76 MB (pypdf stops at 75 MB) used to end the run with pypdf's
    LimitReachedError (a 90-line traceback), leaving the folder's other files unread."""
    root = folder_with(tmp_path, "bomb.pdf", pdf([[inflating_stream(76_000_000)]]))
    docs, report = loaded(root)
    assert set(docs) == {"docs/good.md", "docs/fine.pdf"}
    line = skipped_once(report, "unpacks_too_large", "bomb.pdf")
    assert "over pypdf's safety limits" in line


def test_a_pdf_whose_streams_together_inflate_past_the_file_budget_is_skipped(tmp_path, monkeypatch):
    """pypdf limits each stream, not the file: pages whose streams are each under its limit inflate without bound
    unless the file has a budget. (The budget is made small here; it is checked the same at 256 MiB.)"""
    import pypdf.filters

    monkeypatch.setattr(L, "PDF_MAX_UNPACKED_BYTES", 1 << 20)
    root = folder_with(tmp_path, "pages.pdf", pdf([[inflating_stream(400_000)] for _ in range(8)]))
    load_documents(root / "good.md")  # nothing to decode; any PDF read installs the budget on pypdf's decoder
    L.read_pdf(lambda: None)
    budgeted = pypdf.filters.decode_stream_data
    decoded = []

    def counting(stream, *args, **kwargs):
        decoded.append(stream)
        return budgeted(stream, *args, **kwargs)

    counting.kg_rag_budget = True
    monkeypatch.setattr(pypdf.filters, "decode_stream_data", counting)
    docs, report = loaded(root)
    assert set(docs) == {"docs/good.md", "docs/fine.pdf"}
    line = skipped_once(report, "unpacks_too_large", "pages.pdf")
    assert "inflate past 1 MiB" in line
    assert len(decoded) == 3  # 800 000 bytes fit the budget, the third stream ends it: five never inflate


def test_a_docx_zip_bomb_is_refused_from_its_directory_before_anything_is_inflated(tmp_path, monkeypatch):
    """The sizes the zip directory declares are checked before python-docx opens the file (it used to inflate
    and parse every member first: 1.26 MB on disk, 2.4 GB of memory). The limit is made small here."""
    import docx

    monkeypatch.setattr(L, "DOCX_MAX_UNPACKED_BYTES", 1 << 20)
    root = folder_with(tmp_path, "bomb.docx", docx_with_body(b"<w:p/>" * 200_000))  # 1.2 MB of XML
    (root / "small.docx").write_bytes(docx_with_body(b"<w:p><w:r><w:t>Rule B revokes Rule A.</w:t></w:r></w:p>"))
    opened = []
    real = docx.Document
    monkeypatch.setattr(docx, "Document", lambda *a, **k: opened.append(1) or real(*a, **k))
    docs, report = loaded(root)
    assert set(docs) == {"docs/good.md", "docs/fine.pdf", "docs/small.docx"}
    line = skipped_once(report, "unpacks_too_large", "bomb.docx")
    assert "zip members unpack to" in line and "at most 1 MiB" in line
    assert len(opened) == 1  # python-docx read the small file only


def test_a_docx_of_a_million_empty_paragraphs_is_skipped_by_its_tag_count(tmp_path):
    """Small on disk and under the byte limits, but python-docx would spend minutes and hundreds of megabytes on
    its elements: the tags are counted by streaming the XML first (real limits)."""
    root = folder_with(tmp_path, "many.docx", docx_with_body(empty_paragraphs(L.DOCX_MAX_TAGS + 1)))
    docs, report = loaded(root)
    assert set(docs) == {"docs/good.md", "docs/fine.pdf"}
    line = skipped_once(report, "unpacks_too_large", "many.docx")
    assert f"more than {L.DOCX_MAX_TAGS} tags" in line


def test_a_line_too_long_to_split_is_skipped_before_splitting(tmp_path):
    """A line without whitespace used to be split one character at a time (~10 s and ~1 GB per 50 MB)."""
    root = folder_with(tmp_path, "long.txt", b"a" * (L.MAX_LINE_CHARS + 1))
    docs, report = loaded(root)
    assert set(docs) == {"docs/good.md", "docs/fine.pdf"}
    line = skipped_once(report, "long_line", "long.txt")
    assert f"a line of {L.MAX_LINE_CHARS + 1} characters" in line
    report = IngestReport()  # documents given in Python are checked by the splitter the same way
    long = Document(page_content="b" * (L.MAX_LINE_CHARS + 1), metadata={"doc_id": "long"})
    short = Document(page_content="Directive 2023-07 supersedes Directive 2019-03.", metadata={"doc_id": "short"})
    assert [c.doc_id for c in split_documents([long, short], report=report)] == ["short"]
    assert report.skipped["long_line"] == 1


@pytest.mark.parametrize(
    "text",
    [
        "a" * 60_000,
        base64.b64encode(os.urandom(40_000)).decode(),
        "中文文本测试" * 5_000,
        "Intro words here. " + "ab" * 30_000 + " and the end.",
    ],
    ids=["repeated", "base64", "cjk", "embedded"],
)
def test_a_run_without_whitespace_is_cut_into_token_windows(text):
    """Below the line limit, a run longer than a chunk is cut into overlapping token windows at character
    boundaries (the splitter's own last resort took it apart one character at a time, ~20 s per MB)."""
    from kg_rag.tokens import get_encoding

    chunks = split_documents([Document(page_content=text, metadata={"doc_id": "d"})], chunk_size=128, chunk_overlap=16)
    assert len(chunks) > 3 and all(c.n_tokens <= 128 for c in chunks)
    assert all(c.text in text for c in chunks) and "\ufffd" not in "".join(c.text for c in chunks)
    covered = text.index(chunks[0].text) == 0 and text.endswith(chunks[-1].text)
    assert covered
    encoding = get_encoding()
    total = len(encoding.encode(text, disallowed_special=()))
    assert sum(c.n_tokens for c in chunks) >= total  # nothing left out (windows overlap)
