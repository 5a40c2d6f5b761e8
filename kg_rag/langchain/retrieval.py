"""The retrieval-only LangGraph: a question in; the context, its directed paths and its sources out.

It needs no chat model, so a LangGraph server (``langgraph dev`` with ``langgraph.json``'s ``kg_rag_retrieve``)
can be tried with no key, and an application that writes its own prompt gets kg-rag's context as a graph node.
The retrieval is the retriever's own run (callbacks and tracing see it); settings per run come in
``config["configurable"]`` as for the retriever.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig, RunnableLambda
from typing_extensions import NotRequired, TypedDict  # pydantic needs it for the graph's JSON schema before 3.12

from kg_rag.context import render_path
from kg_rag.errors import InputError


class RetrievalInput(TypedDict):
    """``question``, optionally with ``history`` (earlier turns that inform retrieval)."""

    question: str
    history: NotRequired[list[Any]]


class RetrievalOutput(TypedDict, total=False):
    """What the context shows: its text, the paths it lists (``A -[TYPE]-> B``) and its numbered sources."""

    question: str
    context: str
    paths: list[str]
    sources: list[dict[str, Any]]
    warnings: list[str]


class RetrievalState(RetrievalInput, total=False):
    """The graph's state: the input's keys and the output's (``question`` stays required: it comes in)."""

    context: str
    paths: list[str]
    sources: list[dict[str, Any]]
    warnings: list[str]


def shown_sources(result: Any) -> list[dict[str, Any]]:
    """The chunks the context numbers as sources, in that order (``n`` is the ``[n]`` the context uses)."""
    formatted = getattr(result, "formatted", None)
    kept = [c for c in result.chunks if formatted is None or c.id in set(formatted.chunks)]
    return [
        {
            "n": n,
            "chunk_id": c.id,
            "doc_id": c.doc_id,
            "title": c.metadata.get("title"),
            "source": c.metadata.get("source"),
            "score": round(float(c.score), 4),
            "text": c.text,
        }
        for n, c in enumerate(kept, start=1)
    ]


def shown_paths(result: Any) -> list[str]:
    """The paths the context lists, rendered as it renders them."""
    formatted = getattr(result, "formatted", None)
    shown = result.paths if formatted is None else [result.paths[i] for i in formatted.paths]
    return [render_path(result.names, p) for p in shown]


def build_retrieval_graph(retriever: Any, *, name: str = "kg-rag retrieval graph") -> Any:
    """Compile ``START -> retrieve -> END`` over an :class:`~kg_rag.langchain.retriever.EntityBasedKGRAG`
    (sync and async); see the module docstring."""
    from langgraph.graph import END, START, StateGraph

    def _output(question: str, result: Any) -> RetrievalOutput:
        return {
            "question": question,
            "context": result.context,
            "paths": shown_paths(result),
            "sources": shown_sources(result),
            "warnings": list(result.warnings),
        }

    def _call(state: RetrievalState) -> tuple[Any, dict[str, Any]]:
        question = state.get("question") if isinstance(state, dict) else None
        if question is None:
            raise InputError("the retrieval graph needs a question: invoke it with {'question': '...'}")
        history = state.get("history")
        return question, ({"history": history} if history is not None else {})

    def retrieve(state: RetrievalState, config: RunnableConfig) -> RetrievalOutput:
        question, call = _call(state)
        return _output(question, retriever.retrieve(question, config=config, **call))

    async def aretrieve(state: RetrievalState, config: RunnableConfig) -> RetrievalOutput:
        question, call = _call(state)
        return _output(question, await retriever.aretrieve(question, config=config, **call))

    graph = StateGraph(RetrievalState, input_schema=RetrievalInput, output_schema=RetrievalOutput)
    graph.add_node(
        "retrieve", RunnableLambda(retrieve, afunc=aretrieve, name="kg-rag retrieve").with_config(tags=["kg-rag"])
    )
    graph.add_edge(START, "retrieve")
    graph.add_edge("retrieve", END)
    return graph.compile(name=name)
