"""One atomic document-level change of a graph — :class:`GraphChange` — and :func:`apply_to_graph`, which applies
it to an editable graph with the rules of the in-memory model.

A change is a sequence of steps — documents removed, fragments merged — applied in order
(:meth:`KnowledgeGraph.remove_documents`, :meth:`KnowledgeGraph.merge`), plus what it does to the ingest report.
The write path (:mod:`kg_rag.indexing`) builds one; a store (:meth:`kg_rag.store.graph_store.GraphStore.apply`)
applies it to a stored index in one atomic write.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kg_rag.model.graph import KnowledgeGraph
from kg_rag.model.report import IngestReport
from kg_rag.model.resolution import Resolution, resolve_graph

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


def replace_documents(kg: KnowledgeGraph, fragment: KnowledgeGraph, report: IngestReport | None = None) -> dict:
    """Every document in ``fragment`` replaces its earlier version in ``kg``; what the ingest report recorded
    about the old version's chunks is forgotten too."""
    return apply_to_graph(kg, report, GraphChange().replace(fragment))


def forget_documents(kg: KnowledgeGraph, doc_ids: Iterable[str], report: IngestReport | None = None) -> dict:
    """Remove documents and everything they contributed, including the report's record of their chunks."""
    return apply_to_graph(kg, report, GraphChange().remove(doc_ids))


def resolve_change(change: GraphChange, stored: Resolution) -> None:
    """Resolve the entities ``change``'s fragments name as the index resolved them before (``stored``: its
    merges and splits), so a document naming ``U.S.`` again adds to *United States* and a decision taken by hand
    holds; the merges used are recorded in the change's report."""
    if not change.fragments or not stored.merges:
        return
    resolution = Resolution.from_dict(stored.to_dict())
    touched = [key for fragment in change.fragments for key in resolve_graph(fragment, resolution)]
    if touched:
        change.report = change.report or IngestReport()
        change.report.resolution.update(Resolution(merges={k: resolution.merges[k] for k in touched}))
