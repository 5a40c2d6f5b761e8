"""``kg-rag export``: write an index's graph as GraphML, Neo4j import files, LangChain GraphDocuments or JSON
lines (see :mod:`kg_rag.export`)."""

from __future__ import annotations

import argparse
import json

from kg_rag.cli.common import existing_store


def cmd_export(args: argparse.Namespace) -> int:
    from kg_rag.export import export_graph

    store = existing_store(args.index)
    kg = store.load().kg  # read only: the index is never written
    summary = export_graph(kg, args.format, args.out)
    if args.json:
        print(json.dumps(summary, indent=1, ensure_ascii=False))
    else:
        print(f"wrote {summary['entities']} entities and {summary['relations']} relations as {args.format}:")
        for path in summary["files"]:
            print(f"  {path}")
    return 0


def add_parsers(sub) -> None:
    from kg_rag.export import FORMATS

    p = sub.add_parser(
        "export",
        help="export the graph: GraphML, Neo4j CSV + Cypher, LangChain GraphDocuments, JSON lines",
        description="Write the index's graph for other tools. Every relation keeps its stored direction and its "
        "type; evidence and provenance travel as attributes. graphml, graph-documents and jsonl write one file; "
        "neo4j writes a folder (entities.csv, relations.csv for neo4j-admin, load.cypher for LOAD CSV, import.sh).",
    )
    p.add_argument("index", help="index directory or postgresql:// URI")
    p.add_argument("--format", required=True, choices=FORMATS, help="output format")
    p.add_argument("--out", required=True, help="output file (a folder for --format neo4j)")
    p.add_argument("--json", action="store_true", help="print what was written as JSON")
    p.set_defaults(func=cmd_export)
