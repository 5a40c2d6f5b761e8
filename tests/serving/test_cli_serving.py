"""``kg-rag serve`` and ``kg-rag mcp`` refuse what they cannot serve with one line and status 2, before any
server starts; ``kg-rag serve`` serves the page until stopped."""

from __future__ import annotations

import json
import sys
import urllib.request

import pytest

from kg_rag.cli import main

from ..serving_support import BOW, free_port, running


@pytest.mark.parametrize("command", ["serve", "mcp"])
def test_a_missing_index_is_one_line_and_status_2(command, tmp_path, capsys):
    assert main([command, str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"kg-rag: error: {tmp_path / 'nope'}: no such index directory"]


def test_an_unknown_preset_is_refused(served_index, capsys):
    assert main(["serve", str(served_index), "--preset", "nope", "--embeddings", BOW]) == 2
    assert "unknown preset 'nope'" in capsys.readouterr().err


def test_kg_rag_serve_serves_the_page_and_the_api(served_index):
    port = free_port()
    cmd = [sys.executable, "-m", "kg_rag.cli", "serve", str(served_index), "--port", str(port), "--embeddings", BOW]
    url = f"http://127.0.0.1:{port}"
    with running(cmd, url + "/api/overview"):
        with urllib.request.urlopen(url + "/", timeout=10) as res:
            assert "kg-rag explorer" in res.read().decode()
        with urllib.request.urlopen(url + "/api/overview", timeout=10) as res:
            overview = json.loads(res.read())
        assert overview["counts"]["relations"] == 28 and overview["counts"]["communities"] > 0
        assert overview["communities"][0]["size"] >= overview["communities"][-1]["size"]
