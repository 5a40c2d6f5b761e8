"""``kg-rag bench --store postgres --writes`` on a small graph: it reports the first save, the add and delete of a
20-chunk document in fresh writer processes, and concurrent-writer trials with nothing lost."""

from __future__ import annotations

import json

from kg_rag.cli import main


def test_the_write_benchmark_reports_every_figure(pg_server, capsys, tmp_path):
    code = main(
        ["bench", "--store", "postgres", "--writes", "--entities", "300", "--edges", "2000", "--trials", "1",
         "--queries", "5", "--pg", pg_server, "--out", str(tmp_path)]
    )  # fmt: skip
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert json.loads((tmp_path / "bench-postgres-writes-300-2000.json").read_text()) == result
    assert result["first_save"]["kind"] == "save" and result["first_save_s"] > 0
    for write in ("add_document", "delete_document"):
        figures = result[write]
        assert "error" not in figures, figures
        assert figures["path"] == "rows" and figures["peak_rss_mb"] > 0
        assert figures["wall_without_embedding_s"] <= figures["wall_s"]
    assert result["delete_document"]["removed"]["chunks"] == 20
    trials = result["concurrency"]
    assert (trials["documents_written"], trials["documents_lost"], trials["writer_errors"]) == (2, 0, 0)
    assert trials["reader_errors"] == 0 and trials["reader_queries"] > 0


def test_the_write_benchmarks_need_postgres(capsys):
    assert main(["bench", "--writes"]) == 2
    assert "--store postgres" in capsys.readouterr().err
    assert main(["bench", "--store", "postgres", "--replica", "--pg", "postgresql://x/y"]) == 2
    assert "starts its own primary" in capsys.readouterr().err
