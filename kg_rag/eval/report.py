"""Markdown tables from an evaluation results file: ``python -m kg_rag.eval.report R.json``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def _pct(value: Any) -> str:
    return "–" if not isinstance(value, (int, float)) or value != value else f"{100 * value:.1f}"


def _section(title: str, columns: str) -> list[str]:
    """A titled table's first lines: the title, then the header of ``method`` and ``columns`` (comma-separated)."""
    head = ["method", *columns.split(", ")]
    return ["", title, "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]


def markdown_tables(report: dict[str, Any]) -> str:
    ks = report.get("k", [2, 5])
    kmax = max(ks)
    methods = report["methods"]
    extra = [
        key
        for key in (f"graph_doc_f1@{kmax}", f"graph_connection_f1@{kmax}")
        if any(m.get(key) is not None for m in methods.values())
    ]
    head = ["method"] + [f"R@{k}" for k in ks] + [f"answer-in-context@{kmax}", "MRR", "p50 ms", "p95 ms"]
    head += [key.replace("_", " ") for key in extra]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, m in methods.items():
        row = [f"`{name}`"] + [_pct(m.get(f"recall@{k}")) for k in ks]
        mrr = m.get("mrr")
        row += [
            _pct(m.get(f"answer_in_context@{kmax}")),
            "–" if mrr is None else f"{mrr:.3f}",
            f"{m.get('latency_ms_p50', float('nan')):.2f}",
            f"{m.get('latency_ms_p95', float('nan')):.2f}",
        ]
        row += [_pct(m.get(key)) for key in extra]
        lines.append("| " + " | ".join(row) + " |")
    graph = [name for name, m in methods.items() if m.get("context_relation_precision") is not None]
    if graph:
        lines += _section(
            "Graph half of the context (relationship rows and paths; definitions in evaluation/README.md):",
            "rows, precision, gold-relation recall, reachable, typed rows, gold paths, answer in graph, tokens",
        )
        for name in graph:
            m = methods[name]
            rows, tokens = m.get("context_relation_rows"), m.get("context_tokens")
            lines.append(
                "| "
                + " | ".join(
                    [
                        f"`{name}`",
                        "–" if rows is None else f"{rows:.1f}",
                        _pct(m.get("context_relation_precision")),
                        _pct(m.get("gold_relation_recall")),
                        _pct(m.get("gold_relation_reachable")),
                        _pct(m.get("typed_relation_share")),
                        _pct(m.get("gold_path_share")),
                        _pct(m.get("answer_in_graph_context")),
                        "–" if tokens is None else f"{tokens:.0f}",
                    ]
                )
                + " |"
            )
    chained = [name for name, m in methods.items() if m.get("chain_coverage") is not None]
    if chained:
        lines += _section(
            "The chain that answers, in the graph half (MuSiQue's decomposition; definitions in evaluation/README.md):",
            "chain coverage, complete chains, rows on the chain, shown relations on the chain, chain reachable, rows",
        )
        for name in chained:
            m = methods[name]
            rows = m.get("context_relation_rows")
            keys = ("chain_coverage", "chain_complete", "chain_rows", "chain_shown", "chain_reachable")
            cells = [_pct(m.get(key)) for key in keys]
            lines.append("| " + " | ".join([f"`{name}`", *cells, "–" if rows is None else f"{rows:.1f}"]) + " |")
    groups = sorted({g for m in methods.values() for g in m.get("by_group", {})})
    if groups:
        metric = (
            f"recall@{kmax}"
            if any(m.get(f"recall@{kmax}") is not None for m in methods.values())
            else f"answer_in_context@{kmax}"
        )
        lines += ["", f"{metric} by group (questions per group in brackets):", ""]
        counts = {
            g: next(m["by_group"][g]["questions"] for m in methods.values() if g in m.get("by_group", {}))
            for g in groups
        }
        head = ["method"] + [f"{g} ({counts[g]})" for g in groups]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for name, m in methods.items():
            row = [f"`{name}`"] + [_pct(m.get("by_group", {}).get(g, {}).get(metric)) for g in groups]
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    if len(args) != 1:
        sys.stderr.write("usage: python -m kg_rag.eval.report R.json\n")
        return 2
    sys.stdout.write(markdown_tables(json.loads(Path(args[0]).read_text(encoding="utf-8"))) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
