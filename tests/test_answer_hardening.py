"""The answer graph cites only what the model saw, lets per-call settings win, reads LangChain's message-like
history formats and asks for a question in one clear line."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, HumanMessage

from kg_rag import EntityBasedKGRAG
from kg_rag.langchain.answer import build_answer_graph
from kg_rag.query.history import fold_history
from kg_rag.tokens import count_tokens

Q = "Who does Lars Eriksen report to?"
FOLLOW_UP = "And who approved it?"
BUDGET = {"max_context_tokens": 250}  # leaves room for sources [1] and [2] of the demo question only


@pytest.fixture
def retriever(demo_index, bow_embeddings) -> EntityBasedKGRAG:
    return EntityBasedKGRAG(index=demo_index, embeddings=bow_embeddings, k=5)


def graph_for(retriever: EntityBasedKGRAG, *answers: str, **kwargs: Any):
    return build_answer_graph(retriever, FakeListChatModel(responses=list(answers) or ["Priya Nair [1]"]), **kwargs)


class Prompts(BaseCallbackHandler):
    """The human message text of every chat model call."""

    def __init__(self) -> None:
        self.human: list[str] = []

    def on_chat_model_start(self, serialized, messages, **kwargs: Any) -> None:
        self.human += [m.content for batch in messages for m in batch if m.type == "human"]


def cited(out: dict) -> list[str]:
    return [c["chunk_id"] for c in out["citations"]]


# ------------------------------------------------------------------------------------------- 1. citations
def test_documents_are_the_sources_the_prompt_showed(retriever):
    shown = retriever.retrieve(Q, **BUDGET).formatted.chunks
    assert len(shown) == 2 and len(retriever.retrieve(Q, **BUDGET).chunks) == 5  # the budget cuts three sources
    prompts = Prompts()
    out = graph_for(retriever, "Maria Chen [5]", retrieval_kwargs=BUDGET).invoke(
        {"question": Q}, config={"callbacks": [prompts]}
    )
    assert [d.id for d in out["documents"]] == shown
    assert all(f"[{n}] chunk={d.id} " in prompts.human[0] for n, d in enumerate(out["documents"], 1))
    assert "[3]" not in out["context"]
    assert out["citations"] == []  # [5] was never shown to the model
    assert all(p in out["context"] for p in out["paths"])


def test_markers_within_the_shown_sources_still_cite(retriever):
    out = graph_for(retriever, "Maria Chen [2] [4]", retrieval_kwargs=BUDGET).invoke({"question": Q})
    assert cited(out) == [out["documents"][1].id]


def test_answer_text_fallback_searches_only_shown_sources(retriever):
    name = "Data Platform team"  # in shown source [1] and in sources the budget cut
    everything = retriever.retrieve(Q, **BUDGET).chunks
    unseen = [c.id for c in everything[2:] if name in c.text]
    assert unseen  # a passage the model never saw also names it
    for out in (
        graph_for(retriever, name, retrieval_kwargs=BUDGET).invoke({"question": Q}),
        asyncio.run(graph_for(retriever, name, retrieval_kwargs=BUDGET).ainvoke({"question": Q})),
    ):
        assert cited(out) == [d.id for d in out["documents"] if name in d.metadata["text"]]
        assert cited(out) and not set(cited(out)) & set(unseen)


def test_without_a_cut_every_retrieved_source_is_returned(retriever):
    out = graph_for(retriever, "Amara Diallo [3]").invoke({"question": Q})
    assert len(out["documents"]) == 5
    assert cited(out) == [out["documents"][2].id]


# ------------------------------------------------------------------------------------------- 2. settings
def test_per_call_configurable_wins_over_build_time_defaults(retriever):
    graph = graph_for(retriever, *["Priya Nair [1]"] * 6, retrieval_kwargs={"k": 2})
    assert len(graph.invoke({"question": Q})["documents"]) == 2
    assert len(graph.invoke({"question": Q}, config={"configurable": {"k": 1}})["documents"]) == 1
    assert len(graph.invoke({"question": Q}, config={"configurable": {"top_k_chunks": 1}})["documents"]) == 1
    assert len(graph.invoke({"question": Q}, config={"configurable": {"k": 4, "thread_id": "t"}})["documents"]) == 4
    out = asyncio.run(graph.ainvoke({"question": Q}, config={"configurable": {"k": 1}}))
    assert len(out["documents"]) == 1


def test_defaults_the_call_does_not_set_still_apply(retriever):
    graph = graph_for(retriever, retrieval_kwargs={"k": 2, **BUDGET})
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
def test_bad_retrieval_kwargs_fail_when_the_graph_is_built(retriever, kwargs, message):
    with pytest.raises(ValueError, match=message) as info:
        build_answer_graph(retriever, FakeListChatModel(responses=["x"]), retrieval_kwargs=kwargs)
    assert "\n" not in str(info.value)


# ------------------------------------------------------------------------------------------- 3. history
def test_role_content_tuples_fold_like_user_strings(retriever):
    earlier = "Tell me about the 2025 security budget"

    def chunks(history):
        return [c.id for c in retriever.retrieve(FOLLOW_UP, history=history).chunks]

    plain = chunks([earlier])
    assert plain[0] == "doc-10" and plain != chunks(None)
    assert chunks([("user", earlier), ("assistant", "It funds fixes.")]) == plain  # only user turns count
    assert chunks([("human", earlier), ("ai", "ok")]) == plain
    out = graph_for(retriever, "Amara Diallo [1]").invoke({"question": FOLLOW_UP, "history": [("user", earlier)]})
    assert out["documents"][0].id == "doc-10"
    assert out["answer"] == "Amara Diallo [1]"


def test_unknown_tuple_roles_are_rejected():
    with pytest.raises(ValueError, match="unknown role 'usr'"):
        fold_history("q", [("usr", "earlier")], 3)
    with pytest.raises(ValueError, match="history items"):
        fold_history("q", [("user", "a", "b")], 3)


def test_content_blocks_fold_as_their_text():
    blocks = [
        {"type": "text", "text": "Tell me about"},
        {"type": "image_url", "image_url": {"url": "https://example.com/x.png"}},
        "the 2025 security budget",
    ]
    expected = "Tell me about the 2025 security budget\nq"
    assert fold_history("q", [HumanMessage(content=blocks)], 3) == expected
    assert fold_history("q", [{"role": "user", "content": blocks}], 3) == expected
    assert fold_history("q", [("user", blocks)], 3) == expected
    assert fold_history("q", [AIMessage(content=blocks), {"role": "assistant", "content": blocks}], 3) == "q"
    only_image = [{"type": "image_url", "image_url": {"url": "https://example.com/x.png"}}]
    assert fold_history("q", [HumanMessage(content=only_image)], 3) == "q"


# ------------------------------------------------------------------------------------------- 4. input
def test_a_missing_question_is_one_clear_line(retriever):
    graph = graph_for(retriever)
    for run in (graph.invoke, lambda x: asyncio.run(graph.ainvoke(x))):
        for state in ({}, {"history": ["earlier"]}, {"question": None}):
            with pytest.raises(ValueError, match="needs a question") as info:
                run(state)
            assert "\n" not in str(info.value)


def test_input_schema_is_question_and_history_or_messages(retriever):
    schema = graph_for(retriever).get_input_jsonschema()
    assert set(schema["properties"]) == {"question", "history", "messages"}
    assert not schema.get("required")  # either a question or messages
    assert {"answer", "citations", "documents"} <= set(graph_for(retriever).get_output_jsonschema()["properties"])
