"""``kg-rag --version`` prints the installed distribution's version."""

from __future__ import annotations

from importlib.metadata import version

import pytest

from kg_rag.cli import main


def test_version_is_the_package_metadata_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"kg-rag {version('kg-rag')}"
