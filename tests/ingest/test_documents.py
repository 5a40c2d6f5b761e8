"""Loading and splitting documents (``kg_rag/ingest/documents.py``): text, Markdown and PDF, distinct ids, hygiene,
unreadable files named."""

from __future__ import annotations

import pytest

from kg_rag.ingest import IngestReport, load_documents, split_documents
from kg_rag.tokens import count_tokens

from .hostile import serialise_pdf


def tiny_pdf(text: str) -> bytes:
    """A one-page PDF with ``text`` drawn in Helvetica (written by hand, so no PDF writer is needed)."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    return serialise_pdf(objects)


def test_load_text_markdown_and_pdf(tmp_path):
    root = tmp_path / "policies"
    root.mkdir()
    (root / "a.txt").write_text("Alpha reports to Beta.")
    (root / "sub").mkdir()
    (root / "sub" / "b.md").write_text("# Title\nGamma supersedes Delta.")
    (root / "c.pdf").write_bytes(tiny_pdf("Statute 2021 revokes Regulation 2020"))
    (root / "ignored.bin").write_bytes(b"\x00")
    docs = load_documents(root)
    by_id = {d.metadata["doc_id"]: d for d in docs}
    # ids include the folder's name, as `kg-rag delete --doc policies/a.txt` expects
    assert set(by_id) == {"policies/a.txt", "policies/sub/b.md", "policies/c.pdf"}
    assert "Statute 2021 revokes Regulation 2020" in by_id["policies/c.pdf"].page_content
    assert by_id["policies/c.pdf"].metadata["page"] == 1
    assert all(len(d.metadata["content_hash"]) == 64 for d in docs)
    assert load_documents(root, prefix="team")[0].metadata["doc_id"].startswith("team/")


def test_ids_stay_distinct_across_folders(tmp_path):
    for team in ("teamA", "teamB"):
        (tmp_path / team).mkdir()
        (tmp_path / team / "README.md").write_text(f"{team} notes")
    ids = {d.metadata["doc_id"] for team in ("teamA", "teamB") for d in load_documents(tmp_path / team)}
    assert ids == {"teamA/README.md", "teamB/README.md"}
    assert load_documents(tmp_path / "teamA" / "README.md")[0].metadata["doc_id"] == "teamA/README.md"


def test_bad_inputs_raise_clear_errors_or_are_counted(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope"):
        load_documents(tmp_path / "nope")
    with pytest.raises(ValueError, match="no .txt"):
        load_documents(tmp_path)
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 garbage")
    (tmp_path / "fine.txt").write_text("Still indexed.")
    report = IngestReport()
    docs = load_documents(tmp_path, report=report)
    assert [d.page_content for d in docs] == ["Still indexed."]
    assert report.skipped["unreadable"] == 1 and "broken.pdf" in report.examples["unreadable"][0]


def test_hygiene_binary_encodings_empty_pdfs_and_links(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "junk.txt").write_bytes(bytes(range(256)) * 40)  # binary data named .txt
    (root / "latin1.txt").write_bytes("Café Müller – naïve façade".encode("latin-1", errors="replace"))
    (root / "utf16.txt").write_text("Grüße aus Köln", encoding="utf-16")
    (root / "scan.pdf").write_bytes(tiny_pdf(""))  # a page, but no text layer
    secret = tmp_path / "outside.txt"
    secret.write_text("SECRET outside the folder")
    (root / "link.txt").symlink_to(secret)
    (root / "gone.md").symlink_to(root / "deleted.md")  # a link to nothing inside the folder
    (root / "sub").mkdir()
    (root / "folder.md").symlink_to(root / "sub")  # a link to a folder is no file, and not broken
    report = IngestReport()
    docs = {d.metadata["doc_id"]: d.page_content for d in load_documents(root, report=report)}
    assert set(docs) == {"docs/latin1.txt", "docs/utf16.txt"}
    assert report.skipped["broken_link"] == 1 and "gone.md" in report.examples["broken_link"][0]
    assert docs["docs/latin1.txt"].startswith("Café Müller") and "\ufffd" not in docs["docs/latin1.txt"]
    assert docs["docs/utf16.txt"] == "Grüße aus Köln" and "\x00" not in docs["docs/utf16.txt"]
    assert report.skipped["binary_file"] == 1 and report.skipped["link_outside_folder"] == 1
    assert report.warnings["pdf_without_text"] == 1
    followed = load_documents(root, follow_links=True)
    assert any("SECRET" in d.page_content for d in followed)


def test_unreadable_file_is_named_and_the_rest_is_loaded(tmp_path):
    import os

    (tmp_path / "ok.txt").write_text("readable")
    locked = tmp_path / "locked.txt"
    locked.write_text("no access")
    locked.chmod(0)
    report = IngestReport()
    try:
        if os.geteuid() == 0:  # root reads anything: simulate the failure with a dangling entry instead
            locked.chmod(0o644)
            locked.unlink()
            (tmp_path / "locked.txt").symlink_to(tmp_path / "locked.txt")  # a loop
        docs = load_documents(tmp_path, report=report)
    finally:
        if locked.exists() and not locked.is_symlink():
            locked.chmod(0o644)
    assert [d.page_content for d in docs] == ["readable"]
    assert report.skipped["unreadable"] == 1 and "locked.txt" in report.examples["unreadable"][0]


def test_token_splitting_defaults_and_ids(tmp_path):
    (tmp_path / "long.txt").write_text("\n\n".join(f"Paragraph {i} " + "word " * 120 for i in range(20)))
    chunks = split_documents(load_documents(tmp_path / "long.txt"))
    assert len(chunks) > 3
    assert all(c.n_tokens <= 512 and c.n_tokens == count_tokens(c.text) for c in chunks)
    doc_id = f"{tmp_path.name}/long.txt"
    assert len({c.id for c in chunks}) == len(chunks) and all(c.doc_id == doc_id for c in chunks)
    again = split_documents(load_documents(tmp_path / "long.txt"))
    assert [c.id for c in again] == [c.id for c in chunks]  # stable ids
    with pytest.raises(ValueError, match="chunk_overlap"):
        split_documents([], chunk_size=10, chunk_overlap=10)
