"""Issue 29: ``kg-rag index --docs DIR --schema FILE`` indexes a real folder through the local OpenAI-compatible
server with the schema's types, meanings and prompt; the Python equivalent builds the same graph."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg_rag import KnowledgeGraph
from kg_rag.cli import main
from kg_rag.indexing import index_documents
from kg_rag.ingest import LLMExtractor, load_documents
from kg_rag.store.directory import load_index

SCHEMA = """\
entity_types:
  LAW: a statute, regulation, policy or order
  PERSON: a named person
relation_types:
  SUPERSEDES: source supersedes or replaces target
  REPORTS_TO: source reports to target
strict_vocabulary: true
system_prompt: |
  You build a legal knowledge graph. Direction matters: source -> target.
  Allowed entity types: {entity_types}.
  Allowed relation types:
  {relation_types}
"""
INDEX = ("--out", "idx", "--embeddings", "fake:16", "-q", "--llm-retries", "0")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def chat_requests(server) -> list[dict]:
    return [r for r in server.requests if r.get("response_format")]


def triples(kg: KnowledgeGraph) -> set[tuple[str, str, str]]:
    return {(r.source, r.relation_type, r.target) for r in kg.relations()}


@pytest.fixture
def laws(tmp_path, monkeypatch):
    folder = tmp_path / "laws"
    folder.mkdir()
    (folder / "a.md").write_text("Policy Two supersedes Policy One.\n")
    (folder / "b.md").write_text("Statute 2021 revokes Regulation 2020.\n")
    (folder / "c.md").write_text("Lars reports to Maria.\n")
    (tmp_path / "schema.yaml").write_text(SCHEMA)
    monkeypatch.chdir(tmp_path)
    return folder


def test_the_schema_file_reaches_the_model_and_shapes_the_graph(openai_server, laws, capsys):
    code, out, err = run(capsys, "index", "--docs", "laws", "--schema", "schema.yaml", *INDEX)
    assert code == 0, err
    requests = chat_requests(openai_server)
    assert len(requests) == 3
    system = requests[0]["messages"][0]["content"]
    assert system.startswith("You build a legal knowledge graph.")
    assert "Allowed entity types: LAW (a statute, regulation, policy or order), PERSON (a named person)." in system
    assert "- SUPERSEDES: source supersedes or replaces target\n- REPORTS_TO: source reports to target" in system
    kg = load_index(Path("idx")).kg
    assert triples(kg) == {
        ("policy two", "SUPERSEDES", "policy one"),
        ("lars", "REPORTS_TO", "maria"),
        ("statute 2021", "RELATED", "regulation 2020"),  # REVOKES is not in the schema: strict -> RELATED
    }
    assert {kg.graph.nodes[n]["entity_type"] for n in kg.graph.nodes} == {"LAW"}  # the schema's type, not POLICY


def test_a_changed_schema_re_extracts_an_unchanged_folder(openai_server, laws, capsys):
    assert run(capsys, "index", "--docs", "laws", *INDEX)[0] == 0  # the default schema first
    assert len(chat_requests(openai_server)) == 3
    code, out, _ = run(capsys, "index", "--docs", "laws", "--schema", "schema.yaml", *INDEX)
    assert code == 0 and "0 added, 3 replaced, 0 unchanged" in out  # same files, another schema: extracted again
    assert len(chat_requests(openai_server)) == 6
    code, out, _ = run(capsys, "index", "--docs", "laws", "--schema", "schema.yaml", *INDEX)
    assert code == 0 and "3 unchanged" in out and len(chat_requests(openai_server)) == 6  # same schema: nothing
    assert ("statute 2021", "RELATED", "regulation 2020") in triples(load_index(Path("idx")).kg)


def test_the_python_equivalent_builds_the_same_graph(openai_server, laws, capsys):
    from kg_rag.ingest.extraction_schema import load_schema
    from kg_rag.langchain.chat import default_chat_model

    assert run(capsys, "index", "--docs", "laws", "--schema", "schema.yaml", *INDEX)[0] == 0
    kg = KnowledgeGraph()
    extractor = LLMExtractor(default_chat_model(), max_retries=0, **load_schema("schema.yaml").extractor_kwargs())
    changes = index_documents(kg, load_documents("laws"), extractor=extractor)
    assert sorted(changes.added) == ["laws/a.md", "laws/b.md", "laws/c.md"]
    assert triples(kg) == triples(load_index(Path("idx")).kg)


@pytest.mark.parametrize(
    ("extra", "schema_text", "message"),
    [
        ((), "relation_types: {reports to: x}\n", "schema.yaml: relation_types: 'reports to' is not UPPER_SNAKE"),
        ((), "entity_typs: [LAW]\n", "schema.yaml: unknown setting 'entity_typs'"),
        (("--no-extract",), SCHEMA, "--schema has no effect with --no-extract"),
    ],
)
def test_a_bad_schema_fails_before_any_call_or_write(openai_server, laws, capsys, extra, schema_text, message):
    Path("schema.yaml").write_text(schema_text)
    code, out, err = run(capsys, "index", "--docs", "laws", "--schema", "schema.yaml", *INDEX, *extra)
    assert code == 2 and message in err and err.count("\n") == 1
    assert not openai_server.requests and not Path("idx").exists()


def test_schema_is_only_for_docs(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("x.json").write_text('{"format": "kg-rag-extractions", "documents": []}')
    code, _, err = run(capsys, "index", "--extractions", "x.json", "--schema", "s.yaml", "--out", "idx")
    assert code == 2 and "--schema is for --docs" in err
