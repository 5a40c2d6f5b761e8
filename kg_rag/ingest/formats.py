"""Text out of HTML, Word (.docx) and CSV files, through maintained libraries.

* **HTML** (``.html``, ``.htm``, ``.xhtml``): parsed by BeautifulSoup (``html.parser``, its encoding detection
  reading ``<meta charset>`` and byte-order marks), scripts, styles and other non-text elements dropped, then
  written as Markdown by ``markdownify``: headings, lists and tables keep their shape; inline markup (bold,
  links, code) becomes plain text, so sentences stay as written; link targets and images are left out. The
  ``<title>`` becomes the document's title.
* **Word** (``.docx``): ``python-docx``; paragraphs and tables in document order, headings as ``#`` lines,
  list items as ``- ``, table rows as ``| a | b |``. The core property *title* becomes the document's title.
* **Markdown** (``.md``, ``.markdown``): read as text; its first level-1 heading (``# Title`` or a line
  underlined with ``===``) becomes the document's title, as an HTML page's ``<title>`` does.
* **CSV** (``.csv``, ``.tsv``): Python's ``csv`` module, the delimiter sniffed (``, ; tab |``). The first row
  is the header; every row becomes ``column: value`` lines and rows are separated by a blank line, so the
  splitter keeps rows whole and each chunk names its columns (a row without its header means nothing to an
  extraction model). Empty cells are left out.

Each reader takes the file's bytes and returns ``(text, title)``; a file it cannot read raises ``ValueError``
with the reason (the loader names the file and counts it as ``unreadable``).
"""

from __future__ import annotations

import csv
import io
import re
from typing import Any

from kg_rag.errors import InputError
from kg_rag.model.names import heading_level, heading_text, plain_markdown

HTML_SUFFIXES = {".html", ".htm", ".xhtml"}
DOCX_SUFFIXES = {".docx"}
CSV_SUFFIXES = {".csv", ".tsv"}
MARKDOWN_SUFFIXES = {".md", ".markdown"}

MAX_TITLE_CHARS = 300
"""A longer first heading is a sentence set as a heading, not a title."""

_DROPPED_HTML = ("script", "style", "noscript", "template", "head", "svg", "canvas", "iframe", "object", "embed")
_INLINE_MARKUP = ["a", "img", "b", "strong", "i", "em", "u", "mark", "code", "s", "del", "ins", "small", "sub", "sup"]
"""Written as plain text: a link's text without its target, no image, and no ``**``/``*``/backticks inside a
sentence, so the model's verbatim evidence quotes match the chunk text."""
_BLANK_LINES = re.compile(r"\n[ \t]*(?:\n[ \t]*)+")


def _tidy(text: str) -> str:
    """Trailing spaces off, runs of blank lines down to one."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()


def read_html(raw: bytes | str) -> tuple[str, str | None]:
    """``raw``: the file's bytes (BeautifulSoup reads the declared encoding), or its text when the caller
    decoded it (an encoding forced or guessed)."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    try:
        soup = BeautifulSoup(raw, "html.parser")
    except Exception as exc:  # noqa: BLE001 - the parser is lenient; anything it still raises names the file
        raise InputError(f"cannot parse HTML ({type(exc).__name__}: {exc})") from exc
    title = soup.title.get_text(" ", strip=True) if soup.title else None
    for tag in soup(_DROPPED_HTML):
        tag.decompose()
    converter = MarkdownConverter(
        heading_style="atx",
        bullets="-",
        strip=_INLINE_MARKUP,
        escape_asterisks=False,
        escape_underscores=False,
        escape_misc=False,
    )
    return _tidy(converter.convert_soup(soup)), (" ".join(title.split()) or None) if title else None


def read_docx(raw: bytes) -> tuple[str, str | None]:
    try:
        from docx import Document
        from docx.table import Table

        document = Document(io.BytesIO(raw))
        lines: list[str] = []
        for block in document.iter_inner_content():
            if isinstance(block, Table):
                lines += _table_rows(block)
                lines.append("")
            else:
                lines += [_paragraph(block), ""]
        title = document.core_properties.title
    except Exception as exc:  # noqa: BLE001 - a damaged package raises zip, XML and key errors alike
        raise InputError(f"cannot read Word document ({type(exc).__name__}: {exc})") from exc
    return _tidy("\n".join(lines)), (" ".join(title.split()) or None) if title else None


def _paragraph(paragraph: Any) -> str:
    text = " ".join(paragraph.text.split())
    if not text:
        return ""
    style = (paragraph.style.name if paragraph.style is not None else "") or ""
    if style == "Title":
        return f"# {text}"
    if style.startswith("Heading"):
        level = style.removeprefix("Heading").strip()
        return "#" * (min(int(level), 6) if level.isdigit() else 1) + " " + text
    if style.startswith("List"):
        return f"- {text}"
    return text


def _table_rows(table: Any) -> list[str]:
    rows = []
    for row in table.rows:
        cells, seen = [], set()
        for cell in row.cells:  # a merged cell is returned once per grid column it spans
            if id(cell._tc) in seen:
                continue
            seen.add(id(cell._tc))
            cells.append(" ".join(cell.text.split()))
        if any(cells):
            rows.append("| " + " | ".join(cells) + " |")
    return rows


def read_csv(text: str, suffix: str) -> tuple[str, str | None]:
    """CSV (or TSV) text as ``column: value`` records (see the module docstring)."""
    if suffix == ".tsv":
        dialect: Any = csv.excel_tab
    else:
        try:
            dialect = csv.Sniffer().sniff(text[:65536], delimiters=",;\t|")
        except csv.Error:  # one column, or too irregular to tell: the standard comma
            dialect = csv.excel
    try:
        rows = [[" ".join(cell.split()) for cell in row] for row in csv.reader(io.StringIO(text), dialect)]
    except csv.Error as exc:
        raise InputError(f"cannot read CSV ({exc})") from exc
    rows = [row for row in rows if any(row)]
    if not rows:
        return "", None
    header, records = rows[0], rows[1:]
    out = []
    for row in records:
        names = [header[i] if i < len(header) and header[i] else f"column {i + 1}" for i in range(len(row))]
        lines = [f"{name}: {value}" for name, value in zip(names, row) if value]
        if lines:
            out.append("\n".join(lines))
    return "\n\n".join(out), None


def markdown_title(text: str) -> str | None:
    """The first level-1 heading of a Markdown text (ATX ``# Title`` or setext, underlined with ``=``), its inline
    markup (emphasis, code, links) read as plain text; ``None`` when it has none. A ``#`` line in a fenced code
    block is a comment, not a heading; an empty heading or one longer than :data:`MAX_TITLE_CHARS` is passed
    over. Read line by line (no regular expression backtracks on a long line)."""
    fence = ""
    previous = ""
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        stripped = line.lstrip(" ")
        marker = stripped[:3]
        if len(line) - len(stripped) <= 3 and marker in ("```", "~~~"):
            if not fence:
                fence = marker
            elif marker == fence:
                fence = ""
            previous = ""
            continue
        if fence:
            continue
        title: str | None = None
        if heading_level(line) == 1:
            title = heading_text(line)
        elif previous and stripped.strip() and set(stripped.strip()) == {"="} and len(line) - len(stripped) <= 3:
            title = plain_markdown(previous)  # setext: the line above a row of "="
        if title and len(title) <= MAX_TITLE_CHARS:
            return title
        previous = line if line.strip() and heading_level(line) == 0 else ""
    return None
