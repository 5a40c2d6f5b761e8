"""File helpers of the directory store: atomic writes, fsync, and safe readers (JSON, JSONL, ``.npy`` without
pickle, FAISS) that turn every problem into an :class:`~kg_rag.errors.IndexFormatError` naming the file."""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from kg_rag.errors import IndexFormatError
from kg_rag.store.rowfile import RowFile, read_npy_header


def fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file and ``os.replace`` (never a half-written file)."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    fsync_dir(path.parent)


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]], key: str | None = None) -> tuple[np.ndarray, dict]:
    """Write one JSON object per line; returns the byte offset of every line (and ``row[key] -> line``)."""
    offsets: list[int] = []
    lines: dict[str, int] = {}
    position = 0
    with open(path, "wb") as fh:
        for row in rows:
            data = json.dumps(row, ensure_ascii=False, sort_keys=True).encode("utf-8") + b"\n"
            if key is not None:
                lines[str(row[key])] = len(offsets)
            offsets.append(position)
            fh.write(data)
            position += len(data)
        fh.flush()
        os.fsync(fh.fileno())
    return np.asarray(offsets, dtype=np.int64), lines


def write_json(path: Path, obj: Any) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(obj, fh, ensure_ascii=False, indent=1, sort_keys=True)
        fh.flush()
        os.fsync(fh.fileno())


def write_npy(path: Path, array: Any, dtype: Any = None) -> None:
    """Write an array as ``.npy`` (never pickled); ``dtype`` converts first (vectors are stored as float32)."""
    with open(path, "wb") as fh:
        np.save(fh, np.ascontiguousarray(array, dtype=dtype), allow_pickle=False)
        fh.flush()
        os.fsync(fh.fileno())


def write_faiss(path: Path, index: Any) -> None:
    import faiss

    faiss.write_index(index, str(path))
    with open(path, "rb+") as fh:
        os.fsync(fh.fileno())


def read_faiss(path: Path) -> Any:
    import faiss

    from kg_rag.index.vectors import IVF_NPROBE

    try:
        index = faiss.read_index(str(path))
    except RuntimeError as exc:
        raise IndexFormatError(path, f"not a valid FAISS index ({str(exc).splitlines()[0]})") from exc
    if hasattr(index, "nprobe"):
        index.nprobe = IVF_NPROBE
    return index


MMAP_MIN_BYTES = 256 << 20
"""Vector files at least this large are not read into memory: their rows are read on demand with ``pread``
(:class:`kg_rag.rowfile.RowFile`). Queries touch such tables sparsely (a few dozen fact rows per search)."""


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_json(path: Path) -> Any:
    """Read a JSON file of an index; every problem is an :class:`IndexFormatError` naming it."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError as exc:
        raise IndexFormatError(path, "file is missing") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise IndexFormatError(path, f"corrupt JSON ({exc})") from exc
    except RecursionError as exc:
        raise IndexFormatError(path, "JSON is nested too deeply") from exc


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    try:
        fh = open(path, encoding="utf-8")
    except FileNotFoundError as exc:
        raise IndexFormatError(path, "file is missing") from exc
    with fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise IndexFormatError(path, f"corrupt JSON on line {n} ({exc})") from exc
            except RecursionError as exc:
                raise IndexFormatError(path, f"JSON on line {n} is nested too deeply") from exc
            if not isinstance(row, dict):
                raise IndexFormatError(path, f"line {n} is not a JSON object")
            yield row


def npy_header(path: Path) -> tuple[tuple[int, ...], np.dtype, int]:
    """``(shape, dtype, data offset)`` of a ``.npy`` file from its header alone, checked against the file's size
    before anything is allocated: a header re-signed in the manifest that claims ``(10**11, 64)`` is an
    :class:`IndexFormatError`, not a 6 TB allocation. Object arrays (pickles) and Fortran order are refused."""
    try:
        with open(path, "rb") as fh:
            version, header = read_npy_header(fh)
            if header is None:
                raise IndexFormatError(path, f"unsupported .npy format version {version[0]}.{version[1]}")
            shape, fortran, dtype = header
            offset = fh.tell()
            size = os.fstat(fh.fileno()).st_size
    except FileNotFoundError as exc:
        raise IndexFormatError(path, "file is missing") from exc
    except (ValueError, OSError, EOFError, SyntaxError) as exc:
        raise IndexFormatError(path, f"not a valid .npy array ({' '.join(str(exc).split())[:200]})") from exc
    if dtype.hasobject or fortran:
        raise IndexFormatError(path, f"not a plain numeric array ({dtype}{', Fortran order' if fortran else ''})")
    count = 1
    for n in shape:
        count *= n
    if offset + count * dtype.itemsize != size:
        raise IndexFormatError(
            path, f"the header claims a {dtype} array of shape {shape}, which the file's {size} bytes do not hold"
        )
    return tuple(shape), dtype, offset


def read_plain_npy(path: Path) -> np.ndarray:
    """A numeric/bool array of any shape (compiled graph arrays); never unpickles, and checks the header against
    the file's size before allocating (:func:`npy_header`)."""
    _, dtype, _ = npy_header(path)
    if dtype.kind not in "biuf":
        raise IndexFormatError(path, f"unexpected array type {dtype}")
    try:
        return np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise IndexFormatError(path, f"not a valid .npy array ({exc})") from exc


def read_npy(path: Path, rows: int | None = None, dim: int | None = None) -> np.ndarray:
    """A 2-D float32 vector table, its header checked before anything is allocated: against the file's size, and
    against ``rows`` (the ids the table lists) and ``dim`` (the manifest's dimension) when given."""
    shape, dtype, offset = npy_header(path)
    if dtype != np.float32 or len(shape) != 2:
        raise IndexFormatError(path, f"expected a 2-D float32 array, found {dtype} {shape}")
    if rows is not None and shape[0] != rows:
        raise IndexFormatError(path, f"holds {shape[0]} vectors, the id list {rows}")
    if dim is not None and shape[0] and shape[1] != dim:
        raise IndexFormatError(path, f"vectors have {shape[1]} dimensions, the manifest says {dim}")
    try:
        if offset + shape[0] * shape[1] * dtype.itemsize >= MMAP_MIN_BYTES:
            return RowFile(path, offset, (shape[0], shape[1]), dtype)  # type: ignore[return-value]
        return np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise IndexFormatError(path, f"not a valid .npy array ({exc})") from exc
