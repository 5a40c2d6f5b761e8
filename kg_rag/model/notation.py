"""Rendering directed typed edges and paths: ``A -[TYPE]-> B``, and ``B <-[TYPE]- A`` for an edge walked
backwards. Direction is always the stored one. Names that contain notation characters (``->``, ``[``, ``]``,
``|``, commas, quotes, line breaks) are written as JSON strings, so no entity name can break the format.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping
from typing import TYPE_CHECKING

from kg_rag.model.graph import KnowledgeGraph
from kg_rag.model.names import upper_snake
from kg_rag.model.records import Relation

if TYPE_CHECKING:
    from kg_rag.model.results import GraphPath

_NOTATION = re.compile(r'->|<-|[\[\]|,"\\<>]|^[\s-]|\s$|^$')


def _needs_quotes(name: str) -> bool:
    if _NOTATION.search(name):
        return True
    if name.isprintable():  # no control, format or line-separator character (decided in C)
        return False
    return any(unicodedata.category(ch)[0] == "C" or unicodedata.category(ch) in ("Zl", "Zp") for ch in name)


def quote_name(name: str) -> str:
    """``name`` as is when safe, else as a JSON string (``"A -> B"`` stays one unambiguous token).

    Quoted: notation characters (``->``, ``<-``, brackets, ``|``, commas, quotes, angle brackets), line breaks
    and control characters, a leading dash (``-----Sources-----``) or space, and an empty name."""
    return json.dumps(name, ensure_ascii=False) if _needs_quotes(name) else name


def render_edge(source: str, relation_type: str, target: str) -> str:
    """``source -[TYPE]-> target`` with names quoted as needed and the type forced to UPPER_SNAKE."""
    return f"{quote_name(source)} -[{upper_snake(relation_type)}]-> {quote_name(target)}"


def render_path_edge(kg: KnowledgeGraph, relation: Relation) -> str:
    """Render a stored relation with its entities' display names, in its stored direction."""
    return render_edge(
        kg.graph.nodes[relation.source]["name"], relation.relation_type, kg.graph.nodes[relation.target]["name"]
    )


def render_path(kg: KnowledgeGraph | Mapping[str, str] | None, path: GraphPath) -> str:
    """``A -[T1]-> B <-[T2]- C``: each step shows its stored direction (``<-[T]-`` when walked backwards).

    ``kg`` supplies display names: a :class:`KnowledgeGraph`, or a mapping entity key -> name.
    """

    def name(key: str) -> str:
        if isinstance(kg, Mapping):
            return quote_name(kg.get(key, key))
        if kg is not None:
            try:
                return quote_name(kg.graph.nodes[key]["name"])
            except KeyError:  # removed by a concurrent edit: fall back to the key
                pass
        return quote_name(key)

    parts = [name(path.start)]
    for step in path.steps:
        rtype = upper_snake(step.relation_type)
        if step.forward:
            parts.append(f"-[{rtype}]-> {name(step.target)}")
        else:
            parts.append(f"<-[{rtype}]- {name(step.source)}")
    return " ".join(parts)
