"""The graph as flat rows (scalars and string lists), shared by the GraphML and Neo4j writers, and the atomic
file writing every writer uses (an export interrupted half-way never leaves a half-written file)."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from kg_rag.errors import InputError, OutputExistsError
from kg_rag.model.graph import KnowledgeGraph


def entity_rows(kg: KnowledgeGraph) -> Iterator[dict[str, Any]]:
    """One row per entity: key, name, type, the joined description, every description record as JSON (with the
    chunk that gave it), and the chunks and documents that mention it."""
    for rec in kg.entity_records():
        chunks = rec["chunk_ids"]
        docs = [kg.chunks[c].doc_id for c in chunks if c in kg.chunks]
        yield {
            "key": rec["key"],
            "name": rec["name"],
            "entity_type": rec["entity_type"],
            "description": "; ".join(dict.fromkeys(d["text"] for d in rec["descriptions"])),
            "descriptions_json": json.dumps(rec["descriptions"], ensure_ascii=False),
            "chunk_ids": list(chunks),
            "doc_ids": list(dict.fromkeys(docs)),
        }


def relation_rows(kg: KnowledgeGraph) -> Iterator[dict[str, Any]]:
    """One row per relation (synonym links included, ``kind`` says which), in its stored direction: source and
    target keys, id, type, predicate, description, the first evidence quote, every evidence record as JSON,
    the chunks and documents it was seen in, its weight and confidence (``None`` when unknown)."""
    for rel in kg.relations(include_synonyms=True):
        attrs = kg.graph.edges[rel.source, rel.target, rel.id]
        yield {
            "source": rel.source,
            "target": rel.target,
            "id": rel.id,
            "relation_type": rel.relation_type,
            "kind": rel.kind,
            "predicate": rel.predicate,
            "description": rel.description,
            "evidence": rel.evidence_quote,
            "evidence_json": json.dumps([vars(e) for e in rel.evidence], ensure_ascii=False),
            "chunk_ids": rel.chunk_ids,
            "doc_ids": rel.doc_ids,
            "weight": rel.weight,
            "confidence": rel.confidence,
            "score": attrs.get("score"),
        }


@contextmanager
def atomic_file(path: Path, mode: str = "w", **kwargs: Any) -> Iterator[IO[Any]]:
    """A file written under a temporary name and renamed into place when the block succeeds."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with open(tmp, mode, **kwargs) as fh:
            yield fh
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def check_target(path: Path, *, folder: bool = False, overwrite: bool = False) -> None:
    """Refuse an output that would overwrite the wrong kind of thing (a folder for a file, or the reverse), or,
    unless ``overwrite``, anything at all: an existing file, or for a folder export a folder that is not empty
    (``FileExistsError``)."""
    if folder and path.exists() and not path.is_dir():
        raise InputError(f"{path}: exists and is not a folder (the neo4j export writes a folder)")
    if not folder and path.is_dir():
        raise InputError(f"{path}: is a folder; give a file name")
    if overwrite:
        return
    if folder and path.is_dir() and any(path.iterdir()):
        raise OutputExistsError(f"{path}: the folder is not empty; pass overwrite=True to replace it")
    if not folder and (path.exists() or path.is_symlink()):
        raise OutputExistsError(f"{path}: the file exists; pass overwrite=True to replace it")
