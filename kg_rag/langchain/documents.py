"""Retrieval results as LangChain Documents (:func:`to_documents`), and ``format_documents``: retrieved Documents
-> the one fenced context a model reads.

In ``retriever | format_documents | prompt | llm`` (or ``{"context": retriever | format_documents, ...}``) the
prompt gets what the answer graph and the agent tool give their models: the graph half of the retrieval (directed
typed paths, the relationships table, entities, community reports) once, then the passages as numbered sources,
inside ``<context>`` … ``</context>``. Per-call settings reach it through the retriever (``config={"configurable":
{"k": 1}}`` gives one source), and it renders whatever list it is given: the retriever's own, a reranked or
filtered one (``ContextualCompressionRetriever``), or one merged with another retriever's Documents (rendered as
plain sources).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda

from kg_rag.context.format import format_sources, keep_graph_lines, render_passage
from kg_rag.errors import InputError
from kg_rag.fence import fenced
from kg_rag.model.results import RetrievalResult, ScoredChunk
from kg_rag.query.params import QueryParams
from kg_rag.tokens import count_tokens


def to_documents(result: RetrievalResult, include_edges: bool = True) -> list[Document]:
    """A retrieval's chunks as Documents, best first.

    ``page_content`` is the passage as a model may read it on its own: the directed paths of this retrieval that
    reach it, then its text as quoted ``| `` lines (so ``retriever | format_docs | prompt | llm`` hands the model
    the typed paths, and no passage can forge one). Metadata: ``text`` (the passage as stored), ids, source,
    scores, matched entities with their similarity, ``paths`` (the rendered paths reaching it), ``edges``
    (``include_edges``: the relations it states), and ``graph_context`` with ``context_budget``: the graph half
    of this retrieval's context with ``graph_support`` (the passages each of its lines rests on), from which
    :func:`format_documents` renders the whole context for any list of these Documents."""
    matched = {e.key: e for e in result.entities}
    formatted = result.formatted
    graph = formatted.graph_text if formatted is not None else ""
    support = formatted.graph_support if formatted is not None else []
    budget = {"total": formatted.budget, "sources": formatted.sources_budget} if formatted is not None else None
    docs = []
    for c in result.chunks:
        meta: dict[str, Any] = {
            **c.metadata,
            "chunk_id": c.id,
            "doc_id": c.doc_id,
            "source": c.metadata.get("source", c.doc_id),
            "text": c.text,
            "score": c.score,
            "graph_score": c.graph_score,
            "dense_score": c.dense_score,
            "matched_entities": [
                {"name": matched[k].name, "similarity": matched[k].similarity} for k in c.entities if k in matched
            ],
            "paths": list(c.paths),
            "graph_context": graph,
            "graph_support": support,
        }
        if budget is not None:
            meta["context_budget"] = dict(budget)
        if include_edges:
            meta["edges"] = [
                {
                    "id": r.relation_id,
                    "source": r.source,
                    "target": r.target,
                    "relation_type": r.relation_type,
                    "description": r.description,
                    "evidence": r.evidence,
                }
                for r in result.relations
                if c.id in r.chunk_ids
            ]
        docs.append(Document(page_content=render_passage(c), metadata=meta, id=c.id))
    return docs


def compressor_reranker(compressor: Any) -> Any:
    """A LangChain ``BaseDocumentCompressor`` as the query engine's reranker (``None`` stays ``None``): it is
    given the ranked chunks as Documents of their own text, and the ids of those it returns, in its order, are
    the chunks kept."""
    if compressor is None:
        return None
    if not callable(getattr(compressor, "compress_documents", None)):
        raise InputError(f"compressor must be a LangChain BaseDocumentCompressor, got {type(compressor).__name__}")

    def rerank(question: str, chunks: list[ScoredChunk]) -> list[str]:
        docs = [
            Document(page_content=c.text, metadata={**c.metadata, "chunk_id": c.id, "doc_id": c.doc_id}, id=c.id)
            for c in chunks
        ]
        kept = compressor.compress_documents(docs, question)
        return [str(d.metadata.get("chunk_id") or d.id) for d in kept]

    return rerank


def _as_chunk(doc: Document) -> ScoredChunk:
    meta = doc.metadata or {}
    text = meta.get("text")
    return ScoredChunk(
        id=str(meta.get("chunk_id") or doc.id or meta.get("source") or "?"),
        text=text if isinstance(text, str) else doc.page_content,  # another retriever's Document: its content
        doc_id=str(meta.get("doc_id") or meta.get("source") or ""),
        score=float(meta.get("score", 0.0) or 0.0),
        metadata={"title": meta["title"]} if meta.get("title") else {},
    )


def documents_context(docs: Sequence[Document]) -> str:
    """The context text (unfenced) for ``docs``: the graph half they carry, once (each distinct one, when they
    come from several retrievals), then each as a numbered source, within the token budget they were retrieved
    with. For the Documents of one retrieval, in order, it is exactly that retrieval's ``context``."""
    if not isinstance(docs, Sequence) or isinstance(docs, (str, bytes)):
        raise InputError(f"format_documents takes a list of Documents, got {type(docs).__name__}")
    bad = [type(d).__name__ for d in docs if not isinstance(d, Document)]
    if bad:
        raise InputError(f"format_documents takes a list of Documents, got a {bad[0]} in it")
    kept = {str(d.metadata.get("chunk_id")) for d in docs if d.metadata.get("chunk_id") is not None}
    halves: dict[str, str] = {}  # each distinct graph half, without what rests only on passages not given
    for d in docs:
        graph = d.metadata.get("graph_context") or ""
        if graph and graph not in halves:
            halves[graph] = keep_graph_lines(graph, d.metadata.get("graph_support") or [], kept)
    graphs = [g for g in halves.values() if g]
    budgets = [b for d in docs if isinstance(b := d.metadata.get("context_budget"), dict)]
    if budgets:
        total = min(int(b.get("total", 0)) for b in budgets)
        sources = min(int(b.get("sources", 0)) for b in budgets)
    else:  # no kg-rag Documents: the default budget, all of it for the sources
        total = sources = QueryParams().max_context_tokens
    if len(graphs) > 1:  # several retrievals: the sources get what their graph halves leave
        sources = max(0, min(sources, total - count_tokens("\n".join(graphs))))

    return format_sources("\n".join(graphs), [_as_chunk(d) for d in docs], total, sources)


def _format(docs: Sequence[Document]) -> str:
    return fenced(documents_context(docs))


class _FormatDocuments(RunnableLambda):
    """A Runnable that can also be called as a plain function."""

    def __call__(self, docs: Sequence[Document]) -> str:
        return _format(docs)


format_documents: Any = _FormatDocuments(_format, name="kg-rag format documents")
"""Documents -> the fenced context string (a Runnable; also callable as ``format_documents(docs)``)."""

__all__ = ["compressor_reranker", "documents_context", "format_documents", "to_documents"]
