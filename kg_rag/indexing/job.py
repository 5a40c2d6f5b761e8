"""The one write path: an :class:`IndexJob` turns documents into stored rows in five steps, the same for a new
index and an update, for an editable graph, a directory and PostgreSQL alike:

1. **plan** (:func:`~kg_rag.indexing.plan.plan_documents`): which documents are new, changed or unchanged, read
   from the target without changing it;
2. **guard**: the caller's check of the plan (the CLI refuses a re-index that would delete other sources);
3. **extract**: the extractor runs on the planned chunks only (nothing when extraction is off);
4. **one change** (:func:`~kg_rag.indexing.plan.document_change`): the plan and its extraction as one
   :class:`~kg_rag.model.change.GraphChange`, shown to the caller's ``review``, which may stop here;
5. **one write**: the target applies the change atomically.

A dry run is step 1 alone (:meth:`IndexJob.plan`). The target says where the rows go: :class:`GraphTarget` (an
editable :class:`~kg_rag.model.graph.KnowledgeGraph`) or :class:`StoreTarget` (a store, through its
:class:`~kg_rag.indexing.writer.IndexWriter`, whose lock is held from planning to writing).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from kg_rag.indexing.plan import DocumentChanges, DocumentPlan, document_change, plan_documents
from kg_rag.ingest.extraction_schema import schema_key_of
from kg_rag.model.change import GraphChange, apply_to_graph
from kg_rag.model.graph import KnowledgeGraph
from kg_rag.model.report import IngestReport
from kg_rag.store.graph_store import GraphStore

if TYPE_CHECKING:
    from kg_rag.index.build import GraphIndex


class Writer(Protocol):
    """What a :class:`StoreTarget` needs of :class:`~kg_rag.indexing.writer.IndexWriter`."""

    store: GraphStore
    wait: float | None

    def store_report(self) -> IngestReport: ...

    def save(self, index: GraphIndex) -> str: ...

    def apply(
        self, change: GraphChange, *, type_prefix: bool | None = None, synonym_threshold: float | None = None
    ) -> dict[str, int]: ...


class Target(Protocol):
    """Where an :class:`IndexJob` reads what is stored and writes its one change."""

    def catalog(self) -> Any:
        """What planning reads: a :class:`KnowledgeGraph` or a :class:`~kg_rag.store.graph_store.GraphStore`."""

    def known_failures(self) -> IngestReport:
        """The report whose extraction failures an unchanged document retries."""

    def locked(self) -> Any:
        """A context held from planning to writing."""

    def committing(self) -> Any:
        """A context held from computing the change to writing it."""

    def change(self, plan: DocumentPlan, run: Any, extractor: Any) -> tuple[DocumentChanges, GraphChange]:
        """Step 4: the plan and its extraction run as one change."""

    def write(self, change: GraphChange) -> None:
        """Step 5: apply the change atomically."""


@dataclass
class GraphTarget:
    """An editable graph and its ingest report (what :func:`index_documents` indexes into)."""

    kg: KnowledgeGraph
    report: IngestReport = field(default_factory=IngestReport)

    def catalog(self) -> KnowledgeGraph:
        return self.kg

    def known_failures(self) -> IngestReport:
        return self.report

    def locked(self) -> Any:
        return nullcontext()  # the graph's own lock is taken per step: extraction does not block readers

    def committing(self) -> Any:
        return self.kg.lock

    def change(self, plan: DocumentPlan, run: Any, extractor: Any) -> tuple[DocumentChanges, GraphChange]:
        kg = self.kg  # what the graph holds now (under its lock), not when planning read it
        plan.had_old = {d for d in plan.changed if d in kg.docs and any(c.doc_id == d for c in kg.chunks.values())}
        return document_change(plan, run, extractor)

    def write(self, change: GraphChange) -> None:
        apply_to_graph(self.kg, self.report, change)


@dataclass
class StoreTarget:
    """A store, written through ``writer`` (whose lock the job holds throughout).

    ``run_report``: this run's report (what loading the documents skipped); the change's report is merged into it
    and it is stored with the change. ``new``: plan against nothing (no index yet, or an unreadable one being
    replaced) and save a whole new index, made by ``build`` from the graph of the change (default: apply the change
    through the writer, as an update does)."""

    writer: Writer
    type_prefix: bool | None = None
    synonym_threshold: float | None = None
    run_report: IngestReport | None = None
    new: bool = False
    build: Callable[[KnowledgeGraph, IngestReport], GraphIndex] | None = None

    def catalog(self) -> Any:
        return KnowledgeGraph() if self.new else self.writer.store

    def known_failures(self) -> IngestReport:
        if self.new:  # nothing to retry; what chunking skips is this run's
            return self.run_report if self.run_report is not None else IngestReport()
        return self.writer.store_report()

    def locked(self) -> Any:
        return self.writer.store.writing(self.writer.wait)

    def committing(self) -> Any:
        return nullcontext()  # the writer lock is held already

    def change(self, plan: DocumentPlan, run: Any, extractor: Any) -> tuple[DocumentChanges, GraphChange]:
        changes, change = document_change(plan, run, extractor)
        if self.run_report is not None:
            if change.report is not None:
                self.run_report.merge(change.report)
            change.report = self.run_report
        return changes, change

    def write(self, change: GraphChange) -> None:
        if self.new and self.build is not None:
            kg = KnowledgeGraph()
            apply_to_graph(kg, None, change)
            self.writer.save(self.build(kg, change.report or IngestReport()))
            return
        self.writer.apply(change, type_prefix=self.type_prefix, synonym_threshold=self.synonym_threshold)


@dataclass
class IndexJob:
    """Documents to index and how (see the module docstring). ``extract``: whether to extract a graph (default:
    when an ``extractor`` is given; a dry run plans extraction without one). ``schema_key``: the key of the
    extraction schema (default: the extractor's)."""

    documents: Sequence[Any]
    extractor: Any = None
    chunk_size: int = 512
    chunk_overlap: int = 24
    sync: bool = False
    progress: bool = False
    config: Any = None
    extract: bool | None = None
    schema_key: str | None = None

    @property
    def extracts(self) -> bool:
        return self.extractor is not None if self.extract is None else self.extract

    def plan(self, target: Target) -> DocumentPlan:
        """Step 1 (a dry run stops here): what the run would add, replace, keep, delete and extract."""
        extract = self.extracts
        key = self.schema_key if self.schema_key is not None else schema_key_of(self.extractor)
        return plan_documents(
            target.catalog(),
            self.documents,
            target.known_failures(),
            extract=extract,
            chunk_size=self.chunk_size,
            chunk_overlap=self.chunk_overlap,
            sync=self.sync,
            schema_key=key if extract else None,
        )

    def run(
        self,
        target: Target,
        *,
        guard: Callable[[DocumentPlan], None] | None = None,
        review: Callable[[DocumentChanges], bool] | None = None,
    ) -> DocumentChanges:
        """Plan, guard, extract, change, write. ``guard`` may raise to refuse before any extraction; ``review``
        returns ``False`` to write nothing (the CLI: every extraction failed)."""
        with self._planned(target, guard) as plan:
            run = None
            if self.extractor is not None:
                run = self.extractor.extract(plan.to_extract, progress=self.progress, config=self.config)
            return self._write(target, plan, run, review)

    async def arun(
        self,
        target: Target,
        *,
        guard: Callable[[DocumentPlan], None] | None = None,
        review: Callable[[DocumentChanges], bool] | None = None,
    ) -> DocumentChanges:
        """Async :meth:`run` (extraction through ``abatch_as_completed``)."""
        with self._planned(target, guard) as plan:
            run = None
            if self.extractor is not None:
                run = await self.extractor.aextract(plan.to_extract, progress=self.progress, config=self.config)
            return self._write(target, plan, run, review)

    @contextmanager
    def _planned(self, target: Target, guard: Callable[[DocumentPlan], None] | None) -> Iterator[DocumentPlan]:
        with target.locked():
            plan = self.plan(target)
            if guard is not None:
                guard(plan)
            yield plan

    def _write(
        self, target: Target, plan: DocumentPlan, run: Any, review: Callable[[DocumentChanges], bool] | None
    ) -> DocumentChanges:
        with target.committing():
            changes, change = target.change(plan, run, self.extractor)
            if review is None or review(changes):
                target.write(change)
        return changes


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
    rules of :mod:`kg_rag.indexing.plan`. ``extractor`` is an :class:`~kg_rag.ingest.extract.LLMExtractor` (or the
    NLP extractor), or ``None`` to chunk only."""
    job = IndexJob(documents, extractor, chunk_size, chunk_overlap, sync, progress, config)
    return job.run(GraphTarget(kg, report if report is not None else IngestReport()))


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
    job = IndexJob(documents, extractor, chunk_size, chunk_overlap, sync, progress, config)
    return await job.arun(GraphTarget(kg, report if report is not None else IngestReport()))
