"""kg-rag: build a typed, directed knowledge graph from documents and retrieve through it.

Subcommands: ``index``, ``stats``, ``delete``, ``copy``, ``retype``, ``entities``, ``query``, ``communities``,
``global``, ``eval``, ``bench``, ``demo``, ``pg``, ``export``, ``serve``, ``mcp``.

Every expected failure (bad path, bad file, missing configuration, a locked index) prints one line to stderr
and exits with status 2 — no traceback. ``-v`` shows progress logging; ``--debug`` shows tracebacks.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import NoReturn

from kg_rag.cli import (
    communities,
    entities,
    evaluation,
    exporting,
    indexing,
    maintenance,
    querying,
    server,
    serving,
    tour,
)
from kg_rag.cli.common import CLIError, one_line
from kg_rag.errors import KGRagError


class _Version(argparse.Action):
    """``--version``: the installed distribution's version (pyproject.toml), looked up only when asked for."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        import kg_rag

        print(f"{parser.prog} {kg_rag.__version__}")
        parser.exit()


class _Parser(argparse.ArgumentParser):
    """A usage mistake is one line that names the command's help, not the whole usage block (subcommands' parsers
    are of the same class)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="kg-rag", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action=_Version)
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress (INFO)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in (
        indexing,
        maintenance,
        entities,
        querying,
        communities,
        evaluation,
        tour,
        server,
        exporting,
        serving,
    ):
        module.add_parsers(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()
        return code
    except BrokenPipeError:  # `kg-rag stats IDX | head`: the reader is gone, which is not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("kg-rag: interrupted", file=sys.stderr)
        return 130
    except (CLIError, KGRagError, ValueError, OSError) as exc:
        if args.debug:
            raise
        msg = one_line(exc)
        if isinstance(exc, FileNotFoundError) and exc.filename and str(exc.filename) not in msg:
            msg = f"{exc.filename}: {exc.strerror or 'no such file'}"
        print(f"kg-rag: error: {msg}", file=sys.stderr)
        return 2
