"""GraphML for Gephi, yEd and NetworkX: a directed multigraph whose edges keep their stored direction.

Node ids are entity keys (lower-case, what relations point at); each node carries ``label`` (the display name,
which Gephi shows instead of the id), ``name``, ``entity_type``, ``description`` and its provenance. Each edge's
GraphML id is the relation id, and it carries ``relation_type``, ``predicate``, ``description``, ``evidence``
(the first quote), ``evidence_json`` (every evidence record), ``chunk_ids``/``doc_ids`` (JSON lists),
``weight``, ``confidence`` and ``kind`` (``extracted`` or ``synonym``).
``nx.read_graphml(path, force_multigraph=True)`` reads it back into a ``MultiDiGraph`` with the same edges.

XML 1.0 cannot hold every code point a graph may: control characters, the non-characters U+FFFE and U+FFFF and
lone surrogates. In node ids and edge keys they are written as ``\\uXXXX`` escapes, so two ids stay two nodes;
in every other value they become U+FFFD. (A single such character used to make the whole export fail.)
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg_rag.errors import InputError
from kg_rag.export.rows import atomic_file, check_target, entity_rows, relation_rows
from kg_rag.model.graph import KnowledgeGraph

if TYPE_CHECKING:
    import networkx as nx

_LISTS = ("chunk_ids", "doc_ids")
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
"""A code point XML 1.0 cannot hold."""


def xml_text(value: str) -> str:
    """``value`` with every code point XML cannot hold replaced by U+FFFD."""
    return _NOT_XML.sub("\ufffd", value)


def xml_id(value: str) -> str:
    """An id with every code point XML cannot hold written as a ``\\uXXXX`` escape (ids stay distinct)."""
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", value)


def _scalars(row: dict[str, Any], skip: tuple[str, ...]) -> dict[str, Any]:
    """GraphML holds scalars: lists become JSON text, unknown values are left out (not written as "None"), and
    text is made XML-safe (:func:`xml_text`)."""
    out = {}
    for k, v in row.items():
        if k in skip or v is None:
            continue
        v = json.dumps(v, ensure_ascii=False) if k in _LISTS else v
        out[k] = xml_text(v) if isinstance(v, str) else v
    return out


def to_networkx(kg: KnowledgeGraph) -> nx.MultiDiGraph:
    """The graph with GraphML-ready attributes (edge keys are relation ids)."""
    import networkx as nx  # imported when used: the CLI imports this package for its format names

    g = nx.MultiDiGraph(name="kg-rag")
    for row in entity_rows(kg):
        g.add_node(xml_id(row["key"]), label=xml_text(row["name"]), **_scalars(row, ("key", "label")))
    for row in relation_rows(kg):
        ends = xml_id(row["source"]), xml_id(row["target"])
        g.add_edge(*ends, key=xml_id(row["id"]), **_scalars(row, ("source", "target", "id")))
    return g


def write_graphml(kg: KnowledgeGraph, path: Path, *, overwrite: bool = False) -> dict[str, Any]:
    check_target(path, overwrite=overwrite)
    import networkx as nx

    g = to_networkx(kg)
    with atomic_file(path, "wb") as fh:
        nx.write_graphml(g, fh, encoding="utf-8", named_key_ids=True)
    return {"files": [str(path)], "entities": g.number_of_nodes(), "relations": g.number_of_edges()}


def read_graphml(path: str | Path) -> nx.MultiDiGraph:
    """A GraphML export as a ``MultiDiGraph`` (edge keys are relation ids; list attributes decoded)."""
    import networkx as nx

    g = nx.read_graphml(path, force_multigraph=True)
    if not g.is_directed():
        raise InputError(f"{path}: not a directed graph")
    for _, _, attrs in g.edges(data=True):
        for k in _LISTS:
            if isinstance(attrs.get(k), str):
                attrs[k] = json.loads(attrs[k])
    for _, attrs in g.nodes(data=True):
        for k in _LISTS:
            if isinstance(attrs.get(k), str):
                attrs[k] = json.loads(attrs[k])
    return g
