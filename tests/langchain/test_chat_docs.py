"""``docs/chat-models.md``: its Ollama and vLLM set-ups, run as written against the local OpenAI-compatible test
server (the URL in each ``export`` line is replaced by the test server's), and the error it shows."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from kg_rag.cli import main
from kg_rag.store import DirectoryStore

from ..serving_support import BOW, free_port

DOC = Path(__file__).resolve().parents[2] / "docs" / "chat-models.md"
Q = "Who does Lars Eriksen report to?"


def exports(section: str) -> list[dict[str, str]]:
    """The variables of each ``export`` line in the bash blocks of a ``## section``."""
    text = DOC.read_text()
    body = text.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    found = []
    for block in re.findall(r"```bash\n(.*?)```", body, flags=re.S):
        for line in block.splitlines():
            if line.startswith("export "):
                found.append(dict(word.split("=", 1) for word in shlex.split(line)[1:]))
    return found


@pytest.fixture
def idx(demo_index, tmp_path) -> str:
    DirectoryStore(tmp_path / "idx").save(demo_index)
    return str(tmp_path / "idx")


@pytest.fixture
def clean_env(monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "KG_RAG_CHAT_MODEL"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("section", ["Ollama", "vLLM"])
def test_the_openai_compatible_set_ups_answer(section, idx, clean_env, monkeypatch, capsys):
    from ..openai_server import FakeOpenAI

    variables = [v for v in exports(section) if "OPENAI_BASE_URL" in v]
    assert variables, f"no OpenAI-compatible set-up in the {section} section"
    server = FakeOpenAI().start()
    try:
        for name, value in variables[0].items():
            monkeypatch.setenv(name, server.base_url if name == "OPENAI_BASE_URL" else value)
        assert main(["query", idx, Q, "--embeddings", BOW]) == 0
        assert "answer: " in capsys.readouterr().out
        assert server.requests[-1]["model"] == variables[0]["KG_RAG_CHAT_MODEL"]
    finally:
        server.stop()


def test_the_ollama_provider_string(idx, clean_env, monkeypatch, capsys):
    """``KG_RAG_CHAT_MODEL=ollama:...`` needs no OpenAI key; without langchain-ollama the one error line says
    what to install."""
    (provider,) = [v for v in exports("Ollama") if v.get("KG_RAG_CHAT_MODEL", "").startswith("ollama:")]
    monkeypatch.setenv("KG_RAG_CHAT_MODEL", provider["KG_RAG_CHAT_MODEL"])
    try:
        import langchain_ollama  # noqa: F401
    except ImportError:
        assert main(["query", idx, Q, "--embeddings", BOW]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err[-1].startswith("kg-rag: error: chat model ollama:") and "pip install langchain-ollama" in err[-1]
    else:
        pytest.skip("langchain-ollama is installed: an Ollama server would be needed")


def test_the_error_shown_names_model_and_url(idx, clean_env, monkeypatch, capsys):
    shown = re.search(r"^kg-rag: error: no answer: chat model (\S+) at (\S+) failed: (\w+)", DOC.read_text(), re.M)
    assert shown, "the page shows the error line"
    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    monkeypatch.setenv("OPENAI_API_KEY", "ollama")
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    monkeypatch.setenv("KG_RAG_CHAT_MODEL", shown.group(1).removeprefix("openai:"))
    assert main(["query", idx, Q, "--embeddings", BOW]) == 1
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith(f"kg-rag: error: no answer: chat model {shown.group(1)} at {url}")
    assert f"failed: {shown.group(3)}" in last
