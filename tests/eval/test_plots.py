"""The notebook's figures (``kg_rag/eval/plots.py``) are clean on the recorded runs: no title runs into another,
no legend covers a bar (the recall legend hid the dense and bm25 bars), every bar with a value is inside its
axes. Checked on the drawn figure's layout, not on pixels."""

from __future__ import annotations

import json

import pytest

from ..conftest import REPO

matplotlib = pytest.importorskip("matplotlib", reason="the figures need matplotlib (test extra)")
matplotlib.use("Agg")

from kg_rag.eval.plots import overlaps, plot_graph_half, plot_report  # noqa: E402

RUNS = ("musique-R.json", "musique-steps-R.json")  # the recorded runs the notebook draws


def bars_outside(fig) -> list[str]:
    renderer = fig.canvas.get_renderer()
    out = []
    for ax in fig.axes:
        frame = ax.get_window_extent(renderer)
        for bar in ax.patches:
            box = bar.get_window_extent(renderer)
            if bar.get_height() and (box.width <= 0 or box.x0 < frame.x0 - 1 or box.x1 > frame.x1 + 1):
                out.append(f"a bar of {ax.get_title()!r}")
    return out


@pytest.mark.parametrize("run", RUNS)
def test_the_recorded_runs_draw_clean_figures(run, tmp_path):
    import matplotlib.pyplot as plt

    report = json.loads((REPO / "evaluation" / run).read_text())
    for make in (plot_report, plot_graph_half):
        fig = make(report, f"{run}: {report['questions']} questions")
        assert overlaps(fig) == [], overlaps(fig)
        assert bars_outside(fig) == []
        fig.savefig(tmp_path / f"{make.__name__}.png")
        plt.close(fig)


def test_overlaps_sees_a_legend_over_bars():
    """The check itself: the old layout (a legend inside the recall panel's upper left) is caught."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4, 3))
    ax.bar([0, 1, 2], [90, 95, 20], label="Recall@5")
    ax.set_title("a long title that runs far to the right of its panel " * 2)
    ax.legend(loc="upper left")
    found = overlaps(fig)
    assert any("covers a bar" in f for f in found), found
    plt.close(fig)
