"""Records of a saved directory index, read on demand: one ``pread`` of one JSONL line per record.

A query ranks with the compiled arrays and then needs the records of the few rows it returns; reading those
lines at their byte offsets lets a loaded index serve queries without building the NetworkX model at all.
The files are opened once; their descriptors keep working even if a later save prunes the generation, so a
reader keeps a consistent view of the generation it opened.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from kg_rag.errors import IndexFormatError
from kg_rag.model.records import Chunk, Entity, Relation, chunk_from_record, entity_from_record, relation_from_record

_DECODER = json.JSONDecoder()


class FileRecords:
    """Entity, relation and chunk records by compiled row, from the generation's JSONL files."""

    KINDS = ("entities", "relations", "chunks")

    def __init__(self, files: dict[str, Path], offsets: dict[str, np.ndarray], lines: dict[str, np.ndarray]):
        self._fds: dict[str, int] = {}
        try:
            for name, path in files.items():
                self._fds[name] = os.open(path, os.O_RDONLY)
        except OSError:
            self.close()
            raise
        self._paths = dict(files)
        self._offsets = offsets
        self._lines = lines  # compiled row -> line number, per kind (documents are only read whole)
        self._sizes = {name: os.fstat(fd).st_size for name, fd in self._fds.items()}
        self._lock = threading.Lock()

    def has(self, kind: str) -> bool:
        return kind in self._fds

    def close(self) -> None:
        for fd in self._fds.values():
            try:
                os.close(fd)
            except OSError:
                pass
        self._fds = {}

    def __del__(self) -> None:
        self.close()

    def _decode(self, kind: str, raw: bytes, line: int) -> dict[str, Any]:
        try:  # the decoder itself, not json.loads: a query decodes ~50 lines, and the wrapper took half the time
            text = raw.decode("utf-8").strip()
            record, end = _DECODER.raw_decode(text)
            if end != len(text):
                raise json.JSONDecodeError("Extra data", text, end)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
            raise IndexFormatError(self._paths[kind], f"corrupt JSON on line {line + 1} ({exc})") from exc
        if not isinstance(record, dict):
            raise IndexFormatError(self._paths[kind], f"line {line + 1} is not a JSON object")
        return record

    def _read(self, kind: str, row: int) -> dict[str, Any] | None:
        line = int(self._lines[kind][row])
        if line < 0:
            return None
        offsets = self._offsets[kind]
        start = int(offsets[line])
        end = int(offsets[line + 1]) if line + 1 < len(offsets) else self._sizes[kind]
        return self._decode(kind, os.pread(self._fds[kind], end - start, start), line)

    def _convert(self, kind: str, record: dict[str, Any] | None, convert: Any) -> Any:
        if record is None:
            return None
        try:
            return convert(record)
        except (KeyError, TypeError, ValueError) as exc:
            raise IndexFormatError(self._paths[kind], f"malformed record ({type(exc).__name__}: {exc})") from exc

    def entity(self, row: int) -> Entity | None:
        return self._convert("entities", self._read("entities", row), entity_from_record)

    def relation(self, row: int) -> Relation | None:
        return self._convert("relations", self._read("relations", row), relation_from_record)

    def chunk(self, row: int) -> Chunk | None:
        return self._convert("chunks", self._read("chunks", row), chunk_from_record)

    def iter_records(self, kind: str) -> Iterator[dict[str, Any]]:
        """Every record of a file in order, read through the open descriptor (for materialising the graph)."""
        fd, size = self._fds[kind], self._sizes[kind]
        position, pending, line = 0, b"", 0
        while position < size:
            block = os.pread(fd, min(1 << 20, size - position), position)
            if not block:
                break
            position += len(block)
            parts = (pending + block).split(b"\n")
            pending = parts.pop()
            for raw in parts:
                if raw.strip():
                    yield self._decode(kind, raw, line)
                line += 1
        if pending.strip():
            yield self._decode(kind, pending, line)
