"""``kg-rag export``: write an index's graph as GraphML, Neo4j import files, LangChain GraphDocuments or JSON
lines (see :mod:`kg_rag.export`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from kg_rag.cli.common import CLIError, counted, existing_store


def cmd_export(args: argparse.Namespace) -> int:
    from kg_rag.export import export_graph
    from kg_rag.export.neo4j import BY_TYPE
    from kg_rag.export.rows import check_target

    store = existing_store(args.index)
    try:  # before the index is loaded: a refusal costs nothing
        check_target(Path(args.out), folder=args.format == "neo4j", overwrite=args.force)
    except FileExistsError as exc:
        raise CLIError(f"{exc}".replace("pass overwrite=True to replace it", "use --force to overwrite it")) from None
    kg = store.load().kg  # read only: the index is never written
    summary = export_graph(kg, args.format, args.out, overwrite=args.force)
    if args.json:
        print(json.dumps(summary, indent=1, ensure_ascii=False))
        return 0
    print(f"wrote {summary['entities']} entities and {summary['relations']} relations as {args.format}:")
    for path in summary["files"]:
        if Path(path).name == BY_TYPE:
            n = summary["relation_type_files"]
            print(f"  {path}/  ({counted(n, 'file')}, one per relation type, read by load.cypher)")
        else:
            print(f"  {path}")
    return 0


def add_parsers(sub) -> None:
    from kg_rag.export import FORMATS

    p = sub.add_parser(
        "export",
        help="export the graph: GraphML, Neo4j CSV + Cypher, LangChain GraphDocuments, JSON lines",
        description="Write the index's graph for other tools. Every relation keeps its stored direction and its "
        "type; evidence and provenance travel as attributes. graphml, graph-documents and jsonl write one file; "
        "neo4j writes a folder (entities.csv, relations.csv and import.sh for neo4j-admin; relations_by_type/ and "
        "load.cypher for LOAD CSV). An existing file, or a folder that is not empty, is refused unless --force.",
    )
    p.add_argument("index", help="index directory or postgresql:// URI")
    p.add_argument("--format", required=True, choices=FORMATS, help="output format")
    p.add_argument("--out", required=True, help="output file (a folder for --format neo4j)")
    p.add_argument("--json", action="store_true", help="print what was written as JSON")
    p.add_argument(
        "--force",
        action="store_true",
        help="overwrite an existing output file (for neo4j: write into a folder that is not empty, replacing the "
        "export's own files)",
    )
    p.set_defaults(func=cmd_export)
