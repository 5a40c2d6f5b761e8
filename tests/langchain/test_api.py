"""Issue 26 §3: one consistent API — the tools share one name for the question, global search is exported, the
version is the installed distribution's, and the docs say what ``exclude_entities`` does not do."""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

import kg_rag
from kg_rag import EntityBasedKGRAG, make_global_search_tool, make_retriever_tool

RETRIEVAL_DOC = Path(__file__).resolve().parents[2] / "docs" / "retrieval.md"


def test_global_search_tool_is_exported_and_every_tool_takes_query(demo_index, bow_embeddings):
    from tests.conftest import ScriptedChatModel

    retriever = EntityBasedKGRAG(index=demo_index, embeddings=bow_embeddings)
    search = make_retriever_tool(retriever)
    model = ScriptedChatModel(responder=lambda text: {"points": []}, tool_name="KeyPoints")
    global_search = make_global_search_tool(retriever.backend, model)
    assert "make_global_search_tool" in kg_rag.__all__ and "format_documents" in kg_rag.__all__
    for tool in (search, global_search):
        assert list(tool.get_input_schema().model_json_schema()["properties"]) == ["query"]
    error = global_search.invoke({"type": "tool_call", "id": "1", "name": global_search.name, "args": {"query": " "}})
    assert error.status == "error" and "query is empty" in error.content


def test_version_comes_from_the_package_metadata():
    assert kg_rag.__version__ == version("kg-rag")


def test_the_docs_say_exclude_entities_does_not_redact_text():
    text = " ".join(RETRIEVAL_DOC.read_text().split())
    assert "does not redact" in text and "exclude_entities" in text


def test_global_search_takes_the_retriever_like_the_other_tools(demo_index, bow_embeddings):
    import pytest

    from tests.conftest import ScriptedChatModel

    retriever = EntityBasedKGRAG(index=demo_index, embeddings=bow_embeddings)
    model = ScriptedChatModel(responder=lambda text: {"points": []}, tool_name="KeyPoints")
    assert make_global_search_tool(retriever, model).name == "global_search"
    with pytest.raises(ValueError, match="needs an EntityBasedKGRAG or its backend") as info:
        make_global_search_tool("idx/", model)
    assert "\n" not in str(info.value)
