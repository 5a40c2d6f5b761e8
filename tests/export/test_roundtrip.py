"""Export, re-import, compare: every format keeps the same entities, relations, directions and types, and
``A -[SUPERSEDES]-> B`` never comes back as ``B -> A``."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from kg_rag import Chunk, KnowledgeGraph
from kg_rag.export import (
    export_graph,
    read_graph_documents,
    read_graphml,
    read_jsonl,
    write_graphml,
    write_neo4j,
)
from kg_rag.ingest import import_graph_documents
from kg_rag.ingest.extraction_file import import_extraction_file
from kg_rag.tokens import count_tokens

from ..conftest import DEMO_CORPUS
from ..serving_support import folder_digest

NEWER, OLDER = "directive 2023-07", "directive 2019-03"


@pytest.fixture
def kg() -> KnowledgeGraph:
    """The demo corpus plus what a graph built in code may hold: a second observation with predicate, weight
    and confidence, a relation and an entity without a chunk, a synonym link, a document registry entry, and
    a chunk id with the default array delimiter in it."""
    kg = KnowledgeGraph()
    import_extraction_file(kg, DEMO_CORPUS)
    kg.add_relation(
        "Directive 2023-07",
        "Directive 2019-03",
        "SUPERSEDES",
        predicate="supersedes",
        weight=2.0,
        evidence="said in code",
        confidence=0.4,
    )
    kg.add_entity("Lonely Entity", "PERSON", "known without a passage")
    kg.add_relation("Lonely Entity", "Directive 2019-03", "CRITICISED")
    kg.add_synonym("Operations Board", "Platform Engineering", 0.91)
    kg.add_document("memo;1", source="memos/1.md", content_hash="abc", title="Memo")
    text = "Project Atlas reports to the Operations Board."
    kg.add_chunk(Chunk("memo;1#0", text, "memo;1", n_tokens=count_tokens(text)))  # as ingestion counts them
    kg.add_relation("Project Atlas", "Operations Board", "REPORTS_TO", chunk_id="memo;1#0", evidence="reports to")
    return kg


def records(kg: KnowledgeGraph) -> dict[str, list]:
    """Everything the graph holds, order-free (lists sorted by their JSON)."""

    def norm(rows, lists=()):
        out = []
        for r in rows:
            r = dict(r)
            for k in lists:
                r[k] = sorted(json.dumps(x, sort_keys=True) for x in r.get(k) or [])
            out.append(json.dumps(r, sort_keys=True))
        return sorted(out)

    return {
        "entities": norm(kg.entity_records(), ("descriptions", "chunk_ids")),
        "relations": norm(kg.relation_records(), ("evidence",)),
        "chunks": norm(kg.chunk_records()),
        "documents": norm(kg.document_records()),
    }


def directed_edges(kg: KnowledgeGraph) -> set[tuple[str, str, str, str]]:
    return {(r.source, r.target, r.relation_type, r.id) for r in kg.relations(include_synonyms=True)}


def assert_supersedes_kept(edges: set[tuple[str, str, str, str]]) -> None:
    forward = {(s, t) for s, t, rtype, _ in edges if rtype == "SUPERSEDES"}
    assert (NEWER, OLDER) in forward
    assert (OLDER, NEWER) not in forward


def test_jsonl_round_trip_is_lossless(kg, tmp_path):
    export_graph(kg, "jsonl", tmp_path / "g.jsonl")
    back = read_jsonl(tmp_path / "g.jsonl")
    assert records(back) == records(kg)
    assert_supersedes_kept(directed_edges(back))


def test_graph_documents_file_round_trip_is_lossless(kg, tmp_path):
    summary = export_graph(kg, "graph-documents", tmp_path / "gd.json")
    assert summary["relations"] == len(directed_edges(kg))
    back = read_graph_documents(tmp_path / "gd.json")
    assert records(back) == records(kg)
    assert_supersedes_kept(directed_edges(back))


def test_langchain_graph_document_objects_round_trip(kg):
    pytest.importorskip("langchain_community", reason="GraphDocument objects need langchain-community")
    from langchain_community.graphs.graph_document import GraphDocument

    from kg_rag.langchain.graph_documents import to_graph_documents

    docs = to_graph_documents(kg)
    assert docs and all(isinstance(d, GraphDocument) for d in docs)
    supersedes = [r for d in docs for r in d.relationships if r.type == "SUPERSEDES"]
    assert {(r.source.id, r.target.id) for r in supersedes} == {("Directive 2023-07", "Directive 2019-03")}
    back = KnowledgeGraph()
    import_graph_documents(back, docs, keep_types=True)
    assert records(back) == records(kg)


def test_graph_documents_import_of_llm_output_still_types_predicates():
    """Without keep_types, relationship types are typed as predicates, as for LLMGraphTransformer output."""
    kg = KnowledgeGraph()
    doc = {
        "nodes": [{"id": "EO 14028", "type": "ORDER"}, {"id": "EO 13800", "type": "ORDER"}],
        "relationships": [{"source": {"id": "EO 14028"}, "target": {"id": "EO 13800"}, "type": "supersedes"}],
        "source": {"page_content": "EO 14028 supersedes EO 13800.", "metadata": {"chunk_id": "c1"}},
    }
    import_graph_documents(kg, [doc])
    (rel,) = kg.relations()
    assert (rel.source, rel.target, rel.relation_type) == ("eo 14028", "eo 13800", "SUPERSEDES")


def test_graphml_reads_into_a_multidigraph_with_the_same_edges(kg, tmp_path):
    import networkx as nx

    write_graphml(kg, tmp_path / "g.graphml")
    g = nx.read_graphml(tmp_path / "g.graphml", force_multigraph=True)
    assert isinstance(g, nx.MultiDiGraph)
    got = {(u, v, a["relation_type"], k) for u, v, k, a in g.edges(keys=True, data=True)}
    assert got == directed_edges(kg)
    assert_supersedes_kept(got)
    assert set(g.nodes) == {e.key for e in kg.entities()}
    decoded = read_graphml(tmp_path / "g.graphml")
    rel = next(r for r in kg.relations() if r.relation_type == "SUPERSEDES")
    attrs = decoded.edges[rel.source, rel.target, rel.id]
    assert attrs["evidence"] == rel.evidence_quote
    assert attrs["chunk_ids"] == rel.chunk_ids and attrs["doc_ids"] == rel.doc_ids
    assert attrs["weight"] == pytest.approx(rel.weight) and attrs["confidence"] == pytest.approx(rel.confidence)
    assert [e["quote"] for e in json.loads(attrs["evidence_json"])] == [e.quote for e in rel.evidence]
    assert decoded.nodes[NEWER]["entity_type"] == "POLICY"
    # Gephi shows a node's `label`: the display name, while the node id stays the key relations point at
    assert decoded.nodes["project atlas"]["label"] == "Project Atlas"
    assert all(attrs["label"] == attrs["name"] for _, attrs in decoded.nodes(data=True))


def read_csv_rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_neo4j_csv_headers_and_script(kg, tmp_path):
    summary = write_neo4j(kg, tmp_path / "neo")
    assert summary["array_delimiter"] == "|"  # a chunk id holds ";"
    rows = read_csv_rows(tmp_path / "neo" / "relations.csv")
    assert list(rows[0])[:3] == [":START_ID(Entity)", ":END_ID(Entity)", ":TYPE"]
    got = {(r[":START_ID(Entity)"], r[":END_ID(Entity)"], r[":TYPE"], r["id"]) for r in rows}
    assert got == directed_edges(kg)
    entities = read_csv_rows(tmp_path / "neo" / "entities.csv")
    assert list(entities[0])[0] == "key:ID(Entity)" and {e[":LABEL"] for e in entities} == {"Entity"}
    script = (tmp_path / "neo" / "load.cypher").read_text()
    assert "relations.csv" not in script and "WHERE" not in script  # no pass over every relation per type
    for rtype in {r[":TYPE"] for r in rows}:
        assert script.count(f"CREATE (s)-[:`{rtype}` {{") == 1
    assert "(s:Entity {key: row.`:START_ID(Entity)`}), (t:Entity {key: row.`:END_ID(Entity)`})" in script
    assert "split(row.`chunk_ids:string[]`, '|')" in script
    assert "--array-delimiter='|'" in (tmp_path / "neo" / "import.sh").read_text()


def test_load_cypher_reads_each_relation_once_from_a_file_per_type(kg, tmp_path):
    """LOAD CSV's cost grows with the rows: each statement reads only its own type's file, and those files hold
    every row of relations.csv (what neo4j-admin reads) exactly once."""
    summary = write_neo4j(kg, tmp_path / "neo")
    folder = tmp_path / "neo"
    script = (folder / "load.cypher").read_text()
    statements = [s for s in script.split(";") if "LOAD CSV" in s]
    by_type = sorted((folder / "relations_by_type").iterdir())
    assert summary["relation_type_files"] == len(by_type) == len(statements) - 1  # and one for the entities
    seen = []
    for statement in statements[1:]:
        name = re.search(r"FROM 'file:///relations_by_type/([^']+)'", statement).group(1)
        rtype = re.search(r"CREATE \(s\)-\[:`([^`]+)`", statement).group(1)
        rows = read_csv_rows(folder / "relations_by_type" / name)
        assert rows and {r[":TYPE"] for r in rows} == {rtype}  # the file holds that type's rows, and only them
        seen += [tuple(r.values()) for r in rows]
    assert sorted(seen) == sorted(tuple(r.values()) for r in read_csv_rows(folder / "relations.csv"))


def test_type_files_are_distinct_and_safe_names():
    from kg_rag.export.neo4j import type_files

    files = type_files(["SUPERSEDES", "supersedes", "A/B", "../X", "RÉVOQUE"])
    assert len(set(files.values())) == 5 and len({f.lower() for f in files.values()}) == 5
    assert all(re.fullmatch(r"\d{4}_[A-Za-z0-9_-]+\.csv", f) for f in files.values())


def _load_into_ladybug(folder: Path, db_path: Path, types: list[str], delimiter: str):
    """Load the neo4j export's CSV files into LadybugDB (an embedded Cypher database) with Cypher."""
    lb = pytest.importorskip("ladybug", reason="LadybugDB (embedded Cypher) is not installed")
    conn = lb.Connection(lb.Database(str(db_path)))
    conn.execute("CREATE NODE TABLE Entity(key STRING, name STRING, entity_type STRING, PRIMARY KEY(key))")
    for t in types:
        conn.execute(
            f"CREATE REL TABLE `{t}`(FROM Entity TO Entity, id STRING, evidence STRING, chunk_ids STRING[], "
            "weight DOUBLE)"
        )
    cols = "key STRING, name STRING, entity_type STRING, description STRING, dj STRING, c STRING, d STRING, l STRING"
    conn.execute(
        f"LOAD WITH HEADERS ({cols}) FROM '{folder / 'entities.csv'}' (header=true) "
        "CREATE (:Entity {key: key, name: name, entity_type: entity_type})"
    )
    rcols = (
        "s STRING, t STRING, type STRING, id STRING, kind STRING, predicate STRING, description STRING, "
        "evidence STRING, ej STRING, chunk_ids STRING, doc_ids STRING, weight DOUBLE, confidence STRING"
    )
    # the files and types load.cypher names, each file read once, as the script reads them
    script = (folder / "load.cypher").read_text()
    pairs = re.findall(r"FROM 'file:///(relations_by_type/[^']+)' AS row\n.*?CREATE \(s\)-\[:`([^`]+)`", script, re.S)
    assert sorted(t for _, t in pairs) == sorted(types)
    for name, t in pairs:
        conn.execute(
            f"LOAD WITH HEADERS ({rcols}) FROM '{folder / name}' (header=true) "
            "MATCH (a:Entity {key: s}), (b:Entity {key: t}) "
            f"CREATE (a)-[:`{t}` {{id: id, evidence: evidence, chunk_ids: string_split(chunk_ids, '{delimiter}'), "
            "weight: weight}]->(b)"
        )
    return conn


def test_neo4j_export_loads_into_an_embedded_cypher_database_and_answers_a_path(kg, tmp_path):
    summary = write_neo4j(kg, tmp_path / "neo")
    types = sorted({r.relation_type for r in kg.relations(include_synonyms=True)})
    conn = _load_into_ladybug(tmp_path / "neo", tmp_path / "lb.db", types, summary["array_delimiter"])
    rows = conn.execute("MATCH (a:Entity)-[r]->(b:Entity) RETURN a.key, b.key, label(r), r.id").get_all()
    assert {tuple(r) for r in rows} == directed_edges(kg)
    path = conn.execute(
        "MATCH (a:Entity {name: 'Maria Chen'})-[:MANAGES]->(b:Entity)-[:APPROVED]->(c:Entity) RETURN b.name, c.name"
    ).get_all()
    assert ["Operations Board", "Directive 2019-03"] in path
    assert conn.execute(
        "MATCH (a:Entity {key: $new})-[r:SUPERSEDES]->(b:Entity {key: $old}) RETURN r.chunk_ids, r.weight",
        {"new": NEWER, "old": OLDER},
    ).get_all() == [[["doc-01"], 3.0]]
    assert not conn.execute(
        "MATCH (a:Entity {key: $old})-[:SUPERSEDES]->(b:Entity {key: $new}) RETURN b.key", {"new": NEWER, "old": OLDER}
    ).get_all()
    multi = conn.execute("MATCH (a:Entity {key: 'project atlas'})-[r:REPORTS_TO]->(b) RETURN r.chunk_ids").get_all()
    assert multi == [[["memo;1#0"]]]


def test_cli_export_every_format_reads_only(demo_index, tmp_path, capsys):
    from kg_rag import save_index
    from kg_rag.cli import main

    save_index(demo_index, tmp_path / "idx")
    before = folder_digest(tmp_path / "idx")
    for fmt, out in (("jsonl", "g.jsonl"), ("graphml", "g.graphml"), ("graph-documents", "gd.json"), ("neo4j", "neo")):
        assert main(["export", str(tmp_path / "idx"), "--format", fmt, "--out", str(tmp_path / out)]) == 0
        assert (tmp_path / out).exists()
    assert "wrote 24 entities and 28 relations as neo4j" in capsys.readouterr().out
    assert folder_digest(tmp_path / "idx") == before
    assert records(read_jsonl(tmp_path / "g.jsonl")) == records(demo_index.kg)
    # a folder where a file belongs, and a missing index: one line, status 2
    assert main(["export", str(tmp_path / "idx"), "--format", "graphml", "--out", str(tmp_path / "neo")]) == 2
    assert main(["export", str(tmp_path / "nope"), "--format", "jsonl", "--out", str(tmp_path / "x.jsonl")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "is a folder" in err[0] and "no such index directory" in err[1]


def test_read_jsonl_names_a_bad_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"record": "entity", "key": "a", "name": "A", "entity_type": "X"}\nnot json\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:2"):
        read_jsonl(bad)


def test_graphml_replaces_what_xml_cannot_hold_and_keeps_the_rest(tmp_path):
    """Issue 46: one entity holding U+FFFE or U+FFFF (which ingestion keeps) made the whole GraphML export fail.
    Such code points, and control characters, are now U+FFFD; everything else, and every edge's direction, is
    exported and read back."""
    kg = KnowledgeGraph()
    text = "Order\ufffe B supersedes Order A\uffff in memo\x0b 1."
    kg.add_chunk(Chunk("memo\uffff#0", text, "memo\uffff.md", n_tokens=count_tokens(text)))
    kg.add_relation("Order\ufffe B", "Order A\uffff", "SUPERSEDES", chunk_id="memo\uffff#0", evidence="Order\ufffe B")
    kg.add_entity("Order\ufffe B", "POLICY", "the newer\uffff order")
    path = tmp_path / "g.graphml"
    assert write_graphml(kg, path)["relations"] == 1
    g = read_graphml(path)
    ((source, target, attrs),) = g.edges(data=True)
    assert (g.nodes[source]["label"], attrs["relation_type"], g.nodes[target]["label"]) == (
        "Order\ufffd B",
        "SUPERSEDES",
        "Order A\ufffd",
    )
    assert attrs["evidence"] == "Order\ufffd B" and attrs["chunk_ids"] == ["memo\ufffd#0"]
    assert g.nodes[source]["description"] == "the newer\ufffd order"
