"""The answer graph (``kg_rag/langchain/answer.py``): cites only the sources the model saw, per-call settings win,
one-line input errors, the ``messages`` convention and checkpointed threads.

Issue 26 §3: the answer graph takes LangGraph's chat convention (``messages``) as well as ``question``, and a
``checkpointer`` makes a thread a conversation."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from kg_rag import EntityBasedKGRAG, build_answer_graph
from kg_rag.tokens import count_tokens

from ..conftest import Recorder

Q = "Who does Lars Eriksen report to?"
FOLLOW_UP = "And who approved Directive 2023-07?"


class Calls(BaseCallbackHandler):
    def __init__(self) -> None:
        self.messages: list[list[Any]] = []

    def on_chat_model_start(self, serialized, messages, **kwargs: Any) -> None:
        self.messages += [list(batch) for batch in messages]


@pytest.fixture
def retriever(demo_index, bow_embeddings) -> EntityBasedKGRAG:
    return EntityBasedKGRAG(index=demo_index, embeddings=bow_embeddings, k=3)


def test_messages_input_answers_the_last_human_message(retriever):
    graph = build_answer_graph(retriever, FakeListChatModel(responses=["Priya Nair [1]"]))
    by_messages = graph.invoke({"messages": [HumanMessage(Q)]})
    by_question = graph.invoke({"question": Q})
    assert by_messages["question"] == by_question["question"] == Q
    assert by_messages["context"] == by_question["context"]
    assert [type(m) for m in by_messages["messages"]] == [HumanMessage, AIMessage]
    assert by_messages["messages"][-1].content == by_messages["answer"] == "Priya Nair [1]"
    assert [type(m) for m in by_question["messages"]] == [HumanMessage, AIMessage]  # recorded either way
    tuples = graph.invoke({"messages": [("user", Q)]})
    assert tuples["context"] == by_question["context"]


def test_a_checkpointed_thread_is_a_conversation(retriever):
    calls = Calls()
    graph = build_answer_graph(
        retriever,
        FakeListChatModel(responses=["Priya Nair [1]", "The Operations Board [1]"]),
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "t1"}, "callbacks": [calls]}
    graph.invoke({"messages": [("user", Q)]}, config)
    second = graph.invoke({"messages": [("user", FOLLOW_UP)]}, config)
    assert second["question"] == FOLLOW_UP
    assert [m.content for m in second["messages"]] == [Q, "Priya Nair [1]", FOLLOW_UP, "The Operations Board [1]"]
    # the answer model read the earlier turn, and retrieval folded it into the query
    earlier = [m.content for m in calls.messages[-1][1:-1]]
    assert earlier == [Q, "Priya Nair [1]"]
    assert retriever.retrieve(FOLLOW_UP, history=[Q]).context == second["context"]
    state = graph.get_state({"configurable": {"thread_id": "t1"}})
    assert len(state.values["messages"]) == 4


def test_a_question_in_a_thread_does_not_linger_into_the_next_turn(retriever):
    graph = build_answer_graph(retriever, FakeListChatModel(responses=["a", "b", "c"]), checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t2"}}
    graph.invoke({"question": Q}, config)
    follow = graph.invoke({"messages": [("user", FOLLOW_UP)]}, config)
    assert follow["question"] == FOLLOW_UP  # not the first turn's question
    again = asyncio.run(graph.ainvoke({"question": "Who owns Project Atlas?"}, config))
    assert again["question"] == "Who owns Project Atlas?"
    assert [m.content for m in again["messages"]][-2:] == ["Who owns Project Atlas?", "c"]


def test_messages_that_do_not_end_with_a_question_are_one_clear_line(retriever):
    graph = build_answer_graph(retriever, FakeListChatModel(responses=["x"]))
    for state in ({"messages": []}, {"messages": [AIMessage("hello")]}):
        with pytest.raises(ValueError, match="needs a question") as info:
            graph.invoke(state)
        assert "\n" not in str(info.value)


BUDGET = {"max_context_tokens": 250}  # leaves room for sources [1] and [2] of the demo question only


@pytest.fixture
def retriever_k5(demo_index, bow_embeddings) -> EntityBasedKGRAG:
    return EntityBasedKGRAG(index=demo_index, embeddings=bow_embeddings, k=5)


def graph_for(retriever_k5: EntityBasedKGRAG, *answers: str, **kwargs: Any):
    return build_answer_graph(retriever_k5, FakeListChatModel(responses=list(answers) or ["Priya Nair [1]"]), **kwargs)


class Prompts(BaseCallbackHandler):
    """The human message text of every chat model call."""

    def __init__(self) -> None:
        self.human: list[str] = []

    def on_chat_model_start(self, serialized, messages, **kwargs: Any) -> None:
        self.human += [m.content for batch in messages for m in batch if m.type == "human"]


def cited(out: dict) -> list[str]:
    return [c["chunk_id"] for c in out["citations"]]


# ------------------------------------------------------------------------------------------- citations
def test_documents_are_the_sources_the_prompt_showed(retriever_k5):
    shown = retriever_k5.retrieve(Q, **BUDGET).formatted.chunks
    assert len(shown) == 2 and len(retriever_k5.retrieve(Q, **BUDGET).chunks) == 5  # the budget cuts three sources
    prompts = Prompts()
    out = graph_for(retriever_k5, "Maria Chen [5]", retrieval_kwargs=BUDGET).invoke(
        {"question": Q}, config={"callbacks": [prompts]}
    )
    assert [d.id for d in out["documents"]] == shown
    assert all(f"[{n}] chunk={d.id} " in prompts.human[0] for n, d in enumerate(out["documents"], 1))
    assert "[3]" not in out["context"]
    assert out["citations"] == []  # [5] was never shown to the model
    assert all(p in out["context"] for p in out["paths"])


def test_markers_within_the_shown_sources_still_cite(retriever_k5):
    out = graph_for(retriever_k5, "Maria Chen [2] [4]", retrieval_kwargs=BUDGET).invoke({"question": Q})
    assert cited(out) == [out["documents"][1].id]


def test_answer_text_fallback_searches_only_shown_sources(retriever_k5):
    name = "Data Platform team"  # in shown source [1] and in sources the budget cut
    everything = retriever_k5.retrieve(Q, **BUDGET).chunks
    unseen = [c.id for c in everything[2:] if name in c.text]
    assert unseen  # a passage the model never saw also names it
    for out in (
        graph_for(retriever_k5, name, retrieval_kwargs=BUDGET).invoke({"question": Q}),
        asyncio.run(graph_for(retriever_k5, name, retrieval_kwargs=BUDGET).ainvoke({"question": Q})),
    ):
        assert cited(out) == [d.id for d in out["documents"] if name in d.metadata["text"]]
        assert cited(out) and not set(cited(out)) & set(unseen)


def test_without_a_cut_every_retrieved_source_is_returned(retriever_k5):
    out = graph_for(retriever_k5, "Amara Diallo [3]").invoke({"question": Q})
    assert len(out["documents"]) == 5
    assert cited(out) == [out["documents"][2].id]


# ------------------------------------------------------------------------------------------- per-call settings
def test_per_call_configurable_wins_over_build_time_defaults(retriever_k5):
    graph = graph_for(retriever_k5, *["Priya Nair [1]"] * 6, retrieval_kwargs={"k": 2})
    assert len(graph.invoke({"question": Q})["documents"]) == 2
    assert len(graph.invoke({"question": Q}, config={"configurable": {"k": 1}})["documents"]) == 1
    assert len(graph.invoke({"question": Q}, config={"configurable": {"top_k_chunks": 1}})["documents"]) == 1
    assert len(graph.invoke({"question": Q}, config={"configurable": {"k": 4, "thread_id": "t"}})["documents"]) == 4
    out = asyncio.run(graph.ainvoke({"question": Q}, config={"configurable": {"k": 1}}))
    assert len(out["documents"]) == 1


def test_defaults_the_call_does_not_set_still_apply(retriever_k5):
    graph = graph_for(retriever_k5, retrieval_kwargs={"k": 2, **BUDGET})
    out = graph.invoke({"question": Q}, config={"configurable": {"k": 5}})
    assert count_tokens(out["context"]) <= 250 and len(out["documents"]) == 2  # budget kept, k from the call


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"kk": 1}, "unknown retrieval_kwargs key\\(s\\): 'kk'"),
        ({"k": 2, "max_hopz": 1}, "'max_hopz'"),
        ({"k": 0}, "top_k_chunks must be >= 1"),
        ({"history": ["earlier"]}, "retrieval_kwargs cannot fix history"),
    ],
)
def test_bad_retrieval_kwargs_fail_when_the_graph_is_built(retriever_k5, kwargs, message):
    with pytest.raises(ValueError, match=message) as info:
        build_answer_graph(retriever_k5, FakeListChatModel(responses=["x"]), retrieval_kwargs=kwargs)
    assert "\n" not in str(info.value)


# ------------------------------------------------------------------------------------------- input
def test_a_missing_question_is_one_clear_line(retriever_k5):
    graph = graph_for(retriever_k5)
    for run in (graph.invoke, lambda x: asyncio.run(graph.ainvoke(x))):
        for state in ({}, {"history": ["earlier"]}, {"question": None}):
            with pytest.raises(ValueError, match="needs a question") as info:
                run(state)
            assert "\n" not in str(info.value)


def test_input_schema_is_question_and_history_or_messages(retriever_k5):
    schema = graph_for(retriever_k5).get_input_jsonschema()
    assert set(schema["properties"]) == {"question", "history", "messages"}
    assert not schema.get("required")  # either a question or messages
    assert {"answer", "citations", "documents"} <= set(graph_for(retriever_k5).get_output_jsonschema()["properties"])


QUESTION = "Who does Lars Eriksen report to?"


# ------------------------------------------------------------------------------------------- schema and citations
def test_answer_graph_schema_names_callbacks_and_per_call_settings(retriever):
    graph = build_answer_graph(retriever, FakeListChatModel(responses=["Priya Nair [1]"] * 4))
    schema = graph.get_input_jsonschema()
    assert "question" in schema["properties"]
    assert graph.get_name() == "kg-rag answer graph"
    recorder = Recorder()
    out = graph.invoke({"question": QUESTION}, config={"callbacks": [recorder], "configurable": {"k": 1}})
    assert len(out["documents"]) == 1  # retrieval settings per invocation
    names = [n for _, n in recorder.runs]
    assert "kg-rag answer graph" in names and "kg-rag retrieve" in names and "kg-rag answer" in names
    assert ("retriever", "EntityBasedKGRAG") in recorder.runs  # the retriever's own run, inside the node
    out = graph.invoke({"question": QUESTION})
    assert len(out["documents"]) == 3


def test_citations_are_the_sources_the_answer_used(retriever):
    def answer(text: str) -> dict:
        graph = build_answer_graph(retriever, FakeListChatModel(responses=[text]))
        return graph.invoke({"question": QUESTION})

    declined = answer("I do not know.")
    assert declined["citations"] == []
    cited = answer("Lars Eriksen reports to Priya Nair [2].")
    assert [c["chunk_id"] for c in cited["citations"]] == [cited["documents"][1].metadata["chunk_id"]]
    plain = answer("Priya Nair")
    used = [d.metadata["chunk_id"] for d in plain["documents"] if "Priya Nair" in d.metadata["text"]]
    assert [c["chunk_id"] for c in plain["citations"]] == used and used


def test_a_citation_credits_its_source_only_with_the_paths_it_states(retriever):
    """A new user's pass: ``doc-02`` was cited with ``Directive 2019-03 <-[SUPERSEDES]- Directive 2023-07``,
    which only ``doc-01`` states (the path merely touches an entity ``doc-02`` mentions)."""
    graph = build_answer_graph(retriever, FakeListChatModel(responses=["Directive 2023-07 [1] [2] [3]."]))
    out = graph.invoke({"question": "Which directive superseded Directive 2019-03?"})
    by_id = {d.metadata["chunk_id"]: d for d in out["documents"]}
    cited = {c["chunk_id"]: c["paths"] for c in out["citations"]}
    assert "doc-01" in cited and "doc-02" in cited
    supersedes = "Directive 2019-03 <-[SUPERSEDES]- Directive 2023-07"
    assert supersedes in cited["doc-01"]
    assert supersedes not in cited["doc-02"] and supersedes in by_id["doc-02"].metadata["paths"]  # touches it only
    for chunk, paths in cited.items():
        assert set(paths) <= set(out["paths"]), chunk
