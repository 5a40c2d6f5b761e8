"""The chain strategy: a bridge passage that shares an entity with the best passage follows it."""

from __future__ import annotations

import numpy as np

from kg_rag import Chain, Chunk, EntityBasedKGRAG, KnowledgeGraph, QueryParams
from kg_rag.query.strategies import link_specificity

QUESTION = "What country was the author of the Brandon play a citizen of?"


def bridge_graph() -> KnowledgeGraph:
    kg = KnowledgeGraph()
    docs = {
        "first": ("The Brandon play was written by the author Henrik Ibsen.", [("Brandon play", "Henrik Ibsen")]),
        "bridge": ("Henrik Ibsen was a Norwegian citizen.", [("Henrik Ibsen", "Norway")]),
        "distractor1": ("Every country decides who may be a citizen.", []),
        "distractor2": ("An author may write a play about a country.", []),
    }
    for cid, (text, rels) in docs.items():
        kg.add_chunk(Chunk(cid, text, cid))
        for s, t in rels:
            kg.add_relation(s, t, "RELATED", chunk_id=cid)
    return kg


def test_chain_pulls_the_bridge_passage_up(bow_embeddings):
    kg = bridge_graph()
    dense = EntityBasedKGRAG.from_graph(kg, bow_embeddings, params=QueryParams(strategy=Chain(weight=0.0)))
    chain = EntityBasedKGRAG(index=dense.index, embeddings=bow_embeddings, params=QueryParams(strategy="chain"))
    dense_ids = [d.metadata["chunk_id"] for d in dense.invoke(QUESTION, k=4)]
    chain_ids = [d.metadata["chunk_id"] for d in chain.invoke(QUESTION, k=4)]
    assert dense_ids[0] == "first" and dense_ids.index("bridge") > 1  # plain similarity buries the bridge
    assert chain_ids[:2] == ["first", "bridge"]
    assert sorted(chain_ids) == sorted(dense_ids)


def test_chain_respects_k_and_prefix_stability(bow_embeddings):
    r = EntityBasedKGRAG.from_graph(bridge_graph(), bow_embeddings)
    five = [d.metadata["chunk_id"] for d in r.invoke(QUESTION, k=4)]
    two = [d.metadata["chunk_id"] for d in r.invoke(QUESTION, k=2)]
    assert two == five[:2] and len(five) == 4


def test_excluded_entities_do_not_link(bow_embeddings):
    r = EntityBasedKGRAG.from_graph(bridge_graph(), bow_embeddings)
    ids = [d.metadata["chunk_id"] for d in r.invoke(QUESTION, k=4, exclude_entities=["Henrik Ibsen"])]
    assert ids.index("bridge") > 1


def test_link_specificity_decays_for_common_entities(bow_embeddings):
    kg = KnowledgeGraph()
    for i in range(12):
        kg.add_chunk(Chunk(f"c{i}", f"text {i}", f"d{i}"))
        kg.add_entity("Common", None, chunk_id=f"c{i}")
    kg.add_entity("Rare", None, chunk_id="c0")
    kg.add_entity("Rare", None, chunk_id="c1")
    r = EntityBasedKGRAG.from_graph(kg, bow_embeddings)
    with r.backend.reader() as view:
        ids = view.lookup_entities(["rare", "common"])
        counts = view.mention_counts(np.asarray([ids["rare"], ids["common"]]))
    spec = link_specificity(counts, 5.0)
    assert spec[0] == 1.0
    assert np.isclose(spec[1], 5.0 / 11.0)


def test_chains_link_through_the_bridge_not_through_what_the_question_names(bow_embeddings):
    """A passage that only shares the question's own entity with the best passage adds no hop: chains link
    onward through what the picked passage adds (the author), not through what the question names."""
    kg = bridge_graph()
    kg.add_chunk(Chunk("aside", "Reviews were mixed when it opened.", "aside"))
    kg.add_entity("Brandon play", None, chunk_id="aside")
    default = EntityBasedKGRAG.from_graph(kg, bow_embeddings)
    linked = EntityBasedKGRAG(
        index=default.index, embeddings=bow_embeddings, params=QueryParams(strategy=Chain(link_named=True))
    )
    default_ids = [d.metadata["chunk_id"] for d in default.invoke(QUESTION, k=5)]
    linked_ids = [d.metadata["chunk_id"] for d in linked.invoke(QUESTION, k=5)]
    assert default_ids[:2] == ["first", "bridge"]
    assert linked_ids.index("aside") < linked_ids.index("distractor1")  # linked through "Brandon play"
    assert default_ids.index("aside") > default_ids.index("distractor1")


def test_a_question_naming_two_things_gets_a_passage_about_each(bow_embeddings):
    """A chain from the first named entity (the accord, linked on through Lindora) used to fill the top k
    with passages that only share Lindora, pushing out the passage about the other thing the question names;
    the question now links to a passage about each specific entity it names, until one is picked."""
    question = "Which city hosted the signing of the Dorvan Accord, and who founded Quillton?"
    kg = KnowledgeGraph()
    docs = {
        "accord": ("The Dorvan Accord was signed in the city of Lindora.", ("Dorvan Accord", "Lindora")),
        "games": ("Lindora held the games of the city.", ("Lindora", "city games")),
        "fair": ("Lindora has a trade fair.", ("Lindora", "trade fair")),
        "quillton": ("Quillton was founded by Maren Holt.", ("Quillton", "Maren Holt")),
        "aside": ("A signing is a ceremony.", None),
    }
    for cid, (text, rel) in docs.items():
        kg.add_chunk(Chunk(cid, text, cid))
        if rel:
            kg.add_relation(*rel, "RELATED", chunk_id=cid)
    default = EntityBasedKGRAG.from_graph(kg, bow_embeddings)
    uncovered = EntityBasedKGRAG(
        index=default.index, embeddings=bow_embeddings, params=QueryParams(strategy=Chain(cover_named=False))
    )
    default_docs = default.invoke(question, k=3)
    uncovered_ids = [d.metadata["chunk_id"] for d in uncovered.invoke(question, k=3)]
    assert [d.metadata["chunk_id"] for d in default_docs][0] == "accord"
    assert "quillton" in [d.metadata["chunk_id"] for d in default_docs]
    assert uncovered_ids == ["accord", "games", "fair"]  # "fair" only shares Lindora, yet outranks Quillton
    scores = [d.metadata["score"] for d in default_docs]
    assert scores == sorted(scores, reverse=True)


def test_an_included_entity_gets_a_passage_however_common(bow_embeddings):
    """A name many passages share is no anchor of its own accord, but include_entities is the caller asking
    for it: the chain puts a passage about it among the chunks, and the relations it states can be shown."""
    kg = KnowledgeGraph()
    kg.add_chunk(Chunk("main", "Lindora is a city of trade and markets.", "main"))
    kg.add_relation("Lindora", "trade", "KNOWN_FOR", chunk_id="main")
    for i in range(12):  # "Harbor Union" is mentioned in 12 passages: more than twice k
        kg.add_chunk(Chunk(f"h{i}", f"The Harbor Union met in session {i}.", f"h{i}"))
        kg.add_relation("Harbor Union", f"session {i}", "MET_IN", chunk_id=f"h{i}")
    for i in range(4):
        kg.add_chunk(Chunk(f"m{i}", f"Markets of the city sell goods {i}.", f"m{i}"))
    r = EntityBasedKGRAG.from_graph(kg, bow_embeddings)
    question = "Which city is known for trade and markets?"
    plain = [d.metadata["chunk_id"] for d in r.invoke(question, k=3)]
    result = r.retrieve(question, k=3, include_entities=["Harbor Union"])
    ids = [c.id for c in result.chunks]
    assert not any(c.startswith("h") for c in plain)
    assert sum(c.startswith("h") for c in ids) == 1 and ids[0] == "main"
    assert any(row.source == "Harbor Union" for row in result.relations)


def kinds_graph(lower: bool = False) -> KnowledgeGraph:
    """*Johnnycake* and *Klondike* share only a kind, "unincorporated community"; the next hop shares
    *Avery County* with the first passage."""
    name = str.lower if lower else (lambda s: s)
    kg = KnowledgeGraph()
    docs = {
        "first": (
            "Johnnycake is an unincorporated community in Avery County.",
            [("Johnnycake", "IS_A", "unincorporated community"), ("Johnnycake", "LOCATED_IN", "Avery County")],
        ),
        "sibling": (
            "Klondike is an unincorporated community in Oregon.",
            [("Klondike", "IS_A", "unincorporated community"), ("Klondike", "LOCATED_IN", "Oregon")],
        ),
        "hop": ("Avery County borders Mitchell County.", [("Avery County", "BORDERS", "Mitchell County")]),
        "other": ("Texas is a large state.", [("Texas", "IS_A", "state")]),
    }
    for cid, (text, rels) in docs.items():
        kg.add_chunk(Chunk(cid, text, cid))
        for s, t, o in rels:
            kg.add_relation(name(s), name(o), t, chunk_id=cid)
    return kg


def graph_boosts(retriever, question: str, **kwargs) -> dict[str, float]:
    return {c.id: c.graph_score for c in retriever.retrieve(question, k=4, **kwargs).chunks}


def test_a_kind_links_no_siblings_unless_the_question_writes_it(bow_embeddings):
    """A common noun picks out one thing only within one passage: two unincorporated communities are
    siblings, not hops (the Johnnycake question ranked Klondike, Oregon above the county's passage)."""
    r = EntityBasedKGRAG.from_graph(kinds_graph(), bow_embeddings)
    question = "Which county borders the county where Johnnycake is?"
    boosts = graph_boosts(r, question)
    assert boosts["hop"] > 0 and boosts["sibling"] == 0
    assert graph_boosts(r, question, strategy=Chain(link_kinds=True))["sibling"] > 0  # the ablation
    # a kind the question writes links: the passages about it are what it asks for
    assert graph_boosts(r, "Which unincorporated community is like Johnnycake?")["sibling"] > 0


def test_kinds_link_when_the_extraction_writes_no_case(bow_embeddings):
    r = EntityBasedKGRAG.from_graph(kinds_graph(lower=True), bow_embeddings)
    assert graph_boosts(r, "Which county borders the county where Johnnycake is?")["sibling"] > 0
