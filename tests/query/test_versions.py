"""Two graphs built in one process never share a version: caches keyed by version (the relation-type index of
question matching) served one graph's types to another with the same edit count, which changed the second
graph's expansion and its golden results depending on which test ran before."""

from __future__ import annotations

from kg_rag import Chunk, EntityBasedKGRAG, KnowledgeGraph
from kg_rag.testing import BagOfWordsEmbeddings


def _graph(rtype: str) -> KnowledgeGraph:
    kg = KnowledgeGraph()
    kg.add_chunk(Chunk("c1", "Alpha and Beta.", "d.md"))
    kg.add_relation("Alpha", "Beta", rtype, chunk_id="c1")
    return kg


def test_two_graphs_with_the_same_edit_count_have_different_versions():
    emb = BagOfWordsEmbeddings()
    a = EntityBasedKGRAG.from_graph(_graph("REPLACED_BY"), emb)
    b = EntityBasedKGRAG.from_graph(_graph("SUPERSEDES"), emb)
    assert a.backend.info().version != b.backend.info().version
    question = "What replaced Alpha?"
    fresh = EntityBasedKGRAG.from_graph(_graph("SUPERSEDES"), emb).retrieve(question).context
    a.retrieve(question)  # fills the cache for a's vocabulary
    assert b.retrieve(question).context == fresh
