"""One description of a stored index — :class:`IndexMeta` — written by every store and validated on read.

A directory keeps it in each generation's ``manifest.json``, PostgreSQL in its ``meta`` rows; both hold the same
fields (schema version, embedding model, dimension and type prefix, counts, communities). It is checked (types
and ranges) before anything is sized from it: a crafted file claiming a billion-dimensional vector, or a count of
the wrong type, ends in one :class:`~kg_rag.errors.IndexFormatError` naming the file, not in an allocation that
gets the process killed. ``stats()`` and :class:`BackendInfo` are derived from it in one place.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kg_rag.errors import IndexFormatError

FORMAT = "kg-rag-index"
MAX_DIM = 16_000
"""Largest vector dimension an index may declare (pgvector's limit; every embedding model is far below it)."""
MAX_COUNT = 2**40
"""Largest count a stored index may declare (a sanity bound: no real index is near it)."""
COUNT_FIELDS = ("chunks", "documents", "entities", "relations", "synonym_links")
_FAKE_MODEL = re.compile(r"DeterministicFakeEmbedding:(\d+)")


@dataclass
class BackendInfo:
    """What a backend holds: counts, the embedding model the vectors come from, and its version."""

    entities: int
    relations: int
    chunks: int
    documents: int
    dim: int
    embedding_model: str
    type_prefix: bool = True
    version: str = ""
    """Changes whenever the data changes (a generation name, a transaction counter)."""
    relation_types: dict[str, int] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


def check_version(where: str | Path, version: Any, supported: int) -> int:
    """The schema version, when this release can read it (1 .. ``supported``); else a one-line error."""
    if not isinstance(version, int) or isinstance(version, bool):
        raise IndexFormatError(where, f"missing or invalid schema_version {version!r}")
    if version > supported:
        raise IndexFormatError(
            where, f"schema version {version} is newer than this kg-rag supports ({supported}); upgrade kg-rag"
        )
    if version < 1:
        raise IndexFormatError(where, f"unsupported schema version {version}")
    return version


def _count(where: str | Path, name: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_COUNT:
        raise IndexFormatError(where, f"{name} must be a count between 0 and {MAX_COUNT}, got {value!r}")
    return value


def _dict(where: str | Path, name: str, value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise IndexFormatError(where, f"{name} must be a JSON object, got {type(value).__name__}")
    return dict(value)


@dataclass(frozen=True)
class IndexMeta:
    """What an index holds and how it was embedded (see the module docstring)."""

    schema_version: int
    embedding_model: str = ""
    dim: int = 0
    type_prefix: bool = True
    chunks: int = 0
    documents: int = 0
    entities: int = 0
    relations: int = 0
    synonym_links: int = 0
    relation_types: dict[str, int] = field(default_factory=dict)
    communities: int | None = None
    """How many communities the index holds (``None``: ``kg-rag communities`` never ran)."""
    stale_communities: int | None = None
    community_levels: tuple[int, ...] = ()
    version: str = ""
    """Changes with every write: a generation name, or ``schema@N`` in a database."""

    # ------------------------------------------------------------------ reading
    @classmethod
    def parse(cls, data: Any, where: str | Path, *, supported: int, version: str = "") -> IndexMeta:
        """Validate ``{"schema_version", "embedding": {...}, "stats": {...}}`` (a manifest, or a database's meta
        rows as one object); every problem is an :class:`IndexFormatError` naming ``where``."""
        if not isinstance(data, Mapping):
            raise IndexFormatError(where, "index metadata is not a JSON object")
        schema_version = check_version(where, data.get("schema_version"), supported)
        emb = _dict(where, "embedding", data.get("embedding"))
        model = emb.get("model", "")
        if not isinstance(model, str) or len(model) > 1000:
            raise IndexFormatError(where, f"embedding model must be a short string, got {type(model).__name__}")
        dim = emb.get("dim", 0)
        if not isinstance(dim, int) or isinstance(dim, bool) or not 0 <= dim <= MAX_DIM:
            raise IndexFormatError(where, f"vector dimension must be an integer between 0 and {MAX_DIM}, got {dim!r}")
        implied = _FAKE_MODEL.fullmatch(model)
        if implied and (int(implied.group(1)) > MAX_DIM or (dim and int(implied.group(1)) != dim)):
            raise IndexFormatError(
                where, f"embedding model {model[:60]} does not match the index's vector dimension {dim}"
            )
        type_prefix = emb.get("type_prefix", True)
        if not isinstance(type_prefix, bool):
            raise IndexFormatError(where, f"type_prefix must be true or false, got {type_prefix!r}")
        stats = _dict(where, "stats", data.get("stats"))
        counts = {name: _count(where, name, stats.get(name, 0)) for name in COUNT_FIELDS}
        types = _dict(where, "relation_types", stats.get("relation_types"))
        for name, n in types.items():
            _count(where, f"relation_types[{name[:40]!r}]", n)
        communities = stats.get("communities")
        stale = stats.get("stale_communities")
        for name, value in (("communities", communities), ("stale_communities", stale)):
            if value is not None:
                _count(where, name, value)
        levels = data.get("community_levels", stats.get("community_levels", ()))
        if not isinstance(levels, (list, tuple)) or not all(
            isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 1000 for x in levels
        ):
            raise IndexFormatError(where, "community_levels must be a list of small integers")
        return cls(
            schema_version=schema_version,
            embedding_model=model,
            dim=dim,
            type_prefix=type_prefix,
            relation_types={str(k): int(v) for k, v in types.items()},
            communities=communities,
            stale_communities=stale,
            community_levels=tuple(sorted(set(levels))),
            version=version,
            **counts,
        )

    # ------------------------------------------------------------------ writing
    @classmethod
    def of_index(cls, index: Any, schema_version: int, version: str = "") -> IndexMeta:
        """The metadata of an editable :class:`~kg_rag.index.build.GraphIndex` (what a save writes)."""
        stats = index.kg.stats()
        cs = index.communities
        return cls(
            schema_version=schema_version,
            embedding_model=index.embedding_model,
            dim=index.dim,
            type_prefix=index.type_prefix,
            relation_types=dict(stats["relation_types"]),
            communities=None if cs is None else len(cs),
            stale_communities=None if cs is None else len(cs.stale),
            community_levels=tuple(cs.levels) if cs is not None else (),
            version=version,
            **{name: int(stats[name]) for name in COUNT_FIELDS},
        )

    def with_(self, **changes: Any) -> IndexMeta:
        return replace(self, **changes)

    def stats_dict(self) -> dict[str, Any]:
        """The ``stats`` object a store writes (the graph's counts, then the communities when there are some)."""
        out: dict[str, Any] = {name: getattr(self, name) for name in COUNT_FIELDS}
        out["relation_types"] = dict(sorted(self.relation_types.items(), key=lambda kv: (-kv[1], kv[0])))
        if self.communities is not None:
            out["communities"] = self.communities
            out["stale_communities"] = self.stale_communities or 0
            out["community_levels"] = list(self.community_levels)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "schema_version": self.schema_version,
            "embedding": {"model": self.embedding_model, "dim": self.dim, "type_prefix": self.type_prefix},
            "stats": self.stats_dict(),
        }

    # ------------------------------------------------------------------ derived views
    def stats(self, report: Any = None) -> dict[str, Any]:
        """What ``kg-rag stats`` prints: counts, skipped input and extraction failures (from the ingest
        ``report``), the embedding model, and the version."""
        out = self.stats_dict()
        out.pop("community_levels", None)
        out["skipped"] = dict(sorted(report.skipped.items())) if report is not None else {}
        out["extraction_failures"] = len(report.failures) if report is not None else 0
        out["embedding_model"] = self.embedding_model
        out["dim"] = self.dim
        out["generation"] = self.version
        return out

    def info(self, **extra: Any) -> BackendInfo:
        """The :class:`BackendInfo` a query backend serving this index reports."""
        return BackendInfo(
            entities=self.entities,
            relations=self.relations,
            chunks=self.chunks,
            documents=self.documents,
            dim=self.dim,
            embedding_model=self.embedding_model,
            type_prefix=self.type_prefix,
            version=self.version,
            relation_types=dict(sorted(self.relation_types.items(), key=lambda kv: (-kv[1], kv[0]))),
            extra={
                "synonym_links": self.synonym_links,
                "communities": self.communities or 0,
                "community_levels": list(self.community_levels),
                **extra,
            },
        )
