"""Query-time thread discipline.

A query does many small matrix-vector products. On small machines, BLAS and OpenMP thread pools spinning next
to each other (numpy's OpenBLAS, FAISS's own OpenBLAS and OpenMP, torch) make them several times slower, so
retrieval runs with single-threaded native pools (measured: evaluation/design-figures.md).
The limit is reference-counted: concurrent queries share it, and the caller's setting is restored when the
last one ends.
Set ``KG_RAG_BLAS_THREADS=0`` to leave the pools alone.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_lock = threading.Lock()
_active = 0
_limiter: Any = None
_controller: Any = None


def _get_controller() -> Any:
    global _controller
    if _controller is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # optional: without it nothing is limited
            _controller = False
        else:
            _controller = ThreadpoolController()
    return _controller


@contextmanager
def query_threads() -> Iterator[None]:
    """Run the enclosed query work with ``KG_RAG_BLAS_THREADS`` (default 1) threads per native pool."""
    global _active, _limiter
    limit = int(os.environ.get("KG_RAG_BLAS_THREADS", "1"))
    if limit <= 0:
        yield
        return
    with _lock:
        _active += 1
        if _active == 1:
            controller = _get_controller()
            _limiter = controller.limit(limits=limit) if controller else None
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0 and _limiter is not None:
                _limiter.restore_original_limits()
                _limiter = None
