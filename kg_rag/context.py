"""Rendering graph facts as text for a model: directed typed paths ``A -[TYPE]-> B``.

Direction is always the stored one. Names that contain notation characters (``->``, ``[``, ``]``, ``|``,
commas, quotes, line breaks) are written as JSON strings, so no entity name can break the format.
"""

from __future__ import annotations

import json
import re

from kg_rag.graph import KnowledgeGraph, Relation
from kg_rag.schema import upper_snake

_NEEDS_QUOTES = re.compile(r'->|<-|[\[\]|,"\\\n\r\t]|^\s|\s$|^$')


def quote_name(name: str) -> str:
    """``name`` as is when safe, else as a JSON string (``"A -> B"`` stays one unambiguous token)."""
    return json.dumps(name, ensure_ascii=False) if _NEEDS_QUOTES.search(name) else name


def render_edge(source: str, relation_type: str, target: str) -> str:
    """``source -[TYPE]-> target`` with names quoted as needed and the type forced to UPPER_SNAKE."""
    return f"{quote_name(source)} -[{upper_snake(relation_type)}]-> {quote_name(target)}"


def render_path_edge(kg: KnowledgeGraph, relation: Relation) -> str:
    """Render a stored relation with its entities' display names, in its stored direction."""
    return render_edge(
        kg.graph.nodes[relation.source]["name"], relation.relation_type, kg.graph.nodes[relation.target]["name"]
    )
