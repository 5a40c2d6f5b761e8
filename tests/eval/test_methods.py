"""Evaluation method files (``kg_rag/eval/methods.py``): every file in ``methods/`` is valid and builds."""

from __future__ import annotations

import pytest

from kg_rag.eval.methods import MethodSpec, load_method_specs

from ..conftest import REPO


def test_method_files_in_the_repo_are_valid():
    specs = load_method_specs(REPO / "methods")
    assert {"dense", "bm25", "seed003", "kg-rag"} <= set(specs)
    for spec in specs.values():
        assert spec.type in ("dense", "bm25", "kg") and spec.description
    with pytest.raises(ValueError, match="unknown type"):
        from kg_rag.eval.methods import build_method

        build_method(MethodSpec("x", "magic"), None, None)
