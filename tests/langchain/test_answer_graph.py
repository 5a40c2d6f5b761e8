"""Issue 26 §3: the answer graph takes LangGraph's chat convention (``messages``) as well as ``question``, and a
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
