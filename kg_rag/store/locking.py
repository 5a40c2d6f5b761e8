"""Inter-process locks for the directory store, on ``flock`` (released by the kernel when a process dies, so a
crashed writer never leaves a stale lock).

- The **writer lock** (``DIR/.kg-rag-writer.lock``) is held across a whole read–modify–write (``index --update``,
  ``delete``, every save). A second writer waits up to ``wait`` seconds, then fails with
  :class:`IndexLockedError` naming the holder (pid, command, since when).
- A **reader lock** (shared) on ``gen-*/readers.lock`` marks a generation as in use by an open index; clean-up
  skips generations whose reader lock it cannot take exclusively.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kg_rag.errors import KGRagError

WRITER_LOCK = ".kg-rag-writer.lock"
READERS_LOCK = "readers.lock"
DEFAULT_WAIT = 60.0
"""Seconds a writer waits for another writer by default (``KG_RAG_LOCK_WAIT`` or ``--wait`` override it)."""


class IndexLockedError(KGRagError):
    """Another process holds the index's writer lock and did not release it in time."""


def default_wait() -> float:
    try:
        return max(0.0, float(os.environ.get("KG_RAG_LOCK_WAIT", DEFAULT_WAIT)))
    except ValueError:
        return DEFAULT_WAIT


def _holder(path: Path) -> str:
    try:
        info = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError, RecursionError):
        return "another process"
    if not isinstance(info, dict):
        return "another process"
    parts = [f"pid {info.get('pid', '?')}"]
    if info.get("host") and info.get("host") != socket.gethostname():
        parts.append(f"on {info['host']}")
    if info.get("command"):
        parts.append(f"({str(info['command'])[:80]})")
    if info.get("since"):
        parts.append(f"since {info['since']}")
    return " ".join(parts)


class WriterLock:
    """Exclusive writer lock of one index directory: a thread-re-entrant in-process lock plus ``flock``."""

    _locks: dict[str, threading.RLock] = {}
    _state: dict[str, list[int]] = {}  # path -> [fd, depth] while held by a thread of this process
    _guard = threading.Lock()

    def __init__(self, directory: Path) -> None:
        self.path = Path(directory) / WRITER_LOCK

    @contextmanager
    def hold(self, wait: float | None = None) -> Iterator[None]:
        """Hold the lock for the enclosed block, waiting at most ``wait`` seconds for another writer."""
        wait = default_wait() if wait is None else wait
        self.path.parent.mkdir(parents=True, exist_ok=True)
        key = str(self.path.resolve())
        with self._guard:
            local = self._locks.setdefault(key, threading.RLock())
        if not local.acquire(timeout=max(wait, 0.001)):
            raise IndexLockedError(f"{self.path.parent}: locked for writing by another thread of this process")
        try:
            state = self._state.get(key)
            if state is None:
                self._state[key] = state = [self._acquire(wait), 0]
            state[1] += 1
            try:
                yield
            finally:
                state[1] -= 1
                if state[1] == 0:
                    del self._state[key]
                    self._release(state[0])
        finally:
            local.release()

    def _acquire(self, wait: float) -> int:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + wait
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise IndexLockedError(
                            f"{self.path.parent}: locked for writing by {_holder(self.path)}; "
                            f"gave up after {wait:g} s (use --wait SECONDS to wait longer)"
                        ) from None
                    time.sleep(0.05)
            info = {
                "pid": os.getpid(),
                "host": socket.gethostname(),
                "command": " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(sys.argv))[:200],
                "since": time.strftime("%Y-%m-%dT%H:%M:%S"),
            }
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(info).encode(), 0)
            return fd
        except BaseException:
            os.close(fd)
            raise

    @staticmethod
    def _release(fd: int) -> None:
        try:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)


class ReaderLock:
    """A shared lock on a generation, held while an index opened from it is alive."""

    def __init__(self, generation: Path) -> None:
        self.fd: int | None = None
        if not Path(generation).is_dir():
            raise FileNotFoundError(generation)
        path = Path(generation) / READERS_LOCK
        try:  # generations written before reader locks existed get their lock file now
            fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o644)
        except FileNotFoundError:
            raise
        except OSError:  # read-only media: nobody can clean it up either
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd

    def __copy__(self) -> ReaderLock:  # a copy holding the same descriptor would close it under its original
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> ReaderLock:
        return self

    def release(self) -> None:
        if self.fd is not None:
            try:
                os.close(self.fd)
            finally:
                self.fd = None

    def __del__(self) -> None:
        self.release()


def in_use(generation: Path) -> bool:
    """True when some process holds a reader lock on ``generation`` (a missing lock file: not in use)."""
    try:
        fd = os.open(Path(generation) / READERS_LOCK, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False
