"""Communities and their reports: the records stored with an index.

A :class:`Community` is a set of entities found together by hierarchical Leiden (level 0 is the coarsest;
a community too large to summarise is split at the next level). Its report — written by a chat model, or
extractive when none is configured — is shown in the context's Communities section and read by global search.
Relations in reports are always rendered by kg-rag from the stored graph, ``A [TYPE] B — description (weight:
X)`` in stored direction, so no model can reverse one; when a report must be cut, descriptions shrink first.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from kg_rag.context.render import quote_name
from kg_rag.model.schema import upper_snake
from kg_rag.tokens import truncate_to_tokens


def render_relation_line(
    source: str,
    relation_type: str,
    target: str,
    description: str = "",
    weight: float = 1.0,
    desc_limit: int | None = None,
) -> str:
    """``A [TYPE] B — description (weight: X)``: type and direction always, the description cut to
    ``desc_limit`` tokens (0 drops it)."""
    head = f"{quote_name(source)} [{upper_snake(relation_type)}] {quote_name(target)}"
    text = " ".join(str(description or "").split())
    if desc_limit is not None and text:
        cut = truncate_to_tokens(text, desc_limit) if desc_limit > 0 else ""
        text = cut if cut == text else (cut.rstrip() + "…" if cut else "")
    return f"{head} — {text} (weight: {weight:g})" if text else f"{head} (weight: {weight:g})"


def _shorten(text: str, limit: int | None) -> str:
    if limit is None or not text:
        return text
    if limit == 0:
        return ""
    cut = truncate_to_tokens(text, limit)
    return cut if cut == text else cut.rstrip() + "…"


@dataclass
class Finding:
    summary: str
    explanation: str = ""


@dataclass
class ReportRelation:
    """A relation a report cites, as rendered from the graph (never from model output)."""

    id: str
    source: str
    relation_type: str
    target: str
    description: str = ""
    weight: float = 1.0

    def line(self, desc_limit: int | None = None) -> str:
        return render_relation_line(
            self.source, self.relation_type, self.target, self.description, self.weight, desc_limit
        )


@dataclass
class Community:
    """One community and its report."""

    id: str
    level: int
    entities: list[str]
    """Member entity keys, sorted."""
    relations: list[str] = field(default_factory=list)
    """Relations with both ends in the community, by id."""
    parent: str | None = None
    signature: str = ""
    """Hash of what the report was written from (members, their records, the relations among them)."""
    title: str = ""
    summary: str = ""
    findings: list[Finding] = field(default_factory=list)
    rating: float = 0.0
    rating_explanation: str = ""
    cited: list[ReportRelation] = field(default_factory=list)
    extractive: bool = True
    stale: bool = False

    @property
    def size(self) -> int:
        return len(self.entities)

    @property
    def has_report(self) -> bool:
        return bool(self.title or self.summary)

    @property
    def serves(self) -> bool:
        """Whether its report may be shown: one exists and is current (a stale report, as older releases saved
        them, may state what the graph no longer holds, a deleted document's facts included)."""
        return self.has_report and not self.stale

    def lines(self, desc_limit: int | None = None) -> list[str]:
        """The report as context lines: summary, findings, cited relations (descriptions cut first)."""
        out = []
        if self.summary:
            summary = _shorten(self.summary, desc_limit)
            if summary:
                out.append(summary)
        for f in self.findings:
            text = (
                f.summary if not f.explanation else f"{f.summary}: {_shorten(f.explanation, desc_limit)}".rstrip(": ")
            )
            if text:
                out.append(f"- {text}")
        out += [r.line(desc_limit) for r in self.cited]
        return out

    def report_text(self) -> str:
        kind = "extractive report" if self.extractive else "report"
        head = f"# {self.title} (community {self.id}, level {self.level}, rating {self.rating:.1f}, {kind})"
        return "\n".join([head, *self.lines()])

    def to_record(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_record(cls, r: dict[str, Any]) -> Community:
        return cls(
            id=str(r["id"]),
            level=int(r["level"]),
            entities=[str(e) for e in r.get("entities", [])],
            relations=[str(x) for x in r.get("relations", [])],
            parent=None if r.get("parent") is None else str(r["parent"]),
            signature=str(r.get("signature", "")),
            title=str(r.get("title", "")),
            summary=str(r.get("summary", "")),
            findings=[Finding(str(f.get("summary", "")), str(f.get("explanation", ""))) for f in r.get("findings", [])],
            rating=float(r.get("rating", 0.0)),
            rating_explanation=str(r.get("rating_explanation", "")),
            cited=[
                ReportRelation(
                    str(c["id"]),
                    str(c["source"]),
                    str(c["relation_type"]),
                    str(c["target"]),
                    str(c.get("description", "")),
                    float(c.get("weight", 1.0)),
                )
                for c in r.get("cited", [])
            ],
            extractive=bool(r.get("extractive", True)),
            stale=bool(r.get("stale", False)),
        )


def community_id(level: int, members: Iterable[str]) -> str:
    """A content-derived id: the same members at the same level keep their id (and so their report)."""
    digest = hashlib.sha1("\x00".join(sorted(members)).encode("utf-8")).hexdigest()[:10]
    return f"L{level}-{digest}"


@dataclass
class CommunitySet:
    """All communities of an index, with the settings that found them and what their reports cost."""

    communities: dict[str, Community] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)
    usage: dict[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.communities)

    def __iter__(self) -> Iterator[Community]:
        return iter(self.communities.values())

    @property
    def levels(self) -> list[int]:
        return sorted({c.level for c in self})

    def at_level(self, level: int) -> list[Community]:
        return [c for c in self if c.level == level]

    def of_entities(self) -> dict[str, list[str]]:
        """Entity key -> the ids of its communities, coarsest level first."""
        out: dict[str, list[tuple[int, str]]] = {}
        for c in self:
            for key in c.entities:
                out.setdefault(key, []).append((c.level, c.id))
        return {k: [cid for _, cid in sorted(v)] for k, v in out.items()}

    @property
    def stale(self) -> list[Community]:
        return [c for c in self if c.stale]

    def to_dict(self) -> dict[str, Any]:
        return {
            "params": dict(self.params),
            "usage": dict(self.usage),
            "communities": [c.to_record() for c in sorted(self, key=lambda c: (c.level, c.id))],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CommunitySet:
        comms = [Community.from_record(r) for r in data.get("communities", [])]
        return cls(
            {c.id: c for c in comms},
            dict(data.get("params") or {}),
            {str(k): int(v) for k, v in (data.get("usage") or {}).items()},
        )

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=True)
