"""Stores: where an index lives. ``base`` defines the protocol; ``directory`` keeps an index in files,
``memory`` serves a snapshot in process. :func:`open_store` picks the backend from a location."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kg_rag.store.base import BackendInfo, EdgeFilter, EdgeSet, Expansion, GraphStore, Hits, Pairs, QueryBackend
from kg_rag.store.directory import DirectoryStore, load_index, save_index
from kg_rag.store.locking import IndexLockedError
from kg_rag.store.memory import LiveBackend, SnapshotBackend


def is_database_uri(location: Any) -> bool:
    return isinstance(location, str) and location.startswith(("postgresql://", "postgres://"))


def open_store(location: str | Path, **kwargs: Any) -> Any:
    """The store at ``location``: a directory path, or a ``postgresql://`` URI."""
    if is_database_uri(location):
        from kg_rag.store.postgres import PostgresStore

        return PostgresStore(str(location), **kwargs)
    return DirectoryStore(location, **kwargs)


__all__ = [
    "BackendInfo",
    "DirectoryStore",
    "EdgeFilter",
    "EdgeSet",
    "Expansion",
    "GraphStore",
    "Hits",
    "IndexLockedError",
    "LiveBackend",
    "Pairs",
    "QueryBackend",
    "SnapshotBackend",
    "is_database_uri",
    "load_index",
    "open_store",
    "save_index",
]
