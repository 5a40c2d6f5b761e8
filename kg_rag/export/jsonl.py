"""kg-rag's own records as one JSON-lines file: a ``{"record": "document"|"chunk"|"entity"|"relation", ...}``
object per line, exactly the records the index stores (evidence, description provenance and synonym links
included), so :func:`read_jsonl` rebuilds the same :class:`KnowledgeGraph`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kg_rag.errors import InputError
from kg_rag.export.rows import atomic_file, check_target
from kg_rag.model.graph import KnowledgeGraph

KINDS = ("document", "chunk", "entity", "relation")


def write_jsonl(kg: KnowledgeGraph, path: Path, *, overwrite: bool = False) -> dict[str, Any]:
    check_target(path, overwrite=overwrite)
    counts = dict.fromkeys(KINDS, 0)
    sources = {
        "document": kg.document_records(),
        "chunk": kg.chunk_records(),
        "entity": kg.entity_records(),
        "relation": kg.relation_records(),
    }
    with atomic_file(path, encoding="utf-8") as fh:
        for kind in KINDS:
            for rec in sources[kind]:
                if kind == "document":
                    rec = {k: v for k, v in rec.items() if k != "chunks"}  # a count, derived
                fh.write(json.dumps({"record": kind, **rec}, ensure_ascii=False, sort_keys=True) + "\n")
                counts[kind] += 1
    return {"files": [str(path)], "entities": counts["entity"], "relations": counts["relation"]}


def read_jsonl(path: str | Path) -> KnowledgeGraph:
    """The graph a :func:`write_jsonl` file holds (``ValueError`` naming the line for a malformed one)."""
    parts: dict[str, list[dict[str, Any]]] = {k: [] for k in KINDS}
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                parts[rec.pop("record")].append(rec)
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                raise InputError(f"{path}:{n}: not a kg-rag export record ({type(exc).__name__}: {exc})") from exc
    try:
        return KnowledgeGraph.from_records(parts["entity"], parts["relation"], parts["chunk"], parts["document"])
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"{path}: inconsistent records ({type(exc).__name__}: {exc})") from exc
