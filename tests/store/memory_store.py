"""A third store, kept in memory, written only against the store seam (``GraphStore``'s four abstract methods),
to show that a backend needs no more: the query side, documents, metadata and the report are the defaults.

Stores of one name share their data and their writer lock, as two ``DirectoryStore`` of one folder do; the
index is kept as a JSON document (what the directory store writes), so a loaded index is a copy, never the
object a writer still holds.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

from kg_rag.errors import IndexNotFoundError
from kg_rag.index.build import GraphIndex
from kg_rag.store.directory import load_index, save_index
from kg_rag.store.graph_store import GraphStore
from kg_rag.store.locking import IndexLockedError

PREFIX = "mem://"


class _Shelf:
    """One name's data: the saved index (as the directory store's files), its version and the writer lock."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] | None = None
        self.version = ""
        self.lock = threading.RLock()
        self.holder: str | None = None


class MemoryStore(GraphStore):
    """An index held in this process under a name (``mem://NAME``)."""

    _shelves: ClassVar[dict[str, _Shelf]] = {}
    _guard: ClassVar[threading.Lock] = threading.Lock()
    _versions: ClassVar[Iterator[int]] = itertools.count(1)

    def __init__(self, location: str) -> None:
        self.location = location if location.startswith(PREFIX) else PREFIX + location
        with self._guard:
            self._shelf = self._shelves.setdefault(self.location, _Shelf())

    def __repr__(self) -> str:
        return f"MemoryStore({self.location!r})"

    def __str__(self) -> str:
        return self.location

    # ------------------------------------------------------------------ the four methods of the seam
    def exists(self) -> bool:
        return self._shelf.files is not None

    @contextmanager
    def writing(self, wait: float | None = None) -> Iterator[None]:
        shelf = self._shelf
        if not shelf.lock.acquire(timeout=60.0 if wait is None else max(wait, 0.0)):
            raise IndexLockedError(f"{self.location}: locked for writing by {shelf.holder}")
        outer = shelf.holder is None
        if outer:
            shelf.holder = f"pid {os.getpid()} thread {threading.get_ident()} since {time.strftime('%H:%M:%S')}"
        try:
            yield
        finally:
            if outer:
                shelf.holder = None
            shelf.lock.release()

    def save(self, index: Any, *, wait: float | None = None, forget: bool = False) -> str:
        with self.writing(wait):
            files = _to_files(index)
            self._shelf.files = files
            self._shelf.version = f"v{next(self._versions)}"
            return self._shelf.version

    def load(self) -> GraphIndex:
        files = self._shelf.files
        if files is None:
            raise IndexNotFoundError(self.location, "no index here")
        return _from_files(files)

    # ------------------------------------------------------------------ one cheap override
    @property
    def version(self) -> str:
        return self._shelf.version


def _to_files(index: GraphIndex) -> dict[str, bytes]:
    """The index as the directory store writes it: its folder's files, by relative path."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        save_index(index, tmp)
        root = Path(tmp)
        return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _from_files(files: dict[str, bytes]) -> GraphIndex:
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        for name, data in files.items():
            path = Path(tmp) / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        return load_index(tmp)
