"""No pickle, eval, exec or unsafe yaml anywhere in the package."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "kg_rag"
BANNED_MODULES = {"pickle", "dill", "cloudpickle", "marshal", "shelve"}
BANNED_CALLS = {"eval", "exec", "compile", "__import__"}


def test_package_has_no_unsafe_deserialisation_or_code_execution():
    problems = []
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                problems += [
                    f"{path}:{node.lineno} import {a.name}"
                    for a in node.names
                    if a.name.split(".")[0] in BANNED_MODULES
                ]
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in BANNED_MODULES:
                problems.append(f"{path}:{node.lineno} from {node.module}")
            elif isinstance(node, ast.Call):
                func = node.func
                if isinstance(func, ast.Name) and func.id in BANNED_CALLS:
                    problems.append(f"{path}:{node.lineno} {func.id}()")
                if isinstance(func, ast.Attribute) and func.attr == "load" and getattr(func.value, "id", "") == "yaml":
                    problems.append(f"{path}:{node.lineno} yaml.load")
                if isinstance(func, ast.Attribute) and func.attr == "load" and getattr(func.value, "id", "") == "np":
                    kw = {k.arg: k.value for k in node.keywords}
                    if not (isinstance(kw.get("allow_pickle"), ast.Constant) and kw["allow_pickle"].value is False):
                        problems.append(f"{path}:{node.lineno} np.load without allow_pickle=False")
    assert problems == []
