"""Neo4j: ``entities.csv`` and ``relations.csv`` with the headers ``neo4j-admin database import`` expects, and
``load.cypher``, a ``LOAD CSV`` script for a running server (``cypher-shell -f load.cypher``).

A ``CREATE`` in Cypher names its relationship type literally, so the script needs one statement per type. Each
statement reads its own file, ``relations_by_type/NNNN_TYPE.csv`` (the rows of that type, same columns as
``relations.csv``), so loading reads every row once: filtering ``relations.csv`` by type instead read the whole
file once per type, and an OpenIE graph has thousands of types.

Every relation is one relationship from its stored source (``:START_ID``) to its stored target (``:END_ID``),
typed with its relation type (``:TYPE``); evidence and provenance are properties. List properties use an array
delimiter that occurs in no exported value (``;`` unless a value holds one), named in both the script and the
``import.sh`` command, so a document id with a ``;`` is never split.
"""

from __future__ import annotations

import csv
import re
import shutil
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kg_rag.errors import InputError
from kg_rag.export.rows import atomic_file, check_target, entity_rows, relation_rows
from kg_rag.model.graph import KnowledgeGraph

ENTITY_COLUMNS = [
    ("key:ID(Entity)", "key"),
    ("name", "name"),
    ("entity_type", "entity_type"),
    ("description", "description"),
    ("descriptions_json", "descriptions_json"),
    ("chunk_ids:string[]", "chunk_ids"),
    ("doc_ids:string[]", "doc_ids"),
    (":LABEL", None),
]
RELATION_COLUMNS = [
    (":START_ID(Entity)", "source"),
    (":END_ID(Entity)", "target"),
    (":TYPE", "relation_type"),
    ("id", "id"),
    ("kind", "kind"),
    ("predicate", "predicate"),
    ("description", "description"),
    ("evidence", "evidence"),
    ("evidence_json", "evidence_json"),
    ("chunk_ids:string[]", "chunk_ids"),
    ("doc_ids:string[]", "doc_ids"),
    ("weight:double", "weight"),
    ("confidence:double", "confidence"),
]
_DELIMITERS = (";", "|", "\u001f")
_BATCH = 10_000
BY_TYPE = "relations_by_type"
"""The folder of one CSV per relation type, which ``load.cypher`` reads."""


def _delimiter(entities: list[dict[str, Any]], relations: list[dict[str, Any]]) -> str:
    values = [v for rows in (entities, relations) for r in rows for k in ("chunk_ids", "doc_ids") for v in r[k]]
    for d in _DELIMITERS:
        if not any(d in v for v in values):
            return d
    raise InputError("every array delimiter (; | \\x1f) occurs in some chunk or document id")


def _cell(value: Any, delimiter: str) -> Any:
    if value is None:
        return ""
    if isinstance(value, list):
        return delimiter.join(value)
    return value


def _props(columns: Sequence[tuple[str, str | None]], skip: tuple[str, ...], delimiter: str) -> str:
    """Cypher property map reading each CSV column back with its type."""
    parts = []
    for header, name in columns:
        if name is None or header in skip:
            continue
        col = f"row.`{header}`"
        if header.endswith(":string[]"):
            value = f"CASE WHEN {col} IS NULL THEN [] ELSE split({col}, '{_escape(delimiter)}') END"
        elif header.endswith(":double"):
            value = f"toFloat({col})"
        else:
            value = col
        parts.append(f"{name}: {value}")
    return "{" + ", ".join(parts) + "}"


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "\\'").replace("\u001f", "\\u001F")


def type_files(types: list[str]) -> dict[str, str]:
    """Relation type -> its file under :data:`BY_TYPE`: numbered (so two types never share a file, even on a
    case-insensitive file system), then the type with anything but letters, digits, ``_`` and ``-`` as ``_``."""
    width = max(4, len(str(len(types))))
    return {t: f"{i:0{width}d}_{re.sub(r'[^A-Za-z0-9_-]', '_', t)[:64]}.csv" for i, t in enumerate(types, 1)}


def cypher_script(files: dict[str, str], delimiter: str) -> str:
    """The ``LOAD CSV`` script: entities first (unique key), then one statement per relationship type, each
    reading that type's own file (``files``: type -> file name under :data:`BY_TYPE`)."""
    entity_props = _props(ENTITY_COLUMNS, (), delimiter)
    rel_props = _props(RELATION_COLUMNS, (":START_ID(Entity)", ":END_ID(Entity)", ":TYPE"), delimiter)
    lines = [
        "// kg-rag export for Neo4j 5. Copy entities.csv and the relations_by_type folder into the server's import",
        "// folder, then:   cypher-shell -u neo4j -p PASSWORD -f load.cypher",
        "// Every relationship goes from its stored source to its stored target; its type is the relation type.",
        "// One statement per type (Cypher names a created type literally), each reading only its own file.",
        "CREATE CONSTRAINT kg_rag_entity_key IF NOT EXISTS FOR (e:Entity) REQUIRE e.key IS UNIQUE;",
        "",
        "LOAD CSV WITH HEADERS FROM 'file:///entities.csv' AS row",
        f"CALL {{ WITH row CREATE (:Entity {entity_props}) }} IN TRANSACTIONS OF {_BATCH} ROWS;",
    ]
    for t, name in files.items():
        lines += [
            "",
            f"LOAD CSV WITH HEADERS FROM 'file:///{BY_TYPE}/{name}' AS row",
            "CALL { WITH row",
            "  MATCH (s:Entity {key: row.`:START_ID(Entity)`}), (t:Entity {key: row.`:END_ID(Entity)`})",
            f"  CREATE (s)-[:`{t.replace('`', '``')}` {rel_props}]->(t)",
            f"}} IN TRANSACTIONS OF {_BATCH} ROWS;",
        ]
    return "\n".join(lines) + "\n"


def write_neo4j(kg: KnowledgeGraph, folder: Path, *, overwrite: bool = False) -> dict[str, Any]:
    """Write the export into ``folder`` (made if missing; a folder that is not empty is refused unless
    ``overwrite``, which replaces the four files and the :data:`BY_TYPE` folder and touches nothing else)."""
    check_target(folder, folder=True, overwrite=overwrite)
    entities = list(entity_rows(kg))
    relations = list(relation_rows(kg))
    delimiter = _delimiter(entities, relations)
    folder.mkdir(parents=True, exist_ok=True)
    with atomic_file(folder / "entities.csv", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow([h for h, _ in ENTITY_COLUMNS])
        for r in entities:
            w.writerow([_cell(r[n], delimiter) if n else "Entity" for _, n in ENTITY_COLUMNS])
    header = [h for h, _ in RELATION_COLUMNS]
    rows = [[_cell(r[n], delimiter) for _, n in RELATION_COLUMNS] for r in relations]
    with atomic_file(folder / "relations.csv", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    files = type_files(sorted({r["relation_type"] for r in relations}))
    _write_by_type(folder, files, header, rows, [r["relation_type"] for r in relations])
    with atomic_file(folder / "load.cypher", encoding="utf-8") as fh:
        fh.write(cypher_script(files, delimiter))
    shown = delimiter if delimiter != "\u001f" else "\\x1f"
    with atomic_file(folder / "import.sh", encoding="utf-8") as fh:
        fh.write(
            "#!/bin/sh\n# Offline bulk import into a new, stopped Neo4j 5 database (default name: neo4j).\n"
            f"neo4j-admin database import full --nodes=entities.csv --relationships=relations.csv \\\n"
            f"    --array-delimiter='{shown}' --multiline-fields=true \"${{1:-neo4j}}\"\n"
        )
    written = [str(folder / n) for n in ("entities.csv", "relations.csv", BY_TYPE, "load.cypher", "import.sh")]
    return {
        "files": written,
        "entities": len(entities),
        "relations": len(relations),
        "relation_type_files": len(files),
        "array_delimiter": delimiter,
    }


def _write_by_type(folder: Path, files: dict[str, str], header: list[str], rows: list[list[Any]], types: list[str]):
    """One CSV per relation type, written into a new folder that then replaces :data:`BY_TYPE` whole, so no
    file of an earlier export (a type since gone) is left for ``load.cypher`` to miss or a reader to mistake."""
    by_type: dict[str, list[list[Any]]] = {t: [] for t in files}
    for row, t in zip(rows, types):
        by_type[t].append(row)
    fresh = folder / f".{BY_TYPE}.{uuid.uuid4().hex[:8]}.tmp"
    fresh.mkdir()
    try:
        for t, name in files.items():
            with open(fresh / name, "w", newline="", encoding="utf-8") as fh:
                w = csv.writer(fh)
                w.writerow(header)
                w.writerows(by_type[t])
        target = folder / BY_TYPE
        if target.is_dir() and not target.is_symlink():
            old = folder / f".{BY_TYPE}.{uuid.uuid4().hex[:8]}.old"
            target.rename(old)
            fresh.rename(target)
            shutil.rmtree(old)
        else:
            if target.exists() or target.is_symlink():
                target.unlink()
            fresh.rename(target)
    finally:
        if fresh.exists():
            shutil.rmtree(fresh)
