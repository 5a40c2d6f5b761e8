"""Loading text / markdown / PDF files and splitting them into token-sized chunks.

Splitting goes through ``langchain-text-splitters`` with the (offline) tiktoken ``cl100k_base``
encoding; the seed's defaults are 512 tokens with 24 overlap.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable
from pathlib import Path

from langchain_core.documents import Document

from kg_rag.graph import Chunk
from kg_rag.tokens import ENCODING_NAME, count_tokens, ensure_offline_tiktoken

logger = logging.getLogger(__name__)

TEXT_SUFFIXES = {".txt", ".md", ".markdown", ".rst", ".text"}
PDF_SUFFIXES = {".pdf"}
SUPPORTED_SUFFIXES = TEXT_SUFFIXES | PDF_SUFFIXES


def load_documents(path: str | Path, *, recursive: bool = True) -> list[Document]:
    """Load one file or every supported file under a folder.

    Each ``Document`` has ``metadata = {"doc_id", "source", "page"?}``; ``doc_id`` is the path relative to
    the folder given (stable across machines). PDFs give one Document per page.
    Raises ``FileNotFoundError`` / ``ValueError`` with the path when nothing usable is found.
    """
    root = Path(path)
    if not root.exists():
        raise FileNotFoundError(f"{root}: no such file or folder")
    if root.is_file():
        files, base = [root], root.parent
    else:
        pattern = "**/*" if recursive else "*"
        files = sorted(p for p in root.glob(pattern) if p.is_file() and p.suffix.lower() in SUPPORTED_SUFFIXES)
        base = root
    if not files:
        raise ValueError(f"{root}: no .txt, .md or .pdf files found")
    docs: list[Document] = []
    for file in files:
        suffix = file.suffix.lower()
        doc_id = file.relative_to(base).as_posix()
        if suffix in PDF_SUFFIXES:
            docs.extend(_load_pdf(file, doc_id))
        elif suffix in TEXT_SUFFIXES:
            text = file.read_text(encoding="utf-8", errors="replace")
            docs.append(Document(page_content=text, metadata={"doc_id": doc_id, "source": str(file)}))
        else:
            raise ValueError(f"{file}: unsupported file type {suffix!r} (use .txt, .md or .pdf)")
    return docs


def _load_pdf(file: Path, doc_id: str) -> list[Document]:
    """One Document per page with text. An unreadable file raises ``ValueError`` naming it; a page whose
    text cannot be extracted (pypdf limits, broken content streams) is skipped with a warning."""
    from pypdf.errors import LimitReachedError

    try:
        pages = _pdf_pages(file)
    except LimitReachedError:
        # pypdf's parsing limits guard against hostile files; large real filings (e.g. 10-Qs with huge
        # arrays) can exceed them, so retry once with raised limits.
        logger.warning("%s: pypdf safety limit reached; retrying with raised limits", file)
        try:
            from pypdf._configuration import apply_configuration
        except ImportError as exc:  # older pypdf: no per-call limits
            raise ValueError(f"{file}: PDF exceeds pypdf's parsing limits") from exc
        with apply_configuration(array_maximum_element_count=20_000_000, dictionary_maximum_element_count=2_000_000):
            pages = _pdf_pages(file)
    return [
        Document(page_content=text, metadata={"doc_id": doc_id, "source": str(file), "page": page})
        for page, text in pages
        if text.strip()
    ]


def _pdf_pages(file: Path) -> list[tuple[int, str]]:
    from pypdf import PdfReader
    from pypdf.errors import LimitReachedError, PyPdfError

    try:
        reader = PdfReader(str(file))
        n_pages = len(reader.pages)
    except LimitReachedError:
        raise
    except (PyPdfError, OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{file}: cannot read PDF ({type(exc).__name__}: {exc})") from exc
    pages = []
    for i in range(n_pages):
        try:
            pages.append((i + 1, reader.pages[i].extract_text() or ""))
        except LimitReachedError:
            raise
        except Exception as exc:  # pypdf raises many types on odd pages; one page must not sink the file
            logger.warning("%s: skipping page %d (%s: %s)", file, i + 1, type(exc).__name__, exc)
    return pages


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
) -> list[Chunk]:
    """Token-based splitting into :class:`Chunk` objects (numbered per document)."""
    if chunk_size <= 0:
        raise ValueError(f"chunk_size must be > 0, got {chunk_size}")
    if not 0 <= chunk_overlap < chunk_size:
        raise ValueError(f"chunk_overlap must be in [0, chunk_size), got {chunk_overlap}")
    ensure_offline_tiktoken()
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter.from_tiktoken_encoder(
        encoding_name=encoding_name, chunk_size=chunk_size, chunk_overlap=chunk_overlap
    )
    chunks: list[Chunk] = []
    counters: dict[str, int] = {}
    for doc in documents:
        meta = dict(doc.metadata or {})
        doc_id = str(
            meta.get("doc_id") or meta.get("source") or hashlib.sha1(doc.page_content.encode()).hexdigest()[:12]
        )
        for piece in splitter.split_text(doc.page_content):
            if not piece.strip():
                continue
            i = counters.get(doc_id, 0)
            counters[doc_id] = i + 1
            chunks.append(
                Chunk(
                    id=chunk_id_for(doc_id, i, piece),
                    text=piece,
                    doc_id=doc_id,
                    metadata={k: v for k, v in meta.items() if k != "doc_id"},
                    n_tokens=count_tokens(piece, encoding_name),
                )
            )
    return chunks
