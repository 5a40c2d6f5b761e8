"""Fixtures of the command-line tests: the demo corpus indexed once per module, and no chat model configured."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..cli_support import index_demo


@pytest.fixture(scope="module")
def demo_idx(tmp_path_factory) -> Path:
    """The demo corpus indexed with fake embeddings (module-wide: copy it before changing it)."""
    return index_demo(tmp_path_factory.mktemp("cli") / "idx")


@pytest.fixture
def no_chat_model(monkeypatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "KG_RAG_CHAT_MODEL"):
        monkeypatch.delenv(name, raising=False)
