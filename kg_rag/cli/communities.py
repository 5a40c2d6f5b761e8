"""``kg-rag communities`` (detect, report, list) and ``kg-rag global`` (map–reduce over the reports)."""

from __future__ import annotations

import argparse
import json
import sys

from kg_rag.cli.common import CHAT_MODEL_HELP, CLIError, count_at_least, counted, existing_store, seconds, shown_id


def _levels(levels: list[int]) -> str:
    return f"levels {', '.join(map(str, levels))}" if levels else "none"


def _reporter(args: argparse.Namespace):
    """The chat-model reporter when one is configured (and not refused), else ``None`` (extractive reports)."""
    from kg_rag.langchain.chat import chat_model_configured

    if args.extractive or not chat_model_configured(args.chat_model):
        return None
    from kg_rag.langchain.chat import default_chat_model
    from kg_rag.langchain.communities import LLMReporter

    return LLMReporter(
        default_chat_model(args.chat_model, timeout=args.llm_timeout), max_concurrency=args.max_concurrency
    )


def cmd_communities(args: argparse.Namespace) -> int:
    from kg_rag.indexing import IndexWriter
    from kg_rag.ingest.extract import usage_summary

    reporter = _reporter(args)
    with IndexWriter(existing_store(args.index), wait=args.wait) as writer:
        communities, stats, kg = writer.refresh_communities(
            rebuild=args.rebuild, reporter=reporter, max_cluster_size=args.max_cluster_size
        )
        out = sys.stderr if args.json else sys.stdout
        kind = "chat model" if reporter is not None else "extractive (no chat model configured)"
        print(f"{stats.summary()}; reports: {kind}", file=out)
        if reporter is not None:
            print("llm usage: " + usage_summary(stats.usage, len(kg.chunks)), file=out)
    if args.level is not None and args.level not in communities.levels:  # known only once they are detected
        raise CLIError(
            f"--level {args.level}: the index has no communities at that level (it has {_levels(communities.levels)})"
        )
    shown = [c for c in communities if args.level is None or c.level == args.level]
    if args.json:
        payload = {
            "communities": [
                {
                    "id": c.id,
                    "level": c.level,
                    "parent": c.parent,
                    "title": c.title,
                    "entities": c.entities,
                    "size": c.size,
                    "rating": c.rating,
                    "stale": c.stale,
                    "extractive": c.extractive,
                    "report": c.report_text(),
                }
                for c in shown
            ],
            "usage": communities.usage,
        }
        print(json.dumps(payload, indent=1, ensure_ascii=False))
        return 0
    _print_communities(shown, every=args.all)
    return 0


SUMMARY_PER_LEVEL = 10
"""Communities listed per level without ``--all``: the largest (a big corpus has thousands)."""


def _print_communities(shown: list, *, every: bool) -> None:
    """One line per community with ``every``; else, per level, how many there are and the largest ones."""
    by_level: dict[int, list] = {}
    for c in shown:
        by_level.setdefault(c.level, []).append(c)
    for level, members in sorted(by_level.items()):
        members.sort(key=lambda c: (-c.size, -c.rating, c.id))
        listed = members if every else members[:SUMMARY_PER_LEVEL]
        if not every:
            stale = sum(c.stale for c in members)
            sizes = sorted(c.size for c in members)
            print(
                f"level {level}: {counted(len(members), 'community', 'communities')}, "
                f"{sizes[0]}-{sizes[-1]} entities each (median {sizes[len(sizes) // 2]})"
                + (f", {stale} stale" if stale else "")
                + (f"; the {len(listed)} largest:" if len(listed) < len(members) else ":")
            )
        for c in listed:
            flags = " (stale)" if c.stale else ""
            print(f"{shown_id(c.id)}  level {c.level}  {c.size:4d} entities  rating {c.rating:4.1f}  {c.title}{flags}")
        if len(listed) < len(members):
            print(f"  ... and {len(members) - len(listed)} more (--all lists every one, --json gives their reports)")


def cmd_global(args: argparse.Namespace) -> int:
    from kg_rag.langchain.chat import NO_CHAT_MODEL, chat_model_configured, default_chat_model
    from kg_rag.langchain.communities import build_global_search, global_usage

    backend = existing_store(args.index).backend()  # the index is checked first: it is what the user named
    with backend.reader() as view:
        levels = sorted({c.level for c in view.list_communities() if c.serves})
    if args.level not in levels:
        if not levels:
            raise CLIError(f"{args.index}: no community reports (run `kg-rag communities {args.index}` first)")
        raise CLIError(f"--level {args.level}: no community reports at that level (the index has {_levels(levels)})")
    if not chat_model_configured(args.chat_model):
        raise CLIError(f"global search needs a chat model: {NO_CHAT_MODEL}")
    graph = build_global_search(backend, default_chat_model(args.chat_model, max_retries=2), level=args.level)
    out = graph.invoke({"question": args.question})
    usage = global_usage(out)
    if args.json:
        print(
            json.dumps(
                {"answer": out["answer"], "communities": out.get("communities", []), "usage": usage},
                indent=1,
                ensure_ascii=False,
            )
        )
        return 0
    print(out["answer"])
    print()
    print("communities: " + (", ".join(map(shown_id, out.get("communities", []))) or "-"))
    print(
        f"llm usage: {usage.get('calls', 0)} chat calls, {usage.get('prompt_tokens', 0)} prompt + "
        f"{usage.get('completion_tokens', 0)} completion tokens"
    )
    return 0


def add_parsers(sub) -> None:
    p = sub.add_parser("communities", help="detect communities, write their reports (only where needed), list them")
    p.add_argument("index", help="index directory or postgresql:// URI")
    p.add_argument("--level", type=count_at_least(0), default=None, help="list only this level (0 = coarsest)")
    p.add_argument("--json", action="store_true", help='print {"communities": [{id, level, title, entities, report}]}')
    p.add_argument(
        "--all",
        action="store_true",
        help=f"list every community (default: per level, the count and the {SUMMARY_PER_LEVEL} largest)",
    )
    p.add_argument("--rebuild", action="store_true", help="detect from scratch and rewrite every report")
    p.add_argument("--extractive", action="store_true", help="extractive reports even when a chat model is set")
    p.add_argument(
        "--max-cluster-size", type=count_at_least(2), default=None, help="split communities larger than this (12)"
    )
    p.add_argument("--chat-model", default=None, help=CHAT_MODEL_HELP)
    p.add_argument("--llm-timeout", type=float, default=None, help="seconds per chat call ($KG_RAG_LLM_TIMEOUT or 60)")
    p.add_argument("--max-concurrency", type=count_at_least(1), default=4, help="parallel report calls (default 4)")
    p.add_argument("--wait", type=seconds, default=None, help="seconds to wait for another writer (default 60)")
    p.set_defaults(func=cmd_communities)

    p = sub.add_parser("global", help="answer a question about the whole collection from community reports")
    p.add_argument("index", help="index directory or postgresql:// URI")
    p.add_argument("question", help="the question")
    p.add_argument(
        "--level", type=count_at_least(0), default=0, help="community level to search (default 0, the coarsest)"
    )
    p.add_argument("--chat-model", default=None, help=CHAT_MODEL_HELP)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_global)
