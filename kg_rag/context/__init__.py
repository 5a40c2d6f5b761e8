"""Stage 5: the context the answer model reads — rendering (``render``) and budgeted assembly (``format``)."""

from kg_rag.context.format import ENTITY_COLUMNS, PATHS_HEADER, RELATION_COLUMNS, format_context
from kg_rag.model.notation import quote_name, render_edge, render_path, render_path_edge

__all__ = [
    "ENTITY_COLUMNS",
    "PATHS_HEADER",
    "RELATION_COLUMNS",
    "format_context",
    "quote_name",
    "render_edge",
    "render_path",
    "render_path_edge",
]
