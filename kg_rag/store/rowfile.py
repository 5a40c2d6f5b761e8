"""Row access to a large ``.npy`` matrix with ``pread`` instead of ``mmap``.

Queries read a few dozen scattered rows of a large fact table. Through ``mmap`` every touched row maps a
whole page-cache folio (up to megabytes on current kernels), so a memory-mapped 1.5 GB table becomes
resident after a few hundred queries. ``pread`` copies just the rows asked for.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from kg_rag.errors import InputError


def read_npy_header(fh: Any) -> tuple[tuple[int, int], tuple[tuple[int, ...], bool, np.dtype] | None]:
    """The format version of an open ``.npy`` file and its header ``(shape, fortran_order, dtype)``, read without
    unpickling anything; the header is ``None`` for a version NumPy's reader does not know (1.0 and 2.0 only)."""
    fmt = np.lib.format
    version = fmt.read_magic(fh)
    if version == (1, 0):
        return version, fmt.read_array_header_1_0(fh)
    if version == (2, 0):
        return version, fmt.read_array_header_2_0(fh)
    return version, None


class RowFile:
    """A read-only 2-D float32 ``.npy`` matrix read row-wise with ``pread`` (numpy-like where kg-rag needs it)."""

    ndim = 2

    def __init__(self, path: str | Path, header_bytes: int, shape: tuple[int, int], dtype: np.dtype) -> None:
        self.path = Path(path)
        self._fd = os.open(self.path, os.O_RDONLY)
        self._header = int(header_bytes)
        self.shape = (int(shape[0]), int(shape[1]))
        self.dtype = np.dtype(dtype)
        self._row_bytes = self.shape[1] * self.dtype.itemsize
        self._lock = threading.Lock()

    @classmethod
    def open(cls, path: str | Path) -> RowFile:
        """Parse the ``.npy`` header (never unpickles) and open the file for row reads."""
        with open(path, "rb") as fh:
            version, header = read_npy_header(fh)
            if header is None:
                raise InputError(f"{path}: unsupported .npy format version {version}")
            shape, fortran, dtype = header
            offset = fh.tell()
        if fortran or len(shape) != 2 or dtype.hasobject:
            raise InputError(f"{path}: expected a C-ordered 2-D numeric array")
        return cls(path, offset, shape, dtype)

    def __del__(self) -> None:
        try:
            os.close(self._fd)
        except (OSError, AttributeError):
            pass

    def __len__(self) -> int:
        return self.shape[0]

    def _read_block(self, start: int, stop: int) -> np.ndarray:
        n = max(0, stop - start)
        raw = os.pread(self._fd, n * self._row_bytes, self._header + start * self._row_bytes)
        return np.frombuffer(raw, dtype=self.dtype).reshape(n, self.shape[1])

    def __getitem__(self, key: Any) -> np.ndarray:
        if isinstance(key, slice):
            start, stop, step = key.indices(self.shape[0])
            block = self._read_block(start, stop)
            return block[::step] if step != 1 else block
        if isinstance(key, (int, np.integer)):
            i = int(key) + (self.shape[0] if key < 0 else 0)
            return self._read_block(i, i + 1)[0]
        rows = np.asarray(key, dtype=np.int64).reshape(-1)
        out = np.empty((rows.size, self.shape[1]), dtype=self.dtype)
        for n, r in enumerate(rows):
            out[n] = self._read_block(int(r), int(r) + 1)[0]
        return out

    def blocks(self, size: int = 65536) -> Iterator[np.ndarray]:
        for start in range(0, self.shape[0], size):
            yield self._read_block(start, min(start + size, self.shape[0]))

    def __iter__(self) -> Iterator[np.ndarray]:
        for block in self.blocks():
            yield from block

    def __matmul__(self, other: np.ndarray) -> np.ndarray:
        return np.concatenate([block @ other for block in self.blocks()]) if self.shape[0] else np.zeros(0)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        full = self._read_block(0, self.shape[0])
        return full.astype(dtype) if dtype is not None else full
