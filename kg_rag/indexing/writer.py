"""Writes to a store: :class:`IndexWriter` indexes documents (through :class:`~kg_rag.indexing.job.IndexJob`),
replaces and deletes them, re-types relations, refreshes communities and saves whole indexes, under the store's
writer lock. The CLI and the Python API go through it.

Each write is atomic: one new generation in a directory, one transaction in PostgreSQL (where adding, replacing
or deleting a document touches only the rows it contributes). Used as a context manager, a writer holds the
lock across several steps — reading what is stored, planning, extracting with an LLM, writing — so nothing
another writer commits in between is lost::

    with IndexWriter(open_store(location), embeddings) as writer:
        doomed = writer.removals(keep=new_ids)      # what a re-index of exactly these documents would delete
        changes = writer.index_documents(docs, extractor=extractor, sync=True)
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from contextlib import ExitStack
from typing import Any

from kg_rag.communities import refresh_communities
from kg_rag.errors import EntityResolutionError, IndexNotFoundError, InputError
from kg_rag.index.meta import IndexMeta
from kg_rag.indexing.job import IndexJob, StoreTarget
from kg_rag.indexing.plan import DocumentChanges, DocumentPlan
from kg_rag.model.change import GraphChange, resolve_change
from kg_rag.model.graph import KnowledgeGraph
from kg_rag.model.names import canonical_key
from kg_rag.model.report import IngestReport
from kg_rag.model.resolution import MANUAL, Merge, Resolution, merge_entities, resolve_graph, split_entity
from kg_rag.store.graph_store import GraphStore, refreshed

logger = logging.getLogger(__name__)


class IndexWriter:
    """Writes to one store (see the module docstring). ``embeddings`` embeds new text; it must be the index's
    model for row-level writes (with another one every vector is recomputed, as a rebuild does)."""

    def __init__(self, store: GraphStore, embeddings: Any = None, *, wait: float | None = None, progress: bool = False):
        if not isinstance(store, GraphStore):
            raise InputError(f"store must be a kg_rag GraphStore, got {type(store).__name__}")
        self.store = store
        self.embeddings = embeddings
        self.wait = wait
        self.progress = progress
        self._stack: ExitStack | None = None

    def __repr__(self) -> str:
        return f"IndexWriter({self.store!r})"

    # ------------------------------------------------------------------ the lock
    def __enter__(self) -> IndexWriter:
        stack = ExitStack()
        stack.enter_context(self.store.writing(self.wait))
        self._stack = stack
        return self

    def __exit__(self, *exc: object) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            stack.close()

    def _locked(self) -> Any:
        return self.store.writing(self.wait)  # re-entrant: free when the writer already holds it

    def _embeddings(self) -> Any:
        if self.embeddings is None:
            raise InputError("this write embeds new text: give IndexWriter the index's embeddings")
        return self.embeddings

    # ------------------------------------------------------------------ what is stored
    def exists(self) -> bool:
        return self.store.exists()

    def meta(self) -> IndexMeta | None:
        """The stored index's metadata, validated; ``None`` when there is no index yet."""
        try:
            return self.store.read_meta()
        except IndexNotFoundError:
            return None

    def documents(self, ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """The stored documents' records, or those of ``ids`` (``[]`` when there is no index yet)."""
        return self.store.documents(ids) if self.store.exists() else []

    def removals(self, keep: Iterable[str]) -> list[str]:
        """The stored documents a re-index holding exactly ``keep`` would delete (sorted), so a caller can refuse
        before anything is extracted or written."""
        wanted = set(map(str, keep))
        return sorted(str(d["id"]) for d in self.documents() if str(d["id"]) not in wanted)

    # ------------------------------------------------------------------ writes
    def save(self, index: Any) -> str:
        """Replace the stored index with ``index`` (a rebuild, a copy); returns the new version."""
        with self._locked():
            return self.store.save(index)

    def decisions(self) -> Resolution:
        """The stored index's entity resolution record (merges and splits; empty when there is no index)."""
        return self.store_report().resolution if self.store.exists() else Resolution()

    def apply(
        self, change: GraphChange, *, type_prefix: bool | None = None, synonym_threshold: float | None = None
    ) -> dict[str, int]:
        """Apply one :class:`GraphChange` atomically; returns what was removed, by kind. The entities its fragments
        name are resolved as the index has resolved them before (a document naming ``U.S.`` again adds to *United
        States*; a merge or split by hand holds)."""
        if not change and synonym_threshold is None:
            return {"chunks": 0, "relations": 0, "entities": 0, "descriptions": 0}
        with self._locked():
            self._resolve_fragments(change)
            return self.store.apply(
                change,
                self._embeddings(),
                type_prefix=type_prefix,
                synonym_threshold=synonym_threshold,
                progress=self.progress,
            )

    def _resolve_fragments(self, change: GraphChange) -> None:
        resolve_change(change, self.decisions() if change.fragments else Resolution())

    def replace_documents(self, fragment: KnowledgeGraph, *, report: IngestReport | None = None) -> dict[str, int]:
        """Add the documents of ``fragment``; each one already stored is replaced (what its old version said
        and the new one does not is forgotten). Returns what was removed, by kind."""
        return self.apply(GraphChange(report=report).replace(fragment))

    def delete_documents(self, doc_ids: Sequence[str]) -> dict[str, int]:
        """Remove documents and everything they contributed (communities included: changed ones lose their
        report); no older version keeps the text. Unknown ids raise ``KeyError`` naming them, before anything
        changes."""
        with self._locked():
            return self.store.delete_documents(doc_ids, self._embeddings(), wait=self.wait)

    def edit(self, fn: Callable[[Any], Any], *, synonym_threshold: float | None = None) -> Any:
        """A change of the whole graph (re-typing, an OpenIE import that re-types the corpus): load the index,
        let ``fn(index)`` edit ``index.kg`` in place, re-embed only what changed, carry the communities over
        (changed ones stale), save once. Returns what ``fn`` returned."""
        with self._locked():
            index = self.store.load()
            result = fn(index)
            resolve_graph(index.kg, index.report.resolution)  # what an import added is resolved as before
            self.store.save(
                refreshed(index, self._embeddings(), synonym_threshold=synonym_threshold, progress=self.progress)
            )
            return result

    # ------------------------------------------------------------------ entity resolution by hand
    def merge_entities(self, into: str, name: str) -> Merge:
        """Merge the entity ``name`` into the entity ``into`` (names or keys), and record it so that re-indexing and
        updates merge them again. Raises :class:`~kg_rag.errors.EntityResolutionError` naming an entity the index does
        not hold."""

        def merge(index: Any) -> Merge:
            kg, resolution = index.kg, index.report.resolution
            keep, gone = _entity_key(kg, into, resolution), _entity_key(kg, name, resolution)
            if keep == gone:
                raise EntityResolutionError(f"{name!r} and {into!r} are one entity already")
            done = merge_entities(kg, keep, gone, how=MANUAL)
            index.report.resolution.record(done)
            return done

        return self.edit(merge)

    def split_entities(self, into: str, name: str) -> dict[str, int]:
        """Undo the merge of ``name`` into ``into`` (automatic or by hand) and keep the two apart from now on;
        returns what moved back (see :func:`kg_rag.model.resolution.split_entity`). Raises
        :class:`~kg_rag.errors.EntityResolutionError` when the index records no such merge."""

        def split(index: Any) -> dict[str, int]:
            kg, resolution = index.kg, index.report.resolution
            keep = _entity_key(kg, into, resolution)
            key = canonical_key(name)
            merge = resolution.merges.get(key)
            if merge is None or resolution.canonical(key) != keep:
                raise EntityResolutionError(
                    f"{name!r} was not merged into {kg.graph.nodes[keep]['name']!r} in this index"
                )
            moved = split_entity(kg, Merge(**{**merge.__dict__, "into": keep}), resolution.canonical)
            resolution.forget(key, merge.into)
            resolution.apart.add(tuple(sorted((key, keep))))
            return moved

        return self.edit(split)

    def entity_merges(self) -> list[Merge]:
        """The merges the index records, automatic and by hand, by the name merged away."""
        return sorted(self.decisions().merges.values(), key=lambda m: (m.into_name.casefold(), m.name.casefold()))

    def retype(self, typer: Any) -> dict[str, Any]:
        """Re-derive relation types (and ids) from the stored predicates; only changed texts are re-embedded.
        Returns ``retyped``/``merged`` counts, ``embedded`` texts and the graph's stats before and after."""
        with self._locked():
            index = self.store.load()
            before = index.kg.stats()
            counts = index.kg.retype(typer)
            cache = index.cache()
            fresh = refreshed(index, self._embeddings(), progress=self.progress)
            self.store.save(fresh)
        return {
            **counts,
            "embedded": len(fresh.cache().keys() - cache.keys()),
            "before": before,
            "after": fresh.kg.stats(),
        }

    def refresh_communities(
        self, *, rebuild: bool = False, reporter: Any = None, max_cluster_size: int | None = None
    ) -> tuple[Any, Any, Any]:
        """Detect communities and write the reports that are missing or stale (all of them with ``rebuild``);
        stores them only when something changed. Returns ``(communities, stats, graph)``."""
        with self._locked():
            index = self.store.load()
            previous = index.communities
            communities, stats = refresh_communities(
                index.kg, None if rebuild else previous, reporter=reporter, max_cluster_size=max_cluster_size
            )
            if previous is None or communities.to_dict() != previous.to_dict():
                self.store.write_communities(communities)
        return communities, stats, index.kg

    # ------------------------------------------------------------------ documents (the write path)
    def store_report(self) -> IngestReport:
        return self.store.read_report() if self.store.exists() else IngestReport()

    def index_documents(
        self,
        documents: Sequence[Any],
        *,
        extractor: Any = None,
        chunk_size: int = 512,
        chunk_overlap: int = 24,
        sync: bool = False,
        config: Any = None,
        type_prefix: bool | None = None,
        synonym_threshold: float | None = None,
        guard: Callable[[DocumentPlan], None] | None = None,
    ) -> DocumentChanges:
        """Index LangChain ``documents`` into the store by the rules of :mod:`kg_rag.indexing.plan` (unchanged
        documents cost nothing, a failing LLM never shrinks the graph, ``sync`` removes the others): one
        :class:`~kg_rag.indexing.job.IndexJob`, with the lock held from planning to writing. ``guard`` sees the
        plan before anything is extracted and may raise to refuse it."""
        job = IndexJob(documents, extractor, chunk_size, chunk_overlap, sync, self.progress, config)
        target = StoreTarget(self, type_prefix=type_prefix, synonym_threshold=synonym_threshold)
        return job.run(target, guard=guard)


def _entity_key(kg: KnowledgeGraph, name: str, resolution: Resolution) -> str:
    """The key of the entity ``name`` names (its name or its key); an error naming it when there is none. A name
    merged into another entity names that one."""
    key = name if name in kg.graph else canonical_key(name)
    if key not in kg.graph and key in resolution.merges:
        key = resolution.canonical(key)
    if key not in kg.graph:
        raise EntityResolutionError(f"no entity named {name!r} in this index")
    return key
