"""What the graph explorer shows, as JSON-ready dicts: every view is a bounded subgraph, never the whole graph.

- :func:`question_view`: the retriever's own result for a question (the same call as ``kg-rag query``): the
  relations and paths it selected as typed directed edges, the paths in context order, the relationship rows,
  the source passages with their scores, and the text context.
- :func:`entity_view`: one entity's typed in- and out-edges under the retriever's filters, its evidence,
  documents and community report; the page's double-click adds this view to the drawing (one hop).
- :func:`overview` and :func:`search_entities`: counts, the type vocabulary, the largest communities, and
  entity names for the search box.

Bounds: a response holds at most :data:`MAX_VIEW_EDGES` edges (and their end entities); the page holds at most
:data:`MAX_PAGE_EDGES`. A hub's neighbourhood is cut to its heaviest edges, and the response says how many
there were in all. All reads go through ``with backend.reader() as view:``; nothing is ever written.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kg_rag.context import render_path
from kg_rag.errors import InputError
from kg_rag.model.names import canonical_key
from kg_rag.query.limits import suggest_entities, unknown_name
from kg_rag.query.stages import edge_filter_for
from kg_rag.store.scope import ScopedView

MAX_VIEW_EDGES = 200
"""Most edges in one response (a question's subgraph, or one entity's neighbourhood)."""
MAX_PAGE_EDGES = 1000
"""Most edges the page keeps drawn (expanding beyond it asks the user to clear the view first)."""
MAX_DOCUMENTS = 20
"""Most source passages listed for one entity (the total is given)."""
MAX_QUOTES = 3
"""Evidence quotes shown per edge."""
MAX_COMMUNITIES = 10
"""Largest communities listed in the overview."""
I64 = np.int64

FAMILIES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "rules",
        "supersedes, revokes, amends",
        (
            "SUPERSED",
            "REPLAC",
            "REVOK",
            "REPEAL",
            "AMEND",
            "IMPLEMENT",
            "SUCCEED",
            "PRECED",
            "FOLLOW",
            "APPROV",
            "DECID",
            "ENACT",
            "SIGN",
            "RULE",
            "GOVERN",
            "REGULAT",
            "BAN",
        ),
    ),
    (
        "hierarchy",
        "reports to, manages, part of",
        (
            "REPORT",
            "MANAG",
            "LEAD",
            "HEAD",
            "CHAIR",
            "SUPERVIS",
            "MEMBER",
            "PART",
            "BELONG",
            "SUBSIDIAR",
            "DIVISION",
            "EMPLOY",
            "WORK",
            "SERV",
            "COMMAND",
            "OWNS",
            "OWNED",
            "OWNER",
            "ACQUIR",
            "INCLUD",
            "CONTAIN",
            "CONSIST",
        ),
    ),
    (
        "place",
        "located in, born in, capital of",
        (
            "LOCAT",
            "BORN",
            "DIED",
            "CAPITAL",
            "LIVE",
            "RESID",
            "SITUAT",
            "BASED",
            "HEADQUARTER",
            "CITIZEN",
            "COUNTR",
            "CITY",
            "REGION",
            "BORDER",
            "NEAR",
            "FLOW",
            "MOUTH",
            "LIES",
            "SEAT",
            "ORIGIN",
            "NATIVE",
            "MOVED",
            "BURIED",
            "STATE",
            "PROVINC",
            "DISTRICT",
            "COUNTY",
        ),
    ),
    (
        "creation",
        "written by, directed by, founded",
        (
            "WRIT",
            "WROTE",
            "AUTHOR",
            "DIRECT",
            "PRODUC",
            "PERFORM",
            "COMPOS",
            "SING",
            "SANG",
            "SUNG",
            "RECORD",
            "RELEAS",
            "PUBLISH",
            "CREAT",
            "FOUND",
            "ESTABLISH",
            "DESIGN",
            "BUILD",
            "BUILT",
            "INVENT",
            "DEVELOP",
            "STAR",
            "PLAY",
            "PAINT",
            "MADE",
            "MAKE",
            "ARTIST",
            "ALBUM",
            "SONG",
        ),
    ),
    (
        "people",
        "married to, child of",
        (
            "MARRI",
            "SPOUSE",
            "WIFE",
            "HUSBAND",
            "CHILD",
            "SON",
            "DAUGHTER",
            "PARENT",
            "FATHER",
            "MOTHER",
            "SIBLING",
            "BROTHER",
            "SISTER",
            "FRIEND",
            "PARTNER",
        ),
    ),
    (
        "events",
        "caused, blocked, preceded",
        (
            "CAUS",
            "BLOCK",
            "RESULT",
            "TRIGGER",
            "AFFECT",
            "PREVENT",
            "OCCUR",
            "HAPPEN",
            "FREEZ",
            "DELAY",
            "EXPOS",
            "WON",
            "WIN",
            "AWARD",
            "NOMINAT",
            "ATTEND",
            "STUDI",
            "GRADUAT",
            "EDUCAT",
        ),
    ),
)
"""Relation families, the colours of the explorer: a type belongs to the first family one of whose stems starts
one of its words (thousands of extracted types, a handful of colours a reader can tell apart)."""


def relation_family(relation_type: str) -> str:
    """The family of a relation type (``other`` for the rest, ``related`` for ``RELATED`` and synonym links)."""
    if relation_type in ("RELATED", "SYNONYM_OF"):
        return "related"
    words = relation_type.upper().split("_")
    for family, _, stems in FAMILIES:
        if any(w.startswith(stem) for w in words for stem in stems):
            return family
    return "other"


class NotFound(LookupError):
    """An entity the index does not hold (the server answers 404)."""


def _node(key: str, name: str, entity_type: str = "", **extra: Any) -> dict[str, Any]:
    return {"id": key, "name": name, "entity_type": entity_type, **extra}


def _edge(rel: Any, names: dict[str, str], **extra: Any) -> dict[str, Any]:
    """An edge in its stored direction, with its type, evidence and provenance."""
    quotes = [e.quote for e in rel.evidence if e.quote][:MAX_QUOTES]
    return {
        "id": rel.id,
        "source": rel.source,
        "target": rel.target,
        "source_name": names.get(rel.source, rel.source),
        "target_name": names.get(rel.target, rel.target),
        "relation_type": rel.relation_type,
        "family": relation_family(rel.relation_type),
        "description": rel.description or rel.predicate or "",
        "evidence": quotes,
        "weight": rel.weight,
        "chunk_ids": rel.chunk_ids[:MAX_DOCUMENTS],
        "doc_ids": rel.doc_ids[:MAX_DOCUMENTS],
        **extra,
    }


# ------------------------------------------------------------------------------------------------ question
def question_view(retriever: Any, question: str, settings: dict[str, Any]) -> dict[str, Any]:
    """The retrieved subgraph for ``question`` under ``settings`` (retrieval settings, as ``retrieve`` takes)."""
    result = retriever.retrieve(question, **settings)
    formatted = result.formatted
    in_context_rel = set(formatted.relations) if formatted is not None else set()
    context_paths = list(formatted.paths) if formatted is not None else list(range(len(result.paths)))
    names = dict(result.names)
    key_of = {name: key for key, name in names.items()}
    edges: dict[str, dict[str, Any]] = {}
    rows = []
    for r in result.relations:
        src, tgt = key_of.get(r.source, canonical_key(r.source)), key_of.get(r.target, canonical_key(r.target))
        row = {
            "id": r.relation_id,
            "source": src,
            "target": tgt,
            "source_name": r.source,
            "target_name": r.target,
            "relation_type": r.relation_type,
            "family": relation_family(r.relation_type),
            "description": r.description,
            "evidence": [r.evidence] if r.evidence else [],
            "weight": r.weight,
            "rank": r.rank,
            "in_network": r.in_network,
            "in_context": r.relation_id in in_context_rel,
            "chunk_ids": list(r.chunk_ids),
            "paths": [],
        }
        rows.append(row)
        edges[r.relation_id] = row
    paths = []
    for i, pa in enumerate(result.paths):
        order = context_paths.index(i) if i in context_paths else None
        for st in pa.steps:
            edge = edges.get(st.relation_id)
            if edge is None:
                edge = {
                    "id": st.relation_id,
                    "source": st.source,
                    "target": st.target,
                    "source_name": names.get(st.source, st.source),
                    "target_name": names.get(st.target, st.target),
                    "relation_type": st.relation_type,
                    "family": relation_family(st.relation_type),
                    "description": "",
                    "evidence": [],
                    "in_context": False,
                    "paths": [],
                }
                edges[st.relation_id] = edge
            edge["paths"].append(i)
        paths.append(
            {
                "index": i,
                "text": render_path(names, pa),
                "edges": [st.relation_id for st in pa.steps],
                "forward": [st.forward for st in pa.steps],
                "context_order": order,
                "score": pa.score,
            }
        )
    # the context's paths first, in context order (so a cut never drops them and the page draws them first), then
    # the other relations
    first = [st.relation_id for i in context_paths for st in result.paths[i].steps]
    ordered = list(dict.fromkeys([*first, *edges]))
    shown = [edges[rid] for rid in ordered[:MAX_VIEW_EDGES]]
    nodes: dict[str, dict[str, Any]] = {}
    for e in result.entities:
        nodes[e.key] = _node(e.key, e.name, e.entity_type, seed=e.seed, score=e.score, selected=True)
    for e in shown:
        for key, name in ((e["source"], e["source_name"]), (e["target"], e["target_name"])):
            nodes.setdefault(key, _node(key, name, selected=False))
    shown_communities = set(formatted.communities) if formatted is not None else set()
    return {
        "question": result.query,
        "nodes": list(nodes.values()),
        "edges": shown,
        "relations": rows,
        "paths": sorted(paths, key=lambda p: (p["context_order"] is None, p["context_order"] or 0, p["index"])),
        "chunks": [
            {
                "id": c.id,
                "doc_id": c.doc_id,
                "score": c.score,
                "graph_score": c.graph_score,
                "dense_score": c.dense_score,
                "text": c.text,
                "in_context": formatted is None or c.id in set(formatted.chunks),
            }
            for c in result.chunks
        ],
        "communities": [
            {"id": c.id, "title": c.title, "level": c.level} for c in result.communities if c.id in shown_communities
        ],
        "context": result.context,
        "warnings": list(result.warnings),
        "truncated": len(edges) > len(shown),
        "bound": MAX_VIEW_EDGES,
    }


# ------------------------------------------------------------------------------------------------ entity
def _handle(view: Any, key_or_name: str, embed: Any = None) -> int:
    """The entity a page key or a name names; :class:`NotFound` with suggestions (the shared name rule of
    :mod:`kg_rag.query.limits`) otherwise."""
    for key in dict.fromkeys([key_or_name, canonical_key(key_or_name)]):
        found = view.lookup_entities([key])
        if key in found:
            return int(found[key])
    raise NotFound(unknown_name(key_or_name, suggest_entities(view, key_or_name, embed)))


def entity_view(backend: Any, key: str, params: Any, embed: Any = None) -> dict[str, Any]:
    """``key``'s typed in- and out-edges allowed by ``params`` (heaviest first, at most :data:`MAX_VIEW_EDGES`),
    its descriptions, evidence quotes, documents and community report. ``embed`` (the query embedding function)
    lets an unknown name get suggestions."""
    with backend.reader() as view:
        if params.walk.filter is not None:  # the retriever's document filter: only those documents' graph
            view = ScopedView(view, params.walk.filter)
        h = _handle(view, key, embed)
        edge_filter, _ = edge_filter_for(view, params)  # the engine's own: the filters are the retriever's
        if h in edge_filter.blocked:
            raise InputError(f"entity {key!r} is excluded by the exclude_entities filter")
        entity = view.entities(np.asarray([h], dtype=I64))[0]
        if entity is None:
            raise NotFound(f"no entity {key!r} in the index")
        found = view.edges_of(np.asarray([h], dtype=I64), edge_filter)
        found = found.unique() if len(found) else found
        keep = np.ones(len(found), dtype=bool)
        if edge_filter.direction == "out":
            keep &= found.src == h
        elif edge_filter.direction == "in":
            keep &= found.dst == h
        edges = found.take(np.flatnonzero(keep))
        total = len(edges)
        order = np.lexsort((edges.ids, -edges.weight.astype(np.float64)))[:MAX_VIEW_EDGES]
        edges = edges.take(order)
        relations = view.relations(edges.ids)
        ends = sorted({int(x) for x in np.concatenate([edges.src, edges.dst]).tolist()} | {h})
        records = dict(zip(ends, view.entities(np.asarray(ends, dtype=I64))))
        mentions = view.entity_chunks(np.asarray([h], dtype=I64))
        chunk_handles = mentions.right[:MAX_DOCUMENTS]
        chunks = [c for c in view.chunks(chunk_handles) if c is not None]
        community = None
        memberships = view.communities_for(np.asarray([h], dtype=I64), None)
        if memberships:
            rec = view.community_records([memberships[0][0]])[0]
            if rec is not None:
                community = {
                    "id": rec.id,
                    "level": rec.level,
                    "title": rec.title,
                    "size": rec.size,
                    "rating": rec.rating,
                    "report": rec.report_text() if rec.serves else None,
                }
    names = {r.key: r.name for r in records.values() if r is not None}
    nodes = [
        _node(r.key, r.name, r.entity_type, selected=(hh == h)) for hh, r in sorted(records.items()) if r is not None
    ]
    shown = [_edge(rel, names) for rel in relations if rel is not None]
    return {
        "entity": {
            "id": entity.key,
            "name": entity.name,
            "entity_type": entity.entity_type,
            "descriptions": list(entity.descriptions),
            "out_edges": [e for e in shown if e["source"] == entity.key],
            "in_edges": [e for e in shown if e["target"] == entity.key],
            "documents": sorted({c.doc_id for c in chunks}),
            "passages": [{"id": c.id, "doc_id": c.doc_id, "text": c.text} for c in chunks],
            "mentions": len(mentions),
            "community": community,
        },
        "nodes": nodes,
        "edges": shown,
        "total_edges": total,
        "truncated": total > len(shown),
        "bound": MAX_VIEW_EDGES,
    }


# ------------------------------------------------------------------------------------------------ overview
def overview(backend: Any, doc_filter: Any = None) -> dict[str, Any]:
    """Counts, the relation-type vocabulary with counts, and the largest communities (none under a document
    filter: their titles and reports summarise every document)."""
    with backend.reader() as view:
        info = view.info()
        shown = info.extra.get("communities") and doc_filter is None
        communities = view.list_communities(None) if shown else []
    largest = sorted(communities, key=lambda c: (-c.size, c.level, c.id))[:MAX_COMMUNITIES]
    return {
        "counts": {
            "entities": info.entities,
            "relations": info.relations,
            "chunks": info.chunks,
            "documents": info.documents,
            "communities": len(communities),
        },
        "relation_types": [
            {"type": t, "count": n, "family": relation_family(t)}
            for t, n in sorted(info.relation_types.items(), key=lambda kv: (-kv[1], kv[0]))
        ],
        "families": [{"family": f, "examples": examples} for f, examples, _ in FAMILIES]
        + [{"family": "other", "examples": "every other type"}, {"family": "related", "examples": "RELATED, synonyms"}],
        "communities": [
            {"id": c.id, "level": c.level, "title": c.title or "(no report)", "size": c.size, "rating": c.rating}
            for c in largest
        ],
        "embedding_model": info.embedding_model,
        "bounds": {"view_edges": MAX_VIEW_EDGES, "page_edges": MAX_PAGE_EDGES},
    }


def search_entities(
    backend: Any, embeddings: Any, text: str, limit: int = 10, doc_filter: Any = None
) -> list[dict[str, Any]]:
    """Entities for the search box: the exact name first, then the nearest names by embedding; under a document
    filter (the retriever's), only those documents' entities."""
    from kg_rag.index.embeddings import embed_query

    with backend.reader() as view:
        info = view.info()
        if doc_filter is not None:
            view = ScopedView(view, doc_filter)
        handles: list[int] = []
        scores: dict[int, float] = {}
        exact = view.lookup_entities([canonical_key(text)])
        for h in exact.values():
            handles.append(int(h))
            scores[int(h)] = 1.0
        if info.entities:
            q = embed_query(embeddings, text, info.dim or None)
            hits = view.search("entities", q[0], limit)
            for h, s in zip(hits.ids.tolist(), hits.scores.tolist()):
                if int(h) not in scores:
                    handles.append(int(h))
                    scores[int(h)] = float(s)
        handles = handles[:limit]
        records = view.entities(np.asarray(handles, dtype=I64))
    return [
        {"id": r.key, "name": r.name, "entity_type": r.entity_type, "score": round(scores[h], 4)}
        for h, r in zip(handles, records)
        if r is not None
    ]
