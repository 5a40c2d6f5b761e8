"""``kg-rag pg`` (``kg_rag/cli/server.py``): a folder that is not PostgreSQL's is refused before it is touched, ``pg
stop`` says when nothing ran, and a shared or reserved schema is never written into or dropped."""

from __future__ import annotations

import os
import subprocess
import sys
from functools import partial
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from kg_rag.cli import build_parser, main

from .. import cli_support

one_line_error = partial(cli_support.one_line_error, stdout_empty=True)


def snapshot(path: Path) -> tuple[int, int, int, list[str]]:
    st = path.stat()
    return st.st_uid, st.st_gid, st.st_mode, sorted(p.name for p in path.iterdir())


# --------------------------------------------------------------------------- pg start: foreign folders
def test_start_refuses_a_folder_with_other_files_and_leaves_it_alone(tmp_path, capsys):
    docs = tmp_path / "documents"
    docs.mkdir()
    (docs / "letter.txt").write_text("dear user")
    before, parent_before = snapshot(docs), snapshot(tmp_path)

    one_line_error(capsys, ["pg", "start", str(docs)], "not empty and not a PostgreSQL data directory")

    assert snapshot(docs) == before  # owner, group, mode and contents unchanged
    assert snapshot(tmp_path) == parent_before  # no g+rx,o+rx granted on the way up either
    assert (docs / "letter.txt").read_text() == "dear user"


def test_start_refuses_a_file(tmp_path, capsys):
    f = tmp_path / "notes.txt"
    f.write_text("x")
    one_line_error(capsys, ["pg", "start", str(f)], "not a folder")
    assert f.read_text() == "x"


def test_pg_help_documents_what_start_takes_and_the_exit_status():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    text = " ".join(sub.choices["pg"].format_help().split())
    assert "refuses any other folder" in text and "exit with status 2 when no server is running" in text


# --------------------------------------------------------------------------- pg stop with nothing running
@pytest.mark.parametrize("make", ["missing", "empty"])
def test_stop_with_nothing_running_is_an_error_like_uri(tmp_path, capsys, make):
    folder = tmp_path / "pgdata"
    if make == "empty":
        folder.mkdir()
    stop_err = one_line_error(capsys, ["pg", "stop", str(folder)], "no PostgreSQL running there")
    uri_err = one_line_error(capsys, ["pg", "uri", str(folder)], "no PostgreSQL running there")
    assert stop_err == uri_err
    assert folder.exists() == (make == "empty")  # stop creates nothing


def test_stop_after_a_crash_leaves_the_stale_pid_file_and_says_nothing_ran(tmp_path, capsys):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (tmp_path / "PG_VERSION").write_text("16\n")
    (tmp_path / "postmaster.pid").write_text(f"{dead.pid}\n{tmp_path}\n0\n5432\n")
    one_line_error(capsys, ["pg", "stop", str(tmp_path)], "no PostgreSQL running there")
    assert (tmp_path / "postmaster.pid").exists()


# --------------------------------------------------------------------------- pg with a real server
def _pgdata(uri: str) -> Path:
    return Path(parse_qs(urlsplit(uri).query)["host"][0])


def test_start_on_an_existing_data_directory_attaches_to_it(pg_server, capsys):
    pgdata = _pgdata(pg_server)
    assert (pgdata / "PG_VERSION").exists() and any(pgdata.iterdir())
    assert main(["pg", "start", str(pgdata)]) == 0
    assert capsys.readouterr().out.strip() == pg_server
    assert main(["pg", "uri", str(pgdata)]) == 0
    assert capsys.readouterr().out.strip() == pg_server


def test_start_in_an_empty_folder_then_stop_twice(tmp_path, capsys):
    folder = tmp_path / "pgdata"
    folder.mkdir()
    code = main(["pg", "start", str(folder)])
    out, err = capsys.readouterr()
    if code == 2 and "did not start" in err:
        pytest.skip(err.strip())
    try:
        assert code == 0 and out.startswith("postgresql://"), err
        assert (folder / "PG_VERSION").exists()
    finally:
        assert main(["pg", "stop", str(folder)]) == 0
    assert capsys.readouterr().out.strip() == f"stopped PostgreSQL in {folder}"
    one_line_error(capsys, ["pg", "stop", str(folder)], f"{folder}: no PostgreSQL running there")


@pytest.mark.skipif(os.geteuid() != 0, reason="the server runs as another user only when started as root")
def test_stop_works_after_a_parent_folder_lost_its_search_bit(tmp_path, capsys):
    """A second pytest session resets its base folder to 0700; the session server's stop then failed with
    "could not access directory ... Permission denied" and left the server running."""
    folder = tmp_path / "pgdata"
    code = main(["pg", "start", str(folder)])
    err = capsys.readouterr().err
    if code == 2 and "did not start" in err:
        pytest.skip(err.strip())
    assert code == 0, err
    tmp_path.chmod(0o700)  # what the other session does to a parent
    try:
        assert main(["pg", "stop", str(folder)]) == 0, capsys.readouterr().err
        assert capsys.readouterr().out.strip() == f"stopped PostgreSQL in {folder}"
    finally:  # never leave a server behind, even when the stop under test failed
        tmp_path.chmod(0o711)
        main(["pg", "stop", str(folder)])
        capsys.readouterr()


@pytest.mark.skipif(os.geteuid() != 0, reason="the ownership hand-over happens only as root")
def test_refused_folder_keeps_its_owner_as_root(tmp_path, capsys):
    docs = tmp_path / "documents"
    docs.mkdir()
    (docs / "a.txt").write_text("a")
    one_line_error(capsys, ["pg", "start", str(docs)], "not empty")
    assert docs.stat().st_uid == 0 and (docs / "a.txt").stat().st_uid == 0


def test_the_server_user_may_only_search_the_parent_folders(tmp_path):
    """Running as root, the data folder's parents must let the server's user through: search permission is
    enough (the library's helper also made every parent up to / readable by everyone)."""
    import stat

    from kg_rag.store.postgres.embedded import allow_traversal

    private = tmp_path / "private"
    (private / "deeper").mkdir(parents=True)
    private.chmod(0o700)
    (private / "deeper").chmod(0o750)
    above = {p: stat.S_IMODE(p.stat().st_mode) for p in tmp_path.resolve().parents}
    try:
        allow_traversal(private / "deeper" / "pgdata")
    finally:  # the walk goes up to /: leave the folders above the test's own as they were
        for folder, mode in above.items():
            folder.chmod(mode)
    assert stat.S_IMODE(private.stat().st_mode) == 0o711
    assert stat.S_IMODE((private / "deeper").stat().st_mode) == 0o751


@pytest.mark.parametrize("schema", ["full", "order", "user"])
def test_a_reserved_word_as_schema_is_refused_in_one_line(capsys, schema):
    """``CREATE SCHEMA full`` used to end in a raw syntax-error traceback."""
    uri = f"postgresql://postgres@127.0.0.1:1/postgres?kg_schema={schema}"  # refused before any connection
    for argv in (["stats", uri], ["query", uri, "Who?"]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert "reserved word" in err and len(err.splitlines()) == 1, err


@pytest.mark.parametrize("schema", ["public", "information_schema", "pg_kg"])
def test_kg_rag_never_writes_into_or_drops_a_shared_schema(pg_server, demo_index, tmp_path, capsys, schema):
    """``copy --replace`` into ``?kg_schema=public`` would have run DROP SCHEMA public CASCADE; kg-rag tables
    also went into information_schema."""
    import psycopg

    from kg_rag.store import DirectoryStore
    from kg_rag.store.postgres import PostgresStore

    DirectoryStore(tmp_path / "idx").save(demo_index)
    target = f"{pg_server}&kg_schema={schema}"
    for argv in (["copy", str(tmp_path / "idx"), target], ["copy", str(tmp_path / "idx"), target, "--replace"]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert "system or shared schema" in err and len(err.splitlines()) == 1, err
    with pytest.raises(ValueError, match="system or shared schema"):
        PostgresStore(target).drop()
    with psycopg.connect(pg_server) as conn:
        tables = conn.execute("SELECT count(*) FROM pg_tables WHERE schemaname = %s", (schema,)).fetchone()[0]
    assert schema == "information_schema" or tables == 0
