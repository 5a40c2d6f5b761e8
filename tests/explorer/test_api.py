"""The explorer's JSON API: the views are the retriever's own results under its own filters, every view is
bounded, bad input is a 4xx with one line, and nothing is written to the index."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the explorer needs the serve extra")

from fastapi.testclient import TestClient  # noqa: E402

from kg_rag import EntityBasedKGRAG, render_path, save_index  # noqa: E402
from kg_rag.explorer import MAX_VIEW_EDGES  # noqa: E402
from kg_rag.explorer.app import create_app  # noqa: E402
from kg_rag.testing import BagOfWordsEmbeddings  # noqa: E402

from ..serving_support import folder_digest  # noqa: E402

QUESTION = "What superseded Directive 2019-03?"


@pytest.fixture(scope="module")
def index_dir(demo_index, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("explorer") / "idx"
    save_index(demo_index, folder)
    return folder


@pytest.fixture(scope="module")
def retriever(index_dir):
    return EntityBasedKGRAG.from_index(index_dir, BagOfWordsEmbeddings())


@pytest.fixture(scope="module")
def client(retriever):
    with TestClient(create_app(retriever), base_url="http://127.0.0.1", raise_server_exceptions=False) as c:
        yield c


def test_page_and_the_drawing_library_are_served(client):
    page = client.get("/")
    assert page.status_code == 200 and "vis-network.min.js" in page.text
    lib = client.get("/static/vis/vis-network.min.js")
    assert lib.status_code == 200 and "Network" in lib.text
    assert client.get("/static/app/explorer.js").status_code == 200


def test_question_view_is_the_retrievers_result(client, retriever):
    view = client.post("/api/query", json={"question": QUESTION}).json()
    result = retriever.retrieve(QUESTION)
    assert [r["id"] for r in view["relations"]] == [r.relation_id for r in result.relations]
    drawn = {e["id"]: e for e in view["edges"]}
    for r in result.relations:  # same ids, same direction, same type
        e = drawn[r.relation_id]
        assert (e["source_name"], e["relation_type"], e["target_name"]) == (r.source, r.relation_type, r.target)
    path_edges = {st.relation_id: st for pa in result.paths for st in pa.steps}
    for rid, st in path_edges.items():
        assert (drawn[rid]["source"], drawn[rid]["target"]) == (st.source, st.target)  # stored direction
    assert set(drawn) == {r.relation_id for r in result.relations} | set(path_edges)
    supersedes = [e for e in view["edges"] if e["relation_type"] == "SUPERSEDES"]
    assert [(e["source_name"], e["target_name"]) for e in supersedes] == [("Directive 2023-07", "Directive 2019-03")]
    node_ids = {n["id"] for n in view["nodes"]}
    assert all(e["source"] in node_ids and e["target"] in node_ids for e in view["edges"])
    assert view["context"] == result.context
    shown = [p for p in view["paths"] if p["context_order"] is not None]
    assert [p["context_order"] for p in shown] == list(range(len(shown)))
    assert {p["text"] for p in view["paths"]} == {render_path(result.names, pa) for pa in result.paths}
    assert [c["id"] for c in view["chunks"]] == [c.id for c in result.chunks]
    assert all(isinstance(c["score"], float) for c in view["chunks"])


def test_filters_are_the_retrievers_filters(client, retriever):
    denied = client.post("/api/query", json={"question": QUESTION, "exclude_edge_types": ["SUPERSEDES"]}).json()
    assert "SUPERSEDES" not in {e["relation_type"] for e in denied["edges"]}
    expected = retriever.retrieve(QUESTION, exclude_edge_types=["SUPERSEDES"])
    assert [r["id"] for r in denied["relations"]] == [r.relation_id for r in expected.relations]
    allowed = client.post("/api/query", json={"question": QUESTION, "edge_types": ["SUPERSEDES"]}).json()
    assert {e["relation_type"] for e in allowed["edges"]} == {"SUPERSEDES"}
    unknown = client.post("/api/query", json={"question": QUESTION, "edge_types": ["NO_SUCH_TYPE"]})
    assert unknown.status_code == 422 and "NO_SUCH_TYPE" in unknown.json()["error"]  # issue 30: not an empty graph


def test_entity_view_shows_typed_in_and_out_edges_with_evidence(client):
    view = client.post("/api/entity", json={"entity": "Directive 2019-03"}).json()
    entity = view["entity"]
    assert entity["name"] == "Directive 2019-03" and entity["entity_type"] == "POLICY"
    incoming = {(e["source_name"], e["relation_type"]) for e in entity["in_edges"]}
    assert ("Directive 2023-07", "SUPERSEDES") in incoming
    assert all(e["target"] == "directive 2019-03" for e in entity["in_edges"])
    assert all(e["source"] == "directive 2019-03" for e in entity["out_edges"])
    sup = next(e for e in entity["in_edges"] if e["relation_type"] == "SUPERSEDES")
    assert sup["evidence"] == ["Directive 2023-07 supersedes Directive 2019-03"]
    assert entity["documents"] and entity["passages"]
    out_only = client.post("/api/entity", json={"entity": "directive 2019-03", "direction": "out"}).json()
    assert out_only["entity"]["in_edges"] == [] and out_only["total_edges"] == len(entity["out_edges"])
    denied = client.post("/api/entity", json={"entity": "directive 2019-03", "exclude_edge_types": ["SUPERSEDES"]})
    assert "SUPERSEDES" not in {e["relation_type"] for e in denied.json()["edges"]}


def test_overview_and_search(client):
    o = client.get("/api/overview").json()
    assert o["counts"]["entities"] == 24 and o["counts"]["relations"] == 28
    assert {"type": "SUPERSEDES", "count": 1, "family": "rules"} in o["relation_types"]
    assert o["bounds"]["view_edges"] == MAX_VIEW_EDGES
    hits = client.get("/api/search", params={"q": "Directive 2019-03"}).json()
    assert hits[0]["name"] == "Directive 2019-03" and hits[0]["score"] == 1.0


@pytest.mark.parametrize(
    ("method", "url", "body", "status", "message"),
    [
        ("post", "/api/query", {"question": "x", "direction": "sideways"}, 422, "direction"),
        ("post", "/api/query", {"question": "x" * 5000}, 422, "at most 2000 characters"),
        ("post", "/api/query", {"question": "x", "bogus": 1}, 422, "bogus"),
        ("post", "/api/query", {"question": "   "}, 422, "query is empty"),
        ("post", "/api/query", {"question": "x", "max_hops": 99}, 422, "max_hops"),
        ("post", "/api/query", {"question": "x", "k": 0}, 422, "k"),
        ("post", "/api/query", {"question": "x", "exclude_entities": [""]}, 422, "exclude_entities"),
        ("post", "/api/query", {"question": "x", "edge_types": "SUPERSEDES"}, 422, "edge_types"),
        # issue 30: a relation type the index does not have, allowed or denied, is named, not an empty graph
        (
            "post",
            "/api/query",
            {"question": "x", "edge_types": ["NOPE_TYPE"]},
            422,
            "edge_types: no relation of type 'NOPE_TYPE' in this index",
        ),
        ("post", "/api/query", {"question": "x", "exclude_edge_types": ["SUPERSEDES", "NOPE"]}, 422, "'NOPE'"),
        ("post", "/api/entity", {"entity": "Directive 2019-03", "edge_types": ["NOPE_TYPE"]}, 422, "NOPE_TYPE"),
        ("post", "/api/entity", {"entity": "nobody at all"}, 404, "no entity"),
        (
            "post",
            "/api/entity",
            {"entity": "Directive 2019-03", "exclude_entities": ["Directive 2019-03"]},
            422,
            "excluded",
        ),
        ("get", "/api/search?q=", None, 422, "q"),
        ("get", "/api/nothing", None, 404, "Not Found"),
    ],
)
def test_bad_input_is_a_4xx_with_one_line(client, method, url, body, status, message):
    res = client.post(url, json=body) if method == "post" else client.get(url)
    assert res.status_code == status
    error = res.json()["error"]
    assert message in error and "\n" not in error


def test_relation_types_are_checked_against_the_index_vocabulary(client):
    """Both lists are checked and every unknown type named; known types pass in any spelling the filter takes."""
    res = client.post(
        "/api/query",
        json={"question": QUESTION, "edge_types": ["SUPERSEDES", "NOPE_A"], "exclude_edge_types": ["NOPE_B"]},
    )
    assert res.status_code == 422
    error = res.json()["error"]
    assert "edge_types: no relation of type 'NOPE_A'" in error and "exclude_edge_types: no relation of type 'NOPE_B'"
    assert "SUPERSEDES'" not in error
    ok = client.post("/api/query", json={"question": QUESTION, "edge_types": ["supersedes"], "k": 1})
    assert ok.status_code == 200 and {e["relation_type"] for e in ok.json()["edges"]} == {"SUPERSEDES"}
    assert (
        client.post("/api/query", json={"question": QUESTION, "exclude_edge_types": ["SYNONYM_OF"]}).status_code == 200
    )


def test_huge_or_broken_bodies_are_refused_and_the_server_keeps_serving(client, index_dir):
    before = folder_digest(index_dir)
    huge = client.post("/api/query", content=b"x" * 200_000, headers={"content-type": "application/json"})
    assert huge.status_code == 413 and "too large" in huge.json()["error"]
    broken = client.post("/api/query", content=b"{not json", headers={"content-type": "application/json"})
    assert broken.status_code == 422
    assert client.post("/api/query", json={"question": QUESTION}).status_code == 200
    assert folder_digest(index_dir) == before  # read-only


def test_every_view_is_bounded_on_a_large_synthetic_graph():
    """A hub's neighbourhood is cut to the heaviest MAX_VIEW_EDGES edges; the total is reported."""
    from langchain_core.embeddings import DeterministicFakeEmbedding

    from kg_rag.eval.bench import synthetic_index

    synth = synthetic_index(3_000, 60_000, dim=32, n_queries=2)
    r = EntityBasedKGRAG(index=synth.index, embeddings=DeterministicFakeEmbedding(size=32))
    kg = synth.index.kg
    hub = max(kg.graph.nodes, key=kg.graph.degree)
    assert kg.graph.degree(hub) > MAX_VIEW_EDGES
    with TestClient(create_app(r), base_url="http://127.0.0.1") as c:
        view = c.post("/api/entity", json={"entity": hub}).json()
        assert len(view["edges"]) == MAX_VIEW_EDGES and view["truncated"]
        assert view["total_edges"] == kg.graph.degree(hub)
        assert len(view["nodes"]) <= MAX_VIEW_EDGES + 1
        weights = [e["weight"] for e in view["edges"]]
        assert weights == sorted(weights, reverse=True)
        q = c.post("/api/query", json={"question": f"What is {hub} related to?", "max_hops": 4}).json()
        assert 0 < len(q["edges"]) <= MAX_VIEW_EDGES


def test_the_explorer_follows_a_rebuilt_directory_index(demo_index, tmp_path):
    """A running explorer reads the newest generation a writer saved (no restart)."""
    from kg_rag import KnowledgeGraph, build_index

    folder = tmp_path / "idx"
    save_index(demo_index, folder)
    emb = BagOfWordsEmbeddings()
    with TestClient(create_app(EntityBasedKGRAG.from_index(folder, emb)), base_url="http://127.0.0.1") as c:
        assert c.get("/api/overview").json()["counts"]["relations"] == 28
        kg = KnowledgeGraph()
        kg.merge(demo_index.kg)
        kg.add_relation("Directive 2024-01", "Directive 2023-07", "SUPERSEDES", evidence="2024-01 supersedes 2023-07")
        save_index(build_index(kg, emb), folder)
        assert c.get("/api/overview").json()["counts"]["relations"] == 29
        view = c.post("/api/entity", json={"entity": "Directive 2023-07"}).json()
        assert ("Directive 2024-01", "SUPERSEDES") in {
            (e["source_name"], e["relation_type"]) for e in view["entity"]["in_edges"]
        }


def test_the_entity_view_holds_the_retrievers_document_filter():
    """A retriever built with ``filter=`` serves an explorer whose entity view shows only those documents'
    edges, descriptions and passages (Priya Nair reports to Daniel Okafor in doc-03, not in doc-04)."""
    from kg_rag.demo import demo_graph

    scoped = EntityBasedKGRAG.from_graph(demo_graph(), BagOfWordsEmbeddings(), filter={"doc_id": ["doc-04"]})
    with TestClient(create_app(scoped), base_url="http://127.0.0.1", raise_server_exceptions=False) as c:
        view = c.post("/api/entity", json={"entity": "Priya Nair"}).json()
        outside = c.post("/api/entity", json={"entity": "Maria Chen"})
        found = {e["name"] for e in c.get("/api/search", params={"q": "Maria Chen", "limit": 50}).json()}
    assert view["entity"]["documents"] == ["doc-04"]
    assert [(e["source"], e["target"]) for e in view["edges"]] == [("lars eriksen", "priya nair")]
    assert view["entity"]["descriptions"] == [] and view["entity"]["community"] is None
    assert outside.status_code == 404
    assert "Maria Chen" not in found and found <= {
        "Lars Eriksen",
        "Priya Nair",
        "Data Platform team",
        "Platform Engineering",
    }


def test_the_overview_lists_no_community_under_a_document_filter():
    """Community titles and reports summarise every document: none is listed for a filtered retriever."""
    from kg_rag.communities import refresh_communities
    from kg_rag.demo import demo_graph
    from kg_rag.index.build import build_index

    graph = demo_graph()
    index = build_index(graph, BagOfWordsEmbeddings())
    index.communities, _ = refresh_communities(graph, None)
    for doc_filter, listed in ((None, True), ({"doc_id": ["doc-04"]}, False)):
        r = EntityBasedKGRAG(index=index, embeddings=BagOfWordsEmbeddings(), filter=doc_filter)
        with TestClient(create_app(r), base_url="http://127.0.0.1", raise_server_exceptions=False) as c:
            assert bool(c.get("/api/overview").json()["communities"]) is listed
