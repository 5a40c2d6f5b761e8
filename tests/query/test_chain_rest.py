"""The chain ranks a linked passage by the rest of the question: the question's words that the picked passages
already contain say nothing about which linked passage carries the next hop."""

from __future__ import annotations

import numpy as np

from kg_rag import Chain, Chunk, EntityBasedKGRAG, KnowledgeGraph, QueryParams
from kg_rag.query.strategies import make_strategy
from kg_rag.query.strategies.chain import QuestionRest
from kg_rag.query.workspace import Workspace
from kg_rag.store.base import EdgeFilter

QUESTION = "How much cargo did the port hosting the Alpha Cup handle in 2010?"


def cup_graph() -> KnowledgeGraph:
    """The passage about the cup names its host port; a sibling cup shares the organiser with it (and the
    question's words "Cup", "hosted", "port"); the bridge passage is about the port and answers the rest."""
    docs = {
        "first": (
            "The Alpha Cup was hosted by the port of Portville and organised by Bodyx.",
            ["Alpha Cup", "Portville", "Bodyx"],
        ),
        "sibling": ("The Beta Cup was hosted by a port and organised by Bodyx.", ["Beta Cup", "Bodyx"]),
        "bridge": ("Portville handled 500 tonnes of cargo in 2010.", ["Portville", "500 tonnes"]),
        "other": ("Ships carry goods between harbours.", []),
    }
    kg = KnowledgeGraph()
    for cid, (text, entities) in docs.items():
        kg.add_chunk(Chunk(cid, text, cid))
        for name in entities:
            kg.add_entity(name, None, chunk_id=cid)
    return kg


def _ids(retriever: EntityBasedKGRAG, k: int = 3) -> list[str]:
    return [d.metadata["chunk_id"] for d in retriever.invoke(QUESTION, k=k)]


def test_a_linked_passage_is_ranked_by_the_rest_of_the_question(bow_embeddings):
    default = EntityBasedKGRAG.from_graph(cup_graph(), bow_embeddings)
    whole = EntityBasedKGRAG(
        index=default.index,
        embeddings=bow_embeddings,
        params=QueryParams(strategy=Chain(rest_of_question=False)),
    )
    # both passages are linked from the first (through Bodyx and through Portville); on the whole question the
    # sibling wins by the words it shares with the first passage, on the rest ("cargo", "handle", "2010") the
    # bridge does
    assert _ids(whole) == ["first", "sibling", "bridge"]
    assert _ids(default) == ["first", "bridge", "sibling"]
    assert make_strategy({"name": "chain", "rest_of_question": False}) == Chain(rest_of_question=False)
    assert Chain().to_dict()["rest_of_question"] is True


def test_chunks_no_link_reaches_keep_the_whole_question(bow_embeddings):
    """Without links (a corpus with no extracted graph, such as the SEC filings) the ranking is relevance to
    the whole question, with or without the rule: passages that match the same words are not next hops."""
    kg = KnowledgeGraph()
    for i, text in enumerate(
        [
            "Alpha revenue was 12 million in 2010.",
            "Alpha revenue in 2010 rose from 2009.",
            "Cargo volumes in 2010.",
            "Alpha cost of revenue.",
        ]
    ):
        kg.add_chunk(Chunk(f"c{i}", text, f"d{i}"))
    default = EntityBasedKGRAG.from_graph(kg, bow_embeddings)
    whole = EntityBasedKGRAG(
        index=default.index, embeddings=bow_embeddings, params=QueryParams(strategy=Chain(rest_of_question=False))
    )
    q = "What was Alpha revenue in 2010?"
    assert [d.metadata["chunk_id"] for d in default.invoke(q, k=4)] == [
        d.metadata["chunk_id"] for d in whole.invoke(q, k=4)
    ]


def test_the_rest_of_the_question_loses_the_words_of_each_picked_chunk(bow_embeddings):
    backend = EntityBasedKGRAG.from_graph(cup_graph(), bow_embeddings).backend
    with backend.reader() as view:
        handles = view.chunk_handles(["first", "bridge", "sibling"])

        def rest_of(question: str) -> tuple[Workspace, QuestionRest, np.ndarray]:
            query = np.asarray(bow_embeddings.embed_query(question), dtype=np.float32)
            ws = Workspace(view, query, question, QueryParams(), EdgeFilter())
            positions = ws.chunks.add(np.asarray([handles["first"], handles["bridge"], handles["sibling"]]))
            return ws, QuestionRest(ws), positions

        ws, rest, positions = rest_of(QUESTION)
        assert rest.text == "how much cargo did the port hosting the alpha cup handle in 2010"
        rest.pick(handles["first"])
        assert rest.text == "how much cargo did hosting handle in 2010"  # "the", "port", "alpha", "cup" matched
        relevance, dense = rest.relevance(positions), ws.dense(positions)
        assert relevance[1] > dense[1]  # the bridge matches the rest ("cargo", "2010"): lexical credit
        assert np.isclose(relevance[2], dense[2])  # the sibling matches none of it

        ws, rest, positions = rest_of("Alpha Cup by Portville?")
        rest.pick(handles["first"])
        assert rest.text == "" and np.allclose(rest.relevance(positions), ws.dense(positions))
