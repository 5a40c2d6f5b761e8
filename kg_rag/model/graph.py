"""The knowledge-graph model: typed entities, typed **directed** relations, chunks, documents, and their incidence.

Relations live on a NetworkX ``MultiDiGraph`` keyed by relation id, so two different relations between the
same pair both survive. An edge is stored ``source -> target`` exactly as it was extracted; no code path here
orders endpoints. Everything a document contributes carries its provenance: a relation seen in several chunks
is one edge with one evidence record per observation, and an entity's descriptions are records that name
their chunk. That is what lets :meth:`KnowledgeGraph.remove_document` forget exactly what a document said —
its chunks, its evidence, its descriptions, and the relations and entities nothing else supports.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import asdict, replace
from typing import TYPE_CHECKING, Any, cast

from kg_rag.errors import InputError, UnknownNameError
from kg_rag.model.names import (
    DEFAULT_ENTITY_TYPE,
    RELATED,
    SYNONYM,
    canonical_key,
    clean_display_name,
    clean_text,
    normalise_entity_type,
    one_line,
    upper_snake,
)
from kg_rag.model.records import (
    EXTRACTED,
    SYNONYM_KIND,
    Chunk,
    Document,
    Entity,
    Evidence,
    Relation,
    chunk_from_record,
    chunk_to_record,
    description_record,
    document_from_record,
    entity_from_record,
    evidence_record,
    relation_description,
    relation_from_record,
    relation_id,
)

if TYPE_CHECKING:
    import networkx as nx

    from kg_rag.model.relation_types import RelationTyper

logger = logging.getLogger(__name__)


class KnowledgeGraph:
    """Typed directed knowledge graph with chunk and document provenance.

    ``graph`` is the editable NetworkX model (nodes: canonical entity keys; edges keyed by relation id). Node
    attributes: ``name, entity_type, descriptions`` (records with provenance), ``chunk_ids``. Edge attributes
    mirror :class:`Relation` (a relation's description is derived from its evidence). ``docs`` is the
    document registry. Mutations take the re-entrant ``lock`` so concurrent writers cannot interleave.
    """

    def __init__(self) -> None:
        import networkx as nx  # here, not at the top: a query on a saved index builds no graph and skips its import

        self.graph: nx.MultiDiGraph = nx.MultiDiGraph()
        self.chunks: dict[str, Chunk] = {}
        self.docs: dict[str, Document] = {}
        self._chunk_entities: dict[str, set[str]] = {}
        self._edge_index: dict[str, tuple[str, str]] = {}
        self._type_conflicts: set[tuple[str, str]] = set()
        self.lock = threading.RLock()
        """Held by every mutation; hold it to read several things as one consistent view."""
        self.version = 0
        """Incremented on every mutation; derived structures (indexes) compare it to detect staleness."""

    # --------------------------------------------------------------- documents
    def add_document(
        self,
        doc_id: str,
        *,
        source: str | None = None,
        content_hash: str | None = None,
        title: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Document:
        """Register (or update) a document; chunks name it by ``doc_id``."""
        if not doc_id or not isinstance(doc_id, str):
            raise InputError("document id must be a non-empty string")
        doc_id = clean_text(doc_id)
        source, title = (clean_text(v) if isinstance(v, str) else v for v in (source, title))
        with self.lock:
            doc = self.docs.get(doc_id) or Document(doc_id)
            doc.source = source if source is not None else doc.source
            doc.content_hash = content_hash if content_hash is not None else doc.content_hash
            doc.title = title if title is not None else doc.title
            if metadata:
                doc.metadata.update(metadata)
            self.docs[doc_id] = doc
            self.version += 1
            return doc

    def documents(self) -> list[str]:
        """Every document id: registered ones and those named by chunks."""
        return list(dict.fromkeys([*self.docs, *(c.doc_id for c in self.chunks.values())]))

    def get_document(self, doc_id: str) -> Document | None:
        if doc_id in self.docs:
            return self.docs[doc_id]
        return Document(doc_id) if any(c.doc_id == doc_id for c in self.chunks.values()) else None

    # ------------------------------------------------------------------ chunks
    def add_chunk(self, chunk: Chunk) -> None:
        """Add or replace a chunk (text, metadata). Replacing keeps its entity incidence."""
        if not chunk.id:
            raise InputError("chunk id must be a non-empty string")
        chunk = _storable(chunk)
        with self.lock:
            self.chunks[chunk.id] = chunk
            self._chunk_entities.setdefault(chunk.id, set())
            if chunk.doc_id not in self.docs:
                self.docs[chunk.doc_id] = Document(chunk.doc_id)
            self.version += 1

    # ---------------------------------------------------------------- entities
    def add_entity(
        self,
        name: str,
        entity_type: str | None = None,
        description: str | None = None,
        chunk_id: str | None = None,
        doc_id: str | None = None,
    ) -> str:
        """Add or merge an entity; returns its canonical key.

        Surface variants merge on :func:`canonical_key`. A specific type replaces the generic default; a
        conflicting specific type is logged at WARNING (once per entity and type) and the first one kept.
        A description is recorded with the chunk (and document) that gave it.
        """
        display = clean_display_name(name)
        if not display:
            raise InputError("entity name must be a non-empty string")
        key = canonical_key(display)
        etype = normalise_entity_type(entity_type)
        with self.lock:
            if key not in self.graph:
                self.graph.add_node(key, name=display, entity_type=etype, descriptions=[], chunk_ids=[])
            attrs = self.graph.nodes[key]
            if etype != DEFAULT_ENTITY_TYPE and attrs["entity_type"] != etype:
                if attrs["entity_type"] == DEFAULT_ENTITY_TYPE:
                    attrs["entity_type"] = etype
                elif (key, etype) not in self._type_conflicts:
                    self._type_conflicts.add((key, etype))
                    logger.warning(
                        "entity %r is typed %s and %s (%r); keeping %s",
                        attrs["name"],
                        attrs["entity_type"],
                        etype,
                        display,
                        attrs["entity_type"],
                    )
            if chunk_id is not None and doc_id is None and chunk_id in self.chunks:
                doc_id = self.chunks[chunk_id].doc_id
            desc = one_line(description) if description else ""
            if desc:
                record = description_record({"text": desc, "chunk_id": chunk_id, "doc_id": doc_id})
                if record not in attrs["descriptions"]:
                    attrs["descriptions"].append(record)
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
        return entity_from_record({"key": key, **a})

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

        ``relation_type`` is normalised to UPPER_SNAKE (``RELATED`` when missing). The endpoints are created
        if needed and linked to ``chunk_id``. Re-adding the same relation appends evidence; the description
        belongs to this observation's evidence.
        """
        if confidence is not None and not 0.0 <= float(confidence) <= 1.0:
            raise InputError(f"confidence must be in [0, 1], got {confidence!r}")
        if weight < 0:
            raise InputError(f"weight must be >= 0, got {weight!r}")
        rtype = upper_snake(relation_type)
        if rtype == SYNONYM:
            raise InputError(f"{SYNONYM} is reserved for entity resolution; use add_synonym()")
        with self.lock:
            if chunk_id is not None and doc_id is None and chunk_id in self.chunks:
                doc_id = self.chunks[chunk_id].doc_id
            src = self.add_entity(source, source_type, chunk_id=chunk_id)
            tgt = self.add_entity(target, target_type, chunk_id=chunk_id)
            pred = one_line(predicate) if predicate else None
            rid = relation_id(src, tgt, rtype, pred)
            ev = evidence_record(
                asdict(
                    Evidence(
                        chunk_id=chunk_id,
                        doc_id=doc_id,
                        quote=one_line(evidence) if evidence else None,
                        confidence=None if confidence is None else float(confidence),
                        description=one_line(description) if description else None,
                        weight=float(weight),
                    )
                )
            )
            if rid in self._edge_index:
                attrs = self.graph.edges[src, tgt, rid]
                if ev not in attrs["evidence"]:
                    attrs["evidence"].append(ev)
            else:
                self.graph.add_edge(
                    src,
                    tgt,
                    key=rid,
                    id=rid,
                    relation_type=sys.intern(rtype),
                    predicate=pred,
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
            raise InputError(f"both entities must exist to link them as synonyms: {a!r}, {b!r}")
        if ka == kb:
            return
        with self.lock:
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

    @staticmethod
    def _relation_from(u: str, v: str, attrs: dict[str, Any]) -> Relation:
        return relation_from_record({"source": u, "target": v, **attrs})

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

    # ----------------------------------------------------------------- typing
    def predicate_counts(self) -> Counter[str]:
        """How many extracted relations use each predicate (the input of :meth:`RelationTyper.fit`)."""
        counts: Counter[str] = Counter()
        for _, _, attrs in self.graph.edges(data=True):
            if attrs.get("kind", EXTRACTED) == EXTRACTED and attrs.get("predicate"):
                counts[attrs["predicate"]] += 1
        return counts

    def retype(self, typer: RelationTyper | None = None) -> dict[str, int]:
        """Type every relation that has a predicate from the whole graph's predicates (``typer.fit``), and
        re-derive relation ids, merging relations whose predicates are variants of one another (their evidence
        is kept). Direction is untouched. Returns ``{"retyped", "merged"}`` counts."""
        from kg_rag.model.relation_types import RelationTyper

        typer = typer or RelationTyper()
        with self.lock:
            types = typer.fit(self.predicate_counts())
            edges = list(self.graph.edges(keys=True, data=True))
            retyped = merged = 0
            self.graph.remove_edges_from([(u, v, k) for u, v, k, _ in edges])
            self._edge_index.clear()
            for u, v, _, attrs in edges:
                attrs = dict(attrs)
                if attrs.get("kind", EXTRACTED) == EXTRACTED and attrs.get("predicate"):
                    new_type = types.get(attrs["predicate"], attrs["relation_type"])
                    if new_type != attrs["relation_type"]:
                        retyped += 1
                        attrs["relation_type"] = sys.intern(cast(str, new_type))
                rid = relation_id(u, v, attrs["relation_type"], attrs.get("predicate"))
                if rid in self._edge_index:
                    merged += 1
                    existing = self.graph.edges[u, v, rid]
                    for ev in attrs.get("evidence", []):
                        if ev not in existing["evidence"]:
                            existing["evidence"].append(ev)
                    continue
                attrs["id"] = rid
                self.graph.add_edge(u, v, key=rid, **attrs)
                self._edge_index[rid] = (u, v)
            self.version += 1
        return {"retyped": retyped, "merged": merged}

    # ----------------------------------------------------------------- removal
    def remove_document(self, doc_id: str) -> dict[str, int]:
        """Forget everything a document contributed: its chunks, the evidence and descriptions they gave, the
        relations and entities left with no support, and its registry entry. Returns counts by kind."""
        return self.remove_documents([doc_id])

    def remove_documents(self, doc_ids: Iterable[str]) -> dict[str, int]:
        """:meth:`remove_document` for several documents at once (one pass over the chunks); counts summed."""
        with self.lock:
            doc_ids = set(doc_ids)
            chunk_ids = {cid for cid, c in self.chunks.items() if c.doc_id in doc_ids}
            removed = {"chunks": len(chunk_ids), "relations": 0, "entities": 0, "descriptions": 0}
            known = [self.docs.pop(d, None) is not None for d in doc_ids]
            if not chunk_ids:
                if any(known):
                    self.version += 1
                return removed
            touched: set[str] = set()
            for cid in chunk_ids:
                del self.chunks[cid]
                touched |= self._chunk_entities.pop(cid, set())
            for key in touched:
                attrs = self.graph.nodes[key]
                attrs["chunk_ids"] = [c for c in attrs["chunk_ids"] if c not in chunk_ids]
                kept = [d for d in attrs["descriptions"] if d.get("chunk_id") not in chunk_ids]
                removed["descriptions"] += len(attrs["descriptions"]) - len(kept)
                attrs["descriptions"] = kept
            dead_edges = []
            for u, v, k, attrs in self.graph.edges(list(touched), keys=True, data=True):
                if attrs.get("kind", EXTRACTED) != EXTRACTED:
                    continue
                kept_ev = [e for e in attrs["evidence"] if e.get("chunk_id") not in chunk_ids]
                if len(kept_ev) != len(attrs["evidence"]):
                    attrs["evidence"] = kept_ev
                    if not kept_ev:
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

    def merge(self, other: KnowledgeGraph) -> None:
        """Add everything ``other`` holds (documents, chunks, entities with their descriptions, relations with
        their evidence, synonym links); what both hold is combined, never duplicated."""
        with self.lock, other.lock:
            for doc in other.docs.values():
                self.add_document(
                    doc.id, source=doc.source, content_hash=doc.content_hash, title=doc.title, metadata=doc.metadata
                )
            for chunk in other.chunks.values():
                self.add_chunk(chunk)
            for key, attrs in other.graph.nodes(data=True):
                if key not in self.graph:
                    self.graph.add_node(
                        key, name=attrs["name"], entity_type=attrs["entity_type"], descriptions=[], chunk_ids=[]
                    )
                mine = self.graph.nodes[key]
                if mine["entity_type"] == DEFAULT_ENTITY_TYPE:
                    mine["entity_type"] = attrs["entity_type"]
                for d in attrs["descriptions"]:
                    if d not in mine["descriptions"]:
                        mine["descriptions"].append(dict(d))
                for cid in attrs["chunk_ids"]:
                    self._link(key, cid)
            for u, v, k, attrs in other.graph.edges(keys=True, data=True):
                if k in self._edge_index:
                    existing = self.graph.edges[u, v, k]
                    for ev in attrs.get("evidence", []):
                        if ev not in existing["evidence"]:
                            existing["evidence"].append(dict(ev))
                    continue
                copy = {name: value for name, value in attrs.items()}
                copy["evidence"] = [dict(e) for e in attrs.get("evidence", [])]
                self.graph.add_edge(u, v, key=k, **copy)
                self._edge_index[k] = (u, v)
            self.version += 1

    def replace_documents(self, fragment: KnowledgeGraph) -> dict[str, int]:
        """Every document ``fragment`` holds replaces its earlier version here (what the old version said and
        the new one does not is forgotten); everything else is kept. Returns what was removed, summed."""
        with self.lock:
            removed = self.remove_documents(fragment.documents())
            self.merge(fragment)
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
                "descriptions": [dict(d) for d in a["descriptions"]],
                "chunk_ids": list(a["chunk_ids"]),
            }

    def relation_records(self) -> Iterator[dict[str, Any]]:
        for u, v, a in self.graph.edges(data=True):
            record = {"source": u, "target": v, **{k: a[k] for k in sorted(a)}}
            if record.get("kind", EXTRACTED) == EXTRACTED:  # derived, written for readers of the files
                record["description"] = relation_description(a.get("evidence"), a.get("predicate"))
            yield record

    def chunk_records(self) -> Iterator[dict[str, Any]]:
        for c in self.chunks.values():
            yield chunk_to_record(c)

    def document_records(self) -> Iterator[dict[str, Any]]:
        """Registry records, each with its ``chunks`` count (written for listings; ignored on reading)."""
        counts = Counter(c.doc_id for c in self.chunks.values())
        for doc_id in self.documents():
            doc = self.docs.get(doc_id) or Document(doc_id)
            yield {**asdict(doc), "chunks": counts.get(doc_id, 0)}

    @classmethod
    def from_records(
        cls,
        entities: Iterable[dict[str, Any]],
        relations: Iterable[dict[str, Any]],
        chunks: Iterable[dict[str, Any]],
        documents: Iterable[dict[str, Any]] = (),
    ) -> KnowledgeGraph:
        """Rebuild a graph from its records (the inverse of the ``*_records`` methods).

        Schema-1 records are upgraded on the way in: bare description strings become records without
        provenance, and a description kept on the relation itself moves to its first evidence record.
        Raises ``KeyError``/``TypeError`` on malformed records; the storage layer turns those into an error
        naming the file.
        """
        kg = cls()
        for d in documents:
            doc = document_from_record(d)
            kg.docs[doc.id] = doc
        for c in chunks:
            chunk = chunk_from_record(c)
            kg.chunks[chunk.id] = chunk
            kg._chunk_entities.setdefault(chunk.id, set())
            kg.docs.setdefault(chunk.doc_id, Document(chunk.doc_id))
        for e in entities:
            key = str(e["key"])
            chunk_ids = [str(x) for x in e.get("chunk_ids", [])]
            kg.graph.add_node(
                key,
                name=str(e["name"]),
                entity_type=str(e["entity_type"]),
                descriptions=[description_record(d) for d in e.get("descriptions", [])],
                chunk_ids=chunk_ids,
            )
            for cid in chunk_ids:
                kg._chunk_entities.setdefault(cid, set()).add(key)
        for r in relations:
            u, v = str(r["source"]), str(r["target"])
            if u not in kg.graph or v not in kg.graph:
                raise UnknownNameError(f"relation {r.get('id')!r} refers to an unknown entity")
            attrs = {k: val for k, val in r.items() if k not in ("source", "target")}
            attrs["evidence"] = [evidence_record(ev) for ev in attrs.get("evidence", [])]
            attrs["relation_type"] = sys.intern(str(attrs.get("relation_type", RELATED)))
            if attrs.get("kind", EXTRACTED) == EXTRACTED:
                legacy = attrs.pop("description", None)
                if legacy and legacy != attrs.get("predicate") and attrs["evidence"]:
                    if not any(ev.get("description") for ev in attrs["evidence"]):
                        attrs["evidence"][0]["description"] = str(legacy)
            kg.graph.add_edge(u, v, key=attrs["id"], **attrs)
            kg._edge_index[attrs["id"]] = (u, v)
        return kg

    def __len__(self) -> int:
        return self.graph.number_of_nodes()

    def __repr__(self) -> str:
        s = self.stats()
        return f"KnowledgeGraph(entities={s['entities']}, relations={s['relations']}, chunks={s['chunks']})"


def _storable(chunk: Chunk) -> Chunk:
    """The chunk with its ids, text and string metadata as every store can hold them (:func:`clean_text`);
    the same object when nothing needs repair, the usual case."""
    texts = [chunk.id, chunk.doc_id, chunk.text, *(v for v in chunk.metadata.values() if isinstance(v, str))]
    if all(clean_text(t) is t for t in texts):
        return chunk
    meta = {k: clean_text(v) if isinstance(v, str) else v for k, v in chunk.metadata.items()}
    return replace(
        chunk, id=clean_text(chunk.id), doc_id=clean_text(chunk.doc_id), text=clean_text(chunk.text), metadata=meta
    )
