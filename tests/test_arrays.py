"""kg_rag.arrays returns exactly what np.unique returns (it replaces it on the query's hot path)."""

from __future__ import annotations

import numpy as np
import pytest

from kg_rag.arrays import in_sorted, unique_first, unique_ints


@pytest.mark.parametrize(
    "values",
    [
        np.zeros(0, dtype=np.int64),
        np.array([7], dtype=np.int64),
        np.array([3, 1, 3, 2, 1, 3], dtype=np.int64),
        np.array([[4, 4], [0, 9]], dtype=np.int32),  # flattened, dtype kept
        np.random.default_rng(0).integers(-5, 50, 1000),
        np.random.default_rng(1).integers(0, 10**9, 5000),
    ],
)
def test_same_as_numpy_unique(values):
    got = unique_ints(values)
    want = np.unique(values)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    got_u, got_first = unique_first(values)
    want_u, want_first = np.unique(values, return_index=True)
    np.testing.assert_array_equal(got_u, want_u)
    np.testing.assert_array_equal(got_first, want_first)  # the first occurrence of each value


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_in_sorted_is_isin(seed):
    rng = np.random.default_rng(seed)
    allowed = np.unique(rng.integers(0, 200, 60))
    values = rng.integers(-10, 220, 500)
    np.testing.assert_array_equal(in_sorted(values, allowed), np.isin(values, allowed))
    assert in_sorted(values, allowed[:0]).sum() == 0 and in_sorted(values[:0], allowed).size == 0
