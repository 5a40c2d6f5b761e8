"""The chain starts at what the question names: when an entity the question names has a passage of its own
(titled by its name), the first pick is one of those, not the look-alike of the last hop."""

from __future__ import annotations

import numpy as np

from kg_rag import Chain, Chunk, EntityBasedKGRAG, KnowledgeGraph, QueryParams
from kg_rag.query.strategies import make_strategy
from kg_rag.query.strategies.chain import named_passages, own_passages
from kg_rag.query.workspace import Workspace
from kg_rag.store.base import EdgeFilter

QUESTION = "What is the usual snowfall in the city where the performers of Brandon were formed?"


def song_graph() -> KnowledgeGraph:
    """The song's own passage names its band, the band's passage its city, the city's passage the answer; a
    passage about another city's snowfall is the most like the whole question and links to none of them."""
    docs = {
        "song": ("Brandon (song)", "Brandon is a song by Pearlo.", ["Brandon", "Pearlo"]),
        "band": ("Pearlo", "Pearlo is a band formed in Seaville.", ["Pearlo", "Seaville"]),
        "city": ("Seaville", "Seaville gets little snow: 7 inches a year.", ["Seaville"]),
        "lookalike": (
            "Coldtown",
            "The usual snowfall in the city of Coldtown is where snowfall is usual.",
            ["Coldtown"],
        ),
        "mention": ("Radio", "A radio station played Brandon and other songs.", ["Brandon"]),
    }
    kg = KnowledgeGraph()
    for cid, (title, text, entities) in docs.items():
        kg.add_chunk(Chunk(cid, text, cid, {"title": title}))
        for name in entities:
            kg.add_entity(name, None, chunk_id=cid)
    return kg


def _ids(retriever: EntityBasedKGRAG, k: int = 3) -> list[str]:
    return [d.metadata["chunk_id"] for d in retriever.invoke(QUESTION, k=k)]


def test_the_chain_starts_at_the_passage_about_what_the_question_names(bow_embeddings):
    default = EntityBasedKGRAG.from_graph(song_graph(), bow_embeddings)
    anywhere = EntityBasedKGRAG(
        index=default.index, embeddings=bow_embeddings, params=QueryParams(strategy=Chain(start_at_named=False))
    )
    # by score the look-alike comes first (it shares "usual", "snowfall", "city" with the question), and no
    # link leads on from it; the chain now starts at the song's own passage, the first hop
    assert _ids(anywhere) == ["lookalike", "song", "band"]
    assert _ids(default) == ["song", "lookalike", "band"]
    scores = [d.metadata["score"] for d in default.invoke(QUESTION, k=3)]
    assert scores == sorted(scores, reverse=True)
    assert make_strategy({"name": "chain", "start_at_named": False}) == Chain(start_at_named=False)
    assert Chain().to_dict()["start_at_named"] is True


def test_own_passages_are_titled_by_the_name_not_merely_mentioning_it(bow_embeddings):
    kg = song_graph()
    kg.add_chunk(Chunk("year", "In 1930 Coldtown had snow.", "year", {"title": "1930"}))
    kg.add_entity("1930", None, chunk_id="year")
    backend = EntityBasedKGRAG.from_graph(kg, bow_embeddings).backend
    with backend.reader() as view:
        query = np.asarray(bow_embeddings.embed_query(QUESTION), dtype=np.float32)
        ws = Workspace(view, query, QUESTION, QueryParams(), EdgeFilter())
        named = {e: view.entities(np.asarray([e]))[0].name for e in view.lookup_entities(["brandon", "1930"]).values()}
        cover = named_passages(ws, frozenset(named), walk_filtered=False)
        ids = {
            int(p): cid
            for cid, p in zip(
                ["song", "mention", "year"],
                ws.chunks.add(np.asarray([view.chunk_handles([c])[c] for c in ["song", "mention", "year"]])).tolist(),
            )
        }
        assert set(ids) <= set(cover)  # all three mention a named entity
        # the song's own passage ("Brandon (song)") is about Brandon; the radio passage only mentions it; a
        # passage titled by a bare year names no subject a chain starts from
        assert [ids[p] for p in own_passages(ws, cover)] == ["song"]
