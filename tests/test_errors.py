"""One error tree (``kg_rag/errors.py``): every error kg-rag raises for bad input or configuration is a
``KGRagError``, so a caller catches them all with one class; each keeps the built-in base it had
(``ValueError``, ``KeyError``, ...), so code catching that still works."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

from kg_rag.errors import (
    InputError,
    InputNotFoundError,
    InputTypeError,
    KGRagError,
    OutputExistsError,
    UnknownNameError,
)

ROOT = Path(__file__).resolve().parents[1] / "kg_rag"
BUILT_IN_INPUT_ERRORS = {"ValueError", "TypeError", "KeyError", "FileNotFoundError", "FileExistsError"}


def _raises() -> list[tuple[str, int, str]]:
    found = []
    for path in ROOT.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and isinstance(node.exc.func, ast.Name):
                found.append((str(path.relative_to(ROOT.parent)), node.lineno, node.exc.func.id))
    return found


# not about a caller's input: a generation a writer removed meanwhile (the opener tries the next one), a
# programming guard in the table definitions, a value parsed and caught within one function
INTERNAL = {
    ("kg_rag/store/locking.py", "FileNotFoundError"),
    ("kg_rag/store/postgres/tables.py", "KeyError"),
    ("kg_rag/store/postgres/store.py", "TypeError"),
}


def test_no_plain_built_in_error_is_raised_for_bad_input():
    plain = [r for r in _raises() if r[2] in BUILT_IN_INPUT_ERRORS and (r[0], r[2]) not in INTERNAL]
    assert not plain, plain


def test_every_error_class_of_kg_rag_is_in_the_tree():
    outside = []
    for path in ROOT.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if not any(isinstance(n, ast.ClassDef) and n.name.endswith(("Error", "Refused")) for n in tree.body):
            continue
        module = importlib.import_module(".".join(path.relative_to(ROOT.parent).with_suffix("").parts))
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and issubclass(cls, BaseException) and not issubclass(cls, KGRagError):
                outside.append(f"{module.__name__}.{name}")
    assert not outside, outside


@pytest.mark.parametrize(
    ("error", "built_in"),
    [
        (InputError, ValueError),
        (UnknownNameError, KeyError),
        (InputTypeError, TypeError),
        (InputNotFoundError, FileNotFoundError),
        (OutputExistsError, FileExistsError),
    ],
)
def test_each_kind_is_caught_as_before(error, built_in):
    with pytest.raises(built_in):
        raise error("x")
    with pytest.raises(KGRagError):
        raise error("x")


def test_an_unknown_name_reads_as_its_message():
    assert str(UnknownNameError("no document 'a.md' in idx")) == "no document 'a.md' in idx"


def test_bad_settings_and_unknown_documents_are_kg_rag_errors(tmp_path):
    from kg_rag.indexing import IndexWriter
    from kg_rag.query.params import QueryParams
    from kg_rag.store import DirectoryStore

    with pytest.raises(KGRagError, match="max_context_tokens"):
        QueryParams(max_context_tokens=-1)
    with pytest.raises(KGRagError, match="must be a kg_rag GraphStore"):
        IndexWriter("not a store")
    with pytest.raises(KGRagError, match="no such file"):
        from kg_rag.jsonio import load_json

        load_json(tmp_path / "missing.json")
    assert DirectoryStore(tmp_path / "idx").exists() is False
