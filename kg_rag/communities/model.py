"""Communities and their reports: the records stored with an index.

A :class:`Community` is a set of entities found together by hierarchical Leiden (level 0 is the coarsest;
a community too large to summarise is split at the next level). Its report — written by a chat model, or
extractive when none is configured — is shown in the context's Communities section and read by global search.
Relations in reports are always rendered by kg-rag from the stored graph, ``A -[TYPE]-> B — description (weight:
X)`` in stored direction, so no model can reverse one; when a report must be cut, descriptions shrink first.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from kg_rag.errors import InputError
from kg_rag.model.names import upper_snake
from kg_rag.model.notation import quote_name
from kg_rag.tokens import truncate_to_tokens


def render_relation_line(
    source: str,
    relation_type: str,
    target: str,
    description: str = "",
    weight: float = 1.0,
    desc_limit: int | None = None,
) -> str:
    """``A -[TYPE]-> B — description (weight: X)``: type and direction always, in the notation of the context's
    paths, the description cut to ``desc_limit`` tokens (0 drops it)."""
    head = f"{quote_name(source)} -[{upper_snake(relation_type)}]-> {quote_name(target)}"
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
        """A community from its stored record; a field of the wrong type raises ``ValueError`` naming it (a
        stored index is read by code that trusts these types)."""
        if not isinstance(r, dict):
            raise InputError(f"a community record must be an object, got {type(r).__name__}")
        where = f"community {str(r.get('id'))[:40]!r}"
        findings = _records(r, "findings", where)
        cited = _records(r, "cited", where)
        try:
            return cls(
                id=_text(r, "id", where, required=True),
                level=_number(r, "level", where, int, required=True),
                entities=_texts(r, "entities", where),
                relations=_texts(r, "relations", where),
                parent=None if r.get("parent") is None else _text(r, "parent", where),
                signature=_text(r, "signature", where),
                title=_text(r, "title", where),
                summary=_text(r, "summary", where),
                findings=[Finding(_text(f, "summary", where), _text(f, "explanation", where)) for f in findings],
                rating=_number(r, "rating", where, float),
                rating_explanation=_text(r, "rating_explanation", where),
                cited=[
                    ReportRelation(
                        _text(c, "id", where, required=True),
                        _text(c, "source", where, required=True),
                        _text(c, "relation_type", where, required=True),
                        _text(c, "target", where, required=True),
                        _text(c, "description", where),
                        _number(c, "weight", where, float, default=1.0),
                    )
                    for c in cited
                ],
                extractive=_flag(r, "extractive", where, True),
                stale=_flag(r, "stale", where, False),
            )
        except KeyError as exc:
            raise InputError(f"{where}: missing field {exc}") from None


def _text(r: dict[str, Any], name: str, where: str, *, required: bool = False) -> str:
    value = r[name] if required else r.get(name, "")
    if value is None and not required:
        return ""
    if not isinstance(value, (str, int)) or isinstance(value, bool):
        raise InputError(f"{where}: {name} must be a string, got {type(value).__name__}")
    return str(value)


def _texts(r: dict[str, Any], name: str, where: str) -> list[str]:
    value = r.get(name) or []
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise InputError(f"{where}: {name} must be a list of strings")
    return list(value)


def _records(r: dict[str, Any], name: str, where: str) -> list[dict[str, Any]]:
    value = r.get(name) or []
    if not isinstance(value, list) or not all(isinstance(x, dict) for x in value):
        raise InputError(f"{where}: {name} must be a list of objects")
    return value


def _number(r: dict[str, Any], name: str, where: str, kind: type, *, required: bool = False, default: Any = 0) -> Any:
    value = r[name] if required else r.get(name, default)
    if (
        not isinstance(value, (int, float))
        or isinstance(value, bool)
        or not math.isfinite(value)
        or (kind is int and value != int(value))
    ):
        raise InputError(f"{where}: {name} must be a number, got {type(value).__name__}")
    return kind(value)


def _flag(r: dict[str, Any], name: str, where: str, default: bool) -> bool:
    value = r.get(name, default)
    if not isinstance(value, bool):
        raise InputError(f"{where}: {name} must be true or false, got {type(value).__name__}")
    return value


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
        """The saved set; a part of the wrong type raises ``ValueError`` naming it."""
        if not isinstance(data, dict):
            raise InputError(f"communities must be an object, got {type(data).__name__}")
        records = data.get("communities") or []
        if not isinstance(records, list):
            raise InputError("communities: 'communities' must be a list")
        params, usage = data.get("params") or {}, data.get("usage") or {}
        if not isinstance(params, dict) or not isinstance(usage, dict):
            raise InputError("communities: 'params' and 'usage' must be objects")
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in usage.values()):
            raise InputError("communities: 'usage' must hold integer counts")
        comms = [Community.from_record(r) for r in records]
        return cls({c.id: c for c in comms}, dict(params), {str(k): int(v) for k, v in usage.items()})

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=True)
