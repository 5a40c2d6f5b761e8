"""Stores: where an index lives. ``base`` defines the backend base class (what queries read), ``graph_store``
the store base class (writes come through :class:`kg_rag.indexing.IndexWriter`); ``directory`` keeps an index in
files, ``postgres`` in a database, ``memory`` serves a snapshot in process. :func:`open_store` picks the store
from a location."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kg_rag.index.meta import IndexMeta
from kg_rag.model.change import GraphChange
from kg_rag.store.base import (
    BackendInfo,
    EdgeFilter,
    EdgeSet,
    Expansion,
    Hits,
    Pairs,
    QueryBackend,
    VersionedBackend,
)
from kg_rag.store.directory import DirectoryStore, load_index, save_index
from kg_rag.store.graph_store import GraphStore
from kg_rag.store.locking import IndexLockedError
from kg_rag.store.memory import LiveBackend, SnapshotBackend


def is_database_uri(location: Any) -> bool:
    return isinstance(location, str) and location.startswith(("postgresql://", "postgres://"))


def open_store(location: str | Path, **kwargs: Any) -> GraphStore:
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
    "GraphChange",
    "GraphStore",
    "Hits",
    "IndexLockedError",
    "IndexMeta",
    "LiveBackend",
    "Pairs",
    "QueryBackend",
    "SnapshotBackend",
    "VersionedBackend",
    "is_database_uri",
    "load_index",
    "open_store",
    "save_index",
]
