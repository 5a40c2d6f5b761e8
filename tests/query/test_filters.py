"""Per-call filters hold at every stage, for every strategy: seeds (facts included), expansion, chunk scoring,
paths, relationship rows, entities and Document metadata."""

from __future__ import annotations

import pytest

from kg_rag import Chunk, EntityBasedKGRAG, KnowledgeGraph, QueryParams

STRATEGIES = ["chain", "frequency", "path", "ppr"]


QUESTION = "Who does Lars Eriksen report to, and who manages the Data Platform team?"


@pytest.fixture(scope="module")
def retriever(demo_index):
    from tests.conftest import BagOfWordsEmbeddings

    return EntityBasedKGRAG(index=demo_index, embeddings=BagOfWordsEmbeddings())


def graph_text(result, docs) -> list[str]:
    """Everything graph-derived a caller sees: paths, relationship rows, entities, Document metadata."""
    out = [e.name for e in result.entities]
    out += [f"{r.source} {r.relation_type} {r.target}" for r in result.relations]
    out += [f"{s.source} {s.relation_type} {s.target}" for p in result.paths for s in p.steps]
    for d in docs:
        meta = d.metadata
        out += list(meta.get("paths", [])) + [meta.get("graph_context", "")]
        out += [ln for ln in d.page_content.splitlines() if not ln.startswith("| ")]  # its paths, not its text
        out += [f"{e['source']} {e['relation_type']} {e['target']}" for e in meta.get("edges", [])]
        out += [m["name"] for m in meta.get("matched_entities", [])]
    return out


def run(retriever, strategy, **filters):
    result = retriever.retrieve(QUESTION, strategy=strategy, **filters)
    docs = retriever.invoke(QUESTION, strategy=strategy, **filters)
    return result, docs


def types_shown(result) -> set[str]:
    return {r.relation_type for r in result.relations} | {s.relation_type for p in result.paths for s in p.steps}


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_excluded_type_appears_nowhere(retriever, strategy):
    base, _ = run(retriever, strategy)
    assert "REPORTS_TO" in types_shown(base)  # the filter below has something to remove
    result, docs = run(retriever, strategy, exclude_edge_types=["REPORTS_TO"])
    assert "REPORTS_TO" not in types_shown(result)
    assert not any("REPORTS_TO" in text for text in graph_text(result, docs))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_allow_list_admits_only_its_types(retriever, strategy):
    result, docs = run(retriever, strategy, edge_types=["MANAGES", "OWNS"])
    assert types_shown(result) <= {"MANAGES", "OWNS"}
    for d in docs:
        assert all(e["relation_type"] in {"MANAGES", "OWNS"} for e in d.metadata.get("edges", []))
        assert "REPORTS_TO" not in d.metadata["graph_context"]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_excluded_entity_appears_nowhere(retriever, strategy):
    base, base_docs = run(retriever, strategy)
    assert any("Priya Nair" in text for text in graph_text(base, base_docs))
    result, docs = run(retriever, strategy, exclude_entities=["Priya Nair"])
    assert not any("Priya Nair" in text for text in graph_text(result, docs))
    assert all(e.key != "priya nair" for e in result.entities)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("direction", ["out", "in"])
def test_direction_limits_every_walk(retriever, strategy, direction):
    result, _ = run(retriever, strategy, direction=direction, max_hops=3)
    for path in result.paths:
        assert all(step.forward == (direction == "out") for step in path.steps)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_max_hops_bounds_paths(retriever, strategy):
    one, _ = run(retriever, strategy, max_hops=1)
    assert all(len(p.steps) <= 1 for p in one.paths)
    none, _ = run(retriever, strategy, max_hops=0)
    assert none.paths == []


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_included_entity_is_used_and_unknown_names_warn(retriever, strategy):
    result, _ = run(retriever, strategy, include_entities=["Amara Diallo"])
    assert "amara diallo" in {e.key for e in result.entities if e.seed}
    odd = retriever.retrieve(QUESTION, strategy=strategy, include_entities=["Nobody Atall"], edge_types=["NOPE"])
    assert any("Nobody Atall" in w for w in odd.warnings) and any("NOPE" in w for w in odd.warnings)


def test_an_entity_both_included_and_excluded_is_excluded_with_a_warning(retriever):
    result = retriever.retrieve(QUESTION, include_entities=["Priya Nair"], exclude_entities=["priya nair"])
    assert not any("Priya Nair" in text for text in graph_text(result, []))
    assert result.warnings == ["'Priya Nair' both included and excluded: excluded"]


def test_invoke_logs_the_warnings_it_cannot_return(retriever, caplog):
    """``invoke`` returns only Documents, so a filter naming nothing ("NOPE") would fail silently."""
    with caplog.at_level("WARNING", logger="kg_rag"):
        retriever.invoke(QUESTION, edge_types=["NOPE"])
    assert any("NOPE" in r.getMessage() for r in caplog.records)
    caplog.clear()
    with caplog.at_level("WARNING", logger="kg_rag"):
        assert any("NOPE" in w for w in retriever.retrieve(QUESTION, edge_types=["NOPE"]).warnings)
    assert not caplog.records  # retrieve() hands them to the caller instead


def test_matched_facts_obey_the_filters(retriever):
    result = retriever.retrieve("Lars Eriksen reports to Priya Nair", top_k_facts=10, exclude_edge_types=["REPORTS_TO"])
    assert "REPORTS_TO" not in types_shown(result)
    result = retriever.retrieve("Lars Eriksen reports to Priya Nair", top_k_facts=10, exclude_entities=["Lars Eriksen"])
    assert all(e.key != "lars eriksen" for e in result.entities)


def bridge_graph() -> KnowledgeGraph:
    """The question's passage links to two others through different relation types; neither shares words
    with the question, so only the graph can bring them up."""
    kg = KnowledgeGraph()
    kg.add_chunk(Chunk("q", "Ada Lind wrote the Orbit memo.", "q"))
    kg.add_chunk(Chunk("a", "She answers to Bo Sten in audit.", "a"))
    kg.add_chunk(Chunk("b", "It cites Rule 7 on audit practice.", "b"))
    kg.add_chunk(Chunk("x", "Audit practice notes about the weather in audit.", "x"))  # shares only "the"
    kg.add_relation("Ada Lind", "Orbit memo", "CREATED", chunk_id="q")
    kg.add_relation("Ada Lind", "Bo Sten", "REPORTS_TO", chunk_id="a")
    kg.add_relation("Orbit memo", "Rule 7", "CITES", chunk_id="b")
    return kg


def test_chain_chunks_follow_type_direction_and_hop_filters(bow_embeddings):
    r = EntityBasedKGRAG.from_graph(bridge_graph(), bow_embeddings, k=3, params=QueryParams(lexical_linking=False))
    question = "Who wrote the Orbit memo?"

    def ids(**kw):
        return [d.metadata["chunk_id"] for d in r.invoke(question, **kw)]

    assert ids()[0] == "q" and set(ids()[1:]) == {"a", "b"}  # both linked: through Ada Lind and the memo
    # the bridge chunks are reached only through allowed relation types
    assert set(ids(edge_types=["CITES", "CREATED"])[1:]) == {"b", "x"}
    assert set(ids(edge_types=["REPORTS_TO", "CREATED"])[1:]) == {"a", "x"}

    # "out" walks on from the memo (the target of q's relation) to what it cites; "in" walks back from Ada Lind
    # (the source), and nothing points at her: no chunk is linked
    def linked(**kw):
        return {d.metadata["chunk_id"] for d in r.invoke(question, k=4, **kw)[1:] if d.metadata["graph_score"] > 0}

    assert linked(strategy={"name": "chain", "seed_weight": 0.0}, direction="out") == {"b"}
    assert linked(strategy={"name": "chain", "seed_weight": 0.0}, direction="in") == set()
    # no hops: nothing is linked (chunks by relevance, and by the query entities they mention)
    assert linked(strategy={"name": "chain", "seed_weight": 0.0}, max_hops=0) == set()
    assert linked(strategy={"name": "chain", "seed_weight": 0.0}) == {"a", "b"}


@pytest.fixture(scope="module")
def with_reports():
    from kg_rag.communities import refresh_communities
    from kg_rag.demo import demo_graph
    from kg_rag.index.build import build_index
    from tests.conftest import BagOfWordsEmbeddings

    graph = demo_graph()
    index = build_index(graph, BagOfWordsEmbeddings())
    index.communities, _ = refresh_communities(graph, None)
    return EntityBasedKGRAG(index=index, embeddings=BagOfWordsEmbeddings())


@pytest.mark.parametrize(
    ("filters", "absent"),
    [
        ({"exclude_entities": ["Maria Chen"]}, "Maria Chen"),
        ({"edge_types": ["SUPERSEDES"]}, "MANAGES"),
        ({"exclude_edge_types": ["MANAGES", "REPORTS_TO"]}, "REPORTS_TO"),
    ],
)
def test_community_reports_never_bring_back_what_the_filters_leave_out(with_reports, filters, absent):
    """A report is written over the whole graph: its title and rows name excluded entities and types (a new
    user found ``Maria Chen [MANAGES] Operations Board`` in the context of a query excluding Maria Chen)."""
    question = "Who does Lars Eriksen report to, and which directive replaced Directive 2019-03?"

    def graph_half(context: str) -> str:  # passage text is not redacted (documented): everything but it
        return context.split("-----Sources-----")[0]

    unfiltered = with_reports.retrieve(question)
    assert unfiltered.communities and absent in graph_half(unfiltered.context)
    result = with_reports.retrieve(question, **filters)
    assert result.communities == []
    assert absent not in graph_half(result.context)
    skipped = {run.name: run.skipped for run in result.stages}
    assert "filters are set" in (skipped["communities"] or "")
