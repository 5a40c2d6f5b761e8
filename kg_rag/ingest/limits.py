"""What one input file may cost before it is skipped: unpacked sizes and line lengths, checked before the work.

A hostile file is small on disk and huge once read: a PDF stream or a ``.docx`` zip member that inflates a
thousandfold, or a line without whitespace that the splitter takes apart one character at a time. Every such
file is skipped, counted and named with a one-line reason (``unpacks_too_large``, ``long_line``), and the
rest of the folder is read. The bounds (see ``docs/guarantees.md``):

* **PDF**: each stream inflates to at most pypdf's own limit (75 MB), and all the streams of one file together
  to at most :data:`PDF_MAX_UNPACKED_BYTES` — pypdf limits a stream, not a file, so without a file budget a
  file of many streams just under the limit would still inflate without bound.
* **Word** (``.docx``): the sizes the zip directory declares are summed *before anything is inflated* (Python's
  ``zipfile`` never inflates a member past its declared size): at most :data:`DOCX_MAX_UNPACKED_BYTES` in all
  and :data:`DOCX_MAX_XML_BYTES` of XML; the XML's tags are then counted by streaming it in 1 MiB blocks, at
  most :data:`DOCX_MAX_TAGS` (python-docx holds a few hundred bytes per element and takes tens of microseconds
  over each, so the count of elements, not their bytes, is what costs).
* **Text** of every format, before splitting: no line longer than :data:`MAX_LINE_CHARS` characters.
"""

from __future__ import annotations

import io
import threading
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import partial
from typing import TypeVar

from kg_rag.errors import InputError

T = TypeVar("T")

PDF_MAX_UNPACKED_BYTES = 256 << 20
"""Most bytes all the streams of one PDF may inflate to: far above what real filings inflate to (measured:
evaluation/design-figures.md), far below what a decompression bomb asks for."""
DOCX_MAX_UNPACKED_BYTES = 256 << 20
"""Most bytes the members of one ``.docx`` may declare in all (images included; python-docx reads them all)."""
DOCX_MAX_XML_BYTES = 32 << 20
"""Most bytes of XML one ``.docx`` may declare (a 600-page text document has about 3 MB)."""
DOCX_MAX_TAGS = 500_000
"""Most XML tags (``<`` characters: XML escapes the ones in text) in one ``.docx`` (a 600-page text document
has about 70 000)."""
MAX_LINE_CHARS = 1_000_000
"""Longest line (characters between line breaks) of a document's text that is split into chunks."""

UNPACKS_TOO_LARGE = "unpacks_too_large"
LONG_LINE = "long_line"


class OverLimit(InputError):
    """A file over one of the bounds above; ``reason`` is the skip reason it is counted under."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def _mib(n: int) -> str:
    return f"{n / (1 << 20):g} MiB"


def text_problem(text: str) -> str | None:
    """Why ``text`` is not split (a line over :data:`MAX_LINE_CHARS`), or ``None``. Linear in the text, without
    copying it: lines are found with ``str.find``."""
    if len(text) <= MAX_LINE_CHARS:
        return None
    start, end_of_text = 0, len(text)
    while start < end_of_text:
        end = text.find("\n", start)
        end = end_of_text if end < 0 else end
        if end - start > MAX_LINE_CHARS:
            return f"a line of {end - start} characters (at most {MAX_LINE_CHARS} are split)"
        start = end + 1
    return None


def check_text(text: str) -> None:
    """:class:`OverLimit` (``long_line``) when :func:`text_problem` finds a problem."""
    problem = text_problem(text)
    if problem:
        raise OverLimit(LONG_LINE, problem)


def check_docx(raw: bytes) -> None:
    """:class:`OverLimit` (``unpacks_too_large``) for a ``.docx`` over the bounds, read from its zip directory
    before any member is inflated; the XML elements are counted by streaming (1 MiB in memory at a time). A file
    that is no zip is left to python-docx to refuse."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
    except (zipfile.BadZipFile, OSError, ValueError):
        return
    with archive:
        members = archive.infolist()
        total = sum(m.file_size for m in members)
        if total > DOCX_MAX_UNPACKED_BYTES:
            raise OverLimit(
                UNPACKS_TOO_LARGE,
                f"its zip members unpack to {total} bytes (at most {_mib(DOCX_MAX_UNPACKED_BYTES)}; a zip bomb?)",
            )
        xml = [m for m in members if m.filename.endswith((".xml", ".rels"))]
        xml_bytes = sum(m.file_size for m in xml)
        if xml_bytes > DOCX_MAX_XML_BYTES:
            raise OverLimit(
                UNPACKS_TOO_LARGE,
                f"its XML unpacks to {xml_bytes} bytes (at most {_mib(DOCX_MAX_XML_BYTES)}; a zip bomb?)",
            )
        tags = 0
        for member in xml:
            try:
                with archive.open(member) as fh:
                    for block in iter(partial(fh.read, 1 << 20), b""):
                        tags += block.count(b"<")
                        if tags > DOCX_MAX_TAGS:
                            raise OverLimit(
                                UNPACKS_TOO_LARGE, f"its XML holds more than {DOCX_MAX_TAGS} tags (a zip bomb?)"
                            )
            except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError):
                return  # damaged or encrypted: python-docx names the problem


_PDF_BUDGET: ContextVar[list[int] | None] = ContextVar("kg_rag_pdf_budget", default=None)
_HOOK_LOCK = threading.Lock()


@contextmanager
def pdf_budget(limit: int | None = None) -> Iterator[None]:
    """Within the block, all the streams pypdf decodes may inflate to ``limit`` bytes in all (default
    :data:`PDF_MAX_UNPACKED_BYTES`); one more raises :class:`PdfBudgetExceeded` (a pypdf ``LimitReachedError``,
    so pypdf passes it on as it does its own limits). Per context (a ``ContextVar``): other threads and code
    outside the block decode as before."""
    _hook_pypdf()
    limit = PDF_MAX_UNPACKED_BYTES if limit is None else limit
    token = _PDF_BUDGET.set([limit, limit])
    try:
        yield
    finally:
        _PDF_BUDGET.reset(token)


def pdf_budget_spent() -> bool:
    """Whether the current :func:`pdf_budget` ran out (pypdf may have caught the error on the way)."""
    budget = _PDF_BUDGET.get()
    return budget is not None and budget[0] < 0


def read_pdf(read: Callable[[], T], limit: int | None = None) -> T:
    """``read()`` (pypdf work) within a :func:`pdf_budget`; :class:`OverLimit` when the budget ran out, whether
    pypdf passed the error on or caught it. pypdf's own limits (``LimitReachedError``) pass through."""
    from pypdf.errors import LimitReachedError

    with pdf_budget(limit):
        try:
            result = read()
        except LimitReachedError as exc:
            if pdf_budget_spent():
                raise OverLimit(UNPACKS_TOO_LARGE, str(exc)) from None
            raise
        if pdf_budget_spent():
            raise OverLimit(
                UNPACKS_TOO_LARGE, f"its streams inflate past {_mib(_budget_limit())} (a decompression bomb?)"
            )
        return result


def _budget_limit() -> int:
    budget = _PDF_BUDGET.get()
    return budget[1] if budget is not None else PDF_MAX_UNPACKED_BYTES


def _budget_error() -> type[Exception]:
    from pypdf.errors import LimitReachedError

    class PdfBudgetExceeded(LimitReachedError):
        """All the streams of one PDF inflated past :data:`PDF_MAX_UNPACKED_BYTES`."""

    return PdfBudgetExceeded


def _hook_pypdf() -> None:
    """Count what pypdf's one stream decoder (``pypdf.filters.decode_stream_data``, which every stream read goes
    through) returns against the current budget. Installed once; without a budget set it only passes through."""
    import pypdf.filters as filters

    with _HOOK_LOCK:
        original = filters.decode_stream_data
        if getattr(original, "kg_rag_budget", False):
            return
        error = _budget_error()

        def decode_stream_data(stream, *args, **kwargs):  # type: ignore[no-untyped-def]
            budget = _PDF_BUDGET.get()
            if budget is not None and budget[0] < 0:  # spent: nothing more is inflated
                raise error(f"its streams inflate past {_mib(budget[1])} (a decompression bomb?)")
            data = original(stream, *args, **kwargs)
            if budget is not None:
                budget[0] -= len(data)
                if budget[0] < 0:
                    raise error(f"its streams inflate past {_mib(budget[1])} (a decompression bomb?)")
            return data

        decode_stream_data.kg_rag_budget = True  # type: ignore[attr-defined]
        filters.decode_stream_data = decode_stream_data
