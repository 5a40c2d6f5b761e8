"""Issue 26 §1: the typed paths reach the model in the usual LangChain patterns, with no custom code — a plain
LCEL chain with the tutorial's own ``format_docs``, ``kg_rag.format_documents``, LangChain's own
``create_retriever_tool``, ``create_agent`` with kg-rag's tools — and per-call settings hold in each."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import FakeListChatModel, GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnablePassthrough

from kg_rag import EntityBasedKGRAG, format_documents
from kg_rag.fence import CONTEXT_CLOSE, CONTEXT_OPEN, fenced
from kg_rag.langchain.answer import build_answer_graph
from kg_rag.langchain.documents import documents_context
from kg_rag.langchain.tools import make_path_tool, make_retriever_tool

Q = "Who does Lars Eriksen ultimately report to?"
PROMPT = ChatPromptTemplate.from_template("Answer from this context:\n{context}\n\nQuestion: {question}")


class Prompts(BaseCallbackHandler):
    """Every text a chat model was handed."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def on_chat_model_start(self, serialized, messages, **kwargs: Any) -> None:
        self.texts += ["\n".join(str(m.content) for m in batch) for batch in messages]


class ToolFake(GenericFakeChatModel):
    def bind_tools(self, tools: Any, **kwargs: Any) -> ToolFake:
        return self


@pytest.fixture
def retriever(demo_index, bow_embeddings) -> EntityBasedKGRAG:
    return EntityBasedKGRAG(index=demo_index, embeddings=bow_embeddings, k=3)


def format_docs(docs: list[Document]) -> str:
    """The helper every LangChain RAG tutorial writes."""
    return "\n\n".join(doc.page_content for doc in docs)


def _sources(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.startswith("[") and "] chunk=" in line)


def test_the_tutorial_lcel_chain_hands_the_model_typed_paths(retriever):
    prompts = Prompts()
    chain = (
        {"context": retriever | format_docs, "question": RunnablePassthrough()}
        | PROMPT
        | FakeListChatModel(responses=["Maria Chen"])
        | StrOutputParser()
    )
    assert chain.invoke(Q, config={"callbacks": [prompts]}) == "Maria Chen"
    (prompt,) = prompts.texts
    assert "Lars Eriksen -[REPORTS_TO]-> Priya Nair" in prompt  # the product's defining output reaches the model
    assert "Paths (X -[TYPE]-> Y: X is the source, Y the target):" in prompt


def test_a_documents_content_is_its_paths_then_its_quoted_text(retriever):
    result = retriever.retrieve(Q)
    docs = retriever.invoke(Q)
    assert [d.id for d in docs] == [c.id for c in result.chunks]
    for doc, chunk in zip(docs, result.chunks):
        lines = doc.page_content.splitlines()
        assert lines[0].startswith(f"Source: chunk={chunk.id} ")
        text_at = lines.index("Text:")
        assert lines[text_at + 1 :] == ["| " + ln.strip() for ln in chunk.text.splitlines() if ln.strip()]
        assert lines[2:text_at] == chunk.paths  # only the paths that reach it: no restated triples
        assert doc.metadata["text"] == chunk.text


def test_format_documents_gives_the_context_the_answer_graph_gives(retriever):
    result = retriever.retrieve(Q)
    docs = retriever.invoke(Q)
    assert documents_context(docs) == result.context
    assert format_documents(docs) == format_documents.invoke(docs) == fenced(result.context)
    prompts = Prompts()
    build_answer_graph(retriever, FakeListChatModel(responses=["Maria Chen [1]"])).invoke(
        {"question": Q}, config={"callbacks": [prompts]}
    )
    assert fenced(result.context) in prompts.texts[0]


def test_format_documents_in_a_chain_honours_per_call_settings(retriever):
    prompts = Prompts()
    chain = {"context": retriever | format_documents, "question": RunnablePassthrough()} | PROMPT
    chain = chain | FakeListChatModel(responses=["x", "y"])
    chain.invoke(Q, config={"callbacks": [prompts]})
    chain.invoke(Q, config={"callbacks": [prompts], "configurable": {"k": 1, "max_context_tokens": 400}})
    full, one = prompts.texts
    assert _sources(full) == 3 and _sources(one) == 1
    assert "-[REPORTS_TO]->" in one and CONTEXT_OPEN in one and CONTEXT_CLOSE in one


def test_format_context_as_a_runnable_lambda_honours_configurable(retriever):
    context = RunnableLambda(retriever.format_context)
    assert _sources(context.invoke(Q)) == 3
    assert _sources(context.invoke(Q, config={"configurable": {"k": 1}})) == 1


def test_format_documents_renders_reranked_filtered_and_foreign_documents(retriever):
    docs = retriever.invoke(Q)
    reranked = documents_context(docs[::-1])
    headers = [ln for ln in reranked.splitlines() if "] chunk=" in ln and ln.startswith("[")]
    assert [h.split("chunk=")[1].split()[0] for h in headers] == [d.id for d in docs[::-1]]
    assert "-[REPORTS_TO]->" in reranked  # the graph half stays with them
    foreign = Document(page_content="Plain text from another retriever.\n-----Sources-----", metadata={"source": "x"})
    mixed = documents_context([docs[0], foreign])
    assert "| Plain text from another retriever." in mixed and "| -----Sources-----" in mixed
    assert documents_context([]) == ""
    with pytest.raises(ValueError, match="list of Documents"):
        format_documents("not documents")
    with pytest.raises(ValueError, match="list of Documents"):
        format_documents([docs[0], "text"])


def test_langchains_own_create_retriever_tool_shows_paths(retriever):
    from langchain_core.tools import create_retriever_tool

    tool = create_retriever_tool(retriever, "kg", "Search the knowledge graph")
    assert "Lars Eriksen -[REPORTS_TO]-> Priya Nair" in tool.invoke({"query": Q})


def test_create_agent_with_the_tools_sees_the_fenced_paths(retriever):
    from langchain.agents import create_agent

    calls = [AIMessage("", tool_calls=[{"name": "knowledge_graph_search", "args": {"query": Q}, "id": "c1"}])]
    model = ToolFake(messages=iter([*calls, AIMessage("Maria Chen [1]")]))
    prompts = Prompts()
    agent = create_agent(model=model, tools=[make_retriever_tool(retriever), make_path_tool(retriever)])
    out = agent.invoke({"messages": [("user", Q)]}, config={"callbacks": [prompts], "configurable": {"k": 2}})
    (tool_message,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert tool_message.content == format_documents(tool_message.artifact)
    assert len(tool_message.artifact) == 2  # configurable k reached the retriever
    assert "Lars Eriksen -[REPORTS_TO]-> Priya Nair" in prompts.texts[-1]  # the second model call read it
    assert out["messages"][-1].content == "Maria Chen [1]"


def test_the_tool_states_each_fact_once(retriever):
    """The tool used to restate each passage's own relations above it; now rows and paths come once."""
    docs = retriever.invoke(Q)
    content = make_retriever_tool(retriever).invoke({"query": Q})
    for d in docs:
        for edge in d.metadata["edges"]:
            row = f"|{edge['source']}|{edge['target']}|"
            assert content.count(row) <= 1
    assert content.count("Lars Eriksen -[REPORTS_TO]-> Priya Nair") == 1


def test_settings_of_the_enclosing_run_reach_the_retriever_called_without_a_config(retriever):
    """LangChain's own wrappers call ``retriever.invoke(query)`` (or pass only callbacks) inside a run: the
    run's ``configurable`` must still apply."""
    from langchain_core.tools import create_retriever_tool

    one = {"configurable": {"k": 1}}
    inner = RunnableLambda(lambda q: retriever.invoke(q))
    assert len(inner.invoke(Q, config=one)) == 1
    tool = create_retriever_tool(retriever, "kg", "search")
    assert tool.invoke({"query": Q}, config=one).count("Source: chunk=") == 1


def test_format_documents_drops_the_graph_lines_of_passages_filtered_out(retriever):
    """After a reranker or filter drops passages, rows and paths that rest only on them go too (the model would
    read facts it cannot cite); rows of the passages kept stay, and with every passage kept nothing changes."""
    docs = retriever.invoke(Q)
    full = documents_context(docs)
    assert full == retriever.retrieve(Q).context
    for kept in ([docs[0]], docs[1:]):
        text = documents_context(kept)
        ids = {d.id for d in kept}
        rows = [ln for ln in text.splitlines() if ln[:1].isdigit() and "|" in ln]
        for d in docs:
            for edge in d.metadata["edges"]:
                row = f"|{edge['source']}|{edge['target']}|"
                rests_elsewhere = any(edge in o.metadata["edges"] for o in kept)
                if d.id not in ids and not rests_elsewhere:
                    assert not any(row in r for r in rows), row
        assert not text.rstrip().endswith("-----")
