"""Community reports: the token-budgeted community context a report is written from, extractive reports (no
chat model needed), and refreshing a :class:`CommunitySet` after the graph changed.

A reporter that writes reports with a chat model lives in :mod:`kg_rag.langchain.communities`; anything with
``report_batch(items) -> list[ReportDraft | Exception]`` can be passed to :func:`refresh_communities`.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from kg_rag.communities.detect import community_params, detect_communities, graph_fingerprint, signature
from kg_rag.communities.model import Community, CommunitySet, Finding, ReportRelation
from kg_rag.model.graph import KnowledgeGraph
from kg_rag.model.names import DEFAULT_ENTITY_TYPE
from kg_rag.model.notation import quote_name
from kg_rag.model.records import EXTRACTED, relation_description
from kg_rag.tokens import count_tokens, truncate_to_tokens

logger = logging.getLogger(__name__)

RELATION_NOTE = "`A -[TYPE]-> B`: A is the source, B the target, TYPE how A relates to B"


def community_relations(kg: KnowledgeGraph, community: Community) -> list[ReportRelation]:
    """The relations among the members, strongest first (evidence weight, then how connected the ends are)."""
    graph = kg.graph
    degree = {k: graph.degree(k) for k in community.entities if k in graph}
    rows = []
    present = [m for m in community.entities if m in graph]
    for u, v, k, a in graph.subgraph(present).edges(keys=True, data=True):
        if a.get("kind", EXTRACTED) != EXTRACTED:
            continue
        weight = float(sum(e.get("weight", 1.0) for e in a.get("evidence", ())) or 1.0)
        rows.append(
            (
                -weight,
                -(degree.get(u, 0) + degree.get(v, 0)),
                k,
                ReportRelation(
                    k,
                    graph.nodes[u]["name"],
                    str(a.get("relation_type")),
                    graph.nodes[v]["name"],
                    relation_description(a.get("evidence"), a.get("predicate")) or "",
                    weight,
                ),
            )
        )
    return [r for *_, r in sorted(rows, key=lambda x: x[:3])]


def _entity_line(kg: KnowledgeGraph, key: str, desc_limit: int | None) -> str:
    a = kg.graph.nodes[key]
    etype = a.get("entity_type") or DEFAULT_ENTITY_TYPE
    texts = [d.get("text", "") if isinstance(d, dict) else str(d) for d in a.get("descriptions", [])]
    desc = " ".join(" ".join(texts).split())
    if desc_limit is not None and desc:
        cut = truncate_to_tokens(desc, desc_limit) if desc_limit > 0 else ""
        desc = cut if cut == desc else (cut.rstrip() + "…" if cut else "")
    return f"- {quote_name(a['name'])} [{etype}]" + (f": {desc}" if desc else "")


def community_context(
    kg: KnowledgeGraph, community: Community, max_tokens: int = 3000
) -> tuple[str, list[ReportRelation]]:
    """What a report is written from: members and relations (``[r:ID] A -[TYPE]-> B — description (weight: X)``,
    stored direction), within ``max_tokens``. Descriptions shrink first; then the weakest relations and the
    least connected entities are left out. Returns the text and the relations it lists."""
    relations = community_relations(kg, community)
    members = sorted((k for k in community.entities if k in kg.graph), key=lambda k: (-kg.graph.degree(k), k))
    text, shown = "", []
    for limit in (None, 48, 24, 12, 0):
        ent = [_entity_line(kg, k, limit) for k in members]
        rel = [f"[r:{r.id}] {r.line(limit)}" for r in relations]
        text = "\n".join(["Entities:", *ent, f"Relations ({RELATION_NOTE}):", *rel])
        shown = relations
        if count_tokens(text) <= max_tokens:
            return text, shown
    # still too long with no descriptions: keep the strongest relations and the best connected entities
    lines, used, shown = ["Entities:"], 0, []
    budget_entities = max_tokens // 3
    for k in members:
        line = _entity_line(kg, k, 0)
        cost = count_tokens(line + "\n")
        if used + cost > budget_entities:
            break
        lines.append(line)
        used += cost
    lines.append(f"Relations ({RELATION_NOTE}):")
    used += count_tokens(lines[-1] + "\n")
    for r in relations:
        line = f"[r:{r.id}] {r.line(0)}"
        cost = count_tokens(line + "\n")
        if used + cost > max_tokens:
            break
        lines.append(line)
        shown.append(r)
        used += cost
    return "\n".join(lines), shown


@dataclass
class ReportDraft:
    """What a reporter returns for one community (relations by id; kg-rag renders them from the graph)."""

    title: str
    summary: str
    findings: list[Finding] = field(default_factory=list)
    rating: float = 0.0
    rating_explanation: str = ""
    cited_relation_ids: list[str] = field(default_factory=list)


class Reporter(Protocol):
    def report_batch(self, items: Sequence[tuple[Community, str]]) -> list[ReportDraft | BaseException]: ...


def extractive_report(kg: KnowledgeGraph, community: Community, max_relations: int = 8) -> None:
    """Fill ``community``'s report from the graph alone: central entities, the strongest typed relations, the
    sources they come from. Marked ``extractive``."""
    graph = kg.graph
    members = [k for k in community.entities if k in graph]
    inside = graph.subgraph(members)
    central = sorted(members, key=lambda k: (-inside.degree(k), -graph.degree(k), k))
    names = [graph.nodes[k]["name"] for k in central]
    relations = community_relations(kg, community)
    types = Counter(r.relation_type for r in relations)
    etypes = Counter(graph.nodes[k].get("entity_type") or DEFAULT_ENTITY_TYPE for k in members)
    sources: Counter[str] = Counter()
    for k in members:
        for cid in graph.nodes[k].get("chunk_ids", []):
            chunk = kg.chunks.get(cid)
            if chunk is not None:
                sources[str(chunk.metadata.get("title") or chunk.doc_id)] += 1
    if len(names) > 3:
        title = f"{names[0]}, {names[1]} and {len(names) - 2} more"
    else:
        title = " and ".join([", ".join(names[:-1]), names[-1]]) if len(names) > 1 else (names[0] if names else "")
    shown = etypes.most_common(3)
    rest = len(members) - sum(n for _, n in shown)  # so the counts add up to the entities
    counts = ", ".join([*(f"{t} {n}" for t, n in shown), *([f"other {rest}"] if rest > 0 else [])])
    parts = [f"{len(members)} entities ({counts})"]
    if relations:
        parts.append(f"{len(relations)} relations (mostly {', '.join(t for t, _ in types.most_common(3))})")
    summary = "; ".join(parts) + f". Central: {', '.join(names[:3])}."
    if sources:
        summary += f" Sources: {', '.join(s for s, _ in sources.most_common(3))}."
    community.title = title
    community.summary = summary
    community.findings = []
    community.cited = relations[:max_relations]
    community.rating = round(min(10.0, 2.5 * math.log1p(len(relations))), 1)
    community.rating_explanation = "extractive: grows with the number of relations among the members"
    community.extractive = True
    community.stale = False


def apply_draft(kg: KnowledgeGraph, community: Community, draft: ReportDraft) -> None:
    """Fill a community's report from a model's draft; cited relations are rendered from the graph, and ids the
    community does not hold are dropped."""
    by_id = {r.id: r for r in community_relations(kg, community)}
    community.title = " ".join(draft.title.split())[:200]
    community.summary = " ".join(draft.summary.split())
    community.findings = [Finding(" ".join(f.summary.split()), " ".join(f.explanation.split())) for f in draft.findings]
    community.rating = float(min(10.0, max(0.0, draft.rating)))
    community.rating_explanation = " ".join(draft.rating_explanation.split())
    cited = [by_id[i] for i in dict.fromkeys(draft.cited_relation_ids) if i in by_id]
    community.cited = cited or list(by_id.values())[:5]
    community.extractive = False
    community.stale = False


@dataclass
class RefreshStats:
    communities: int = 0
    levels: list[int] = field(default_factory=list)
    reused: int = 0
    regenerated: int = 0
    stale_before: int = 0
    failed: int = 0
    usage: dict[str, int] = field(default_factory=dict)

    def summary(self) -> str:
        line = (
            f"{self.communities} communities on levels {', '.join(map(str, self.levels)) or '-'}; "
            f"{self.regenerated} reports written, {self.reused} reused"
        )
        if self.failed:
            line += f", {self.failed} fell back to extractive reports"
        return line


def refresh_communities(
    kg: KnowledgeGraph,
    previous: CommunitySet | None = None,
    *,
    reporter: Reporter | None = None,
    max_context_tokens: int = 3000,
    **params: Any,
) -> tuple[CommunitySet, RefreshStats]:
    """Detect communities (seeded by ``previous``) and write reports only where needed: a community with the
    same members and an unchanged signature keeps its report; the rest get a new one (from ``reporter``, or
    extractive). Returns the new set and what happened."""
    settings = community_params(**params)
    if previous is not None and previous.params:
        for key in ("max_cluster_size", "max_levels", "resolution", "seed", "min_size"):
            if params.get(key) is None and key in previous.params:
                settings[key] = previous.params[key]
    shape = graph_fingerprint(kg)
    upgrading = reporter is not None and previous is not None and any(c.extractive for c in previous)
    if (
        previous is not None
        and previous.params.get("graph") == shape
        and all(previous.params.get(k) == settings[k] for k in community_params())
        and not previous.stale
        and not upgrading
        and all(signature(kg, c.entities) == c.signature for c in previous)  # a caller may not have marked edits
    ):  # nothing changed: Leiden run again from its own partition may still move an entity, for nothing
        return previous, RefreshStats(len(previous), previous.levels, reused=len(previous))
    found = detect_communities(kg, previous=previous, **{k: settings[k] for k in community_params()})
    stats = RefreshStats(communities=len(found), levels=sorted({c.level for c in found}))
    stats.stale_before = len(previous.stale) if previous is not None else 0
    old = previous.communities if previous is not None else {}
    todo: list[Community] = []
    for c in found:
        before = old.get(c.id)
        upgrade = reporter is not None and before is not None and before.extractive
        if (
            before is not None
            and before.has_report
            and not before.stale
            and before.signature == c.signature
            and not upgrade
        ):
            for name in ("title", "summary", "findings", "rating", "rating_explanation", "cited", "extractive"):
                setattr(c, name, getattr(before, name))
            stats.reused += 1
        else:
            todo.append(c)
    if reporter is not None and todo:
        items = [(c, community_context(kg, c, max_context_tokens)[0]) for c in todo]
        drafts = reporter.report_batch(items)
        for c, draft in zip(todo, drafts):
            if isinstance(draft, BaseException):
                logger.warning("report for community %s failed (%s); using an extractive one", c.id, draft)
                extractive_report(kg, c)
                stats.failed += 1
            else:
                apply_draft(kg, c, draft)
        stats.usage = dict(getattr(reporter, "usage", {}) or {})
    else:
        for c in todo:
            extractive_report(kg, c)
    stats.regenerated = len(todo)
    usage = Counter(previous.usage if previous is not None else {})
    usage.update(stats.usage)
    result = CommunitySet({c.id: c for c in found}, {**settings, "graph": shape}, dict(usage))
    for c in found:
        c.signature = signature(kg, c.entities)
    return result, stats
