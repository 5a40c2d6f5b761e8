"""The answer graph and global search served by the in-memory LangGraph server (``langgraph dev`` reading the
repository's ``langgraph.json``) against a small index and the local OpenAI-compatible test server, called
through ``langgraph-sdk``: a run, a streamed run with the retriever's events, thread state, global search, the
chat-style ``{"messages": [...]}`` input.

The server's embeddings block when they are made (as the local model's import does), so these runs also show
that the graph factories build the retriever off the event loop (``langgraph dev`` refuses blocking calls on
it with ``BlockingError``)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from ..conftest import REPO
from ..serving_support import free_port, running
from .blocking_embeddings import SPEC as BLOCKING_EMBEDDINGS

sdk = pytest.importorskip("langgraph_sdk", reason="the LangGraph server test needs langgraph-sdk (test extra)")
QUESTION = "What superseded Directive 2019-03?"


@pytest.fixture(scope="module")
def langgraph_url(served_index, tmp_path_factory):
    """``langgraph dev`` (in-memory) on 127.0.0.1, with the local OpenAI-compatible server as its chat model;
    one server for this module's tests, stopped after them."""
    from ..openai_server import FakeOpenAI

    cli = Path(sys.executable).with_name("langgraph")
    if not cli.exists() and not shutil.which("langgraph"):
        pytest.skip("the langgraph CLI is not installed (pip install 'langgraph-cli[inmem]')")
    port = free_port()
    chat = FakeOpenAI().start()
    env = {
        "OPENAI_API_KEY": "test-key",
        "OPENAI_BASE_URL": chat.base_url,
        "KG_RAG_CHAT_MODEL": "fake-model",
        "KG_RAG_INDEX": str(served_index),
        "KG_RAG_EMBEDDINGS": BLOCKING_EMBEDDINGS,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),  # for the tests package
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGSMITH_TRACING": "false",
        "LANGCHAIN_TRACING_V2": "false",
    }
    cmd = [
        str(cli if cli.exists() else shutil.which("langgraph")),
        "dev",
        "--no-browser",
        "--no-reload",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--config",
        str(REPO / "langgraph.json"),
    ]
    url = f"http://127.0.0.1:{port}"
    try:
        with running(cmd, url + "/ok", env=env, cwd=str(tmp_path_factory.mktemp("langgraph")), timeout=180):
            yield url
    finally:
        chat.stop()


def test_answer_graph_run_stream_and_thread_state(langgraph_url):
    client = sdk.get_sync_client(url=langgraph_url)
    assistants = {a["graph_id"] for a in client.assistants.search()}
    assert {"kg_rag_retrieve", "kg_rag_answer", "kg_rag_global_search"} <= assistants

    # retrieval alone: no chat model involved
    retrieved = client.runs.wait(None, "kg_rag_retrieve", input={"question": QUESTION})
    assert any("Directive 2019-03 <-[SUPERSEDES]- Directive 2023-07" in p for p in retrieved["paths"])
    assert retrieved["sources"][0]["n"] == 1 and retrieved["context"]

    # a run on a thread
    thread = client.threads.create()
    out = client.runs.wait(thread["thread_id"], "kg_rag_answer", input={"question": QUESTION})
    assert "SUPERSEDES" in out["answer"] and "[1]" in out["answer"]
    assert out["citations"] and out["citations"][0]["chunk_id"] == out["documents"][0]["metadata"]["chunk_id"]
    assert any("Directive 2019-03 <-[SUPERSEDES]- Directive 2023-07" in p for p in out["paths"])

    # thread state holds what the run produced
    state = client.threads.get_state(thread["thread_id"])
    assert state["values"]["question"] == QUESTION
    assert state["values"]["citations"] == out["citations"]

    # a streamed run: the retriever's own start/end events come through, with its documents
    events = []
    for part in client.runs.stream(
        None, "kg_rag_answer", input={"question": QUESTION}, stream_mode=["events", "values"]
    ):
        events.append(part)
    kinds = [p.data.get("event") for p in events if p.event == "events" and isinstance(p.data, dict)]
    assert "on_retriever_start" in kinds and "on_retriever_end" in kinds
    end = next(p.data for p in events if p.event == "events" and p.data.get("event") == "on_retriever_end")
    docs = end["data"]["output"]
    assert docs and {d["metadata"]["chunk_id"] for d in docs} >= {out["citations"][0]["chunk_id"]}
    assert not [p.data for p in events if p.event == "error"]
    final = [p.data for p in events if p.event == "values"][-1]
    assert final["answer"] == out["answer"]

    # per-run retrieval settings travel in config["configurable"]
    one = client.runs.wait(None, "kg_rag_answer", input={"question": QUESTION}, config={"configurable": {"k": 1}})
    assert len(one["documents"]) == 1


def test_the_chat_input_form_is_served(langgraph_url):
    """``{"messages": [...]}``: the last human message is the question, and the answer is appended."""
    client = sdk.get_sync_client(url=langgraph_url)
    out = client.runs.wait(None, "kg_rag_answer", input={"messages": [{"role": "user", "content": QUESTION}]})
    assert "SUPERSEDES" in out["answer"] and out["citations"]
    assert [m["type"] for m in out["messages"]] == ["human", "ai"]
    assert out["messages"][-1]["content"] == out["answer"]


def test_global_search_is_served(langgraph_url):
    client = sdk.get_sync_client(url=langgraph_url)
    out = client.runs.wait(None, "kg_rag_global_search", input={"question": "What are the main themes?"})
    assert out["answer"] and out["communities"]
    assert "[c:" in out["answer"]


def test_a_bad_input_fails_the_run_not_the_server(langgraph_url):
    client = sdk.get_sync_client(url=langgraph_url)
    with pytest.raises(Exception):  # noqa: B017 - the SDK raises its HTTP error for the failed run
        client.runs.wait(None, "kg_rag_answer", input={"question": "   "}, raise_error=True)
    assert client.runs.wait(None, "kg_rag_answer", input={"question": QUESTION})["answer"]
