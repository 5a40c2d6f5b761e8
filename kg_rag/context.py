"""Stage 5: context assembly — directed typed paths ``A -[TYPE]-> B``, tables and chunks, token-budgeted.

Direction is always the stored one. Names that contain notation characters (``->``, ``[``, ``]``, ``|``,
commas, quotes, line breaks) are written as JSON strings, so no entity name can break the format.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from kg_rag.graph import KnowledgeGraph, Relation
from kg_rag.schema import upper_snake
from kg_rag.tokens import count_tokens, truncate_to_tokens

if TYPE_CHECKING:
    from kg_rag.retrieve.types import GraphPath, RetrievalResult

logger = logging.getLogger(__name__)

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


# ------------------------------------------------------------------------------------------ context
PATHS_HEADER = "-----Paths (X -[TYPE]-> Y and Y <-[TYPE]- X both mean: X is the source, Y the target)-----"
RELATION_COLUMNS = ("id", "source", "target", "description", "relation_type", "weight", "rank")
ENTITY_COLUMNS = ("id", "entity", "type", "description", "rank")
_DESC_STEPS = (None, 48, 24, 12, 6, 0)


def _cell(value: object) -> str:
    return " ".join(str(value).split())


def _table_line(values: list[object]) -> str:
    buf = io.StringIO()
    csv.writer(buf, delimiter="|", lineterminator="", quoting=csv.QUOTE_MINIMAL).writerow([_cell(v) for v in values])
    return buf.getvalue()


def _shorten(text: str, limit: int | None) -> str:
    if limit is None or not text:
        return text
    if limit == 0:
        return ""
    cut = truncate_to_tokens(text, limit)
    return cut if cut == text else cut.rstrip() + "…"


def _fit_lines(lines: list[str], budget: int) -> tuple[list[str], int]:
    """Longest prefix of ``lines`` whose token count (one newline per line) fits ``budget``."""
    out, used = [], 0
    for line in lines:
        cost = count_tokens(line + "\n")
        if used + cost > budget:
            break
        out.append(line)
        used += cost
    return out, used


def _relations_lines(result: RetrievalResult, kg: KnowledgeGraph | None, desc_limit: int | None, p) -> list[str]:
    lines = []
    if result.paths:
        lines.append(PATHS_HEADER)
        lines += [render_path(kg, path) for path in result.paths[: p.max_paths]]
    if result.relations:
        lines.append("-----Relationships-----")
        lines.append(_table_line(list(RELATION_COLUMNS)))
        for i, r in enumerate(result.relations[: p.max_relations]):
            lines.append(
                _table_line(
                    [
                        i,
                        r.source,
                        r.target,
                        _shorten(r.description, desc_limit),
                        upper_snake(r.relation_type),
                        f"{r.weight:g}",
                        r.rank,
                    ]
                )
            )
    return lines


def _entity_lines(result: RetrievalResult, desc_limit: int | None) -> list[str]:
    if not result.entities:
        return []
    lines = ["-----Entities-----", _table_line(list(ENTITY_COLUMNS))]
    for i, e in enumerate(result.entities):
        lines.append(_table_line([i, e.name, e.entity_type, _shorten(e.description, desc_limit), f"{e.score:.4f}"]))
    return lines


def _chunk_blocks(result: RetrievalResult) -> list[list[str]]:
    blocks = []
    for i, c in enumerate(result.chunks):
        title = _cell(c.metadata.get("title", "")) if c.metadata else ""
        head = f"[{i + 1}] chunk={c.id} doc={c.doc_id} score={c.score:.4f}" + (f" title={title}" if title else "")
        blocks.append([head, c.text.strip()])
    return blocks


def _section(lines_at: Callable[[int | None], list[str]], budget: int) -> tuple[list[str], int]:
    """Render a table section into ``budget``: shorten every description step by step, and only when even
    empty descriptions do not fit drop whole rows from the end (types and direction are never cut)."""
    lines: list[str] = []
    for limit in _DESC_STEPS:
        lines = lines_at(limit)
        fitted, used = _fit_lines(lines, budget)
        if len(fitted) == len(lines):
            return fitted, used
    fitted, _ = _fit_lines(lines, budget)
    headers = {_table_line(list(RELATION_COLUMNS)), _table_line(list(ENTITY_COLUMNS))}
    while fitted and (fitted[-1].startswith("-----") or fitted[-1] in headers):
        fitted.pop()  # no dangling headers
    return fitted, sum(count_tokens(line + "\n") for line in fitted)


def _chunks_section(result: RetrievalResult, budget: int) -> tuple[list[str], int]:
    blocks = _chunk_blocks(result)
    if not blocks:
        return [], 0
    lines, used = ["-----Sources-----"], count_tokens("-----Sources-----\n")
    if used > budget:
        return [], 0
    for head, text in blocks:
        cost = count_tokens(head + "\n") + count_tokens(text + "\n")
        if used + cost <= budget:
            lines += [head, text]
            used += cost
            continue
        room = budget - used - count_tokens(head + "\n") - 2
        if room >= 16:  # a useful fragment: cut the text, keep the header
            cut = truncate_to_tokens(text, room).rstrip() + "…"
            lines += [head, cut]
            used += count_tokens(head + "\n") + count_tokens(cut + "\n")
        break
    return lines, used


def format_context(
    result: RetrievalResult, kg: KnowledgeGraph | None = None, params=None
) -> tuple[str, dict[str, int]]:
    """Assemble the token-budgeted context: directed paths and relationships, entities, then source chunks.

    The budget (``params.max_context_tokens``, tiktoken cl100k_base) is split by ``relations_share`` /
    ``entities_share`` / rest; a section that needs less passes its surplus on. The returned text never
    exceeds the budget. Returns ``(context, tokens per section)``.
    """
    from kg_rag.params import QueryParams

    p = params or QueryParams()
    total = p.max_context_tokens
    shares = {
        "relations": p.relations_share,
        "entities": p.entities_share,
        "chunks": max(0.0, 1.0 - p.relations_share - p.entities_share),
    }
    renderers: dict[str, Callable[[int], tuple[list[str], int]]] = {
        "relations": lambda b: _section(lambda lim: _relations_lines(result, kg, lim, p), b),
        "entities": lambda b: _section(lambda lim: _entity_lines(result, lim), b),
        "chunks": lambda b: _chunks_section(result, b),
    }
    unbounded = {name: render(10**9) for name, render in renderers.items()}
    need = {name: full[1] for name, full in unbounded.items()}
    alloc = {name: min(need[name], int(total * share)) for name, share in shares.items()}
    spare = total - sum(alloc.values())
    for name in ("chunks", "relations", "entities"):  # surplus flows to whoever still needs it
        extra = min(spare, need[name] - alloc[name])
        if extra > 0:
            alloc[name] += extra
            spare -= extra
    rendered = {  # a section that got all it needs is already rendered
        name: unbounded[name] if alloc[name] >= need[name] else renderers[name](alloc[name])
        for name in ("relations", "entities", "chunks")
    }
    lines = [line for name in ("relations", "entities", "chunks") for line in rendered[name][0]]
    text = "\n".join(lines)
    while lines and count_tokens(text) > total:  # merges across lines can differ from per-line counts
        lines.pop()
        text = "\n".join(lines)
    tokens = {name: rendered[name][1] for name in rendered}
    tokens["total"] = count_tokens(text)
    typed = sum(1 for r in result.relations if upper_snake(r.relation_type) != "RELATED")
    logger.info(
        "context tokens %s; typed relations %d/%d (%.0f%%)",
        tokens,
        typed,
        len(result.relations),
        100.0 * typed / len(result.relations) if result.relations else 0.0,
    )
    return text, tokens
