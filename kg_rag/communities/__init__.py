"""Communities: hierarchical Leiden over the typed graph (``detect``), the stored records (``model``), and reports
— extractive, or written by any chat model through :mod:`kg_rag.langchain.communities` (``reports``)."""

from kg_rag.communities.detect import detect_communities, mark_stale, signature
from kg_rag.communities.model import Community, CommunitySet, Finding, ReportRelation, render_relation_line
from kg_rag.communities.reports import (
    ReportDraft,
    community_context,
    extractive_report,
    refresh_communities,
)

__all__ = [
    "Community",
    "CommunitySet",
    "Finding",
    "ReportDraft",
    "ReportRelation",
    "community_context",
    "detect_communities",
    "extractive_report",
    "mark_stale",
    "refresh_communities",
    "render_relation_line",
    "signature",
]
