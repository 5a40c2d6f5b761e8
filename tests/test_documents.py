from __future__ import annotations

import pytest

from kg_rag.ingest import load_documents, split_documents
from kg_rag.tokens import count_tokens


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
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def test_load_text_markdown_and_pdf(tmp_path):
    (tmp_path / "a.txt").write_text("Alpha reports to Beta.")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.md").write_text("# Title\nGamma supersedes Delta.")
    (tmp_path / "c.pdf").write_bytes(tiny_pdf("Statute 2021 revokes Regulation 2020"))
    (tmp_path / "ignored.bin").write_bytes(b"\x00")
    docs = load_documents(tmp_path)
    by_id = {d.metadata["doc_id"]: d for d in docs}
    assert set(by_id) == {"a.txt", "sub/b.md", "c.pdf"}
    assert "Statute 2021 revokes Regulation 2020" in by_id["c.pdf"].page_content
    assert by_id["c.pdf"].metadata["page"] == 1


def test_bad_inputs_raise_clear_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope"):
        load_documents(tmp_path / "nope")
    with pytest.raises(ValueError, match="no .txt"):
        load_documents(tmp_path)
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 garbage")
    with pytest.raises(ValueError, match="broken.pdf"):
        load_documents(tmp_path / "broken.pdf")


def test_token_splitting_defaults_and_ids(tmp_path):
    (tmp_path / "long.txt").write_text("\n\n".join(f"Paragraph {i} " + "word " * 120 for i in range(20)))
    chunks = split_documents(load_documents(tmp_path))
    assert len(chunks) > 3
    assert all(c.n_tokens <= 512 and c.n_tokens == count_tokens(c.text) for c in chunks)
    assert len({c.id for c in chunks}) == len(chunks) and all(c.doc_id == "long.txt" for c in chunks)
    again = split_documents(load_documents(tmp_path))
    assert [c.id for c in again] == [c.id for c in chunks]  # stable ids
    with pytest.raises(ValueError, match="chunk_overlap"):
        split_documents([], chunk_size=10, chunk_overlap=10)
