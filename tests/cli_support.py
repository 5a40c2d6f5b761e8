"""Helpers for tests that drive the ``kg-rag`` command line in process: run a command and read what it printed,
check a one-line error, index the demo corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg_rag.cli import main
from kg_rag.demo import DEMO_CORPUS


def run(capsys, *argv: str) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of ``kg-rag ARGV``."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(capsys, argv: list[str], message: str, *, stdout_empty: bool = False) -> str:
    """``kg-rag ARGV`` exits 2 with one ``kg-rag: error:`` line holding ``message`` and no traceback (and, with
    ``stdout_empty``, prints nothing else); returns that line."""
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2, err
    assert err.startswith("kg-rag: error: ") and message in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    if stdout_empty:
        assert not out, out
    return err


def refused_by_parser(capsys, argv: list[str], message: str) -> None:
    """argparse refuses ``kg-rag ARGV`` (exit status 2) with ``message``."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and message in err, err


def index_demo(idx: Path) -> Path:
    """The demo corpus indexed at ``idx`` with 16-dimensional fake embeddings."""
    assert main(["index", "--extractions", str(DEMO_CORPUS), "--out", str(idx), "--embeddings", "fake:16", "-q"]) == 0
    return idx
