"""Paths and rows that follow the chain that answers (``kg_rag/query/select.py``). Issue 43 §3.

- a question asking where a chain of one relation ends ("ultimately", "top") gets the whole chain, past
  ``max_hops`` up to a bound;
- one path that reaches a candidate answer is shown instead of the paths that reach none;
- a row lies on a shown path, touches an entity the question names, or comes from a passage on the evidence chain;
  each passage on the chain gets its turn at the rows; at most 12 rows by default;
- a community report repeats no relation the context shows, and cites only what touches a path or the question.
"""

from __future__ import annotations

from kg_rag import Chunk, EntityBasedKGRAG, KnowledgeGraph, QueryParams
from kg_rag.context import format_context
from kg_rag.testing import BagOfWordsEmbeddings

from ..communities import graphs


def _chain_graph(n: int) -> KnowledgeGraph:
    """Person 0 reports to Person 1, ... to Person n, each link stated by a passage of its own."""
    kg = KnowledgeGraph()
    for i in range(n):
        kg.add_chunk(Chunk(f"c{i}", f"Person {i} reports to Person {i + 1}.", f"d{i}"))
        kg.add_relation(f"Person {i}", f"Person {i + 1}", "REPORTS_TO", predicate="reports to", chunk_id=f"c{i}")
    return kg


def _targets(path) -> list[str]:
    return [s.target for s in path.steps]


def test_a_question_asking_where_a_chain_ends_follows_it_past_max_hops_up_to_a_bound():
    from kg_rag.query.chains import CHAIN_BOUND, asks_for_end

    retriever = EntityBasedKGRAG.from_graph(_chain_graph(CHAIN_BOUND + 3), BagOfWordsEmbeddings(), k=2)
    plain = retriever.retrieve("Who does Person 0 report to?")
    assert max(len(p.steps) for p in plain.paths) <= 2  # max_hops
    ultimately = retriever.retrieve("Who does Person 0 ultimately report to?")
    longest = max(ultimately.paths, key=lambda p: len(p.steps))
    assert _targets(longest) == [f"person {i}" for i in range(1, CHAIN_BOUND + 1)]  # the later links: no chunk
    assert f"Person {CHAIN_BOUND} <-[REPORTS_TO]- Person {CHAIN_BOUND - 1}" not in ultimately.context
    assert asks_for_end("Who is the top boss of Lars?") and asks_for_end("What is its final destination?")
    assert not asks_for_end("Who does Lars report to?")


def test_the_readme_example_shows_the_whole_reporting_line(demo_index, bow_embeddings):
    retriever = EntityBasedKGRAG(index=demo_index, embeddings=bow_embeddings, k=3)
    result = retriever.retrieve("Who does Lars Eriksen ultimately report to?")
    assert "Lars Eriksen -[REPORTS_TO]-> Priya Nair -[REPORTS_TO]-> Daniel Okafor -[REPORTS_TO]-> Maria Chen" in (
        result.context
    )


def _star() -> KnowledgeGraph:
    kg = KnowledgeGraph()
    kg.add_chunk(
        Chunk("c0", "The Hollow Crown is a novel of 1990, a bestseller, set in Kent, written by Ann Cole.", "d0")
    )
    for target, rtype in (("novel", "IS_A"), ("1990", "PUBLISHED_IN"), ("bestseller", "IS_A"), ("Kent", "SET_IN")):
        kg.add_relation("The Hollow Crown", target, rtype, chunk_id="c0")
    kg.add_relation("The Hollow Crown", "Ann Cole", "WRITTEN_BY", predicate="written by", chunk_id="c0")
    return kg


def test_one_path_to_a_candidate_answer_is_shown_instead_of_paths_that_reach_none():
    """ "Who wrote it?" asks for WRITTEN_BY: the path to Ann Cole reaches a candidate answer; the four other facts
    of the named book answer nothing asked, and used to be four more paths."""
    retriever = EntityBasedKGRAG.from_graph(_star(), BagOfWordsEmbeddings(), k=1)
    result = retriever.retrieve("Who wrote The Hollow Crown?")
    assert [[(s.relation_type, s.target) for s in p.steps] for p in result.paths] == [[("WRITTEN_BY", "ann cole")]]
    assert {r.target for r in result.relations} >= {"novel", "1990", "Kent"}  # rows about the named book stay


def test_paths_that_reach_no_candidate_answer_are_not_shown_when_the_rows_show_their_relations():
    """Nothing of the named book answers "Who translated it?": its five facts used to be five paths that reach no
    candidate answer, repeated as five rows. The rows show them once."""
    retriever = EntityBasedKGRAG.from_graph(_star(), BagOfWordsEmbeddings(), k=1)
    result = retriever.retrieve("Who translated The Hollow Crown into Welsh?")
    assert result.paths == []
    assert {r.target for r in result.relations} == {"novel", "1990", "bestseller", "Kent", "Ann Cole"}
    assert "-----Paths" not in result.context


def test_a_path_that_reaches_no_candidate_answer_stays_for_a_relation_the_rows_leave_out():
    """With one row allowed, the paths show the named book's other facts (reaching no candidate answer, but said
    nowhere else)."""
    params = QueryParams(max_relations=1)
    result = EntityBasedKGRAG.from_graph(_star(), BagOfWordsEmbeddings(), k=1, params=params).retrieve(
        "Who translated The Hollow Crown into Welsh?"
    )
    assert len(result.relations) == 1
    shown = {s.relation_id for p in result.paths for s in p.steps}
    assert result.relations[0].relation_id not in shown and len(shown) == 4


def test_rows_of_a_passage_off_the_chain_must_touch_what_the_question_names_or_a_path():
    """The second passage resembles the question but nothing links it to the first (its graph share is 0): its own
    facts are not rows. (With ``unlinked_second_unsure`` off its relation is evidenced again, and still left out.)"""
    kg = KnowledgeGraph()
    kg.add_chunk(Chunk("c0", "Brand play written by Henrik Ibsen", "d0"))
    kg.add_chunk(Chunk("c1", "Peer Gynt play written for a theatre in Oslo", "d1"))
    kg.add_relation("Brand", "Henrik Ibsen", "WRITTEN_BY", predicate="written by", chunk_id="c0")
    kg.add_relation("Peer Gynt", "Oslo", "PERFORMED_IN", predicate="performed in", chunk_id="c1")
    params = QueryParams(relation_floor=0.0, top_k_chunks=2, similarity_threshold=0.2, unlinked_second_unsure=False)
    result = EntityBasedKGRAG.from_graph(kg, BagOfWordsEmbeddings(), params=params).retrieve(
        "Who wrote the Brand play?"
    )
    assert [c.id for c in result.chunks] == ["c0", "c1"] and result.chunks[1].graph_score == 0
    assert "Peer Gynt" not in result.context.split("-----Sources-----")[0]


def test_at_most_twelve_rows_by_default_and_every_passage_on_the_chain_gets_its_turn():
    """The named thing's own passage states twenty facts of the asked type; the passage the chain reaches through
    its author has its own. Rows come passage by passage, so the second passage's row is among the twelve, and
    the chain through the author is a path."""
    kg = KnowledgeGraph()
    kg.add_chunk(Chunk("c0", "Atlas is a book by Ann Cole with many prizes.", "d0"))
    kg.add_chunk(Chunk("c1", "Ann Cole was born in Dover, a town in Kent.", "d1"))
    kg.add_relation("Atlas", "Ann Cole", "WRITTEN_BY", predicate="written by", chunk_id="c0")
    for i in range(20):
        kg.add_relation("Atlas", f"Prize {i}", "WON", predicate="won", chunk_id="c0")
    kg.add_relation("Ann Cole", "Dover", "BORN_IN", predicate="born in", chunk_id="c1")
    kg.add_relation("Dover", "Kent", "LOCATED_IN", predicate="is a town in", chunk_id="c1")
    assert QueryParams().max_relations == 12
    result = EntityBasedKGRAG.from_graph(kg, BagOfWordsEmbeddings(), k=2).retrieve("What prizes did Atlas win?")
    assert [c.id for c in result.chunks] == ["c0", "c1"]
    assert len(result.relations) == 12
    rows = [(r.source, r.target) for r in result.relations]
    assert rows.index(("Dover", "Kent")) == 1  # the second passage's first turn, after the first passage's
    assert "Atlas -[WRITTEN_BY]-> Ann Cole -[BORN_IN]-> Dover" in result.context


def test_community_reports_repeat_nothing_the_context_shows():
    retriever, _ = graphs.demo_with_communities()
    result = retriever.engine.retrieve("Which directive replaced Directive 2019-03?")
    assert result.communities
    shown = {r.relation_id for r in result.relations} | {s.relation_id for p in result.paths for s in p.steps}
    cited = [rel.id for c in result.communities for rel in c.cited]
    assert not shown & set(cited) and len(cited) == len(set(cited))
    on_paths = {name for p in result.paths for name in p.nodes}
    for c in result.communities:
        for rel in c.cited:
            assert {rel.source.casefold(), rel.target.casefold()} & on_paths, rel
    text = format_context(result, QueryParams(community_share=0.5)).text
    reports = text.split("-----Communities-----")[1] if "-----Communities-----" in text else ""
    assert "Directive 2023-07 -[SUPERSEDES]-> Directive 2019-03" not in reports  # it is a path: said once


def _approval(when: str = "March 2021") -> KnowledgeGraph:
    kg = KnowledgeGraph()
    kg.add_chunk(Chunk("c0", f"Policy v2 was approved by the Governance Board in {when}.", "d0"))
    kg.add_relation("Policy v2", when, "APPROVED_IN", predicate="approved in", chunk_id="c0")
    kg.add_relation("Policy v2", "Governance Board", "APPROVED_BY", predicate="approved by", chunk_id="c0")
    return kg


class _Alike(BagOfWordsEmbeddings):
    """Every text alike: every entity matches any question by meaning, whatever words it writes."""

    def embed_documents(self, texts):
        return [[1.0] + [0.0] * 15 for _ in texts]

    def embed_query(self, text):
        return [1.0] + [0.0] * 15


def test_a_date_the_question_writes_no_word_of_anchors_no_path():
    """A question naming nothing specific starts its paths at what it matches by meaning; a date it matches that
    way without writing a word of it is not what it asks about (it started "March 2021 <-[APPROVED_IN]- ..."). A
    date it writes part of ("in March") still may."""
    march = EntityBasedKGRAG.from_graph(_approval(), BagOfWordsEmbeddings(), k=1)
    assert any(p.start == "march 2021" for p in march.retrieve("Which body gave its approval in March?").paths)
    alike = EntityBasedKGRAG.from_graph(_approval(), _Alike(), k=1)
    result = alike.retrieve("which body gave its approval?", similarity_threshold=0.5)
    assert result.paths and all(p.start != "march 2021" for p in result.paths)
    filler = EntityBasedKGRAG.from_graph(_approval("the 1990s"), _Alike(), k=1)  # "the" says no value
    result = filler.retrieve("which body gave the approval?", similarity_threshold=0.5)
    assert result.paths and all(p.start != "the 1990s" for p in result.paths)


def test_a_path_that_turns_back_along_its_asked_type_to_a_sibling_comes_after_one_that_answers():
    kg = KnowledgeGraph()
    kg.add_chunk(
        Chunk(
            "c0",
            "Publix is headquartered in Lakeland. Publix was founded by George Jenkins. Publix has a store "
            "in Key West.",
            "d0",
        )
    )
    kg.add_relation("Publix", "Lakeland", "LOCATED_IN", predicate="headquartered in", chunk_id="c0")
    kg.add_relation(  # the sibling fits the question's words better than the answer does
        "Publix", "Key West", "LOCATED_IN", predicate="supermarket chain headquartered in", chunk_id="c0"
    )
    kg.add_relation("Publix", "George Jenkins", "FOUNDED_BY", predicate="founded by", chunk_id="c0")
    retriever = EntityBasedKGRAG.from_graph(kg, BagOfWordsEmbeddings(), k=1)
    result = retriever.retrieve("Who founded the supermarket chain headquartered in Lakeland?")
    first = result.paths[0]
    assert [s.relation_type for s in first.steps] == ["LOCATED_IN", "FOUNDED_BY"]  # not on to Key West
