"""Issue 29: query-time document filters. The filter's own rules here; that it holds at every stage on every
backend is the compliance suite's ``test_document_filters_hold_at_every_stage``."""

from __future__ import annotations

import pytest

from kg_rag import EntityBasedKGRAG
from kg_rag.demo import demo_graph
from kg_rag.query.params import QueryParams
from kg_rag.store.scope import DocumentFilter
from kg_rag.testing import BagOfWordsEmbeddings

Q = "Who does Lars Eriksen ultimately report to?"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (3, "filter must be a dict"),
        ({"$or": [{"doc_id": "a"}]}, "operator '$or' is not supported"),
        ({"doc_id": 7}, "document ids are strings"),
        ({"year": {"$gt": 2020}}, "only a value, a list of values, $eq or $in"),
        ({"year": float("nan")}, "values must be strings, numbers, booleans or None"),
        ({"": "x"}, "keys must be non-empty strings"),
    ],
)
def test_a_bad_filter_is_one_clear_error(value, message):
    with pytest.raises(ValueError, match="invalid retrieval parameters: .*" + message.replace("$", r"\$")) as info:
        QueryParams(filter=value)
    assert "\n" not in str(info.value)


def test_values_match_as_json_does():
    f = DocumentFilter.parse({"year": [2024, "2025"], "draft": False})
    assert f.matches("a", {"year": 2024.0, "draft": False})
    assert f.matches("a", {"year": "2025", "draft": False})
    assert not f.matches("a", {"year": 2025, "draft": False})  # "2025" is a string
    assert not f.matches("a", {"year": 2024, "draft": 0})  # False is not 0
    assert not f.matches("a", {"draft": False})  # a missing key never matches
    assert DocumentFilter.parse({"doc_id": {"$in": ["a", "b"]}}).doc_ids == frozenset({"a", "b"})
    assert DocumentFilter.parse({}) is None and DocumentFilter.parse(None) is None


@pytest.fixture(scope="module")
def retriever():
    return EntityBasedKGRAG.from_graph(demo_graph(), BagOfWordsEmbeddings(), k=5)


def test_the_retriever_takes_filter_per_call_by_config_and_at_build(retriever):
    unfiltered = {d.metadata["doc_id"] for d in retriever.invoke(Q)}
    assert len(unfiltered) > 2
    wanted = {"doc-03", "doc-04"}
    per_call = retriever.invoke(Q, filter={"doc_id": sorted(wanted)})
    by_config = retriever.invoke(Q, config={"configurable": {"filter": {"doc_id": sorted(wanted)}}})
    built = EntityBasedKGRAG.from_graph(demo_graph(), BagOfWordsEmbeddings(), k=5, filter={"doc_id": sorted(wanted)})
    for docs in (per_call, by_config, built.invoke(Q)):
        assert {d.metadata["doc_id"] for d in docs} == wanted
        context = docs[0].metadata["graph_context"]
        assert "Chair of the Operations Board" not in context  # what another document says about Maria Chen
        assert "Amara Diallo" not in context


def test_metadata_equality_and_a_filter_that_matches_nothing(retriever):
    title = "Organisation chart: engineering"
    docs = retriever.invoke(Q, filter={"title": title})
    assert [d.metadata["chunk_id"] for d in docs] == ["doc-03"]
    result = retriever.retrieve(Q, filter={"doc_id": ["no-such-doc"]})
    assert result.chunks == [] and result.relations == [] and result.paths == []
    assert any("no chunk of the index matches it" in w for w in result.warnings)
    strict = {"fill_with_dense": False, "similarity_threshold": 1.0, "lexical_linking": False}  # as seed003, or more
    for settings in ({}, strict):  # with no dense fill and no seed, the reason was once "no entity matched it"
        warnings = retriever.retrieve(Q, filter={"doc_id": ["no-such-doc"]}, **settings).warnings
        last = [w for w in warnings if w.startswith("no chunk was retrieved")]
        assert last == [
            "no chunk was retrieved for this query: the filter {'doc_id': ['no-such-doc']} matches no chunk"
        ]


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ({"doc_ids": ["doc-03"]}, "(no chunk has 'doc_ids': 'doc-03')"),  # a misspelt key names itself
        ({"doc_id": ["doc-03", "x"], "title": ["A", "B"]}, "(no chunk has 'title': ['A', 'B'])"),
        ({"doc_id": ["doc-03"], "title": "Data Platform team"}, "(no chunk meets all its conditions together)"),
    ],
)
def test_an_empty_filter_says_which_condition_matches_nothing(retriever, value, why):
    warnings = retriever.retrieve(Q, filter=value).warnings
    assert any(w.endswith("no chunk of the index matches it " + why) for w in warnings), warnings


def test_community_reports_are_not_shown_under_a_filter():
    from kg_rag.communities import refresh_communities
    from kg_rag.index.build import build_index

    graph = demo_graph()
    index = build_index(graph, BagOfWordsEmbeddings())
    communities, _ = refresh_communities(graph, None)
    index.communities = communities
    retriever = EntityBasedKGRAG(index=index, embeddings=BagOfWordsEmbeddings(), k=3)
    skipped = {run.name: run.skipped for run in retriever.retrieve(Q, filter={"doc_id": ["doc-03"]}).stages}
    assert "document filter" in skipped["communities"]


def test_true_and_one_are_different_filters_and_cache_keys():
    """``True == 1`` and ``hash(True) == hash(1)`` in Python: the filter must not conflate them (JSON does not),
    neither when deduplicating a list nor as the snapshot's cache key (``{"draft": 1}`` asked after
    ``{"draft": True}`` returned the ``True`` documents)."""
    from kg_rag import Chunk, KnowledgeGraph

    assert DocumentFilter.parse({"draft": True}) != DocumentFilter.parse({"draft": 1})
    assert DocumentFilter.parse({"year": 1}) == DocumentFilter.parse({"year": 1.0})
    assert DocumentFilter.parse({"draft": [1, True]}).metadata == (("draft", (1, True)),)
    kg = KnowledgeGraph()
    for n, draft in enumerate((True, 1)):
        kg.add_chunk(Chunk(f"c{n}", f"Memo {n} cites Order {n}.", f"d{n}", {"draft": draft}))
        kg.add_relation(f"Memo {n}", f"Order {n}", "CITES", chunk_id=f"c{n}")
    r = EntityBasedKGRAG.from_graph(kg, BagOfWordsEmbeddings(), k=5)
    assert [c.id for c in r.retrieve("memo cites order", filter={"draft": True}).chunks] == ["c0"]
    assert [c.id for c in r.retrieve("memo cites order", filter={"draft": 1}).chunks] == ["c1"]


def test_the_path_tool_walks_only_the_filtered_documents():
    """``make_path_tool`` under a document filter (the retriever's, or the run's ``configurable``) finds paths in
    those documents only: Maria Chen is in doc-03, not in doc-04."""
    from kg_rag.langchain.tools import make_path_tool

    call = {"type": "tool_call", "id": "1", "name": "find_connection"}
    args = {"source": "Lars Eriksen", "target": "Maria Chen"}
    unfiltered = EntityBasedKGRAG.from_graph(demo_graph(), BagOfWordsEmbeddings())
    assert "Maria Chen" in make_path_tool(unfiltered).invoke({**call, "args": args}).content
    only_04 = {"filter": {"doc_id": ["doc-04"]}}
    by_config = make_path_tool(unfiltered).invoke({**call, "args": args}, config={"configurable": only_04})
    built = EntityBasedKGRAG.from_graph(demo_graph(), BagOfWordsEmbeddings(), **only_04)
    for message in (by_config, make_path_tool(built).invoke({**call, "args": args})):
        assert "Daniel Okafor" not in message.content
        assert "no entity named 'Maria Chen' in the documents of the filter" in message.content
    both = {"filter": {"doc_id": ["doc-03", "doc-04"]}}
    found = make_path_tool(unfiltered).invoke({**call, "args": args}, config={"configurable": both})
    assert "-[REPORTS_TO]-> Maria Chen" in found.content


def test_the_scope_never_reads_its_chunk_records(monkeypatch):
    """Deciding which descriptions and evidence a filter keeps looks up their chunk ids; it must not load every
    chunk record of the scope per query (on MuSiQue, half the documents: ~11 ms of a ~19 ms query)."""
    import numpy as np

    from kg_rag.store.memory import SnapshotBackend

    asked: list[int] = []
    read = SnapshotBackend.chunks
    monkeypatch.setattr(SnapshotBackend, "chunks", lambda self, ids: asked.append(np.size(ids)) or read(self, ids))
    r = EntityBasedKGRAG.from_graph(demo_graph(), BagOfWordsEmbeddings(), k=1)
    every = {"doc_id": [f"doc-{n:02d}" for n in range(1, 13)]}
    unfiltered, scoped = r.retrieve(Q), r.retrieve(Q, filter=every)
    # the chunk shown, and the passages of the relations a path may join (the sense guard reads their titles):
    # never the scope's twelve
    assert asked and max(asked) <= 3 < len(every["doc_id"])
    assert scoped.context == unfiltered.context  # a filter that keeps everything changes nothing


def test_a_named_entity_outside_the_filter_is_not_called_unknown(retriever):
    """Maria Chen exists (doc-03) but not in doc-04: the warning says so instead of 'no entity named'."""
    warnings = retriever.retrieve(
        Q, filter={"doc_id": ["doc-04"]}, include_entities=["Maria Chen", "Nobody At All"]
    ).warnings
    assert "include_entities: no entity named 'Nobody At All' in the index" in warnings
    assert "include_entities: 'Maria Chen' not in the documents of the filter {'doc_id': ['doc-04']}" in warnings
    assert not any("no entity named 'Maria Chen'" in w for w in warnings)
