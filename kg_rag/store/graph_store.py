"""The store side of the seam: :class:`GraphStore` (where an index lives) and :class:`GraphChange` (one atomic
document-level change, as :class:`~kg_rag.store.writer.IndexWriter` hands it to a store).

A change is a sequence of steps — documents removed, fragments merged — applied in order with the rules of the
in-memory model (:meth:`KnowledgeGraph.remove_documents`, :meth:`KnowledgeGraph.merge`), plus what it does to
the ingest report. :func:`apply_to_graph` applies it to an editable graph; :meth:`GraphStore.apply` applies it
to a stored index in one atomic write: by default by loading the graph, editing it and saving it (the directory
store: one new generation), or row by row where a store can (PostgreSQL: one transaction touching only the rows
the documents contribute).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from kg_rag.ingest.report import IngestReport
from kg_rag.model.graph import KnowledgeGraph
from kg_rag.model.records import Chunk
from kg_rag.store.base import QueryBackend
from kg_rag.store.meta import IndexMeta

REMOVED_KINDS = ("chunks", "relations", "entities", "descriptions")


@dataclass
class GraphChange:
    """Documents removed and fragments merged, in order, applied atomically; and the ingest report's update.

    ``report`` is merged into the stored report after the failures recorded for removed chunks are forgotten
    and those of ``resolved`` chunks (retried successfully) cleared. ``forget`` asks the store to keep no older
    version holding the removed text (a delete).
    """

    steps: list[tuple[str, Any]] = field(default_factory=list)
    report: IngestReport | None = None
    resolved: set[str] = field(default_factory=set)
    forget: bool = False

    def remove(self, doc_ids: Iterable[str]) -> GraphChange:
        ids = list(dict.fromkeys(str(d) for d in doc_ids))
        if ids:
            self.steps.append(("remove", ids))
        return self

    def add(self, fragment: KnowledgeGraph) -> GraphChange:
        """Merge ``fragment`` (documents, chunks, entities, relations; what is stored already is combined)."""
        self.steps.append(("add", fragment))
        return self

    def replace(self, fragment: KnowledgeGraph) -> GraphChange:
        """Every document ``fragment`` holds replaces its stored version (what only the old one said is gone)."""
        return self.remove(fragment.documents()).add(fragment)

    @property
    def removed_documents(self) -> list[str]:
        return [d for kind, arg in self.steps if kind == "remove" for d in arg]

    @property
    def fragments(self) -> list[KnowledgeGraph]:
        return [arg for kind, arg in self.steps if kind == "add"]

    def __bool__(self) -> bool:
        """Whether applying it changes the index: documents, resolved failures, new failures or additions, or
        chat calls spent. Counts of input skipped alone do not (an unchanged ``index --update`` that skipped the
        same files again wrote a whole new generation for them, and on a nearly full disk failed with ENOSPC)."""
        report = self.report
        spent = report is not None and (report.failures or +report.added or +report.usage)
        return bool(self.steps or self.resolved or spent)


def apply_to_graph(kg: KnowledgeGraph, report: IngestReport | None, change: GraphChange) -> dict[str, int]:
    """Apply ``change`` to an editable graph and its ingest report; returns what was removed, by kind."""
    removed: Counter[str] = Counter({k: 0 for k in REMOVED_KINDS})
    with kg.lock:
        for kind, arg in change.steps:
            if kind == "remove":
                if report is not None:
                    docs = set(arg)
                    report.forget_chunks({cid for cid, c in kg.chunks.items() if c.doc_id in docs})
                removed.update(kg.remove_documents(arg))
            else:
                kg.merge(arg)
    update_report(report, change)
    return dict(removed)


def update_report(report: IngestReport | None, change: GraphChange) -> None:
    """The report's part of ``change`` (the failures of removed chunks are forgotten by the caller)."""
    if report is None:
        return
    for chunk_id in change.resolved:
        report.failures.pop(chunk_id, None)
    if change.report is not None:
        report.merge(change.report)


class GraphStore(ABC):
    """A place an index lives: saved and loaded whole, changed document by document, queried through
    :meth:`backend`. Implemented by :class:`~kg_rag.store.directory.DirectoryStore` and
    :class:`~kg_rag.store.postgres.PostgresStore`; :mod:`kg_rag.testing` checks both the same way. Writes go
    through :class:`~kg_rag.store.writer.IndexWriter`, which holds :meth:`writing` around them."""

    @abstractmethod
    def exists(self) -> bool: ...

    @abstractmethod
    def writing(self, wait: float | None = None) -> AbstractContextManager[Any]:
        """Hold the writer lock for a whole read–modify–write (re-entrant; ``save`` inside does not wait)."""

    @abstractmethod
    def read_meta(self) -> IndexMeta:
        """The stored :class:`IndexMeta`, validated (:class:`~kg_rag.errors.IndexNotFoundError` when none)."""

    @abstractmethod
    def read_report(self) -> IngestReport:
        """The stored ingest report (skipped input, extraction failures, usage)."""

    @abstractmethod
    def documents(self, ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """The stored documents' records (``id``, ``source``, ``content_hash``, ..., ``chunks``); only those of
        ``ids`` when given (unknown ids are left out)."""

    @abstractmethod
    def chunks_of(self, doc_ids: Sequence[str]) -> dict[str, list[Chunk]]:
        """The stored chunks of these documents, by document id (documents without chunks are left out)."""

    @abstractmethod
    def save(self, index: Any, *, wait: float | None = None, forget: bool = False) -> str:
        """Replace the stored index with ``index`` (a :class:`~kg_rag.index.build.GraphIndex`)."""

    @abstractmethod
    def load(self) -> Any:
        """The stored index as an editable :class:`~kg_rag.index.build.GraphIndex`."""

    @abstractmethod
    def backend(self) -> QueryBackend:
        """A read-only view for queries."""

    def stats(self) -> dict[str, Any]:
        """Counts, skipped input and failures, embedding model and version (no graph is built)."""
        return self.read_meta().stats(self.read_report())

    def check_target(self) -> None:  # noqa: B027 - a default, not an abstract method
        """Raise ``ValueError`` when no index can be written here (a folder holding other files); what
        :meth:`writing` checks first, for a dry run to refuse what the run would. Nothing to check by default."""

    def check(self) -> IndexMeta:
        """Check that the stored index is readable without loading it (its metadata here; a store with files
        checks them too); returns its metadata."""
        return self.read_meta()

    # ------------------------------------------------------------------ writes (IndexWriter calls these)
    def apply(
        self,
        change: GraphChange,
        embeddings: Any,
        *,
        type_prefix: bool | None = None,
        synonym_threshold: float | None = None,
        progress: bool = False,
    ) -> dict[str, int]:
        """Apply ``change`` atomically and return what was removed. This default edits the whole graph: load it
        (or start empty), apply the change in memory, embed only new text, carry the communities over (changed
        ones marked stale), link synonyms when asked, and save once. Stores that can write rows override it."""
        from kg_rag.index.build import build_index

        with self.writing():
            index = self.load() if self.exists() else None
            if index is None:
                index = build_index(
                    KnowledgeGraph(), embeddings, type_prefix=True if type_prefix is None else type_prefix
                )
            removed = apply_to_graph(index.kg, index.report, change)
            self.save(
                refreshed(
                    index, embeddings, type_prefix=type_prefix, synonym_threshold=synonym_threshold, progress=progress
                ),
                forget=change.forget,
            )
        return removed

    def write_communities(self, communities: Any) -> None:
        """Store ``communities`` (a :class:`~kg_rag.communities.CommunitySet`) for the stored graph."""
        with self.writing():
            index = self.load()
            index.communities = communities
            self.save(index)

    # ------------------------------------------------------------------ convenience
    def replace_documents(
        self,
        fragment: KnowledgeGraph,
        embeddings: Any,
        *,
        report: IngestReport | None = None,
        wait: float | None = None,
    ) -> dict[str, int]:
        """Add the documents of ``fragment``; each one already stored is replaced (what its old version said
        and the new one does not is forgotten), atomically. Returns what was removed, by kind."""
        from kg_rag.store.writer import IndexWriter

        return IndexWriter(self, embeddings, wait=wait).replace_documents(fragment, report=report)

    def delete_documents(self, doc_ids: Sequence[str], embeddings: Any, *, wait: float | None = None) -> dict[str, int]:
        """Remove documents and everything they contributed, atomically. Unknown ids raise ``KeyError`` naming
        them, before anything changes."""
        from kg_rag.store.writer import IndexWriter

        return IndexWriter(self, embeddings, wait=wait).delete_documents(doc_ids)


def refreshed(
    index: Any,
    embeddings: Any,
    *,
    type_prefix: bool | None = None,
    synonym_threshold: float | None = None,
    progress: bool = False,
) -> Any:
    """``index`` after its graph was edited: vectors re-derived (only new text embedded), synonym links added
    when ``synonym_threshold`` is given, then the communities carried over with the changed ones marked stale
    (after the links: a community's signature counts them)."""
    from kg_rag.index.build import build_index

    fresh = build_index(
        index.kg,
        embeddings,
        type_prefix=index.type_prefix if type_prefix is None else type_prefix,
        cache=index.cache(),
        report=index.report,
        progress=progress,
    )
    if synonym_threshold is not None:
        from kg_rag.index.synonyms import link_synonyms

        link_synonyms(fresh, synonym_threshold)
    return fresh.with_communities_of(index)
