"""Record access for the query path, by compiled row: entity descriptions, relations, chunks.

A query ranks with compiled arrays and then needs the records of the few rows it returns. ``GraphRecords``
reads them from an in-memory :class:`KnowledgeGraph`; ``FileRecords`` reads single lines of the saved JSONL
files at byte offsets, so a loaded index can serve queries without building the NetworkX model at all.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from kg_rag.errors import IndexFormatError
from kg_rag.graph import Chunk, Evidence, KnowledgeGraph, Relation


class RecordReader(Protocol):
    def entity_descriptions(self, row: int) -> list[str]: ...

    def relation(self, row: int) -> Relation | None: ...

    def chunk(self, row: int) -> Chunk | None: ...

    def chunk_texts(self) -> list[str]: ...


class GraphRecords:
    """Records from a live :class:`KnowledgeGraph` (rows resolved through the compiled id lists)."""

    def __init__(self, kg: KnowledgeGraph, cg: Any) -> None:
        self.kg, self.cg = kg, cg

    def entity_descriptions(self, row: int) -> list[str]:
        key = self.cg.node_ids[row]
        try:
            return list(self.kg.graph.nodes[key].get("descriptions", []))
        except KeyError:
            return []

    def relation(self, row: int) -> Relation | None:
        return self.kg.get_relation(self.cg.relation_ids[row])

    def chunk(self, row: int) -> Chunk | None:
        return self.kg.chunks.get(self.cg.chunk_ids[row])

    def chunk_texts(self) -> list[str]:
        from kg_rag.index import chunk_text

        chunks = self.kg.chunks
        return [chunk_text(chunks[c]) if c in chunks else "" for c in self.cg.chunk_ids]


class FileRecords:
    """Records read on demand from the saved JSONL files (one ``pread`` per record).

    The files are opened once; their descriptors keep working even if a later save prunes the generation.
    """

    def __init__(self, files: dict[str, Path], offsets: dict[str, np.ndarray], lines: dict[str, np.ndarray]):
        self._fds = {name: os.open(path, os.O_RDONLY) for name, path in files.items()}
        self._paths = dict(files)
        self._offsets = offsets
        self._lines = lines  # compiled row -> line number, per kind
        self._lock = threading.Lock()

    def __del__(self) -> None:
        for fd in getattr(self, "_fds", {}).values():
            try:
                os.close(fd)
            except OSError:
                pass

    def _read(self, kind: str, line: int) -> dict[str, Any] | None:
        if line < 0:
            return None
        offsets = self._offsets[kind]
        start = int(offsets[line])
        end = int(offsets[line + 1]) if line + 1 < len(offsets) else os.fstat(self._fds[kind]).st_size
        raw = os.pread(self._fds[kind], end - start, start)
        try:
            record = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise IndexFormatError(self._paths[kind], f"corrupt JSON on line {line + 1} ({exc})") from exc
        if not isinstance(record, dict):
            raise IndexFormatError(self._paths[kind], f"line {line + 1} is not a JSON object")
        return record

    def entity_descriptions(self, row: int) -> list[str]:
        record = self._read("entities", int(self._lines["entities"][row]))
        return [str(d) for d in record.get("descriptions", [])] if record else []

    def relation(self, row: int) -> Relation | None:
        r = self._read("relations", int(self._lines["relations"][row]))
        if r is None:
            return None
        return Relation(
            id=str(r["id"]),
            source=str(r["source"]),
            target=str(r["target"]),
            relation_type=str(r.get("relation_type", "RELATED")),
            predicate=r.get("predicate"),
            description=r.get("description"),
            evidence=[Evidence(**e) for e in r.get("evidence", [])],
            kind=str(r.get("kind", "extracted")),
        )

    def chunk(self, row: int) -> Chunk | None:
        r = self._read("chunks", int(self._lines["chunks"][row]))
        if r is None:
            return None
        return Chunk(
            id=str(r["id"]),
            text=str(r["text"]),
            doc_id=str(r["doc_id"]),
            metadata=dict(r.get("metadata") or {}),
            n_tokens=int(r.get("n_tokens") or 0),
        )

    def chunk_texts(self) -> list[str]:
        from kg_rag.index import chunk_text

        out = []
        for row in range(len(self._lines["chunks"])):
            chunk = self.chunk(row)
            out.append(chunk_text(chunk) if chunk is not None else "")
        return out


class LazyKnowledgeGraph:
    """Stands in for the :class:`KnowledgeGraph` of a loaded index until something needs the real one.

    Queries only use its lock and version; any other attribute builds the NetworkX model from the saved
    records (once) and delegates to it. The lock is shared with the real graph, so readers and writers stay
    serialised across the switch.
    """

    def __init__(self, factory: Any) -> None:
        self._lock = threading.RLock()
        self._factory = factory
        self._real: KnowledgeGraph | None = None

    @property
    def materialized(self) -> bool:
        return self._real is not None

    def materialize(self) -> KnowledgeGraph:
        if self._real is None:
            with self._lock:
                if self._real is None:
                    real = self._factory()
                    real._lock = self._lock
                    self._real = real
        return self._real

    @property
    def version(self) -> int:
        return self._real.version if self._real is not None else 0

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.materialize(), name)

    def __len__(self) -> int:
        return len(self.materialize())

    def __repr__(self) -> str:
        return repr(self._real) if self._real is not None else "LazyKnowledgeGraph(not loaded)"
