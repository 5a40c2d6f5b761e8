"""Hostile input files the limit tests share, written by hand: PDFs whose streams inflate far past their size on disk,
a ``.docx`` that is a zip bomb or holds a huge number of empty paragraphs."""

from __future__ import annotations

import io
import zipfile

TEXT_OPS = b"BT /F1 12 Tf 72 720 Td (Hello) Tj ET\n"


def serialise_pdf(objects: list[bytes]) -> bytes:
    """A PDF file of ``objects`` (numbered from 1), with its cross-reference table and trailer."""
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


def pdf(pages: list[list[bytes]]) -> bytes:
    """A PDF with one page per item of ``pages``, each page's ``/Contents`` the given (already Flate-compressed)
    streams, drawn in Helvetica."""
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    kids = []
    for streams in pages:
        page = len(objects) + 1
        kids.append(page)
        refs = " ".join(f"{page + 1 + i} 0 R" for i in range(len(streams))).encode()
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents [" + refs + b"] "
            b"/Resources << /Font << /F1 3 0 R >> >> >>"
        )
        for body in streams:
            objects.append(b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(body) + body + b"\nendstream")
    objects[1] = (
        b"<< /Type /Pages /Kids [" + " ".join(f"{k} 0 R" for k in kids).encode() + b"] /Count %d >>" % len(kids)
    )
    return serialise_pdf(objects)


def inflating_stream(size: int) -> bytes:
    """A Flate stream of page operators drawing "Hello", padded with spaces to ``size`` bytes once inflated."""
    import zlib

    compressor = zlib.compressobj(9)
    parts = [compressor.compress(TEXT_OPS)]
    block = b" " * (1 << 20)
    left = size - len(TEXT_OPS)
    while left > 0:
        parts.append(compressor.compress(block[: min(left, len(block))]))
        left -= len(block)
    parts.append(compressor.flush())
    return b"".join(parts)


def docx_with_body(body_xml: bytes) -> bytes:
    """A valid ``.docx`` (python-docx's own template) whose body holds ``body_xml``."""
    from docx import Document

    template = io.BytesIO()
    Document().save(template)
    source = zipfile.ZipFile(io.BytesIO(template.getvalue()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for info in source.infolist():
            data = source.read(info.filename)
            if info.filename == "word/document.xml":
                head, tail = data.split(b"<w:body>")
                data = head + b"<w:body>" + body_xml + tail
            archive.writestr(info.filename, data)
    return out.getvalue()


def empty_paragraphs(n: int) -> bytes:
    return b"<w:p/>" * n
