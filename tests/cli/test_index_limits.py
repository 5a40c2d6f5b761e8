"""Issue 46: ``kg-rag index --docs`` on a folder holding a PDF decompression bomb, a ``.docx`` of a million empty
paragraphs and a line too long to split: each is one line saying why it was not read, the rest is indexed, exit 0
(a PDF bomb used to end the run and its ``--dry-run`` with a 90-line traceback, exit 1)."""

from __future__ import annotations

from kg_rag.store import DirectoryStore

from ..cli_support import run
from ..ingest.hostile import docx_with_body, empty_paragraphs, inflating_stream, pdf


def hostile_folder(tmp_path):
    root = tmp_path / "inbox"
    root.mkdir()
    (root / "bomb.pdf").write_bytes(pdf([[inflating_stream(76_000_000)]]))  # 75 KB on disk
    (root / "many.docx").write_bytes(docx_with_body(empty_paragraphs(600_000)))  # 10 KB on disk
    (root / "long.txt").write_bytes(b"a" * 1_000_001)
    (root / "good.md").write_text("Directive 2023-07 supersedes Directive 2019-03.\n")
    return root


def test_bombs_and_huge_lines_are_one_line_each_and_the_rest_is_indexed(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    hostile_folder(tmp_path)
    code, out, err = run(capsys, "index", "--docs", "inbox", "--dry-run", "--out", "idx")
    assert code == 0, err
    assert "Traceback" not in out + err
    named = [line for line in out.splitlines() if line.startswith("not read")]
    assert len(named) == 2, out
    assert named[0].startswith("not read (unpacks past the size limit): 2 files: inbox/bomb.pdf: over pypdf's safety")
    assert named[0].endswith("inbox/many.docx: its XML holds more than 500000 tags (a zip bomb?)")
    assert named[1] == (
        "not read (a line too long to split): 1 file: inbox/long.txt: a line of 1000001 characters (at most 1000000 "
        "are split)"
    )
    assert "documents: 1 new" in out
    code, out, err = run(capsys, "index", "--docs", "inbox", "--out", "idx", "--no-extract", "--embeddings", "fake:16")
    assert code == 0, err
    assert [line for line in out.splitlines() if line.startswith("not read")] == named
    assert [d["id"] for d in DirectoryStore("idx").documents()] == ["inbox/good.md"]
    stats = run(capsys, "stats", "idx")[1].split()
    assert stats[stats.index("long_line") + 1] == "1" and stats[stats.index("unpacks_too_large") + 1] == "2"
