"""Issue 29: the retriever takes any LangChain ``BaseDocumentCompressor`` at the chunk stage — it reads the
ranked chunks' own text and chooses ``k`` of ``rerank_depth``, and the relations and paths are then chosen for
the chunks it kept — and composes with ``ContextualCompressionRetriever``."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from langchain_core.documents import Document
from langchain_core.documents.compressor import BaseDocumentCompressor

from kg_rag import EntityBasedKGRAG
from kg_rag.demo import demo_graph
from kg_rag.testing import BagOfWordsEmbeddings

Q = "Who does Lars Eriksen ultimately report to?"


class PreferWord(BaseDocumentCompressor):
    """Puts the passages that contain ``word`` first (a stand-in for a cross-encoder), and records what it saw."""

    word: str
    seen: list = []

    def compress_documents(self, documents: Sequence[Document], query: str, callbacks=None) -> Sequence[Document]:
        self.seen.append([d.page_content for d in documents])
        return sorted(documents, key=lambda d: self.word not in d.page_content)


@pytest.fixture(scope="module")
def graph():
    return demo_graph()


def test_the_compressor_chooses_the_chunks_and_the_graph_half_follows(graph):
    plain = EntityBasedKGRAG.from_graph(graph, BagOfWordsEmbeddings(), k=2)
    reranker = PreferWord(word="Atlas")
    reranked = EntityBasedKGRAG.from_graph(graph, BagOfWordsEmbeddings(), k=2, compressor=reranker)
    before, after = plain.retrieve(Q), reranked.retrieve(Q)
    assert all("Atlas" in c.text for c in after.chunks) and not all("Atlas" in c.text for c in before.chunks)
    (offered,) = reranker.seen
    assert len(offered) == min(20, len(graph.chunks))  # rerank_depth, or every chunk there is
    assert all(not text.startswith("Source:") for text in offered)  # the passages' own text, not the fenced form
    shown = {c.id for c in after.chunks}
    assert all(set(r.chunk_ids) & shown or not r.chunk_ids for r in after.relations)  # rows of the kept chunks
    assert [run.name for run in after.stages if run.ms is not None].count("rerank") == 1
    assert "rerank" not in [run.name for run in before.stages if run.ms is not None]
    assert len(reranked.invoke(Q, k=1)) == 1


def test_it_composes_with_contextual_compression(graph):
    """``ContextualCompressionRetriever`` reranks the final Documents (their fenced passages, after the graph half
    was chosen); the hook reranks before. Both work; the README says which to use when."""
    from langchain_classic.retrievers import ContextualCompressionRetriever

    base = EntityBasedKGRAG.from_graph(graph, BagOfWordsEmbeddings(), k=3)
    outer = ContextualCompressionRetriever(base_compressor=PreferWord(word="Atlas"), base_retriever=base)
    docs = outer.invoke(Q)
    assert len(docs) == 3 and docs[0].metadata["chunk_id"] in {d.metadata["chunk_id"] for d in base.invoke(Q)}


def test_a_compressor_that_is_not_one_is_a_clear_error(graph):
    r = EntityBasedKGRAG.from_graph(graph, BagOfWordsEmbeddings(), compressor="rerank please")
    with pytest.raises(ValueError, match="BaseDocumentCompressor"):
        r.invoke(Q)
