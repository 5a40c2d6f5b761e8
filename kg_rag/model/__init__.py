"""The graph model: names and relation types (``schema``), records (``records``), the editable graph (``graph``)."""

from kg_rag.model.graph import KnowledgeGraph
from kg_rag.model.names import RELATED, SYNONYM, canonical_key
from kg_rag.model.records import EXTRACTED, SYNONYM_KIND, Chunk, Entity, Evidence, Relation, relation_id
from kg_rag.model.relation_types import RelationTyper

__all__ = [
    "EXTRACTED",
    "RELATED",
    "SYNONYM",
    "SYNONYM_KIND",
    "Chunk",
    "Entity",
    "Evidence",
    "KnowledgeGraph",
    "Relation",
    "RelationTyper",
    "canonical_key",
    "relation_id",
]
