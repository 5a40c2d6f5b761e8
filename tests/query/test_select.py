"""Issue 26 §4: rows about lexical neighbours. A passage ranked below the first two evidences only the
relations that continue from what the surer passages or the question name, and that are of a type the question
asks for (when it asks for any)."""

from __future__ import annotations

from kg_rag import Chunk, EntityBasedKGRAG, KnowledgeGraph, QueryParams
from kg_rag.testing import BagOfWordsEmbeddings


def _graph() -> KnowledgeGraph:
    kg = KnowledgeGraph()
    kg.add_chunk(Chunk("c0", "Brand play written Henrik Ibsen Brand play Ibsen", "d0"))
    kg.add_chunk(Chunk("c1", "Henrik Ibsen born Skien Brand play", "d1"))
    kg.add_chunk(Chunk("c2", "Clara Nordstrom born Karlskrona Skien Telemark play", "d2"))
    kg.add_relation("Brand", "Henrik Ibsen", "WRITTEN_BY", predicate="written by", chunk_id="c0")
    kg.add_relation("Henrik Ibsen", "Skien", "BORN_IN", predicate="born in", chunk_id="c1")
    kg.add_relation("Skien", "Telemark", "LOCATED_IN", predicate="lies in", chunk_id="c2")
    kg.add_relation("Clara Nordstrom", "Karlskrona", "BORN_IN", predicate="born in", chunk_id="c2")
    return kg


def test_a_lower_ranked_passage_shows_only_rows_that_continue_the_evidence():
    # every continuing row, whatever its type (by default only those of the types the question asks for: below)
    params = QueryParams(relation_floor=0.0, top_k_chunks=3, similarity_threshold=0.2, less_sure_asked=False)
    retriever = EntityBasedKGRAG.from_graph(_graph(), BagOfWordsEmbeddings(), params=params)
    result = retriever.retrieve("Where was the writer of the Brand play born, Henrik Ibsen?")
    assert {c.id for c in result.chunks[:2]} == {"c0", "c1"} and result.chunks[2].id == "c2"
    rows = {(r.source, r.relation_type, r.target) for r in result.relations}
    assert ("Skien", "LOCATED_IN", "Telemark") in rows  # continues from Skien, which the second passage names
    assert ("Clara Nordstrom", "BORN_IN", "Karlskrona") not in rows  # about the third passage's own subject
    assert ("Henrik Ibsen", "BORN_IN", "Skien") in rows


def test_a_lower_ranked_passage_shows_only_continuing_rows_of_the_asked_types():
    """The third passage is there for the last hop's answer: of its rows that continue the evidence, only those of
    a type the question asks for ("located") are shown; its other facts about the shared entity are not."""
    kg = _graph()
    kg.add_relation("Skien", "Karlskrona", "TWINNED_WITH", predicate="twinned with", chunk_id="c2")
    question = "Where is the town located where the writer of the Brand play, Henrik Ibsen, was born?"
    rows = {}
    for asked_only in (True, False):
        params = QueryParams(relation_floor=0.0, top_k_chunks=3, similarity_threshold=0.2, less_sure_asked=asked_only)
        result = EntityBasedKGRAG.from_graph(kg, BagOfWordsEmbeddings(), params=params).retrieve(question)
        assert {c.id for c in result.chunks[:2]} == {"c0", "c1"} and result.chunks[2].id == "c2"
        rows[asked_only] = {(r.source, r.relation_type, r.target) for r in result.relations}
    assert ("Skien", "LOCATED_IN", "Telemark") in rows[True]  # continues from Skien, and "located" asks for it
    assert ("Skien", "TWINNED_WITH", "Karlskrona") not in rows[True]  # continues, but nothing asks for it
    assert {("Skien", "LOCATED_IN", "Telemark"), ("Skien", "TWINNED_WITH", "Karlskrona")} <= rows[False]
    assert ("Henrik Ibsen", "BORN_IN", "Skien") in rows[True]  # the second passage shows all it states
