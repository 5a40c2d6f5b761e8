"""Document-level writes every store offers: add or replace documents, and delete them, each atomically.

A write holds the store's writer lock for the whole read–modify–write, applies the change to the stored graph
with the same rules as the in-memory model (:meth:`KnowledgeGraph.replace_documents`,
:func:`~kg_rag.ingest.pipeline.forget_documents`), re-embeds only text that changed, and saves once — one new
generation in a directory, one transaction in PostgreSQL — so readers see all of the change or none of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kg_rag.index.build import GraphIndex, build_index
from kg_rag.ingest.report import IngestReport
from kg_rag.model.graph import KnowledgeGraph


class DocumentWrites:
    """Mixin for stores with ``writing()``, ``exists()``, ``load()`` and ``save()``."""

    def _current(self, embeddings: Any, type_prefix: bool = True) -> GraphIndex:
        if self.exists():  # type: ignore[attr-defined]
            return self.load()  # type: ignore[attr-defined]
        return build_index(KnowledgeGraph(), embeddings, type_prefix=type_prefix)

    def replace_documents(
        self,
        fragment: KnowledgeGraph,
        embeddings: Any,
        *,
        report: IngestReport | None = None,
        wait: float | None = None,
    ) -> dict[str, int]:
        """Add the documents of ``fragment``; each one already stored is replaced (what its old version said
        and the new one does not is forgotten). Returns what was removed, by kind."""
        from kg_rag.ingest.pipeline import replace_documents

        with self.writing(wait):  # type: ignore[attr-defined]
            index = self._current(embeddings)
            removed = replace_documents(index.kg, fragment, index.report)
            if report is not None:
                index.report.merge(report)
            self.save(index.refresh(embeddings))  # type: ignore[attr-defined] - communities carried, marked stale
        return removed

    def delete_documents(self, doc_ids: Sequence[str], embeddings: Any, *, wait: float | None = None) -> dict[str, int]:
        """Remove documents and everything they contributed. Unknown ids raise ``KeyError`` naming them,
        before anything changes."""
        with self.writing(wait):  # type: ignore[attr-defined]
            index = self.load()  # type: ignore[attr-defined]
            known = set(index.kg.documents())
            missing = [d for d in dict.fromkeys(doc_ids) if d not in known]
            if missing:
                raise KeyError(f"no document {', '.join(map(repr, missing))} in {self}")
            removed = index.remove_documents(list(dict.fromkeys(doc_ids)))
            self.save(index.refresh(embeddings), forget=True)  # type: ignore[attr-defined]
        return removed
