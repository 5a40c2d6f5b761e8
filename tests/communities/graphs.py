"""Graphs the community tests share: two executive orders (one supersedes the other), four loosely joined teams, and
the demo corpus with its communities detected."""

from __future__ import annotations

from kg_rag import Chunk, EntityBasedKGRAG, KnowledgeGraph, build_index
from kg_rag.communities import refresh_communities
from kg_rag.demo import DEMO_CORPUS
from kg_rag.index.build import GraphIndex
from kg_rag.ingest.extraction_file import import_extraction_file
from kg_rag.testing import BagOfWordsEmbeddings

FORWARD = "Executive Order 14028 -[SUPERSEDES]-> Executive Order 13800"
BACKWARD = "Executive Order 13800 -[SUPERSEDES]-> Executive Order 14028"


def orders_graph() -> KnowledgeGraph:
    kg = KnowledgeGraph()
    kg.add_chunk(Chunk("c1", "Executive Order 14028 supersedes Executive Order 13800.", "orders.md", {"title": "EOs"}))
    kg.add_chunk(Chunk("c2", "Executive Order 13800 was signed by the President.", "orders.md"))
    kg.add_relation(
        "Executive Order 14028",
        "Executive Order 13800",
        "SUPERSEDES",
        chunk_id="c1",
        evidence="Executive Order 14028 supersedes Executive Order 13800",
        description="replaces it",
    )
    kg.add_relation("President", "Executive Order 13800", "SIGNED", chunk_id="c2")
    return kg


# ------------------------------------------------------------------------------------------- detection
def big_graph() -> KnowledgeGraph:
    kg = KnowledgeGraph()
    for team in range(4):  # four dense groups, loosely joined
        for i in range(8):
            cid = f"t{team}c{i}"
            kg.add_chunk(Chunk(cid, f"Team {team} member {i} works with member {(i + 1) % 8}.", f"team{team}.md"))
            kg.add_relation(f"T{team} M{i}", f"T{team} M{(i + 1) % 8}", "WORKS_WITH", chunk_id=cid)
            kg.add_relation(f"T{team} M{i}", f"T{team} M{(i + 3) % 8}", "ADVISES", chunk_id=cid)
        kg.add_relation(f"T{team} M0", f"T{(team + 1) % 4} M0", "LIAISES_WITH", chunk_id=f"t{team}c0")
    return kg


# ------------------------------------------------------------------------------------------- context
def demo_with_communities() -> tuple[EntityBasedKGRAG, GraphIndex]:
    """The demo corpus indexed with bag-of-words embeddings, its communities detected: (retriever, index)."""
    kg = KnowledgeGraph()
    import_extraction_file(kg, DEMO_CORPUS)
    emb = BagOfWordsEmbeddings()
    index = build_index(kg, emb)
    index.communities, _ = refresh_communities(kg)
    return EntityBasedKGRAG(index=index, embeddings=emb), index
