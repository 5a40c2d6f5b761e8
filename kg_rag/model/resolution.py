"""Entity resolution decisions: which entities were merged into which, and which must stay apart.

Canonical keys merge case and punctuation variants of one name; resolution merges *different* names of one thing
(``U.S.`` and ``USA`` into *United States*), automatically at index time when the evidence agrees
(:mod:`kg_rag.index.resolution`) or by hand (``kg-rag entities merge``). Every merge is recorded — the variant's
name and type, what it was merged into, why, and the chunks that named it — so that

- a re-index and an update make the same merges (a document that names ``U.S.`` again is resolved as before);
- a merge can be undone (``kg-rag entities split``): the variant gets back its relation evidence (the merge records
  which evidence was the variant's), and the mentions and descriptions of the chunks that named it and not the
  entity it was merged into (a chunk that named both mentions both again; its descriptions stay with the entity
  merged into, since which of the two a description was about is not recorded);
- a split is a decision too: the two are never merged again automatically.

The record is kept with the index's ingest report (:class:`~kg_rag.model.report.IngestReport`), which every store
persists with the index.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from kg_rag.errors import InputError, UnknownNameError

MANUAL = "manual"
"""``Merge.how`` of a merge asked for by hand (the automatic ones name their rule: ``acronym``, ``article``...)."""


@dataclass
class Merge:
    """One entity (``key``, ``name``) merged into another (``into``, ``into_name``)."""

    key: str
    name: str
    into: str
    into_name: str
    how: str = MANUAL
    entity_type: str = ""
    chunks: list[str] = field(default_factory=list)
    """Chunks that named the merged entity (its mentions at the time of the merge, and since)."""
    shared: list[str] = field(default_factory=list)
    """Those of ``chunks`` that also named the entity it was merged into."""
    evidence: list[list[str]] = field(default_factory=list)
    """The relation evidence that was the merged entity's: ``[direction, other end, relation key, chunk]``
    (``direction`` ``out`` when it was the source), so a split gives back exactly its relations."""

    @property
    def manual(self) -> bool:
        return self.how == MANUAL


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


@dataclass
class Resolution:
    """The merges made (by variant key) and the pairs of keys kept apart by hand."""

    merges: dict[str, Merge] = field(default_factory=dict)
    apart: set[tuple[str, str]] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.merges or self.apart)

    def canonical(self, key: str) -> str:
        """The key an entity key resolves to (following merges of merges)."""
        seen = {key}
        while key in self.merges:
            key = self.merges[key].into
            if key in seen:  # a cycle cannot be recorded, but a hand-edited file may hold one
                break
            seen.add(key)
        return key

    def aliases(self) -> dict[str, str]:
        """Every key merged away -> the key it resolves to now: a question or a filter that names ``U.S.`` still
        finds *United States*."""
        return {key: self.canonical(key) for key in self.merges}

    def kept_apart(self, a: str, b: str) -> bool:
        return _pair(a, b) in self.apart

    def record(self, merge: Merge) -> None:
        """Record a merge (a split of the same two is forgotten: merging by hand overrides it)."""
        self.apart.discard(_pair(merge.key, merge.into))
        for other in self.merges.values():  # merges into the variant now lead to its new entity
            if other.into == merge.key:
                other.into, other.into_name = merge.into, merge.into_name
        self.merges[merge.key] = merge

    def forget(self, key: str, into: str) -> Merge | None:
        """Undo the record of ``key`` merged into ``into`` and keep the two apart; returns the merge undone."""
        merge = self.merges.get(key)
        if merge is None or merge.into != into:
            return None
        del self.merges[key]
        self.apart.add(_pair(key, into))
        return merge

    def manual(self) -> list[Merge]:
        return [m for m in self.merges.values() if m.manual]

    def note_chunks(
        self, key: str, chunks: Iterable[str], shared: Iterable[str] = (), evidence: Iterable[list[str]] = ()
    ) -> None:
        """More chunks that named a merged entity, and its relation evidence in them (a later update resolved them
        through the same merge)."""
        merge = self.merges.get(key)
        if merge is None:
            return
        merge.chunks = list(dict.fromkeys([*merge.chunks, *chunks]))
        merge.shared = list(dict.fromkeys([*merge.shared, *shared]))
        known = {tuple(e) for e in merge.evidence}
        merge.evidence += [list(e) for e in evidence if tuple(e) not in known]

    def forget_chunks(self, chunk_ids: set[str]) -> None:
        """Chunks that were removed from the index name nothing any more."""
        for merge in self.merges.values():
            merge.chunks = [c for c in merge.chunks if c not in chunk_ids]
            merge.shared = [c for c in merge.shared if c not in chunk_ids]
            merge.evidence = [e for e in merge.evidence if e[3] not in chunk_ids]

    def update(self, other: Resolution) -> None:
        """Take ``other``'s records in (a later run's: its merges and splits win)."""
        for pair in other.apart:
            self.apart.add(pair)
            for key, into in (pair, pair[::-1]):
                if key in self.merges and self.merges[key].into == into:
                    del self.merges[key]
        for merge in other.merges.values():
            mine = self.merges.get(merge.key)
            if mine is not None and mine.into == merge.into:
                self.note_chunks(merge.key, merge.chunks, merge.shared, merge.evidence)
            else:
                self.record(Merge(**asdict(merge)))

    def to_dict(self) -> dict[str, Any]:
        return {
            "merges": [asdict(m) for m in sorted(self.merges.values(), key=lambda m: m.key)],
            "apart": [list(p) for p in sorted(self.apart)],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Resolution:
        """The record as stored; a malformed one raises ``ValueError`` naming what is wrong."""
        if not data:
            return cls()
        if not isinstance(data, Mapping):
            raise InputError("resolution must be an object")
        out = cls()
        for m in data.get("merges") or []:
            if not isinstance(m, Mapping) or not all(isinstance(m.get(f), str) for f in ("key", "name", "into")):
                raise InputError("a resolution merge needs string key, name and into")
            lists = {f: [str(c) for c in m.get(f) or []] for f in ("chunks", "shared")}
            evidence = [[str(x) for x in e] for e in m.get("evidence") or []]
            if any(len(e) != 4 for e in evidence):
                raise InputError("a resolution merge's evidence entries are [direction, other, relation key, chunk]")
            out.merges[m["key"]] = Merge(
                key=m["key"],
                name=m["name"],
                into=m["into"],
                into_name=str(m.get("into_name") or m["into"]),
                how=str(m.get("how") or MANUAL),
                entity_type=str(m.get("entity_type") or ""),
                evidence=evidence,
                **lists,
            )
        for pair in data.get("apart") or []:
            if not isinstance(pair, list) or len(pair) != 2 or not all(isinstance(x, str) for x in pair):
                raise InputError("a resolution 'apart' entry must be a pair of entity keys")
            out.apart.add(_pair(pair[0], pair[1]))
        return out


# ------------------------------------------------------------------------------------------ graph edits
def merge_entities(kg: Any, into: str, key: str, *, how: str = MANUAL, into_name: str | None = None) -> Merge:
    """Merge entity ``key`` into entity ``into`` in a :class:`~kg_rag.model.graph.KnowledgeGraph`: its mentions,
    descriptions and relations (re-keyed, evidence combined; a relation between the two is dropped: it would be a
    self-loop). ``into`` is created (named ``into_name``) when the graph does not hold it — a fragment naming only
    the variant. Returns the :class:`Merge` to record."""
    from kg_rag.model.names import DEFAULT_ENTITY_TYPE
    from kg_rag.model.predicates import relation_key
    from kg_rag.model.records import EXTRACTED, SYNONYM_KIND, relation_id

    graph = kg.graph
    if key not in graph:
        raise UnknownNameError(f"no entity {key!r}")
    if key == into:
        raise InputError(f"cannot merge {key!r} into itself")
    with kg.lock:
        mine = graph.nodes[key]
        if into not in graph:
            graph.add_node(into, name=into_name or into, entity_type=mine["entity_type"], descriptions=[], chunk_ids=[])
        target = graph.nodes[into]
        chunks = list(mine["chunk_ids"])
        shared = [c for c in chunks if into in kg._chunk_entities.get(c, ())]
        merge = Merge(key, mine["name"], into, target["name"], how, mine["entity_type"], chunks, shared)
        if target["entity_type"] == DEFAULT_ENTITY_TYPE:
            target["entity_type"] = mine["entity_type"]
        for d in mine["descriptions"]:
            if d not in target["descriptions"]:
                target["descriptions"].append(d)
        for c in chunks:
            kg._chunk_entities.get(c, set()).discard(key)
            kg._link(into, c)
        edges = list(graph.in_edges(key, keys=True, data=True)) + list(graph.out_edges(key, keys=True, data=True))
        for u, v, k, attrs in edges:
            if not graph.has_edge(u, v, k):
                continue  # a self-loop of the variant, listed twice
            graph.remove_edge(u, v, key=k)
            kg._edge_index.pop(k, None)
            nu, nv = (into if u == key else u), (into if v == key else v)
            if nu == nv or attrs.get("kind", EXTRACTED) == SYNONYM_KIND:
                continue  # between the two (now one thing), or a similarity link re-derived by the next run
            rkey = relation_key(attrs.get("predicate"), attrs["relation_type"])
            way, other = ("out", v) if u == key else ("in", u)
            merge.evidence += [[way, other, rkey, str(ev.get("chunk_id"))] for ev in attrs.get("evidence", [])]
            _add_edge(kg, nu, nv, relation_id(nu, nv, attrs["relation_type"], attrs.get("predicate")), attrs)
        graph.remove_node(key)
        kg.version += 1
    return merge


def _add_edge(kg: Any, u: str, v: str, rid: str, attrs: dict[str, Any]) -> None:
    """Add an extracted edge, or combine its evidence with the edge of that id already there."""
    if rid in kg._edge_index:
        existing = kg.graph.edges[u, v, rid]
        for ev in attrs.get("evidence", []):
            if ev not in existing["evidence"]:
                existing["evidence"].append(ev)
        return
    kg.graph.add_edge(u, v, key=rid, **{**attrs, "id": rid, "evidence": list(attrs.get("evidence", []))})
    kg._edge_index[rid] = (u, v)


def split_entity(kg: Any, merge: Merge, canonical: Any = None) -> dict[str, int]:
    """Undo ``merge`` in the graph: the merged entity comes back with its relation evidence (as the merge recorded
    it; ``canonical`` maps a key recorded then to the key it has now) and the mentions and descriptions of the
    chunks that named it and not the entity it was merged into (see the module docstring). Returns counts of
    what moved."""
    from kg_rag.model.predicates import relation_key
    from kg_rag.model.records import EXTRACTED, relation_id

    canonical = canonical or (lambda k: k)

    graph = kg.graph
    into, key = merge.into, merge.key
    if into not in graph:
        raise UnknownNameError(f"no entity {into!r}")
    if key in graph:
        raise InputError(f"{merge.name!r} is already an entity of its own")
    present = [c for c in merge.chunks if c in kg.chunks]
    own = set(present) - set(merge.shared)
    moved = {"mentions": 0, "descriptions": 0, "evidence": 0}
    with kg.lock:
        target = graph.nodes[into]
        graph.add_node(key, name=merge.name, entity_type=merge.entity_type or target["entity_type"])
        graph.nodes[key].update(descriptions=[], chunk_ids=[])
        for c in present:
            kg._link(key, c)
            if c in own:
                kg._chunk_entities.get(c, set()).discard(into)
                moved["mentions"] += 1
        target["chunk_ids"] = [c for c in target["chunk_ids"] if c not in own]
        keep: list[dict[str, Any]] = []
        for d in target["descriptions"]:
            (graph.nodes[key]["descriptions"] if d.get("chunk_id") in own else keep).append(d)
        moved["descriptions"] = len(target["descriptions"]) - len(keep)
        target["descriptions"] = keep
        recorded = {(way, canonical(other), rkey, chunk) for way, other, rkey, chunk in merge.evidence}
        edges = list(graph.in_edges(into, keys=True, data=True)) + list(graph.out_edges(into, keys=True, data=True))
        for u, v, k, attrs in edges:
            if attrs.get("kind", EXTRACTED) != EXTRACTED or not graph.has_edge(u, v, k):
                continue
            rkey = relation_key(attrs.get("predicate"), attrs["relation_type"])
            way, other = ("out", v) if u == into else ("in", u)

            def theirs(ev: dict[str, Any], way=way, other=other, rkey=rkey) -> bool:
                if recorded:  # the merge recorded exactly which evidence was the merged entity's
                    return (way, other, rkey, str(ev.get("chunk_id"))) in recorded
                return ev.get("chunk_id") in own

            going = [ev for ev in attrs["evidence"] if theirs(ev)]
            if not going:
                continue
            staying = [ev for ev in attrs["evidence"] if not theirs(ev)]
            nu, nv = (key if u == into else u), (key if v == into else v)
            moved["evidence"] += len(going)
            if staying:
                attrs["evidence"] = staying
            else:
                graph.remove_edge(u, v, key=k)
                kg._edge_index.pop(k, None)
            _add_edge(
                kg,
                nu,
                nv,
                relation_id(nu, nv, attrs["relation_type"], attrs.get("predicate")),
                {
                    **attrs,
                    "evidence": going,
                },
            )
        kg.version += 1
    return moved


def resolve_graph(kg: Any, resolution: Resolution) -> list[str]:
    """Merge, in a graph (a new fragment, a rebuilt corpus), every entity that ``resolution`` records as merged
    into another; the chunks that named it are added to the record. Returns the keys merged away."""
    done = []
    for key in sorted(k for k in kg.graph.nodes if k in resolution.merges):
        into = resolution.canonical(key)
        if into == key or key not in kg.graph:
            continue
        final = next((m.into_name for m in resolution.merges.values() if m.into == into), into)
        merge = merge_entities(kg, into, key, how=resolution.merges[key].how, into_name=final)
        resolution.note_chunks(key, merge.chunks, merge.shared, merge.evidence)
        done.append(key)
    return done
