"""The PostgreSQL store under faults (``kg_rag/store/postgres/store.py``), on the server the suite starts: a full disk
and a server that drops the writer's session are one line each, the index is left whole, a write the server
committed reports success, and a schema name cannot name the same schema under another writer-lock key.

Faults are injected for real where PostgreSQL allows it: a trigger raises SQLSTATE 53100 (``disk_full``, what a full
disk raises) inside the write's transaction, and ``pg_terminate_backend`` ends the writer's session (what a server
shutting down or crashing does to it), at the moment a test chooses."""

from __future__ import annotations

import json
import uuid

import pytest

from kg_rag.store import open_store

from ..cli_support import run
from .test_locking import extraction_file

BOW = "kg_rag.testing:BagOfWordsEmbeddings"


def index_docs(capsys, uri: str, path, *extra: str) -> tuple[int, str, str]:
    return run(capsys, "index", "--extractions", str(path), "--out", uri, "--embeddings", BOW, "-q", *extra)


def documents(uri: str) -> list[str]:
    return sorted(d["id"] for d in open_store(uri).documents())


def schema_of(uri: str) -> str:
    return uri.rsplit("kg_schema=", 1)[1]


def fill_the_disk(uri: str) -> None:
    """From now on, writing a chunk row fails as a full disk does (SQLSTATE 53100, psycopg's DiskFull)."""
    schema = schema_of(uri)
    with open_store(uri).connect(autocommit=True) as conn:
        conn.execute(
            f"""CREATE FUNCTION {schema}.disk_full() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
                RAISE EXCEPTION 'could not extend file "base/16384/16385": No space left on device'
                USING ERRCODE = 'disk_full', HINT = 'Check free disk space.'; END $$"""
        )
        conn.execute(
            f"CREATE TRIGGER disk_full BEFORE INSERT ON {schema}.chunks "
            f"FOR EACH ROW EXECUTE FUNCTION {schema}.disk_full()"
        )


class DyingSession:
    """From now on, connections kg-rag opens have their session ended by the server (``pg_terminate_backend``)
    just before they run a statement starting with ``at``: the server going away at that point of a write."""

    def __init__(self, monkeypatch, at: str) -> None:
        import psycopg

        plan = self
        self.killed: list[int] = []

        class Dying(psycopg.Connection):
            def execute(self, query, *args, **kwargs):
                if str(query).lstrip().startswith(at) and not plan.killed:
                    pid = self.info.backend_pid
                    with psycopg.Connection.connect(self.info.dsn, autocommit=True) as other:
                        other.execute("SELECT pg_terminate_backend(%s)", (pid,))
                        gone = "SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = %s"
                        while not other.execute(gone, (pid,)).fetchone()[0]:
                            pass
                    plan.killed.append(pid)
                return super().execute(query, *args, **kwargs)

        monkeypatch.setattr(psycopg, "connect", Dying.connect)


def test_a_full_disk_is_one_line_and_leaves_the_index_whole(pg_schema_uri, tmp_path, capsys):
    """It used to be a 35-line psycopg.errors.DiskFull traceback (the data was intact)."""
    assert index_docs(capsys, pg_schema_uri, extraction_file(tmp_path / "a.json", "A", 3))[0] == 0
    fill_the_disk(pg_schema_uri)
    code, out, err = index_docs(capsys, pg_schema_uri, extraction_file(tmp_path / "b.json", "B", 2), "--update")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "PostgreSQL is out of disk space (could not extend file" in err
    assert "the write was rolled back and the index is as it was" in err
    assert documents(pg_schema_uri) == ["A-000", "A-001", "A-002"]


def test_a_write_the_server_committed_reports_success_when_the_session_then_dies(
    pg_schema_uri, tmp_path, capsys, monkeypatch
):
    """The writer lock's release raised the server's AdminShutdown over a write it had committed (exit 1 with a
    traceback, in 2 of 9 server stops). A session that is gone took its lock along: the write reports success."""
    assert index_docs(capsys, pg_schema_uri, extraction_file(tmp_path / "a.json", "A", 2))[0] == 0
    dying = DyingSession(monkeypatch, "SELECT pg_advisory_unlock")
    code, out, err = index_docs(capsys, pg_schema_uri, extraction_file(tmp_path / "b.json", "B", 2), "--update")
    assert dying.killed and code == 0, err
    monkeypatch.undo()
    assert documents(pg_schema_uri) == ["A-000", "A-001", "B-000", "B-001"]
    assert index_docs(capsys, pg_schema_uri, extraction_file(tmp_path / "c.json", "C", 1), "--update")[0] == 0
    assert "C-000" in documents(pg_schema_uri)  # the lock went with the session: the next writer gets it


def test_a_first_save_is_done_when_the_session_dies_during_its_statistics_refresh(
    pg_schema_uri, tmp_path, capsys, monkeypatch, caplog
):
    """A whole-index save refreshes the table statistics after its commit: a server lost then is a warning."""
    dying = DyingSession(monkeypatch, "ANALYZE")
    code, out, err = index_docs(capsys, pg_schema_uri, extraction_file(tmp_path / "a.json", "A", 3))
    assert dying.killed and code == 0, err
    assert "Traceback" not in err
    assert "saved, but refreshing the table statistics failed (terminating connection" in caplog.text
    monkeypatch.undo()
    assert documents(pg_schema_uri) == ["A-000", "A-001", "A-002"]


def test_the_writes_own_error_is_the_one_reported_when_the_session_dies_too(
    pg_schema_uri, tmp_path, capsys, monkeypatch
):
    """A write failing on a full disk while the server also goes away: the release of the lock used to raise over
    the write's own error; the error reported is the full disk."""
    assert index_docs(capsys, pg_schema_uri, extraction_file(tmp_path / "a.json", "A", 2))[0] == 0
    fill_the_disk(pg_schema_uri)
    dying = DyingSession(monkeypatch, "SELECT pg_advisory_unlock")
    code, out, err = index_docs(capsys, pg_schema_uri, extraction_file(tmp_path / "b.json", "B", 2), "--update")
    assert dying.killed and code == 2 and len(err.strip().splitlines()) == 1, err
    assert "PostgreSQL is out of disk space" in err
    monkeypatch.undo()
    assert documents(pg_schema_uri) == ["A-000", "A-001"]


def test_a_server_lost_mid_write_is_one_line_and_the_write_rolled_back(pg_schema_uri, tmp_path, capsys, monkeypatch):
    assert index_docs(capsys, pg_schema_uri, extraction_file(tmp_path / "a.json", "A", 2))[0] == 0
    dying = DyingSession(monkeypatch, "INSERT")
    code, out, err = index_docs(capsys, pg_schema_uri, extraction_file(tmp_path / "b.json", "B", 2), "--update")
    assert dying.killed and code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "lost the connection to PostgreSQL" in err and "running the command again is safe" in err
    monkeypatch.undo()
    assert documents(pg_schema_uri) == ["A-000", "A-001"]
    assert index_docs(capsys, pg_schema_uri, extraction_file(tmp_path / "b.json", "B", 2), "--update")[0] == 0
    assert documents(pg_schema_uri) == ["A-000", "A-001", "B-000", "B-001"]


@pytest.mark.parametrize("suffix", ["%0A", "%0D%0A", "%20", "%00"])
def test_a_schema_name_is_matched_whole(pg_server, capsys, suffix):
    """``kg_schema=name%0A`` passed the old check (``re.match`` with ``$`` accepts a final line break), named the
    same schema as ``name`` in SQL, and took another advisory-lock key: two writers at once, and in 5 of 11
    trials one died with UniqueViolation on postings_pkey, its documents not written. It is refused."""
    from kg_rag.store.postgres.store import parse_location

    name = f"t_{uuid.uuid4().hex[:10]}"
    uri = f"{pg_server}&kg_schema={name}{suffix}"
    with pytest.raises(ValueError, match="schema name must match"):
        parse_location(uri)
    code, out, err = run(capsys, "stats", uri)
    assert code == 2 and "schema name must match" in err and len(err.strip().splitlines()) == 1
    assert json.dumps(name) in json.dumps(parse_location(f"{pg_server}&kg_schema={name}")[1])


@pytest.mark.parametrize("at", ["SELECT to_regclass", "SELECT value FROM"])
def test_a_query_whose_server_goes_away_is_one_line(pg_schema_uri, tmp_path, capsys, monkeypatch, at):
    assert index_docs(capsys, pg_schema_uri, extraction_file(tmp_path / "a.json", "A", 2))[0] == 0
    dying = DyingSession(monkeypatch, at)
    code, out, err = run(capsys, "query", pg_schema_uri, "What supersedes A Order 1?", "--no-answer")
    assert dying.killed and code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "lost the connection to PostgreSQL" in err and "try again once the server is back" in err
