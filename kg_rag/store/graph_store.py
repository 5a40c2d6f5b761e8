"""The store side of the seam: :class:`GraphStore`, where an index lives. :meth:`GraphStore.apply` applies one
:class:`~kg_rag.model.change.GraphChange` (as :class:`~kg_rag.indexing.writer.IndexWriter` hands it over) to a
stored index in one atomic write: by default by loading the graph, editing it and saving it (the directory
store: one new generation), or row by row where a store can (PostgreSQL: one transaction touching only the rows
the documents contribute).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from kg_rag.errors import UnknownNameError
from kg_rag.index.build import build_index
from kg_rag.index.meta import IndexMeta
from kg_rag.index.synonyms import link_synonyms
from kg_rag.model.change import REMOVED_KINDS, GraphChange, apply_to_graph, resolve_change
from kg_rag.model.graph import KnowledgeGraph
from kg_rag.model.records import Chunk
from kg_rag.model.report import IngestReport
from kg_rag.model.resolution import Resolution
from kg_rag.store.base import QueryBackend
from kg_rag.store.memory import StoreBackend


class GraphStore(ABC):
    """A place an index lives: saved and loaded whole, changed document by document, queried through
    :meth:`backend`. Implemented by :class:`~kg_rag.store.directory.DirectoryStore` and
    :class:`~kg_rag.store.postgres.PostgresStore`; :mod:`kg_rag.testing` checks both the same way. Writes go
    through :class:`~kg_rag.indexing.writer.IndexWriter`, which holds :meth:`writing` around them."""

    # ------------------------------------------------------------------ what a store must implement (4)
    @abstractmethod
    def exists(self) -> bool:
        """Whether an index is stored here."""

    @abstractmethod
    def writing(self, wait: float | None = None) -> AbstractContextManager[Any]:
        """Hold the writer lock for a whole read–modify–write (re-entrant; ``save`` inside does not wait); a
        second writer gives up after ``wait`` seconds with :class:`~kg_rag.store.locking.IndexLockedError`."""

    @abstractmethod
    def save(self, index: Any, *, wait: float | None = None, forget: bool = False) -> str:
        """Replace the stored index with ``index`` (a :class:`~kg_rag.index.build.GraphIndex`); returns the new
        version. ``forget``: keep no older version holding removed text."""

    @abstractmethod
    def load(self) -> Any:
        """The stored index as an editable :class:`~kg_rag.index.build.GraphIndex`
        (:class:`~kg_rag.errors.IndexNotFoundError` when none)."""

    # ------------------------------------------------------------------ derived (override for speed)
    @property
    def version(self) -> str:
        """Changes whenever the stored index does (``""``: unknown, so every read loads it again)."""
        return ""

    def read_meta(self) -> IndexMeta:
        """The stored :class:`IndexMeta`, validated (:class:`~kg_rag.errors.IndexNotFoundError` when none). This
        default loads the index."""
        return IndexMeta.of_index(self.load(), schema_version=0, version=self.version)

    def read_report(self) -> IngestReport:
        """The stored ingest report (skipped input, extraction failures, usage). This default loads the index."""
        return self.load().report

    def documents(self, ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """The stored documents' records (``id``, ``source``, ``content_hash``, ..., ``chunks``); only those of
        ``ids`` when given (unknown ids are left out). This default loads the index."""
        records = list(self.load().kg.document_records())
        if ids is None:
            return records
        wanted = set(map(str, ids))
        return [r for r in records if str(r["id"]) in wanted]

    def chunks_of(self, doc_ids: Sequence[str]) -> dict[str, list[Chunk]]:
        """The stored chunks of these documents, by document id (documents without chunks are left out). This
        default loads the index."""
        wanted = set(doc_ids)
        out: dict[str, list[Chunk]] = {}
        for chunk in self.load().kg.chunks.values():
            if chunk.doc_id in wanted:
                out.setdefault(chunk.doc_id, []).append(chunk)
        return out

    def backend(self) -> QueryBackend:
        """A read-only view for queries. This default serves the loaded index with the in-process reference
        backend, loading it again when :attr:`version` changes (or on every read when it is ``""``)."""
        return StoreBackend(self)

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

    def replace_documents(
        self,
        fragment: KnowledgeGraph,
        embeddings: Any,
        *,
        report: IngestReport | None = None,
        wait: float | None = None,
    ) -> dict[str, int]:
        """Add the documents of ``fragment``; each one already stored is replaced (what its old version said and
        the new one does not is forgotten), atomically, its entities resolved as the index resolved them before.
        Returns what was removed, by kind. (:class:`kg_rag.indexing.IndexWriter` does the same for the write path.)"""
        with self.writing(wait):
            change = GraphChange(report=report).replace(fragment)
            resolve_change(change, self.read_report().resolution if self.exists() else Resolution())
            return self.apply(change, embeddings)

    def delete_documents(self, doc_ids: Sequence[str], embeddings: Any, *, wait: float | None = None) -> dict[str, int]:
        """Remove documents and everything they contributed (communities included: changed ones lose their report),
        atomically; no older version keeps the text. Unknown ids raise :class:`~kg_rag.errors.UnknownNameError` (a
        ``KeyError``) naming them, before anything changes."""
        ids = list(dict.fromkeys(str(d) for d in doc_ids))
        if not ids:
            return dict.fromkeys(REMOVED_KINDS, 0)
        with self.writing(wait):
            known = {str(d["id"]) for d in self.documents(ids)} if self.exists() else set()
            missing = [d for d in ids if d not in known]
            if missing:
                shown = ", ".join(map(repr, missing[:5])) + (" ..." if len(missing) > 5 else "")
                raise UnknownNameError(f"no document {shown} in {self}")
            return self.apply(GraphChange(forget=True).remove(ids), embeddings)

    def write_communities(self, communities: Any) -> None:
        """Store ``communities`` (a :class:`~kg_rag.communities.CommunitySet`) for the stored graph."""
        with self.writing():
            index = self.load()
            index.communities = communities
            self.save(index)


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
    fresh = build_index(
        index.kg,
        embeddings,
        type_prefix=index.type_prefix if type_prefix is None else type_prefix,
        cache=index.cache(),
        report=index.report,
        progress=progress,
    )
    if synonym_threshold is not None:
        link_synonyms(fresh, synonym_threshold)
    return fresh.with_communities_of(index)
