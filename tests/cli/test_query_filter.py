"""Issue 29: ``kg-rag query --doc ID`` and ``--filter JSON`` restrict a query to documents, with one-line errors."""

from __future__ import annotations

import json

import pytest

from kg_rag.cli import main
from kg_rag.store import DirectoryStore

Q = "Who does Lars Eriksen ultimately report to?"
EMB = ["--embeddings", "kg_rag.testing:BagOfWordsEmbeddings", "--no-answer"]


@pytest.fixture
def idx(demo_index, tmp_path):
    path = tmp_path / "idx"
    DirectoryStore(path).save(demo_index)
    return str(path)


def test_doc_and_filter_restrict_the_query(idx, capsys):
    assert main(["query", idx, Q, "--json", *EMB]) == 0
    assert len({c["doc_id"] for c in json.loads(capsys.readouterr().out)["chunks"]}) > 2
    assert main(["query", idx, Q, "--json", "--doc", "doc-03", "--doc", "doc-04", *EMB]) == 0
    assert {c["doc_id"] for c in json.loads(capsys.readouterr().out)["chunks"]} == {"doc-03", "doc-04"}
    assert main(["query", idx, Q, "--json", "--filter", '{"title": "Organisation chart: engineering"}', *EMB]) == 0
    assert [c["doc_id"] for c in json.loads(capsys.readouterr().out)["chunks"]] == ["doc-03"]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--filter", "{title: x}"], "--filter is not JSON"),
        (["--filter", '["doc-03"]'], "--filter must be a JSON object"),
        (["--filter", '{"doc_id": "a"}', "--doc", "b"], "either with --doc or as doc_id in --filter"),
        (["--filter", '{"year": {"$gt": 1}}'], "only a value, a list of values"),
    ],
)
def test_a_bad_filter_is_one_line(idx, capsys, flags, message):
    assert main(["query", idx, Q, *flags, *EMB]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("command", ["serve", "mcp"])
def test_serve_and_mcp_take_the_same_filter(idx, command):
    """The explorer and the MCP tools serve a retriever built with the filter, so every query they answer is
    restricted (what each then does with a filter is tested with the explorer and MCP)."""
    from kg_rag.cli import build_parser
    from kg_rag.cli.serving import _retriever

    args = build_parser().parse_args([command, idx, "--doc", "doc-03", "--doc", "doc-04", *EMB[:2]])
    retriever = _retriever(args)
    assert {d.metadata["doc_id"] for d in retriever.invoke(Q)} == {"doc-03", "doc-04"}
    plain = _retriever(build_parser().parse_args([command, idx, *EMB[:2]]))
    assert len({d.metadata["doc_id"] for d in plain.invoke(Q)}) > 2


@pytest.mark.parametrize("command", ["serve", "mcp"])
def test_serve_and_mcp_refuse_a_bad_filter_before_starting(idx, capsys, command):
    assert main([command, idx, "--filter", '["doc-03"]', *EMB[:2]]) == 2
    err = capsys.readouterr().err.strip()
    assert "--filter must be a JSON object" in err and len(err.splitlines()) == 1
