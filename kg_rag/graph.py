"""The knowledge-graph model: typed entities, typed **directed** relations, chunks, and their incidence.

Relations live on a NetworkX ``MultiDiGraph`` keyed by relation id, so two different relations between
the same pair both survive. An edge is stored ``source -> target`` exactly as it was extracted; no code
path here orders endpoints. The same (source, target, type, predicate) seen in several chunks becomes one
edge carrying several evidence records, which is what lets ``remove_document`` drop only the edges whose
*only* evidence was in the removed document.
"""

from __future__ import annotations

import hashlib
import logging
import sys
import threading
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

import networkx as nx

from kg_rag.schema import (
    DEFAULT_ENTITY_TYPE,
    RELATED,
    SYNONYM,
    canonical_key,
    clean_display_name,
    normalise_entity_type,
    normalise_predicate,
    upper_snake,
)

logger = logging.getLogger(__name__)

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
class Entity:
    key: str
    name: str
    entity_type: str = DEFAULT_ENTITY_TYPE
    descriptions: list[str] = field(default_factory=list)
    chunk_ids: list[str] = field(default_factory=list)

    @property
    def description(self) -> str:
        return "; ".join(self.descriptions)


@dataclass
class Relation:
    """A directed typed relation ``source -[relation_type]-> target``."""

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


_EVIDENCE_FIELDS = ("chunk_id", "doc_id", "quote", "confidence", "description", "weight")


def _evidence_record(ev: dict[str, Any]) -> dict[str, Any]:
    """A validated evidence dict (the fields of :class:`Evidence`, ids interned to share memory)."""
    unknown = set(ev) - set(_EVIDENCE_FIELDS)
    if unknown:
        raise TypeError(f"unknown evidence field(s): {', '.join(sorted(unknown))}")
    out = {f: ev.get(f) for f in _EVIDENCE_FIELDS}
    out["weight"] = float(1.0 if out["weight"] is None else out["weight"])
    for f in ("chunk_id", "doc_id"):
        if out[f] is not None:
            out[f] = sys.intern(str(out[f]))
    return out


def relation_id(source_key: str, target_key: str, relation_type: str, predicate: str | None) -> str:
    """Stable id of a relation. Built from the *ordered* pair: (a, b) and (b, a) get different ids."""
    raw = "\x1f".join([source_key, target_key, relation_type, normalise_predicate(predicate or "")])
    return "r-" + hashlib.sha1(raw.encode("utf-8")).hexdigest()[:20]


class KnowledgeGraph:
    """Typed directed knowledge graph with chunk provenance.

    ``graph`` is the editable NetworkX model (nodes: canonical entity keys; edges keyed by relation id).
    Node attributes: ``name, entity_type, descriptions, chunk_ids``. Edge attributes mirror
    :class:`Relation`. Mutations take a re-entrant lock so concurrent writers cannot interleave.
    """

    def __init__(self) -> None:
        self.graph: nx.MultiDiGraph = nx.MultiDiGraph()
        self.chunks: dict[str, Chunk] = {}
        self._chunk_entities: dict[str, set[str]] = {}
        self._edge_index: dict[str, tuple[str, str]] = {}
        self._lock = threading.RLock()
        self.version = 0
        """Incremented on every mutation; derived structures (indexes) compare it to detect staleness."""

    # ------------------------------------------------------------------ chunks
    def add_chunk(self, chunk: Chunk) -> None:
        """Add or replace a chunk (text, metadata). Replacing keeps its entity incidence."""
        if not chunk.id:
            raise ValueError("chunk id must be a non-empty string")
        with self._lock:
            self.chunks[chunk.id] = chunk
            self._chunk_entities.setdefault(chunk.id, set())
            self.version += 1

    def documents(self) -> list[str]:
        return list(dict.fromkeys(c.doc_id for c in self.chunks.values()))

    # ---------------------------------------------------------------- entities
    def add_entity(
        self,
        name: str,
        entity_type: str | None = None,
        description: str | None = None,
        chunk_id: str | None = None,
    ) -> str:
        """Add or merge an entity; returns its canonical key.

        Surface variants merge on :func:`canonical_key`. A specific type replaces the generic default;
        a conflicting specific type is logged and the first one kept. Descriptions accumulate, de-duplicated.
        """
        display = clean_display_name(name)
        if not display:
            raise ValueError("entity name must be a non-empty string")
        key = canonical_key(display)
        etype = normalise_entity_type(entity_type)
        with self._lock:
            if key not in self.graph:
                self.graph.add_node(key, name=display, entity_type=etype, descriptions=[], chunk_ids=[])
            attrs = self.graph.nodes[key]
            if etype != DEFAULT_ENTITY_TYPE and attrs["entity_type"] != etype:
                if attrs["entity_type"] == DEFAULT_ENTITY_TYPE:
                    attrs["entity_type"] = etype
                else:
                    logger.debug("entity %r typed %s and %s; keeping the first", key, attrs["entity_type"], etype)
            desc = " ".join(str(description).split()) if description else ""
            if desc and desc.casefold() not in {d.casefold() for d in attrs["descriptions"]}:
                attrs["descriptions"].append(desc)
            if chunk_id is not None:
                self._link(key, chunk_id)
            self.version += 1
        return key

    def _link(self, key: str, chunk_id: str) -> None:
        linked = self._chunk_entities.setdefault(chunk_id, set())
        if key not in linked:
            linked.add(key)
            self.graph.nodes[key]["chunk_ids"].append(chunk_id)

    def get_entity(self, name_or_key: str) -> Entity | None:
        key = name_or_key if name_or_key in self.graph else canonical_key(name_or_key)
        if key not in self.graph:
            return None
        a = self.graph.nodes[key]
        return Entity(key, a["name"], a["entity_type"], list(a["descriptions"]), list(a["chunk_ids"]))

    def entities(self) -> Iterator[Entity]:
        for key in list(self.graph.nodes):
            entity = self.get_entity(key)
            if entity is not None:
                yield entity

    def entities_of_chunk(self, chunk_id: str) -> set[str]:
        return set(self._chunk_entities.get(chunk_id, ()))

    def chunks_of_entity(self, name_or_key: str) -> list[str]:
        entity = self.get_entity(name_or_key)
        return entity.chunk_ids if entity else []

    # --------------------------------------------------------------- relations
    def add_relation(
        self,
        source: str,
        target: str,
        relation_type: str | None = None,
        *,
        predicate: str | None = None,
        description: str | None = None,
        evidence: str | None = None,
        confidence: float | None = None,
        chunk_id: str | None = None,
        doc_id: str | None = None,
        weight: float = 1.0,
        source_type: str | None = None,
        target_type: str | None = None,
    ) -> str:
        """Add the directed relation ``source -[relation_type]-> target`` and return its id.

        ``relation_type`` is normalised to UPPER_SNAKE (``RELATED`` when missing). The endpoints are
        created if needed and linked to ``chunk_id``. Re-adding the same relation appends evidence.
        """
        if confidence is not None and not 0.0 <= float(confidence) <= 1.0:
            raise ValueError(f"confidence must be in [0, 1], got {confidence!r}")
        if weight < 0:
            raise ValueError(f"weight must be >= 0, got {weight!r}")
        rtype = upper_snake(relation_type)
        if rtype == SYNONYM:
            raise ValueError(f"{SYNONYM} is reserved for entity resolution; use add_synonym()")
        with self._lock:
            if chunk_id is not None and doc_id is None and chunk_id in self.chunks:
                doc_id = self.chunks[chunk_id].doc_id
            src = self.add_entity(source, source_type, chunk_id=chunk_id)
            tgt = self.add_entity(target, target_type, chunk_id=chunk_id)
            pred = " ".join(str(predicate).split()) if predicate else None
            rid = relation_id(src, tgt, rtype, pred)
            ev = asdict(
                Evidence(
                    chunk_id=chunk_id,
                    doc_id=doc_id,
                    quote=" ".join(evidence.split()) if evidence else None,
                    confidence=None if confidence is None else float(confidence),
                    description=" ".join(description.split()) if description else None,
                    weight=float(weight),
                )
            )
            if rid in self._edge_index:
                attrs = self.graph.edges[src, tgt, rid]
                if ev not in attrs["evidence"]:
                    attrs["evidence"].append(ev)
                if not attrs.get("description") and ev["description"]:
                    attrs["description"] = ev["description"]
            else:
                self.graph.add_edge(
                    src,
                    tgt,
                    key=rid,
                    id=rid,
                    relation_type=rtype,
                    predicate=pred,
                    description=ev["description"] or pred,
                    evidence=[ev],
                    kind=EXTRACTED,
                )
                self._edge_index[rid] = (src, tgt)
            self.version += 1
        return rid

    def add_synonym(self, a: str, b: str, score: float) -> None:
        """Link two entities judged to be the same thing (both directions, ``kind="synonym"``)."""
        ka, kb = canonical_key(a) if a not in self.graph else a, canonical_key(b) if b not in self.graph else b
        if ka not in self.graph or kb not in self.graph:
            raise ValueError(f"both entities must exist to link them as synonyms: {a!r}, {b!r}")
        if ka == kb:
            return
        with self._lock:
            for u, v in ((ka, kb), (kb, ka)):
                rid = relation_id(u, v, SYNONYM, None)
                if rid not in self._edge_index:
                    self.graph.add_edge(
                        u,
                        v,
                        key=rid,
                        id=rid,
                        relation_type=SYNONYM,
                        predicate=None,
                        description=f"similarity {score:.3f}",
                        evidence=[],
                        kind=SYNONYM_KIND,
                        score=float(score),
                    )
                    self._edge_index[rid] = (u, v)
            self.version += 1

    def _relation_from(self, u: str, v: str, attrs: dict[str, Any]) -> Relation:
        return Relation(
            id=attrs["id"],
            source=u,
            target=v,
            relation_type=attrs["relation_type"],
            predicate=attrs.get("predicate"),
            description=attrs.get("description"),
            evidence=[Evidence(**e) for e in attrs.get("evidence", [])],
            kind=attrs.get("kind", EXTRACTED),
        )

    def get_relation(self, rid: str) -> Relation | None:
        ends = self._edge_index.get(rid)
        if ends is None:
            return None
        return self._relation_from(ends[0], ends[1], self.graph.edges[ends[0], ends[1], rid])

    def relations(self, include_synonyms: bool = False) -> Iterator[Relation]:
        for u, v, attrs in list(self.graph.edges(data=True)):
            if include_synonyms or attrs.get("kind", EXTRACTED) == EXTRACTED:
                yield self._relation_from(u, v, attrs)

    def find_relations(self, source: str, target: str, relation_type: str | None = None) -> list[Relation]:
        """Extracted relations stored exactly as ``source -> target`` (never the reverse)."""
        src, tgt = canonical_key(source), canonical_key(target)
        if not self.graph.has_edge(src, tgt):
            return []
        out = []
        for _, attrs in self.graph[src][tgt].items():
            if attrs.get("kind", EXTRACTED) != EXTRACTED:
                continue
            if relation_type is None or attrs["relation_type"] == upper_snake(relation_type):
                out.append(self._relation_from(src, tgt, attrs))
        return out

    # ----------------------------------------------------------------- removal
    def remove_document(self, doc_id: str) -> dict[str, int]:
        """Remove a document's chunks, the evidence they gave, edges left without evidence and entities
        left without any chunk. Returns what was removed, by kind."""
        with self._lock:
            chunk_ids = {cid for cid, c in self.chunks.items() if c.doc_id == doc_id}
            removed = {"chunks": len(chunk_ids), "relations": 0, "entities": 0}
            if not chunk_ids:
                return removed
            touched: set[str] = set()
            for cid in chunk_ids:
                del self.chunks[cid]
                touched |= self._chunk_entities.pop(cid, set())
            for key in touched:
                attrs = self.graph.nodes[key]
                attrs["chunk_ids"] = [c for c in attrs["chunk_ids"] if c not in chunk_ids]
            dead_edges = []
            for u, v, k, attrs in self.graph.edges(list(touched), keys=True, data=True):
                if attrs.get("kind", EXTRACTED) != EXTRACTED:
                    continue
                kept = [e for e in attrs["evidence"] if e.get("chunk_id") not in chunk_ids]
                if len(kept) != len(attrs["evidence"]):
                    attrs["evidence"] = kept
                    if not kept:
                        dead_edges.append((u, v, k))
            for u, v, k in dead_edges:
                self.graph.remove_edge(u, v, key=k)
                self._edge_index.pop(k, None)
            removed["relations"] = len(dead_edges)
            orphans = [key for key in touched if not self.graph.nodes[key]["chunk_ids"]]
            for key in orphans:
                for _, _, k in list(self.graph.in_edges(key, keys=True)) + list(self.graph.out_edges(key, keys=True)):
                    self._edge_index.pop(k, None)
                self.graph.remove_node(key)
            removed["entities"] = len(orphans)
            self.version += 1
            return removed

    # ------------------------------------------------------------------- stats
    def stats(self) -> dict[str, Any]:
        types: dict[str, int] = {}
        synonyms = 0
        for _, _, attrs in self.graph.edges(data=True):
            if attrs.get("kind", EXTRACTED) == EXTRACTED:
                types[attrs["relation_type"]] = types.get(attrs["relation_type"], 0) + 1
            else:
                synonyms += 1
        return {
            "chunks": len(self.chunks),
            "documents": len(self.documents()),
            "entities": self.graph.number_of_nodes(),
            "relations": sum(types.values()),
            "relation_types": dict(sorted(types.items(), key=lambda kv: (-kv[1], kv[0]))),
            "synonym_links": synonyms,
        }

    # ------------------------------------------------------------- records io
    def entity_records(self) -> Iterator[dict[str, Any]]:
        for key, a in self.graph.nodes(data=True):
            yield {
                "key": key,
                "name": a["name"],
                "entity_type": a["entity_type"],
                "descriptions": list(a["descriptions"]),
                "chunk_ids": list(a["chunk_ids"]),
            }

    def relation_records(self) -> Iterator[dict[str, Any]]:
        for u, v, a in self.graph.edges(data=True):
            yield {"source": u, "target": v, **{k: a[k] for k in sorted(a)}}

    def chunk_records(self) -> Iterator[dict[str, Any]]:
        for c in self.chunks.values():
            yield asdict(c)

    @classmethod
    def from_records(
        cls,
        entities: Iterable[dict[str, Any]],
        relations: Iterable[dict[str, Any]],
        chunks: Iterable[dict[str, Any]],
    ) -> KnowledgeGraph:
        """Rebuild a graph from its records (the inverse of the ``*_records`` methods).

        Raises ``KeyError``/``TypeError`` on malformed records; the storage layer turns those into an
        error naming the file.
        """
        kg = cls()
        for c in chunks:
            kg.chunks[c["id"]] = Chunk(
                id=str(c["id"]),
                text=str(c["text"]),
                doc_id=str(c["doc_id"]),
                metadata=dict(c.get("metadata") or {}),
                n_tokens=int(c.get("n_tokens") or 0),
            )
            kg._chunk_entities.setdefault(c["id"], set())
        for e in entities:
            key = str(e["key"])
            chunk_ids = [str(x) for x in e.get("chunk_ids", [])]
            kg.graph.add_node(
                key,
                name=str(e["name"]),
                entity_type=str(e["entity_type"]),
                descriptions=[str(d) for d in e.get("descriptions", [])],
                chunk_ids=chunk_ids,
            )
            for cid in chunk_ids:
                kg._chunk_entities.setdefault(cid, set()).add(key)
        for r in relations:
            u, v = str(r["source"]), str(r["target"])
            if u not in kg.graph or v not in kg.graph:
                raise KeyError(f"relation {r.get('id')!r} refers to an unknown entity")
            attrs = {k: val for k, val in r.items() if k not in ("source", "target")}
            attrs["evidence"] = [_evidence_record(ev) for ev in attrs.get("evidence", [])]
            attrs["relation_type"] = sys.intern(str(attrs.get("relation_type", RELATED)))
            kg.graph.add_edge(u, v, key=attrs["id"], **attrs)
            kg._edge_index[attrs["id"]] = (u, v)
        return kg

    def __len__(self) -> int:
        return self.graph.number_of_nodes()

    def __repr__(self) -> str:
        s = self.stats()
        return f"KnowledgeGraph(entities={s['entities']}, relations={s['relations']}, chunks={s['chunks']})"
