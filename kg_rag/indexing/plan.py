"""The rules of indexing documents into a graph that already holds some: what to extract, and what one run changes.

* A document is identified by its id; one seen again **replaces** its earlier version (what the old version
  said and the new one does not is forgotten).
* A document whose content hash, chunking and extraction schema are unchanged is **not re-extracted** (no LLM
  calls); only its chunks whose extraction failed earlier are tried again.
* A changed document's new extraction replaces the old version **only when every chunk succeeded**; otherwise
  the old version stays and the failure is reported. A new document whose extraction partly failed is added
  with its chunks (so dense and lexical search find it) and the failed chunks are recorded for a later retry.
  So a failing LLM never shrinks the graph.
* ``sync=True`` makes the graph hold exactly the given documents (others are removed); the default keeps them.

:func:`plan_documents` decides (reading only what is stored), :func:`document_change` turns a plan and its
extraction into one :class:`~kg_rag.model.change.GraphChange`; :class:`kg_rag.indexing.job.IndexJob` runs them,
so an exception during extraction leaves the target untouched.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kg_rag.ingest.extract import apply_extraction
from kg_rag.model import Chunk, KnowledgeGraph
from kg_rag.model.change import GraphChange
from kg_rag.model.records import Document, document_from_record
from kg_rag.model.report import IngestReport


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
class DocumentPlan:
    changed: dict[str, list[Chunk]]
    docs: dict[str, dict[str, Any]]
    retry: list[Chunk]
    changes: DocumentChanges
    had_old: set[str] = field(default_factory=set)
    """Changed documents that have a stored version with chunks (a failed extraction then keeps it)."""

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


@dataclass
class Stored:
    """What planning reads about what is stored: document records, and the chunks of the documents asked about."""

    docs: dict[str, Document]
    chunks: dict[str, list[Chunk]]
    all_ids: list[str]


def stored_catalog(target: Any, doc_ids: list[str]) -> Stored:
    """The catalog of an editable graph or of a store (:class:`~kg_rag.store.graph_store.GraphStore`): only the
    chunks of ``doc_ids`` are read, so planning an update never loads a stored graph."""
    if isinstance(target, KnowledgeGraph):
        with target.lock:
            wanted = set(doc_ids)
            chunks: dict[str, list[Chunk]] = {}
            for chunk in target.chunks.values():
                if chunk.doc_id in wanted:
                    chunks.setdefault(chunk.doc_id, []).append(chunk)
            return Stored(dict(target.docs), chunks, target.documents())
    if not target.exists():
        return Stored({}, {}, [])
    records = target.documents()
    docs = {str(r["id"]): document_from_record(r) for r in records}
    with_chunks = [d for d in doc_ids if d in docs]
    return Stored(docs, target.chunks_of(with_chunks) if with_chunks else {}, list(docs))


def plan_documents(
    target: Any,
    documents: Sequence[Any],
    report: IngestReport,
    *,
    extract: bool,
    chunk_size: int = 512,
    chunk_overlap: int = 24,
    sync: bool = False,
    schema_key: str | None = None,
) -> DocumentPlan:
    """Decide, without touching ``target`` (a :class:`KnowledgeGraph` or a store), which documents are new,
    changed or unchanged and what to extract. ``schema_key``
    (:meth:`~kg_rag.ingest.extraction_schema.ExtractionSchema.key`): a document extracted under another schema is
    extracted again."""
    from kg_rag.ingest.documents import split_documents  # needs LangChain: the core imports without it

    chunking = f"{chunk_size}/{chunk_overlap}"
    grouped = _group(documents)
    changes = DocumentChanges()
    changed: dict[str, list[Chunk]] = {}
    retry: list[Chunk] = []
    had_old: set[str] = set()
    stored = stored_catalog(target, list(grouped))
    for doc_id, entry in grouped.items():
        old = stored.docs.get(doc_id)
        old_chunks = stored.chunks.get(doc_id) or []
        same = (
            old is not None
            and old_chunks
            and old.content_hash == entry["hash"]
            and old.metadata.get("chunking") == chunking
            and (old.metadata.get("extracted", True) or not extract)
            and (not extract or old.metadata.get("schema") == schema_key)
        )
        if same:
            changes.unchanged.append(doc_id)
            if extract:
                retry += [c for c in old_chunks if c.id in report.failures]
            continue
        if old is not None and old_chunks:
            had_old.add(doc_id)
        changed[doc_id] = split_documents(
            entry["pages"], chunk_size=chunk_size, chunk_overlap=chunk_overlap, report=report
        )
    if sync:
        changes.removed = [d for d in stored.all_ids if d not in grouped]
    for entry in grouped.values():
        entry["chunking"] = chunking
        entry["extracted"] = extract
        entry["schema"] = schema_key if extract else None
    changes.chunks_retried = len(retry)
    return DocumentPlan(changed, grouped, retry, changes, had_old)


def document_change(plan: DocumentPlan, run: Any, extractor: Any = None) -> tuple[DocumentChanges, GraphChange]:
    """What a plan and its extraction run (``None`` when not extracting) change, by the module's rules, as one
    :class:`~kg_rag.model.change.GraphChange`: retried chunks merged, each changed document replaced
        (unless its extraction failed and an old version exists), the others removed when syncing."""

    changes = plan.changes
    delta = IngestReport()
    change = GraphChange(report=delta)
    results = run.results if run is not None else {}
    failures = run.failures if run is not None else {}
    retried = KnowledgeGraph()
    for chunk in plan.retry:  # unchanged documents: only earlier failures are retried
        if chunk.id in results:
            retried.add_chunk(chunk)
            apply_extraction(retried, chunk, results[chunk.id], extractor.typer, delta)
            change.resolved.add(chunk.id)
            changes.chunks_extracted += 1
        elif chunk.id in failures:
            delta.fail(chunk.id, failures[chunk.id])
            changes.chunks_failed += 1
            changes.first_error = changes.first_error or _first_error(failures[chunk.id])
    if retried.chunks:
        change.add(retried)
    for doc_id, chunks in plan.changed.items():
        failed = [c for c in chunks if c.id in failures]
        changes.chunks_failed += len(failed)
        if failed:
            changes.first_error = changes.first_error or _first_error(failures[failed[0].id])
        changes.chunks_extracted += sum(c.id in results for c in chunks)
        had_old = doc_id in plan.had_old
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
        change.replace(fragment)
        delta.merge(fragment_report)
    change.remove(changes.removed)
    if run is not None:
        delta.add_usage(run.usage.to_dict())
    return changes, change


def _first_error(error: BaseException | str) -> str:
    text = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    line = text.strip().splitlines()[0] if text.strip() else text
    return line[:200]
