"""The PostgreSQL backend through the command line and across processes, on a real server the suite starts.

(The store-level behaviour — every protocol operation, writes, locking — is the compliance suite in
``test_compliance.py``.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kg_rag.cli import main
from kg_rag.demo import DEMO_CORPUS
from kg_rag.store import DirectoryStore, open_store

from ..conftest import require_musique
from .test_locking import extraction_file

KG_RAG = [sys.executable, "-m", "kg_rag.cli"]
BOW = "kg_rag.testing:BagOfWordsEmbeddings"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_index_eval_update_delete_on_postgres(pg_schema_uri, capsys, tmp_path):
    """The README flow with a postgresql:// URI in place of a directory."""
    uri = pg_schema_uri
    code, out, _ = run(capsys, "index", "--extractions", str(DEMO_CORPUS), "--out", uri, "--embeddings", "fake:16")
    assert code == 0 and "indexed 12 chunks" in out
    stats = json.loads(run(capsys, "stats", uri, "--json")[1])
    assert (stats["chunks"], stats["documents"], stats["relations"]) == (12, 12, 28)
    code, out, _ = run(
        capsys, "query", uri, "Who does Lars Eriksen report to?", "--embeddings", "fake:16", "--no-answer"
    )
    assert code == 0 and "-[REPORTS_TO]->" in out
    extra = extraction_file(tmp_path / "extra.json", "extra", 3)
    code, out, _ = run(
        capsys, "index", "--extractions", str(extra), "--out", uri, "--update", "--embeddings", "fake:16"
    )
    assert code == 0
    listed = run(capsys, "stats", uri, "--docs")[1].splitlines()
    assert len(listed) == 15 and listed[0].startswith("doc-01\t")
    code, out, _ = run(capsys, "delete", uri, "--doc", "doc-01", "--doc", "extra-000", "--embeddings", "fake:16")
    assert code == 0 and "removed 2 documents" in out
    assert json.loads(run(capsys, "stats", uri, "--json")[1])["documents"] == 13


def test_musique_index_and_eval_on_postgres(pg_schema_uri, capsys, tmp_path):
    """`kg-rag index --corpus … --openie … --out postgresql://…` then `kg-rag eval --index postgresql://…`."""
    data = require_musique()
    uri = pg_schema_uri
    code, _, _ = run(
        capsys,
        "index",
        "--corpus",
        str(data / "corpus.json"),
        "--openie",
        str(data / "openie_gpt-3.5-turbo-1106.json"),
        "--out",
        uri,
        "--embeddings",
        "fake:16",
        "-q",
    )
    assert code == 0
    assert json.loads(run(capsys, "stats", uri, "--json")[1])["chunks"] == 1890
    report = tmp_path / "R.json"
    code, out, _ = run(
        capsys,
        "eval",
        "--questions",
        str(data / "questions.json"),
        "--index",
        uri,
        "--methods",
        "dense,bm25,kg-rag",
        "--k",
        "2,5",
        "--limit",
        "4",
        "--embeddings",
        "fake:16",
        "-q",
        "--out",
        str(report),
    )
    assert code == 0
    methods = json.loads(report.read_text())["methods"]
    assert set(methods) == {"dense", "bm25", "kg-rag"}
    assert methods["kg-rag"]["context_relation_rows"] is not None and methods["dense"]["gold_relation_recall"] is None


def test_copy_both_ways_gives_the_same_answers(pg_schema_uri, demo_index, tmp_path, capsys):
    from kg_rag import EntityBasedKGRAG
    from kg_rag.testing import BagOfWordsEmbeddings

    DirectoryStore(tmp_path / "a").save(demo_index)
    assert run(capsys, "copy", str(tmp_path / "a"), pg_schema_uri)[0] == 0
    code, _, err = run(capsys, "copy", str(tmp_path / "a"), pg_schema_uri)
    assert code == 2 and "already holds an index" in err
    assert run(capsys, "copy", pg_schema_uri, str(tmp_path / "b"))[0] == 0
    emb = BagOfWordsEmbeddings()
    question = "Who does Lars Eriksen report to, and which directive replaced Directive 2019-03?"
    contexts = [
        EntityBasedKGRAG.from_index(location, emb).retrieve(question).context
        for location in (str(tmp_path / "a"), pg_schema_uri, str(tmp_path / "b"))
    ]
    assert contexts[0] == contexts[1] == contexts[2]


def test_two_concurrent_updates_of_400_documents_both_land(pg_schema_uri, tmp_path):
    base = extraction_file(tmp_path / "base.json", "base", 4)
    subprocess.run(
        [*KG_RAG, "index", "--extractions", str(base), "--out", pg_schema_uri, "--embeddings", "fake:16"],
        check=True,
        capture_output=True,
    )
    files = [extraction_file(tmp_path / f"w{w}.json", f"writer{w}", 400) for w in (0, 1)]
    env = {**os.environ, "KG_RAG_LOCK_WAIT": "300"}
    procs = [
        subprocess.Popen(
            [
                *KG_RAG,
                "index",
                "--extractions",
                str(f),
                "--out",
                pg_schema_uri,
                "--update",
                "--embeddings",
                "fake:16",
                "-q",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for f in files
    ]
    results = [(p.wait(timeout=600), p.stderr.read()) for p in procs]
    assert [code for code, _ in results] == [0, 0], results
    docs = {d["id"] for d in open_store(pg_schema_uri).documents()}
    assert len(docs) == 804
    assert {f"writer{w}-{i:03d}" for w in (0, 1) for i in range(400)} <= docs


def test_readers_in_another_process_see_committed_writes_without_reloading(pg_schema_uri, tmp_path):
    from kg_rag import EntityBasedKGRAG
    from kg_rag.testing import BagOfWordsEmbeddings

    first = extraction_file(tmp_path / "first.json", "first", 2)
    subprocess.run(
        [
            *KG_RAG,
            "index",
            "--extractions",
            str(first),
            "--out",
            pg_schema_uri,
            "--embeddings",
            BOW,
        ],
        check=True,
        capture_output=True,
        cwd=Path(__file__).parents[2],
    )
    retriever = EntityBasedKGRAG.from_index(pg_schema_uri, BagOfWordsEmbeddings(), k=5)
    assert "later Order 0" not in retriever.retrieve("later Order 0 supersedes what?").context
    later = extraction_file(tmp_path / "later.json", "later", 2)
    subprocess.run(
        [
            *KG_RAG,
            "index",
            "--extractions",
            str(later),
            "--out",
            pg_schema_uri,
            "--update",
            "--embeddings",
            BOW,
        ],
        check=True,
        capture_output=True,
        cwd=Path(__file__).parents[2],
    )
    result = retriever.retrieve("later Order 0 supersedes what?")  # same retriever, no refresh()
    assert "later Order 0 -[SUPERSEDES]-> later Order 1" in result.context


def test_postgres_errors_are_one_line(tmp_path, capsys):
    bad = f"postgresql://postgres@/postgres?host={tmp_path}&port=1"
    code, _, err = run(capsys, "stats", bad)
    assert code == 2 and err.startswith("kg-rag: error: cannot connect to PostgreSQL") and len(err.splitlines()) == 1
    code, _, err = run(capsys, "stats", "postgresql://postgres@/postgres?kg_schema=Bad-Name")
    assert code == 2 and "schema name must match" in err
    code, _, err = run(capsys, "stats", "postgresql://postgres@/postgres?kg_search=fast")
    assert code == 2 and "kg_search must be one of auto, exact, hnsw" in err


def test_stats_of_an_empty_database_says_so(pg_schema_uri, capsys):
    code, _, err = run(capsys, "stats", pg_schema_uri)
    assert code == 2 and "no kg-rag index there" in err


def test_demo_runs_on_postgres(tmp_path):
    proc = subprocess.run(
        [*KG_RAG, "demo", "--store", "postgres", "--out", str(tmp_path / "d"), "--embeddings", BOW, "-q"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if "PostgreSQL did not start" in proc.stderr:
        pytest.skip(proc.stderr.strip())
    assert proc.returncode == 0, proc.stderr
    assert (
        "PostgreSQL schema kg_rag_demo" in proc.stdout
        and "Directive 2019-03 <-[SUPERSEDES]- Directive 2023-07" in proc.stdout
    )
    assert not (tmp_path / "d" / "pgdata" / "postmaster.pid").exists()  # the demo stopped its server


def test_bench_on_postgres_serves_from_the_database(pg_server, capsys, tmp_path):
    code, out, err = run(
        capsys,
        "bench",
        "--entities", "300", "--edges", "1500", "--queries", "5", "--strategies", "chain",
        "--store", "postgres", "--pg", pg_server, "--json", "--out", str(tmp_path),
    )  # fmt: skip
    assert code == 0, err
    result = json.loads(out)
    assert result["store"] == "postgres" and result["edges"] == 1500
    assert result["database_mb"] > 0 and result["prewarmed_mb"] > 0  # measured on a warm buffer cache
    assert result["loaded_latency_ms_p50"] > 0 and result["peak_rss_mb"] > 0
    assert (tmp_path / "bench-postgres-300-1500.json").exists()
    with open_store(pg_server).connect(autocommit=True) as conn:  # the bench's schema is dropped afterwards
        left = conn.execute("SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'bench_%'").fetchone()[0]
    assert left == 0


def test_hostile_strings_are_stored_and_a_mistyped_schema_is_one_line(pg_schema_uri, tmp_path, capsys):
    """A NUL byte or a lone surrogate in the input (truncated LLM or JavaScript output) is repaired at import,
    so PostgreSQL stores it; a URI naming a schema with no index is a one-line error, not a traceback."""
    from kg_rag import EntityBasedKGRAG, IndexNotFoundError

    passage = "Caf\ud800 Alpha is in Beta."
    oie = {"docs": [{"idx": 0, "passage": passage, "extracted_triples": [["Caf\ud800 Alpha", "is in", "Be\x00ta"]]}]}
    (tmp_path / "oie.json").write_text(json.dumps(oie))
    code, out, err = run(
        capsys, "index", "--openie", str(tmp_path / "oie.json"), "--embeddings", "fake:16", "--out", pg_schema_uri, "-q"
    )
    assert code == 0, err
    code, out, err = run(capsys, "query", pg_schema_uri, "Alpha", "--no-answer")
    assert code == 0 and "Caf\ufffd Alpha" in out and "Beta" in out and "\x00" not in out
    missing = pg_schema_uri.rsplit("=", 1)[0] + "=no_such_schema"
    code, out, err = run(capsys, "query", missing, "Alpha", "--no-answer")
    assert code == 2 and "no kg-rag index there" in err and "Traceback" not in err
    with pytest.raises(IndexNotFoundError):
        EntityBasedKGRAG.from_index(missing)
    from kg_rag.store import open_store

    store = open_store(missing)
    for read in (store.load, store.stats, store.documents):  # not a psycopg UndefinedTable
        with pytest.raises(IndexNotFoundError, match="no kg-rag index there"):
            read()


def test_a_uri_option_holding_a_space_reaches_the_server(pg_server):
    """Issue 46: ``options=-c%20statement_timeout%3D4321`` was re-encoded with ``+`` for the space, which libpq reads
    as a plus sign, so the connection failed."""
    from kg_rag.store.postgres.store import parse_location

    uri = f"{pg_server}&options=-c%20statement_timeout%3D4321&kg_schema=kg_x"
    conninfo, schema, _ = parse_location(uri)
    assert "options=-c%20statement_timeout%3D4321" in conninfo and schema == "kg_x"
    with open_store(uri).connect(autocommit=True) as conn:
        assert conn.execute("SHOW statement_timeout").fetchone()[0] == "4321ms"
