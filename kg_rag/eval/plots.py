"""Figures of an evaluation report (``kg-rag eval`` JSON), as ``notebooks/evaluation.ipynb`` shows them.

Each figure has one title above its panels, short panel titles, and its legends outside the axes (methods on the
right, what hatches and dots mean below them), so no legend covers a bar and no title runs into another
(:func:`overlaps` checks it).
matplotlib is imported when a figure is made (it is a test/notebook dependency, not the library's).
"""

from __future__ import annotations

from typing import Any

HATCHES = ("", "//", "..", "xx")
GRAPH_METRICS = {
    "context_relation_precision": "precision",
    "gold_relation_recall": "gold-relation recall",
    "typed_relation_share": "typed rows",
    "gold_path_share": "gold paths",
}


def method_colours(methods: list[str]) -> dict[str, Any]:
    """One distinct colour per method, the same in every figure: tab20's ten strong colours first, then their
    light shades (twenty in all)."""
    import matplotlib.pyplot as plt

    cmap = plt.get_cmap("tab20")
    order = list(range(0, 20, 2)) + list(range(1, 20, 2))
    return {m: cmap(order[i % 20]) for i, m in enumerate(methods)}


def plot_report(report: dict[str, Any], title: str) -> Any:
    """Recall@k per method, recall by hop count, and latency; one colour per method."""
    import matplotlib.pyplot as plt
    from matplotlib.artist import Artist
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    methods = [m for m in report["methods"] if report["methods"][m].get(f"recall@{max(report['k'])}") is not None]
    colours = method_colours(list(report["methods"]))  # a method keeps its colour in every figure
    ks = list(report["k"])
    kmax = max(ks)
    fig, axes = plt.subplots(1, 3, figsize=(17, 5.2), layout="constrained")
    fig.suptitle(title)
    x = range(len(methods))
    width = 0.8 / len(ks)
    for i, k in enumerate(ks):
        axes[0].bar(
            [v + i * width for v in x],
            [100 * report["methods"][m][f"recall@{k}"] for m in methods],
            width,
            color=[colours[m] for m in methods],
            edgecolor="black",
            linewidth=0.4,
            hatch=HATCHES[i % len(HATCHES)],
        )
    axes[0].set_xticks([v + width * (len(ks) - 1) / 2 for v in x], methods, rotation=60, ha="right", fontsize=8)
    axes[0].set_ylabel("%")
    axes[0].set_ylim(0, 100)
    axes[0].set_title("Recall@k")
    groups = sorted({g for m in methods for g in report["methods"][m].get("by_group", {})})
    for m in methods:
        by_group = report["methods"][m].get("by_group", {})
        axes[1].plot(
            groups,
            [100 * by_group.get(g, {}).get(f"recall@{kmax}", float("nan")) for g in groups],
            marker="o",
            color=colours[m],
        )
    axes[1].set_ylim(0, 100)
    axes[1].set_ylabel("%")
    axes[1].set_title(f"Recall@{kmax} by hop count")
    axes[2].bar(x, [report["methods"][m]["latency_ms_p50"] for m in methods], color=[colours[m] for m in methods])
    axes[2].scatter(x, [report["methods"][m]["latency_ms_p95"] for m in methods], color="k", zorder=3)
    axes[2].set_xticks(list(x), methods, rotation=60, ha="right", fontsize=8)
    axes[2].set_yscale("log")
    axes[2].set_ylabel("ms")
    axes[2].set_title("Retrieval latency")
    fig.legend(
        [Patch(color=colours[m]) for m in methods], methods, loc="outside right upper", fontsize=9, title="method"
    )
    key: list[Artist] = [
        Patch(facecolor="white", edgecolor="black", hatch=HATCHES[i % len(HATCHES)]) for i in range(len(ks))
    ]
    key += [Patch(color="0.6"), Line2D([], [], color="k", marker="o", linestyle="")]
    labels = [f"Recall@{k}" for k in ks] + ["latency p50", "latency p95"]
    fig.legend(key, labels, loc="outside lower center", ncols=len(labels), fontsize=9)
    return fig


def plot_graph_half(report: dict[str, Any], title: str) -> Any:
    """The graph half of the context per graph method: precision, gold-relation recall, typed rows, gold paths."""
    import matplotlib.pyplot as plt

    methods = [m for m in report["methods"] if report["methods"][m].get("context_relation_precision") is not None]
    colours = method_colours(list(report["methods"]))
    fig, ax = plt.subplots(figsize=(13, 4.5), layout="constrained")
    width = 0.8 / max(len(methods), 1)
    for i, m in enumerate(methods):
        ax.bar(
            [v + i * width for v in range(len(GRAPH_METRICS))],
            [100 * (report["methods"][m].get(key) or 0.0) for key in GRAPH_METRICS],
            width,
            color=colours[m],
            label=m,
        )
    ax.set_xticks([v + 0.4 - width / 2 for v in range(len(GRAPH_METRICS))], list(GRAPH_METRICS.values()))
    ax.set_ylabel("%")
    ax.set_ylim(0, 100)
    ax.set_title(f"{title}: the graph half of the context")
    if methods:
        fig.legend(loc="outside right upper", fontsize=9, title="method")
    return fig


def overlaps(fig: Any) -> list[str]:
    """What in a drawn figure covers what: two titles (or a title and a legend) that overlap, and bars a legend
    covers. Empty for a clean figure."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts = [fig._suptitle] if getattr(fig, "_suptitle", None) is not None else []
    texts += [ax.title for ax in fig.axes if ax.get_title()]
    boxes = [(f"title {t.get_text()!r}", t.get_window_extent(renderer)) for t in texts]
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    boxes += [(f"legend {i}", leg.get_window_extent(renderer)) for i, leg in enumerate(legends)]
    found = [f"{a} and {b}" for i, (a, ba) in enumerate(boxes) for b, bb in boxes[i + 1 :] if ba.overlaps(bb)]
    from matplotlib.transforms import Bbox

    for i, leg in enumerate(legends):
        box = leg.get_window_extent(renderer)
        for ax in fig.axes:
            frame = ax.get_window_extent(renderer)
            for bar in ax.patches:  # the part of a bar its axes show (a log axis clips a bar's foot)
                shown = Bbox.intersection(bar.get_window_extent(renderer), frame)
                if bar.get_height() and shown is not None and shown.overlaps(box):
                    found.append(f"legend {i} covers a bar of {ax.get_title()!r}")
    return found
