"""Stores: where an index lives. ``base`` defines the backend base class (what queries read), ``graph_store``
the store base class (writes come through :class:`kg_rag.indexing.IndexWriter`); ``directory`` keeps an index in
files, ``postgres`` in a database, ``memory`` serves a snapshot in process. :func:`open_store` picks the store
from a location."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from pathlib import Path
from typing import Any

from kg_rag.errors import InputError
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

SCHEMES: dict[str, str | Callable[..., GraphStore]] = {
    "postgresql://": "kg_rag.store.postgres:PostgresStore",
    "postgres://": "kg_rag.store.postgres:PostgresStore",
}
"""Location prefix -> the store class (or a factory) that opens it, as ``"module:attr"`` until first used, so a
store's driver is imported only when a location names it. Anything else is a directory."""


def register_store(prefix: str, store: str | Callable[..., GraphStore]) -> None:
    """Let :func:`open_store` (and every command) open locations starting with ``prefix`` (``"mem://"``) with
    ``store``: a :class:`GraphStore` class or factory taking the location (and ``open_store``'s keywords), or its
    ``"module:attr"``."""
    if not prefix or not (isinstance(store, str) or callable(store)):
        raise InputError("register_store needs a location prefix and a store class, factory or 'module:attr'")
    SCHEMES[prefix] = store


def store_for(location: Any) -> Callable[..., GraphStore] | None:
    """The registered store class or factory for ``location`` (``None``: a directory)."""
    if not isinstance(location, str):
        return None
    for prefix, store in SCHEMES.items():
        if location.startswith(prefix):
            if isinstance(store, str):
                module, _, attr = store.partition(":")
                store = SCHEMES[prefix] = getattr(import_module(module), attr)
            return store
    return None


def is_registered(location: Any) -> bool:
    """Whether ``location`` names a registered store (no directory), without importing its driver."""
    return isinstance(location, str) and location.startswith(tuple(SCHEMES))


def is_database_uri(location: Any) -> bool:
    return isinstance(location, str) and location.startswith(("postgresql://", "postgres://"))


def open_store(location: str | Path, **kwargs: Any) -> GraphStore:
    """The store at ``location``: a directory path, or a location of a registered scheme (``postgresql://``
    built in; :func:`register_store` adds one)."""
    store = store_for(location)
    if store is not None:
        return store(str(location), **kwargs)
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
    "is_registered",
    "load_index",
    "open_store",
    "register_store",
    "save_index",
]
