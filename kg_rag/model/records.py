"""The records of the graph model — chunks, entities, directed relations and their evidence — and the one
place that turns them into plain dicts and back (every backend stores these dicts)."""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from kg_rag.errors import InputTypeError
from kg_rag.model.names import DEFAULT_ENTITY_TYPE, RELATED

EXTRACTED = "extracted"
SYNONYM_KIND = "synonym"


@dataclass
class Chunk:
    """A unit of source text. ``n_tokens`` is counted with tiktoken ``cl100k_base``."""

    id: str
    text: str
    doc_id: str
    metadata: dict[str, Any] = field(default_factory=dict)
    n_tokens: int = 0


@dataclass
class Evidence:
    """One observation of a relation: where it was seen and what supported it."""

    chunk_id: str | None = None
    doc_id: str | None = None
    quote: str | None = None
    confidence: float | None = None
    description: str | None = None
    weight: float = 1.0


@dataclass
class Document:
    """A source document: its stable id, where it came from and a hash of its content (so an unchanged
    document is never re-extracted)."""

    id: str
    source: str | None = None
    content_hash: str | None = None
    title: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class Description:
    """One statement about an entity, with where it came from (so deleting a document forgets it)."""

    text: str
    chunk_id: str | None = None
    doc_id: str | None = None


@dataclass
class Entity:
    key: str
    name: str
    entity_type: str = DEFAULT_ENTITY_TYPE
    descriptions: list[str] = field(default_factory=list)
    """The distinct description texts (their provenance is in ``description_records``)."""
    chunk_ids: list[str] = field(default_factory=list)
    description_records: list[Description] = field(default_factory=list)

    @property
    def description(self) -> str:
        return "; ".join(self.descriptions)


@dataclass
class Relation:
    """A directed typed relation ``source -[relation_type]-> target`` (endpoints are entity keys)."""

    id: str
    source: str
    target: str
    relation_type: str = RELATED
    predicate: str | None = None
    description: str | None = None
    evidence: list[Evidence] = field(default_factory=list)
    kind: str = EXTRACTED

    @property
    def weight(self) -> float:
        return float(sum(e.weight for e in self.evidence)) if self.evidence else 1.0

    @property
    def confidence(self) -> float | None:
        values = [e.confidence for e in self.evidence if e.confidence is not None]
        return max(values) if values else None

    @property
    def chunk_ids(self) -> list[str]:
        return list(dict.fromkeys(e.chunk_id for e in self.evidence if e.chunk_id))

    @property
    def doc_ids(self) -> list[str]:
        return list(dict.fromkeys(e.doc_id for e in self.evidence if e.doc_id))

    @property
    def chunk_id(self) -> str | None:
        ids = self.chunk_ids
        return ids[0] if ids else None

    @property
    def doc_id(self) -> str | None:
        ids = self.doc_ids
        return ids[0] if ids else None

    @property
    def evidence_quote(self) -> str | None:
        return next((e.quote for e in self.evidence if e.quote), None)


def relation_id(source_key: str, target_key: str, relation_type: str, predicate: str | None) -> str:
    """Stable id of a relation. Built from the *ordered* pair: (a, b) and (b, a) get different ids; and from the
    predicate's lemma key (the type's when there is no predicate), so variants of one predicate are one
    relation and re-typing never changes an id."""
    from kg_rag.model.predicates import relation_key

    raw = "\x1f".join([source_key, target_key, relation_key(predicate, relation_type)])
    return "r-" + hashlib.sha1(raw.encode("utf-8")).hexdigest()[:20]


# ------------------------------------------------------------------------------------------ codecs
EVIDENCE_FIELDS = ("chunk_id", "doc_id", "quote", "confidence", "description", "weight")


def evidence_record(ev: Mapping[str, Any]) -> dict[str, Any]:
    """A validated evidence dict (the fields of :class:`Evidence`; ids interned to share memory)."""
    unknown = set(ev) - set(EVIDENCE_FIELDS)
    if unknown:
        raise InputTypeError(f"unknown evidence field(s): {', '.join(sorted(unknown))}")
    out = {f: ev.get(f) for f in EVIDENCE_FIELDS}
    out["weight"] = float(1.0 if out["weight"] is None else out["weight"])
    for f in ("chunk_id", "doc_id"):
        if out[f] is not None:
            out[f] = sys.intern(str(out[f]))
    return out


def chunk_from_record(r: Mapping[str, Any]) -> Chunk:
    return Chunk(
        id=str(r["id"]),
        text=str(r["text"]),
        doc_id=str(r["doc_id"]),
        metadata=dict(r.get("metadata") or {}),
        n_tokens=int(r.get("n_tokens") or 0),
    )


def chunk_to_record(chunk: Chunk) -> dict[str, Any]:
    return asdict(chunk)


def description_record(d: Any) -> dict[str, Any]:
    """A validated description dict; a bare string (schema 1) becomes one without provenance."""
    if isinstance(d, str):
        return {"text": d, "chunk_id": None, "doc_id": None}
    if not isinstance(d, Mapping) or not isinstance(d.get("text"), str):
        raise InputTypeError(f"a description must be a string or {{text, chunk_id, doc_id}}, got {d!r}")
    unknown = set(d) - {"text", "chunk_id", "doc_id"}
    if unknown:
        raise InputTypeError(f"unknown description field(s): {', '.join(sorted(unknown))}")
    out = {"text": d["text"], "chunk_id": d.get("chunk_id"), "doc_id": d.get("doc_id")}
    for f in ("chunk_id", "doc_id"):
        if out[f] is not None:
            out[f] = sys.intern(str(out[f]))
    return out


def description_texts(records: Any) -> list[str]:
    """The distinct texts of description records, in order (case-insensitively de-duplicated)."""
    seen: set[str] = set()
    out = []
    for d in records or []:
        text = d["text"] if isinstance(d, Mapping) else str(d)
        if text.casefold() not in seen:
            seen.add(text.casefold())
            out.append(text)
    return out


def entity_from_record(r: Mapping[str, Any]) -> Entity:
    records = [description_record(d) for d in r.get("descriptions") or []]
    return Entity(
        key=str(r["key"]),
        name=str(r["name"]),
        entity_type=str(r.get("entity_type") or DEFAULT_ENTITY_TYPE),
        descriptions=description_texts(records),
        chunk_ids=[str(c) for c in r.get("chunk_ids") or []],
        description_records=[Description(**d) for d in records],
    )


def relation_description(evidence: Any, predicate: str | None) -> str | None:
    """A relation's description: the first description its evidence carries, else its predicate."""
    for e in evidence or []:
        text = e.get("description") if isinstance(e, Mapping) else getattr(e, "description", None)
        if text:
            return str(text)
    return predicate


def document_from_record(r: Mapping[str, Any]) -> Document:
    return Document(
        id=str(r["id"]),
        source=None if r.get("source") is None else str(r["source"]),
        content_hash=None if r.get("content_hash") is None else str(r["content_hash"]),
        title=None if r.get("title") is None else str(r["title"]),
        metadata=dict(r.get("metadata") or {}),
    )


def relation_from_record(r: Mapping[str, Any]) -> Relation:
    """A :class:`Relation` from a stored record (``source``/``target`` plus the edge attributes)."""
    evidence = [evidence_record(e) for e in r.get("evidence") or []]
    predicate = r.get("predicate")
    description = relation_description(evidence, predicate)
    if description is None or (description == predicate and r.get("description")):
        description = r.get("description") or description  # schema 1 kept it on the relation itself
    return Relation(
        id=str(r["id"]),
        source=str(r["source"]),
        target=str(r["target"]),
        relation_type=str(r.get("relation_type") or RELATED),
        predicate=predicate,
        description=description,
        evidence=[Evidence(**e) for e in evidence],
        kind=str(r.get("kind") or EXTRACTED),
    )
