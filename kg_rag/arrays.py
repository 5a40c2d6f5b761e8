"""Sorted distinct values of integer handle arrays, by sorting, and membership in such a sorted array.

NumPy 2.3+ computes ``np.unique`` by hashing; on the handle arrays a query gathers (10^4-10^6 int64 values, many
repeated) that is much slower than sorting, and it made ``ppr`` — which gathers a neighbourhood of most of a
small graph per query — spend a large share of its time there (measured: evaluation/design-figures.md).
These return exactly what ``np.unique`` returns, so swapping them in changes no result.
"""

from __future__ import annotations

import numpy as np


def _first_of_runs(sorted_values: np.ndarray) -> np.ndarray:
    keep = np.empty(sorted_values.size, dtype=bool)
    if sorted_values.size:
        keep[0] = True
        np.not_equal(sorted_values[1:], sorted_values[:-1], out=keep[1:])
    return keep


def unique_ints(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)``: the sorted distinct values (flattened, dtype kept)."""
    s = np.sort(np.asarray(values).reshape(-1))
    return s[_first_of_runs(s)]


def unique_first(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_index=True)``: the sorted distinct values and where each first occurs."""
    a = np.asarray(values).reshape(-1)
    order = np.argsort(a, kind="stable")
    s = a[order]
    keep = _first_of_runs(s)
    return s[keep], order[keep]


def in_sorted(values: np.ndarray, sorted_values: np.ndarray) -> np.ndarray:
    """Mask of ``values`` found in ``sorted_values`` (ascending, distinct): ``np.isin`` by binary search."""
    v = np.asarray(values).reshape(-1)
    if sorted_values.size == 0 or v.size == 0:
        return np.zeros(v.size, dtype=bool)
    at = np.minimum(np.searchsorted(sorted_values, v), sorted_values.size - 1)
    return sorted_values[at] == v
