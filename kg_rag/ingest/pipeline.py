"""Indexing documents into a graph that already holds some: the update rules that keep what cannot be redone.

* A document is identified by its id; one seen again **replaces** its earlier version (what the old version
  said and the new one does not is forgotten).
* A document whose content hash, chunking and extraction schema are unchanged is **not re-extracted** (no LLM
  calls); only its chunks whose extraction failed earlier are tried again.
* A changed document's new extraction replaces the old version **only when every chunk succeeded**; otherwise
  the old version stays and the failure is reported. A new document whose extraction partly failed is added
  with its chunks (so dense and lexical search find it) and the failed chunks are recorded for a later retry.
  So a failing LLM never shrinks the graph.
* ``sync=True`` makes the graph hold exactly the given documents (others are removed); the default keeps them.

:func:`index_documents` (and :func:`aindex_documents`) plan, extract and commit in that order, so an
exception during extraction leaves ``kg`` untouched.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kg_rag.ingest.report import IngestReport
from kg_rag.model import Chunk, KnowledgeGraph


@dataclass
class DocumentChanges:
    """What an indexing run did, by document id (what the CLI prints and exits on)."""

    added: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    kept_old: dict[str, str] = field(default_factory=dict)
    """Changed documents whose new extraction failed: doc id -> first error; the old version is kept."""
    incomplete: dict[str, str] = field(default_factory=dict)
    """New documents added with some chunks unextracted: doc id -> first error (retried on the next update)."""
    chunks_extracted: int = 0
    chunks_failed: int = 0
    chunks_retried: int = 0
    first_error: str | None = None

    @property
    def failed(self) -> bool:
        """Whether any extraction failed (the CLI then exits 1)."""
        return bool(self.chunks_failed)

    @property
    def all_failed(self) -> bool:
        """Whether extraction was attempted and not one chunk succeeded (the CLI then keeps nothing)."""
        return bool(self.chunks_failed) and not self.chunks_extracted

    def summary(self, *, kept: bool = True) -> str:
        """One line of counts. ``kept=False``: the caller discarded this run (every extraction failed), so
        nothing was added, replaced or removed, whatever the in-memory graph holds."""
        if not kept:
            return (
                "documents: none added, replaced or removed (every extraction failed); "
                f"chunks extracted {self.chunks_extracted}, failed {self.chunks_failed}"
            )
        parts = [
            f"{len(self.added)} added",
            f"{len(self.replaced)} replaced",
            f"{len(self.unchanged)} unchanged",
        ]
        if self.removed:
            parts.append(f"{len(self.removed)} removed")
        line = "documents: " + ", ".join(parts)
        line += f"; chunks extracted {self.chunks_extracted}, failed {self.chunks_failed}"
        if self.chunks_retried:
            line += f" (of {self.chunks_retried} retried)"
        return line

    def failure_lines(self, limit: int = 10, *, kept: bool = True) -> list[str]:
        """Per-document failures (``kept`` as for :meth:`summary`: a discarded run added nothing)."""
        lines = [f"kept the old version of {d}: {e}" for d, e in self.kept_old.items()]
        if kept:
            lines += [f"added {d} without some relations: {e}" for d, e in self.incomplete.items()]
        else:
            lines += [f"not added {d}: {e}" for d, e in self.incomplete.items()]
        if not lines and self.first_error:
            lines = [f"first error: {self.first_error}"]
        if len(lines) > limit:
            lines = [*lines[:limit], f"... and {len(lines) - limit} more"]
        return lines


@dataclass
class _Plan:
    changed: dict[str, list[Chunk]]
    docs: dict[str, dict[str, Any]]
    retry: list[Chunk]
    changes: DocumentChanges

    @property
    def to_extract(self) -> list[Chunk]:
        return [c for chunks in self.changed.values() for c in chunks] + self.retry


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _group(documents: Sequence[Any]) -> dict[str, dict[str, Any]]:
    """LangChain Documents (PDF pages share a doc id) grouped by doc id, with a hash of the whole document."""
    docs: dict[str, dict[str, Any]] = {}
    for doc in documents:
        meta = dict(doc.metadata or {})
        doc_id = str(meta.get("doc_id") or meta.get("source") or content_hash(doc.page_content)[:12])
        entry = docs.setdefault(doc_id, {"pages": [], "hashes": [], "source": meta.get("source")})
        entry["pages"].append(doc)
        entry["hashes"].append(str(meta.get("content_hash") or content_hash(doc.page_content)))
    for entry in docs.values():
        hashes = list(dict.fromkeys(entry["hashes"]))
        entry["hash"] = hashes[0] if len(hashes) == 1 else content_hash("\n".join(hashes))
    return docs


def plan_documents(
    kg: KnowledgeGraph,
    documents: Sequence[Any],
    report: IngestReport,
    *,
    extract: bool,
    chunk_size: int = 512,
    chunk_overlap: int = 24,
    sync: bool = False,
    schema_key: str | None = None,
) -> _Plan:
    """Decide, without touching ``kg``, which documents are new, changed or unchanged and what to extract.
    ``schema_key`` (:meth:`~kg_rag.ingest.schema.ExtractionSchema.key`): a document extracted under another
    schema is extracted again."""
    from kg_rag.ingest.documents import split_documents

    chunking = f"{chunk_size}/{chunk_overlap}"
    grouped = _group(documents)
    changes = DocumentChanges()
    changed: dict[str, list[Chunk]] = {}
    retry: list[Chunk] = []
    with kg.lock:
        by_doc: dict[str, list[str]] = {}
        for cid, chunk in kg.chunks.items():
            by_doc.setdefault(chunk.doc_id, []).append(cid)
        for doc_id, entry in grouped.items():
            old = kg.docs.get(doc_id)
            same = (
                old is not None
                and by_doc.get(doc_id)
                and old.content_hash == entry["hash"]
                and old.metadata.get("chunking") == chunking
                and (old.metadata.get("extracted", True) or not extract)
                and (not extract or old.metadata.get("schema") == schema_key)
            )
            if same:
                changes.unchanged.append(doc_id)
                if extract:
                    retry += [kg.chunks[c] for c in by_doc[doc_id] if c in report.failures]
                continue
            changed[doc_id] = split_documents(entry["pages"], chunk_size=chunk_size, chunk_overlap=chunk_overlap)
        if sync:
            changes.removed = [d for d in kg.documents() if d not in grouped]
    for entry in grouped.values():
        entry["chunking"] = chunking
        entry["extracted"] = extract
        entry["schema"] = schema_key if extract else None
    changes.chunks_retried = len(retry)
    return _Plan(changed, grouped, retry, changes)


def commit_documents(
    kg: KnowledgeGraph,
    plan: _Plan,
    run: Any,
    report: IngestReport,
    extractor: Any = None,
) -> DocumentChanges:
    """Apply a plan and an extraction run (``None`` when not extracting) to ``kg`` (see the module rules)."""
    from kg_rag.ingest.extract import apply_extraction

    changes = plan.changes
    results = run.results if run is not None else {}
    failures = run.failures if run is not None else {}
    with kg.lock:
        for chunk in plan.retry:  # unchanged documents: only earlier failures are retried
            if chunk.id in results:
                apply_extraction(kg, chunk, results[chunk.id], extractor.typer, report)
                report.failures.pop(chunk.id, None)
                changes.chunks_extracted += 1
            elif chunk.id in failures:
                report.fail(chunk.id, failures[chunk.id])
                changes.chunks_failed += 1
                changes.first_error = changes.first_error or _first_error(failures[chunk.id])
        for doc_id, chunks in plan.changed.items():
            failed = [c for c in chunks if c.id in failures]
            changes.chunks_failed += len(failed)
            if failed:
                changes.first_error = changes.first_error or _first_error(failures[failed[0].id])
            changes.chunks_extracted += sum(c.id in results for c in chunks)
            had_old = doc_id in kg.docs and any(c.doc_id == doc_id for c in kg.chunks.values())
            if failed and had_old:
                changes.kept_old[doc_id] = _first_error(failures[failed[0].id])
                continue
            fragment = KnowledgeGraph()
            entry = plan.docs[doc_id]
            fragment.add_document(
                doc_id,
                source=None if entry["source"] is None else str(entry["source"]),
                content_hash=entry["hash"],
                metadata={
                    "chunking": entry["chunking"],
                    "extracted": entry["extracted"],
                    **({"schema": entry["schema"]} if entry.get("schema") else {}),
                },
            )
            fragment_report = IngestReport()
            for chunk in chunks:
                fragment.add_chunk(chunk)
                if chunk.id in results:
                    apply_extraction(fragment, chunk, results[chunk.id], extractor.typer, fragment_report)
                elif chunk.id in failures:
                    fragment_report.fail(chunk.id, failures[chunk.id])
            fragment_report.added["chunks"] += len(chunks)
            if failed:
                changes.incomplete[doc_id] = _first_error(failures[failed[0].id])
            (changes.replaced if had_old else changes.added).append(doc_id)
            replace_documents(kg, fragment, report)
            report.merge(fragment_report)
        if changes.removed:
            forget_documents(kg, changes.removed, report)
    if run is not None:
        report.add_usage(run.usage.to_dict())
    return changes


def replace_documents(kg: KnowledgeGraph, fragment: KnowledgeGraph, report: IngestReport | None = None) -> dict:
    """Every document in ``fragment`` replaces its earlier version in ``kg``; what the ingest report recorded
    about the old version's chunks is forgotten too."""
    with kg.lock:
        if report is not None:
            docs = set(fragment.documents())
            report.forget_chunks({cid for cid, c in kg.chunks.items() if c.doc_id in docs})
        return kg.replace_documents(fragment)


def forget_documents(kg: KnowledgeGraph, doc_ids: Sequence[str], report: IngestReport | None = None) -> dict:
    """Remove documents and everything they contributed, including the report's record of their chunks."""
    with kg.lock:
        if report is not None:
            docs = set(doc_ids)
            report.forget_chunks({cid for cid, c in kg.chunks.items() if c.doc_id in docs})
        return kg.remove_documents(doc_ids)


def _schema_key(extractor: Any) -> str | None:
    schema = getattr(extractor, "schema", None)
    return schema.key() if schema is not None else None


def _first_error(error: BaseException | str) -> str:
    text = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    line = text.strip().splitlines()[0] if text.strip() else text
    return line[:200]


def index_documents(
    kg: KnowledgeGraph,
    documents: Sequence[Any],
    *,
    extractor: Any = None,
    report: IngestReport | None = None,
    chunk_size: int = 512,
    chunk_overlap: int = 24,
    sync: bool = False,
    progress: bool = False,
    config: Any = None,
) -> DocumentChanges:
    """Index LangChain ``documents`` (from :func:`~kg_rag.ingest.documents.load_documents`) into ``kg`` by the
    module's rules. ``extractor`` is an :class:`~kg_rag.ingest.extract.LLMExtractor`, or ``None`` to chunk only.
    """
    report = report if report is not None else IngestReport()
    plan = plan_documents(
        kg,
        documents,
        report,
        extract=extractor is not None,
        chunk_size=chunk_size,
        chunk_overlap=chunk_overlap,
        sync=sync,
        schema_key=_schema_key(extractor),
    )
    run = extractor.extract(plan.to_extract, progress=progress, config=config) if extractor is not None else None
    return commit_documents(kg, plan, run, report, extractor)


async def aindex_documents(
    kg: KnowledgeGraph,
    documents: Sequence[Any],
    *,
    extractor: Any = None,
    report: IngestReport | None = None,
    chunk_size: int = 512,
    chunk_overlap: int = 24,
    sync: bool = False,
    progress: bool = False,
    config: Any = None,
) -> DocumentChanges:
    """Async :func:`index_documents` (extraction through ``abatch_as_completed``)."""
    report = report if report is not None else IngestReport()
    plan = plan_documents(
        kg,
        documents,
        report,
        extract=extractor is not None,
        chunk_size=chunk_size,
        chunk_overlap=chunk_overlap,
        sync=sync,
        schema_key=_schema_key(extractor),
    )
    run = None
    if extractor is not None:
        run = await extractor.aextract(plan.to_extract, progress=progress, config=config)
    return commit_documents(kg, plan, run, report, extractor)
