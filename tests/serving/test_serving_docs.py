"""What docs/serving.md says the served graphs take is what they take (the server test runs both input forms),
and what ``langgraph dev`` leaves in a checkout is ignored by git."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from ..conftest import REPO


def test_the_answer_graph_row_names_both_inputs():
    row = next(line for line in (REPO / "docs" / "serving.md").read_text().splitlines() if "`kg_rag_answer` |" in line)
    input_cell = row.split("|")[3]
    assert '{"question": "...", "history": [...]}' in input_cell and '{"messages": [...]}' in input_cell
    assert "appended to `messages`" in row


def test_langgraph_dev_state_is_ignored_by_git():
    if not shutil.which("git") or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    done = subprocess.run(
        ["git", "check-ignore", "-q", ".langgraph_api/.langgraph_checkpoint.1.pckl"], cwd=REPO, check=False
    )
    assert done.returncode == 0, ".langgraph_api/ (left by `langgraph dev`) is not in .gitignore"
