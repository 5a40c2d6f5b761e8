"""The write path: documents become stored rows through one :class:`IndexJob` (plan, guard, extract, one change,
one write), for an editable graph or a store; :class:`IndexWriter` holds a store's writer lock around it and
around the other writes (deletes, re-typing, communities, entity merges)."""

from kg_rag.indexing.job import GraphTarget, IndexJob, StoreTarget, aindex_documents, index_documents
from kg_rag.indexing.plan import DocumentChanges, DocumentPlan, plan_documents
from kg_rag.indexing.writer import IndexWriter

__all__ = [
    "DocumentChanges",
    "DocumentPlan",
    "GraphTarget",
    "IndexJob",
    "IndexWriter",
    "StoreTarget",
    "aindex_documents",
    "index_documents",
    "plan_documents",
]
