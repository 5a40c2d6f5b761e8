"""Loading text, Markdown, PDF, HTML, Word and CSV files and splitting them into token-sized chunks.

Formats, by file suffix, and what reads them: ``.txt .md .markdown .rst .text`` — decoded as below; ``.pdf`` —
``pypdf`` (one Document per page); ``.html .htm .xhtml`` — BeautifulSoup + ``markdownify``; ``.docx`` —
``python-docx``; ``.csv .tsv`` — Python's ``csv`` module (see :mod:`kg_rag.ingest.formats`). Any other file is
not read but **counted and named** (``unsupported_format``), as are hidden files and folders (``hidden``: names
starting with a dot, such as ``.git``), so nothing in a folder is passed over in silence.

Document ids are the file's path relative to the folder *including the folder's own name*
(``policies/old.md`` for ``--docs ./policies``), so two folders with a ``README.md`` never collide and ids are
the same on every machine; ``prefix`` replaces the folder name when two folders share one. Every document
carries a sha256 of its bytes, so re-indexing an unchanged file costs nothing.

Loading is defensive: binary files are skipped, links that lead out of the folder are not followed unless
asked, an unreadable file is named, counted and skipped, and a PDF without a text layer is reported. A file
that would unpack past a size limit (a decompression bomb) or holds a line too long to split is skipped the
same way, before the work (:mod:`kg_rag.ingest.limits`). Text is
decoded as strict UTF-8 (or UTF-16/32 with a byte-order mark); a file that is not is decoded with the encoding
``chardetng`` (Firefox's detector for unlabelled legacy text, which holds up on short texts) guesses, and the
report names the file and the encoding used (``guessed_encoding``); ``encoding=`` forces one for every file.
Splitting goes through ``langchain-text-splitters`` with the (offline) tiktoken ``cl100k_base`` encoding; the
seed's defaults are 512 tokens with 24 overlap.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from langchain_core.documents import Document

from kg_rag.errors import InputError, InputNotFoundError
from kg_rag.ingest.formats import (
    CSV_SUFFIXES,
    DOCX_SUFFIXES,
    HTML_SUFFIXES,
    MARKDOWN_SUFFIXES,
    markdown_title,
    read_csv,
    read_docx,
    read_html,
)
from kg_rag.ingest.limits import UNPACKS_TOO_LARGE, OverLimit, check_docx, check_text, read_pdf
from kg_rag.model.records import Chunk
from kg_rag.model.report import IngestReport
from kg_rag.tokens import ENCODING_NAME, count_tokens

logger = logging.getLogger(__name__)

TEXT_SUFFIXES = {".txt", ".md", ".markdown", ".rst", ".text"}
PDF_SUFFIXES = {".pdf"}
SUPPORTED_SUFFIXES = TEXT_SUFFIXES | PDF_SUFFIXES | HTML_SUFFIXES | DOCX_SUFFIXES | CSV_SUFFIXES
FORMATS = {
    "text": "decoded text (UTF-8/16/32, else the encoding chardetng guesses, named in the report)",
    "pdf": "pypdf",
    "html": "BeautifulSoup + markdownify",
    "docx": "python-docx",
    "csv": "Python's csv module",
}
"""Which library reads which kind of file (what ``kg-rag index --help`` and docs/indexing.md say)."""
MAX_FILE_BYTES = 200 << 20
"""Larger files are skipped (counted as ``too_large``)."""


def load_documents(
    path: str | Path,
    *,
    recursive: bool = True,
    prefix: str | None = None,
    follow_links: bool = False,
    report: IngestReport | None = None,
    encoding: str | None = None,
) -> list[Document]:
    """Load one file or every supported file under a folder.

    Each ``Document`` has ``metadata = {"doc_id", "source", "content_hash", "page"?}`` (see the module
    docstring for ids). PDFs give one Document per page with text. Problems with single files are recorded
    in ``report`` (skipped, by reason, with the file named) and never stop the folder; only "nothing usable
    here" raises (``FileNotFoundError`` / ``ValueError`` naming the path). With a ``report`` the problems are
    the report's to show (logged at INFO); without one they are logged as warnings.

    ``encoding`` (a Python codec name, e.g. ``cp1252``) decodes every text, CSV and HTML file with it, strictly
    (a file that is not valid in it is skipped as unreadable); by default text that is not UTF-8 is decoded
    with a guessed encoding, recorded per file as ``guessed_encoding`` (file name and encoding).
    """
    if encoding is not None:
        encoding = check_encoding(encoding)
    caller_report = report is not None
    report = report if report is not None else IngestReport()
    note = logger.info if caller_report else logger.warning  # a report given is shown by its owner (the CLI)
    root = Path(path)
    if not root.exists():
        raise InputNotFoundError(f"{root}: no such file or folder")
    resolved_root = root.resolve()
    unsupported: list[Path] = []
    if root.is_file():
        files = [root] if root.suffix.lower() in SUPPORTED_SUFFIXES else []
        unsupported = [] if files else [root]
        base = root.parent
    else:
        files, unsupported = _folder_files(root, recursive, report)
        base = root
    label = document_label(root, prefix)
    for file in unsupported:
        report.skip("unsupported_format", example=_path_text(file))
    if unsupported:  # named in the report when there is one (the CLI prints it), else in the log
        note("%s: %s", root, _unsupported_summary(unsupported))
    docs: list[Document] = []
    usable = 0
    for file in files:
        # an undecodable file name (Latin-1 on a UTF-8 system) would carry lone surrogates into the id
        relative = _path_text(file.relative_to(base).as_posix())
        doc_id = f"{label}/{relative}" if label else relative
        if not _inside(file, resolved_root if root.is_dir() else resolved_root.parent, follow_links, report, note):
            continue
        if not file.is_file():
            if file.is_symlink() and not file.exists():  # a link to nothing: say so, not lose it silently
                report.skip("broken_link", example=f"{file} -> {_path_text(str(file.readlink()))}")
                note("%s: a link to a file that does not exist; skipped", file)
            continue
        try:
            size = file.stat().st_size
            if size > MAX_FILE_BYTES:
                report.skip("too_large", example=f"{file} ({size} bytes)")
                continue
            raw = file.read_bytes()
        except OSError as exc:
            report.skip("unreadable", example=f"{file}: {exc.strerror or exc}")
            note("%s: cannot read (%s); skipped", file, exc.strerror or exc)
            continue
        digest = hashlib.sha256(raw).hexdigest()
        suffix = file.suffix.lower()
        if suffix in PDF_SUFFIXES:
            pages = _load_pdf(file, doc_id, raw, report, note)
            for page in pages:
                page.metadata["content_hash"] = digest
            docs.extend(pages)
            usable += bool(pages)
            continue
        loaded = _load_other(file, suffix, raw, report, note, encoding)
        if loaded is None:
            continue
        text, title = loaded
        if _over_limit(file, check_text, text, report, note):
            continue
        if not text.strip():
            report.skip("empty_file", example=str(file))
            continue
        if title is None and suffix in MARKDOWN_SUFFIXES:  # read once the text is known to be within the limits
            title = markdown_title(text)
        metadata = {"doc_id": doc_id, "source": _path_text(file), "content_hash": digest}
        if title:
            metadata["title"] = title
        docs.append(Document(page_content=text, metadata=metadata))
        usable += 1
    if not files:
        found = f"; {_unsupported_summary(unsupported)}" if unsupported else ""
        raise InputError(f"{root}: no {_suffix_list()} files found{found}")
    if not usable and not docs:
        logger.warning("%s: no readable text in %d file(s)", root, len(files))
    return docs


def document_label(path: str | Path, prefix: str | None = None) -> str:
    """The first part of the ids of the documents loaded from ``path``: ``prefix``, else the folder's name (a
    file's own folder for a file)."""
    if prefix is not None:
        return prefix
    root = Path(path)
    if root.is_file():
        return root.resolve().parent.name or ""
    return root.resolve().name or "docs"


def document_ids_scope(path: str | Path, prefix: str | None = None):
    """Which document ids loading ``path`` can produce: a predicate. For a folder, every id under its label
    (``policies/...``); for a file, that file's id only. Used to tell the documents of this input from those
    of other sources when a re-index would delete some (:mod:`kg_rag.ingest.reindex`)."""
    root = Path(path)
    label = document_label(root, prefix)
    if root.is_file():
        own = f"{label}/{_path_text(root.name)}" if label else _path_text(root.name)
        return lambda doc_id: doc_id == own
    start = f"{label}/" if label else ""
    return lambda doc_id: doc_id.startswith(start)


def _folder_files(root: Path, recursive: bool, report: IngestReport) -> tuple[list[Path], list[Path]]:
    """(supported files, unsupported files) under ``root``, sorted. Hidden entries (``.git``, ``.DS_Store``)
    are not entered or read, only counted; links to folders are not followed (as before)."""
    files: list[Path] = []
    unsupported: list[Path] = []
    for folder, dirnames, filenames in os.walk(root):
        here = Path(folder)
        if not recursive:
            dirnames[:] = []
        for name in sorted(d for d in dirnames if d.startswith(".")):
            report.skip("hidden", example=_path_text(here / name) + "/")
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        links = [d for d in dirnames if (here / d).is_symlink()]  # os.walk lists them but does not enter them
        for name in [*filenames, *links]:
            file = here / name
            if name.startswith("."):
                report.skip("hidden", example=_path_text(file))
            elif name in links or file.suffix.lower() in SUPPORTED_SUFFIXES:
                files.append(file)
            else:
                unsupported.append(file)
    return sorted(files), sorted(unsupported)


def _suffix_list() -> str:
    shown = [".txt", ".md", ".pdf", ".html", ".docx", ".csv"]
    return ", ".join(shown[:-1]) + f" or {shown[-1]}"


def _unsupported_summary(files: list[Path]) -> str:
    by_suffix = Counter(file.suffix.lower() or "no suffix" for file in files)
    kinds = ", ".join(f"{n} {s}" for s, n in sorted(by_suffix.items(), key=lambda kv: (-kv[1], kv[0])))
    named = ", ".join(_path_text(f) for f in files[:5]) + (" ..." if len(files) > 5 else "")
    return f"{len(files)} unsupported file(s) not read ({kinds}): {named}"


def _load_other(
    file: Path, suffix: str, raw: bytes, report: IngestReport, note: Any, encoding: str | None
) -> tuple[str, str | None] | None:
    """Text (and a title) of a text, HTML, Word or CSV file; ``None`` when it was skipped (counted, named)."""
    try:
        if suffix in HTML_SUFFIXES:
            if encoding:
                return read_html(_decode(raw, encoding, strict=True))
            guess = _html_guess(raw)
            if guess:
                _guessed(file, guess, report, note)
                return read_html(_decode(raw, guess, strict=False))
            return read_html(raw)  # UTF-8, a byte-order mark or a declared charset: BeautifulSoup reads it
        if suffix in DOCX_SUFFIXES:
            if _over_limit(file, check_docx, raw, report, note):  # before python-docx inflates anything
                return None
            return read_docx(raw)
        text, guessed = decode_bytes(raw, encoding)
    except ValueError as exc:
        report.skip("unreadable", example=f"{file}: {exc}")
        note("%s: %s; skipped", file, exc)
        return None
    if text is None:
        report.skip("binary_file", example=str(file))
        note("%s: looks like binary data, not text; skipped", file)
        return None
    if guessed:
        _guessed(file, guessed, report, note)
    if suffix in CSV_SUFFIXES:
        try:
            return read_csv(text, suffix)
        except ValueError as exc:
            report.skip("unreadable", example=f"{file}: {exc}")
            note("%s: %s; skipped", file, exc)
            return None
    return text, None


def _over_limit(file: Path, check: Any, content: Any, report: IngestReport, note: Any) -> bool:
    """``check(content)``; when the file is over a limit (:class:`OverLimit`), count and name it and say so."""
    try:
        check(content)
    except OverLimit as exc:
        report.skip(exc.reason, example=f"{_path_text(file)}: {exc}")
        note("%s: %s; skipped", file, exc)
        return True
    return False


def _guessed(file: Path, encoding: str, report: IngestReport, note: Any) -> None:
    report.warn("guessed_encoding", example=f"{_path_text(file)} ({encoding})")
    note("%s: not UTF-8; decoded as %s (a guess: pass an encoding to force one)", file, encoding)


def _inside(file: Path, root: Path, follow_links: bool, report: IngestReport, note: Any) -> bool:
    """Whether ``file`` may be read: always when it is inside ``root``; a link out of it only when asked."""
    if follow_links:
        return True
    try:
        target = file.resolve()
    except (OSError, RuntimeError) as exc:  # a link loop
        report.skip("unreadable", example=f"{file}: {exc}")
        return False
    if target == root or root in target.parents:
        return True
    report.skip("link_outside_folder", example=f"{file} -> {target}")
    note("%s: links outside the folder (to %s); not followed (use --follow-links)", file, target)
    return False


_PYTHON_CODECS = {
    "shift_jis": "cp932",
    "euc-kr": "cp949",
    "big5": "big5hkscs",
    "iso-8859-8-i": "iso8859_8",
    "windows-874": "cp874",
    "x-mac-cyrillic": "mac_cyrillic",
}
"""The Python codec for the WHATWG encodings chardetng names that Python spells otherwise (the WHATWG
``Shift_JIS`` and ``EUC-KR`` are Microsoft's supersets, as in every browser)."""


def check_encoding(encoding: str) -> str:
    """``encoding`` when Python has a codec of that name; ``ValueError`` naming it otherwise."""
    import codecs

    try:
        codecs.lookup(encoding)
    except LookupError:
        raise InputError(f"unknown encoding {encoding!r} (a Python codec name, such as cp1252 or latin-1)") from None
    return encoding


def decode_text(raw: bytes, encoding: str | None = None) -> str | None:
    """Bytes of a text file as text, or ``None`` when they are binary data (see :func:`decode_bytes`)."""
    return decode_bytes(raw, encoding)[0]


def decode_bytes(raw: bytes, encoding: str | None = None) -> tuple[str | None, str | None]:
    """``(text, guessed encoding)``: the text (``None`` for binary data) and, when the bytes did not say how
    they are encoded, the encoding that was guessed (``None`` otherwise).

    A byte-order mark, then strict UTF-8 (the common case: valid UTF-8 is almost never anything else); otherwise
    ``chardetng``'s guess. ``encoding`` forces a codec, strictly: bytes not valid in it raise ``ValueError``.
    Text with NUL bytes or many control characters after decoding is binary.
    """
    if not raw:
        return "", None
    if encoding is not None:
        return _textual(_decode(raw, encoding, strict=True)), None
    for bom, codec in (
        (b"\xef\xbb\xbf", "utf-8-sig"),
        (b"\xff\xfe\x00\x00", "utf-32"),
        (b"\x00\x00\xfe\xff", "utf-32"),
    ):
        if raw.startswith(bom):
            return _textual(raw.decode(codec, errors="replace")), None
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return _textual(raw.decode("utf-16", errors="replace")), None
    try:
        return _textual(raw.decode("utf-8")), None
    except UnicodeDecodeError:
        pass
    if b"\x00" in raw[:8192]:  # no 8-bit text holds NULs: do not ask a detector to name binary data
        return None, None
    guess = guess_encoding(raw)
    return _textual(_decode(raw, guess, strict=False)), guess


def _decode(raw: bytes, encoding: str, *, strict: bool) -> str:
    """``raw`` decoded as ``encoding`` (a Python or WHATWG name); strictly, bytes not valid in it raise
    ``ValueError``; else they become U+FFFD. A UTF-8 byte-order mark is dropped."""
    codec = _PYTHON_CODECS.get(encoding.lower(), encoding)
    if codec.lower().replace("_", "-") in ("utf-8", "utf8"):
        codec = "utf-8-sig"
    try:
        return raw.decode(codec, errors="strict" if strict else "replace")
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid {encoding} (byte 0x{raw[exc.start]:02x} at offset {exc.start})") from None


def guess_encoding(raw: bytes) -> str:
    """The legacy encoding of bytes that are not UTF-8, as ``chardetng`` (the detector Firefox uses for
    unlabelled pages) names it, e.g. ``windows-1252``, ``windows-1251``, ``Shift_JIS``."""
    from chardetng_py import EncodingDetector

    detector = EncodingDetector()
    detector.feed(raw, last=True)
    return detector.guess(tld=None, allow_utf8=False)


def _html_guess(raw: bytes) -> str | None:
    """The encoding to read an HTML file with when its bytes do not say (no byte-order mark, not UTF-8, no
    ``<meta charset>``): ``None`` when BeautifulSoup can tell on its own."""
    from bs4.dammit import EncodingDetector

    if raw.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        return None
    try:
        raw.decode("utf-8")
        return None
    except UnicodeDecodeError:
        pass
    if EncodingDetector.find_declared_encoding(raw, is_html=True):
        return None
    return guess_encoding(raw)


def _textual(text: str) -> str | None:
    sample = text[:8192]
    if "\x00" in sample:
        return None
    control = sum(1 for ch in sample if ord(ch) < 32 and ch not in "\n\r\t\f\v")
    return None if sample and control / len(sample) > 0.05 else text


def _load_pdf(file: Path, doc_id: str, raw: bytes, report: IngestReport, note: Any) -> list[Document]:
    """One Document per page with text. An unreadable file is counted and named; a page whose text cannot be
    extracted is skipped with a warning; a PDF with no text layer at all (a scan) is reported. A file over a
    limit — streams inflating past the budget, a page with a line too long to split — is counted and named."""
    try:
        pages = _pdf_text(file)
        for _, text in pages:
            check_text(text)
    except OverLimit as exc:
        report.skip(exc.reason, example=f"{_path_text(file)}: {exc}")
        note("%s: %s; skipped", file, exc)
        return []
    except ValueError as exc:
        report.skip("unreadable", example=str(exc))
        note("%s; skipped", exc)
        return []
    docs = [
        Document(page_content=text, metadata={"doc_id": doc_id, "source": _path_text(file), "page": page})
        for page, text in pages
        if text.strip()
    ]
    if pages and not docs:
        report.warn("pdf_without_text", example=str(file))
        note("%s: no text layer (a scanned PDF?); nothing to index — run OCR first", file)
    return docs


def _pdf_text(file: Path) -> list[tuple[int, str]]:
    """The pages' text, within the file's inflation budget (:func:`~kg_rag.ingest.limits.read_pdf`).

    pypdf's parsing limits guard against hostile files; large real filings (e.g. 10-Qs with huge arrays) can
    exceed its element counts, so a file that reaches one of those is read once more with them raised. A file
    over any other limit (a stream that inflates too far), or over one the second time too, is
    :class:`OverLimit`."""
    from pypdf.errors import LimitReachedError

    try:
        return read_pdf(lambda: _pdf_pages(file))
    except LimitReachedError as exc:
        if not _RAISED_PDF_LIMITS.search(str(exc)):
            raise OverLimit(UNPACKS_TOO_LARGE, f"over pypdf's safety limits ({_first_line(exc)})") from None
        logger.info("%s: pypdf safety limit reached (%s); retrying with raised limits", file, _first_line(exc))
    try:
        from pypdf import apply_configuration
    except ImportError:  # older pypdf: no per-call limits
        raise OverLimit(UNPACKS_TOO_LARGE, "over pypdf's parsing limits") from None
    try:
        with apply_configuration(array_maximum_element_count=20_000_000, dictionary_maximum_element_count=2_000_000):
            return read_pdf(lambda: _pdf_pages(file))
    except LimitReachedError as exc:
        raise OverLimit(UNPACKS_TOO_LARGE, f"over pypdf's safety limits ({_first_line(exc)})") from None


_RAISED_PDF_LIMITS = re.compile(r"array element count|dictionary entries", re.IGNORECASE)
"""pypdf's messages for the limits a second read raises (array and dictionary sizes)."""


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _pdf_pages(file: Path) -> list[tuple[int, str]]:
    from pypdf import PdfReader
    from pypdf.errors import LimitReachedError, PyPdfError

    try:
        reader = PdfReader(str(file))
        n_pages = len(reader.pages)
    except LimitReachedError:
        raise
    except (PyPdfError, OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(f"{file}: cannot read PDF ({type(exc).__name__}: {exc})") from exc
    pages = []
    for i in range(n_pages):
        try:
            pages.append((i + 1, reader.pages[i].extract_text() or ""))
        except LimitReachedError:
            raise
        except Exception as exc:  # pypdf raises many types on odd pages; one page must not sink the file
            logger.warning("%s: skipping page %d (%s: %s)", file, i + 1, type(exc).__name__, exc)
    return pages


def _path_text(path: Path | str) -> str:
    """A path as text every store can hold: an undecodable file name (Latin-1 bytes on a UTF-8 system) would
    otherwise carry lone surrogates into ids and sources. Its bytes are written as escapes (``caf\xe9.txt``),
    so two such names never become one id."""
    return os.fsencode(str(path)).decode("utf-8", "backslashreplace")


def chunk_id_for(doc_id: str, index: int, text: str) -> str:
    """Chunk id: document id, position, and a content hash so changed text gets a new id."""
    digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:10]
    return f"{doc_id}#{index:04d}-{digest}"


def split_documents(
    documents: Iterable[Document],
    *,
    chunk_size: int = 512,
    chunk_overlap: int = 24,
    encoding_name: str = ENCODING_NAME,
    report: IngestReport | None = None,
) -> list[Chunk]:
    """Token-based splitting into :class:`Chunk` objects (numbered per document).

    Text is split at blank lines, then line breaks, then spaces; a run without whitespace longer than a chunk
    (CJK text, base64, a hex dump) is cut into token windows, not taken apart character by character. A
    document with a line over :data:`~kg_rag.ingest.limits.MAX_LINE_CHARS` is not split: it is logged and
    counted in ``report`` (``long_line``), which :func:`load_documents` already does for files.
    """
    if chunk_size <= 0:
        raise InputError(f"chunk_size must be > 0, got {chunk_size}")
    if not 0 <= chunk_overlap < chunk_size:
        raise InputError(f"chunk_overlap must be in [0, chunk_size), got {chunk_overlap}")
    from kg_rag.ingest.defined import annotate
    from kg_rag.ingest.limits import LONG_LINE, text_problem
    from kg_rag.tokens import get_encoding

    encoding = get_encoding(encoding_name)
    splitter = _recursive_splitter(encoding, chunk_size, chunk_overlap)
    chunks: list[Chunk] = []
    counters: dict[str, int] = {}
    for doc in documents:
        meta = dict(doc.metadata or {})
        doc_id = str(
            meta.get("doc_id") or meta.get("source") or hashlib.sha1(doc.page_content.encode()).hexdigest()[:12]
        )
        problem = text_problem(doc.page_content)
        if problem:
            logger.warning("%s: %s; not split", doc_id, problem)
            if report is not None:
                report.skip(LONG_LINE, example=f"{doc_id}: {problem}")
            continue
        for piece in _pieces(splitter, encoding, doc.page_content, chunk_size, chunk_overlap):
            if not piece.strip():
                continue
            i = counters.get(doc_id, 0)
            counters[doc_id] = i + 1
            chunks.append(
                Chunk(
                    id=chunk_id_for(doc_id, i, piece),
                    text=piece,
                    doc_id=doc_id,
                    metadata={k: v for k, v in meta.items() if k not in ("doc_id", "content_hash")},
                    n_tokens=count_tokens(piece, encoding_name),
                )
            )
    annotate(chunks)  # what each document's defined terms ("the Company") stand for, on every chunk of it
    return chunks


def _pieces(splitter: Any, encoding: Any, text: str, chunk_size: int, chunk_overlap: int) -> Iterable[str]:
    """The splitter's pieces, a piece over ``chunk_size`` tokens (a run without whitespace) cut into token
    windows that overlap by ``chunk_overlap`` tokens, at character boundaries."""
    for piece in splitter.split_text(text):
        tokens = encoding.encode(piece, disallowed_special=())
        if len(tokens) <= chunk_size:
            yield piece
            continue
        _, starts = encoding.decode_with_offsets(tokens)
        step = chunk_size - chunk_overlap
        for first in range(0, len(tokens), step):
            last = first + chunk_size
            yield piece[starts[first] : starts[last] if last < len(tokens) else len(piece)]
            if last >= len(tokens):
                break


def _recursive_splitter(encoding, chunk_size: int, chunk_overlap: int):
    """A recursive character splitter measuring length in tokens of the given (already loaded) encoding, down
    to spaces: what is still too long is cut by :func:`_pieces` (the splitter's last resort, one character at a
    time, costs about 20 s and 50 bytes per character of a megabyte without whitespace)."""
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    def length(text: str) -> int:
        return len(encoding.encode(text, disallowed_special=()))

    return RecursiveCharacterTextSplitter(
        chunk_size=chunk_size, chunk_overlap=chunk_overlap, length_function=length, separators=["\n\n", "\n", " "]
    )
