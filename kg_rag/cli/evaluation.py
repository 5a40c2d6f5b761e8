"""``kg-rag eval`` and ``kg-rag bench``: retrieval quality and speed."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kg_rag.cli.common import CLIError, count_at_least, existing_store

DEFAULT_METHODS_DIR = "methods"
"""Where ``eval`` looks for method configs when ``--methods-dir`` is not given (relative to the current folder)."""


def _method_specs(methods: str, methods_dir: str | None) -> tuple[dict, list[str]]:
    """The known method specs and the names ``--methods`` picks, checked before any work: an empty selection or a
    ``--methods-dir`` that is not a folder is an error, not an empty table."""
    from kg_rag.eval.methods import load_method_specs

    if methods_dir is not None and not Path(methods_dir).is_dir():
        what = "no such folder" if not Path(methods_dir).exists() else "not a folder"
        raise CLIError(f"--methods-dir {methods_dir}: {what}")
    folder = methods_dir if methods_dir is not None else DEFAULT_METHODS_DIR
    specs = load_method_specs(folder)
    names = list(specs) if methods.strip() == "all" else [m.strip() for m in methods.split(",") if m.strip()]
    if not names:
        raise CLIError(f"--methods names no method (got {methods!r}); give comma-separated names or 'all'")
    unknown = [n for n in dict.fromkeys(names) if n not in specs]
    if unknown:
        hint = ""
        if methods_dir is None and not Path(folder).is_dir():
            hint = f" (no {folder}/ folder here; pass --methods-dir)"
        raise CLIError(f"unknown method(s) {', '.join(unknown)}; known: {', '.join(sorted(specs))}{hint}")
    return specs, list(dict.fromkeys(names))


def _cutoffs(text: str) -> list[int]:
    try:
        ks = [int(k) for k in text.split(",") if k.strip()]
    except ValueError as exc:
        raise CLIError(f"--k takes comma-separated integers, got {text!r}") from exc
    if not ks or min(ks) < 1:
        raise CLIError(f"--k takes comma-separated integers >= 1, got {text!r}")
    return ks


def cmd_eval(args: argparse.Namespace) -> int:
    from kg_rag.eval.datasets import load_musique_questions
    from kg_rag.eval.runner import evaluate
    from kg_rag.langchain.embeddings import embeddings_for_index

    ks = _cutoffs(args.k)
    specs, names = _method_specs(args.methods, args.methods_dir)
    backend = existing_store(args.index).backend()
    with backend.reader() as view:
        chunks = [c for _, c in view.iter_chunks()]
        embedding_model = view.info().embedding_model
    dataset = args.dataset or ("sec10q" if str(args.questions).lower().endswith(".csv") else "musique")
    if dataset == "sec10q":
        from kg_rag.eval.datasets import load_sec10q_questions

        questions = load_sec10q_questions(args.questions, chunks, limit=args.limit)
    elif dataset == "musique-steps":
        from kg_rag.eval.datasets import single_hop_questions
        from kg_rag.jsonio import load_json

        try:
            steps = single_hop_questions(load_json(args.questions))
        except ValueError as exc:
            raise CLIError(f"{args.questions}: {exc}") from exc
        questions = load_musique_questions(steps, chunks, limit=args.limit)
    else:
        questions = load_musique_questions(args.questions, chunks, limit=args.limit)
    if questions and not any(q.gold_chunks or q.answers or q.numeric_answer is not None for q in questions):
        print(  # every quality column would read "-": say why before the run, not after
            f"warning: {args.questions}: no question has gold passages ('paragraphs' with 'is_supporting') or an "
            "'answer', so only latency is measured",
            file=sys.stderr,
        )
    embeddings = embeddings_for_index(args.embeddings, embedding_model, args.index)
    report = evaluate(questions, backend, embeddings, [specs[n] for n in names], ks, progress=not args.quiet)
    report["index"] = str(args.index)
    report["questions_file"] = str(args.questions)
    report["embedding_model"] = embedding_model
    report["dataset"] = dataset
    if args.out:
        from kg_rag.store.files import atomic_write_bytes

        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(Path(args.out), (json.dumps(report, indent=1) + "\n").encode())
    cols = [f"recall@{k}" for k in ks] + [f"answer_in_context@{max(ks)}", "mrr", "latency_ms_p50", "latency_ms_p95"]
    cols += ["context_ms_p50", "floor_ms_p50", "floor_ratio"]
    width = max(len("method"), *(len(name) for name in report["methods"])) + 2  # long names stay in their column
    print(f"{'method':{width}s}" + "".join(f"{c:>22s}" for c in cols))
    for name, m in report["methods"].items():
        print(f"{name:{width}s}" + "".join(f"{m[c]:22.3f}" if m.get(c) is not None else f"{'-':>22s}" for c in cols))
    return 0


# --------------------------------------------------------------------------- bench
def _parse_sizes(text: str) -> list[tuple[int, int]]:
    try:
        sizes = [tuple(int(x) for x in part.split(":")) for part in text.split(",") if part.strip()]
    except ValueError as exc:
        raise CLIError(f"--sizes takes ENTITIES:EDGES pairs separated by commas, got {text!r}") from exc
    if not sizes or any(len(s) != 2 or s[0] < 2 or s[1] < 1 for s in sizes):
        raise CLIError(f"--sizes takes ENTITIES:EDGES pairs separated by commas, got {text!r}")
    return sizes  # type: ignore[return-value]


def cmd_bench(args: argparse.Namespace) -> int:
    from kg_rag.eval.bench import markdown_table, run_benchmark

    sizes = _parse_sizes(args.sizes) if args.sizes else [(args.entities, args.edges)]
    if any(e < 2 or m < 1 for e, m in sizes) or args.queries < 1:
        raise CLIError("--entities must be >= 2, --edges >= 1, --queries >= 1")
    if args.pg is not None and args.store != "postgres":  # as for `kg-rag demo`: never silently ignored
        raise CLIError("--pg is for --store postgres: add --store postgres, or drop --pg")
    if (args.writes or args.replica) and args.store != "postgres":
        raise CLIError("--writes and --replica measure PostgreSQL: add --store postgres")
    if args.replica and args.pg is not None:
        raise CLIError("--replica starts its own primary and standby: drop --pg")
    if args.writes or args.replica:
        return _bench_writes(args, sizes)
    strategies = tuple(s.strip() for s in args.strategies.split(",") if s.strip())
    results = []
    for entities, edges in sizes:
        results.append(
            run_benchmark(
                entities,
                edges,
                n_queries=args.queries,
                dim=args.dim,
                strategies=strategies,
                seed003_queries=args.seed003_queries,
                store=args.store,
                pg_uri=args.pg,
            )
        )
        if args.out:
            out = Path(args.out)
            out.mkdir(parents=True, exist_ok=True)
            (out / f"bench-{'postgres-' if args.store == 'postgres' else ''}{entities}-{edges}.json").write_text(
                json.dumps(results[-1], indent=1) + "\n"
            )
    if args.json:
        print(json.dumps(results[0] if len(results) == 1 else results, indent=1))
    elif len(results) > 1:
        print(markdown_table(results))
    else:
        for key, value in results[0].items():
            print(f"{key:36s} {value}")
    return 0


def _bench_writes(args: argparse.Namespace, sizes: list[tuple[int, int]]) -> int:
    from kg_rag.eval.bench_writes import run_replica_benchmark, run_write_benchmark

    results = []
    for entities, edges in sizes:
        if args.replica:
            result = run_replica_benchmark(entities, edges, dim=args.dim, trials=args.trials, n_queries=args.queries)
        else:
            result = run_write_benchmark(
                entities,
                edges,
                dim=args.dim,
                trials=args.trials,
                n_queries=args.queries,
                pg_uri=args.pg,
                keep=args.keep,
            )
        results.append(result)
        if args.out:
            out = Path(args.out)
            out.mkdir(parents=True, exist_ok=True)
            kind = "replica" if args.replica else "writes"
            (out / f"bench-postgres-{kind}-{entities}-{edges}.json").write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(results[0] if len(results) == 1 else results, indent=1))
    return 0


def add_parsers(sub) -> None:
    p = sub.add_parser("eval", help="compare retrieval methods on a question set")
    p.add_argument("--questions", required=True, help="questions JSON (MuSiQue/HippoRAG format)")
    p.add_argument("--index", required=True, help="index built from the matching corpus")
    p.add_argument("--methods", default="dense,bm25,seed003,kg-rag", help="comma-separated names, or 'all'")
    p.add_argument(
        "--methods-dir",
        default=None,
        help=f"folder of method configs (*.json); default: {DEFAULT_METHODS_DIR}/ in the current folder, if there",
    )
    p.add_argument("--k", default="2,5", help="cut-offs, comma-separated")
    p.add_argument("--out", help="write the results JSON here")
    p.add_argument("--limit", type=count_at_least(1), default=None, help="only the first N questions")
    p.add_argument(
        "--dataset",
        choices=["musique", "musique-steps", "sec10q"],
        default=None,
        help="question format (default: sec10q for .csv, else musique); musique-steps asks each single-hop step "
        "of the MuSiQue questions on its own, earlier answers written in",
    )
    p.add_argument("--embeddings", default=None, help="query embeddings (default: the model the index records)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("bench", help="speed/memory benchmark on a synthetic graph, vs the seed-003 algorithm")
    p.add_argument("--entities", type=int, default=10_000, help="entities in the synthetic graph (default: 10000)")
    p.add_argument("--edges", type=int, default=100_000, help="relations in the synthetic graph (default: 100000)")
    p.add_argument("--queries", type=int, default=50, help="timed queries (default: 50)")
    p.add_argument("--dim", type=int, default=384, help="embedding dimension of the random vectors")
    p.add_argument("--strategies", default="chain,frequency,path,ppr", help="first one is the reported preset")
    p.add_argument("--seed003-queries", type=int, default=None, help="time the slow reference on fewer queries")
    p.add_argument(
        "--sizes",
        default=None,
        help="several graphs in one run, e.g. 1900:17000,10000:100000,100000:1000000 (prints a table)",
    )
    p.add_argument(
        "--store",
        choices=["directory", "postgres"],
        default="directory",
        help="where the loaded index is served from (postgres: --pg URI, or a server started for the run)",
    )
    p.add_argument("--pg", default=None, help="postgresql:// URI of the server for --store postgres")
    p.add_argument(
        "--writes",
        action="store_true",
        help="with --store postgres: first save, add and delete a 20-chunk document (memory, time), and --trials "
        "rounds of two concurrent writers with eight readers (a --pg URI naming a kg_schema that holds the graph "
        "is reused)",
    )
    p.add_argument(
        "--replica",
        action="store_true",
        help="with --store postgres: the --writes trials with the readers on a streaming hot standby",
    )
    p.add_argument("--trials", type=count_at_least(1), default=10, help="concurrent-writer rounds (default 10)")
    p.add_argument("--keep", action="store_true", help="with --writes: keep the schema (its URI is printed)")
    p.add_argument("--out", default=None, help="folder to write one bench-[postgres-]ENTITIES-EDGES.json per size")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_bench)
