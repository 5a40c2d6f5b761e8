"""``docs/extending.md``: every ```python block runs as written, in a fresh interpreter, with no key or model."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "extending.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def test_each_seam_has_an_example():
    assert len(BLOCKS) == 4


@pytest.mark.parametrize("n", range(len(BLOCKS)))
def test_extending_example_runs(n, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "KG_RAG_CHAT_MODEL")}
    out = subprocess.run(
        [sys.executable, "-c", BLOCKS[n]], capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip()
