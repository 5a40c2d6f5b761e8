"""Stage 5: context assembly — directed typed paths ``A -[TYPE]-> B``, tables and source passages, in a token
budget.

Sections, in order: Paths, Relationships (``id|source|target|description|relation_type|weight|rank``),
Entities, Communities (when the result carries community reports) and Sources. Each has a share of the budget
(``relations_share``, ``entities_share``, ``community_share``, the rest for sources); a section that needs
less passes the surplus on. When something must be cut, descriptions shrink before whole rows go, and a row
never loses its type or direction.

Nothing a document, a file name or an entity name contains can forge structure: every line of source text
is prefixed with ``| `` (no structural line starts that way), ids and titles are sanitised and quoted, entity
names that look like notation are JSON-quoted, and table cells are CSV-quoted.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from kg_rag.fence import DATA_PREFIX, data_lines, fence_safe, printable
from kg_rag.model.names import DEFAULT_ENTITY_TYPE, after_title, upper_snake
from kg_rag.model.notation import quote_name, render_path
from kg_rag.tokens import count_tokens, truncate_to_tokens

if TYPE_CHECKING:
    from kg_rag.model.results import RetrievalResult, ScoredChunk, ScoredEntity

logger = logging.getLogger(__name__)

PATHS_HEADER = "-----Paths (X -[TYPE]-> Y and Y <-[TYPE]- X both mean: X is the source, Y the target)-----"
RELATIONS_HEADER = "-----Relationships-----"
ENTITIES_HEADER = "-----Entities-----"
COMMUNITIES_HEADER = "-----Communities-----"
SOURCES_HEADER = "-----Sources-----"
SOURCE_LINE_PREFIX = DATA_PREFIX
"""Every line of source text starts with this, so no source text can pass for a header, a row or a source line."""
RELATION_COLUMNS = ("id", "source", "target", "description", "relation_type", "weight", "rank")
ENTITY_COLUMNS = ("id", "entity", "type", "description", "rank")
_DESC_STEPS = (None, 48, 24, 12, 6, 0)
_SAFE_ID = re.compile(r"[\w.:/#@+-]{1,200}", re.UNICODE)


class ContextParams(Protocol):
    """The settings the context reads (:class:`~kg_rag.query.params.QueryParams` has them all)."""

    @property
    def max_context_tokens(self) -> int: ...
    @property
    def relations_share(self) -> float: ...
    @property
    def entities_share(self) -> float: ...
    @property
    def community_share(self) -> float: ...
    @property
    def max_paths(self) -> int: ...
    @property
    def max_relations(self) -> int: ...


@dataclass(frozen=True)
class ContextBudget:
    """The default :class:`ContextParams`: those of the default ``QueryParams()`` (a test keeps them equal)."""

    max_context_tokens: int = 4000
    relations_share: float = 0.3
    entities_share: float = 0.15
    community_share: float = 0.1
    max_paths: int = 10
    max_relations: int = 12


ContextFormatter = Callable[["RetrievalResult", Any], "FormattedContext"]
"""What the query engine calls last: ``(result, params) -> FormattedContext`` (:func:`format_context` by default)."""

Line = tuple[str, tuple[str, str] | None]
"""A rendered line and what it shows (``("relation", id)``, ``("path", i)``, ...; ``None`` for headers)."""


@dataclass
class FormattedContext:
    """The context text and what made it in: row ids, path count, entities, chunk ids, tokens per section."""

    text: str
    graph_text: str = ""
    """The graph half (paths, relationships, entities, communities) before the Sources section."""
    graph_support: list[Any] = field(default_factory=list)
    """For each line of ``graph_text``, the passages it rests on (see :func:`graph_support`)."""
    budget: int = 0
    """The token budget of the whole text."""
    sources_budget: int = 0
    """The tokens the Sources section was given (what :func:`format_sources` needs to render it again)."""
    section_tokens: dict[str, int] = field(default_factory=dict)
    relations: list[str] = field(default_factory=list)
    """Relation ids of the relationship rows shown, in order."""
    paths: list[int] = field(default_factory=list)
    """Indexes (into ``result.paths``) of the paths shown."""
    entities: list[str] = field(default_factory=list)
    communities: list[str] = field(default_factory=list)
    chunks: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    """Why the context holds less than the result (a budget too small for any of it)."""

    @property
    def tokens(self) -> int:
        return self.section_tokens.get("total", 0)


def safe_label(value: object, limit: int = 200) -> str:
    """An id, title or file name as one safe token: kept as is when plain, else JSON-quoted (no line breaks,
    no control characters, nothing that reads as a new field or section)."""
    text = printable(str(value))
    text = " ".join(text.split())[:limit]
    return text if _SAFE_ID.fullmatch(text) else json.dumps(text, ensure_ascii=False)


def _cell(value: object) -> str:
    return " ".join(printable(str(value)).split())


def _table_line(values: list[object]) -> str:
    buf = io.StringIO()
    csv.writer(buf, delimiter="|", lineterminator="", quoting=csv.QUOTE_MINIMAL).writerow([_cell(v) for v in values])
    line = buf.getvalue()
    return line


_COLUMN_LINES = frozenset({_table_line(list(RELATION_COLUMNS)), _table_line(list(ENTITY_COLUMNS))})
"""The tables' column lines (headers, like the section lines)."""


_ARROWS = re.compile(r"->|<-|-\[|\]-")


def _name_cell(name: str) -> str:
    """A name in a table: a JSON string when it holds arrow notation (``A -[T]-> B`` inside a row would read as
    an edge), as in the paths; other names as they are (the cell's own quoting covers ``|`` and quotes)."""
    return quote_name(name) if _ARROWS.search(name) else name


def _shorten(text: str, limit: int | None) -> str:
    if limit is None or not text:
        return text
    if limit == 0:
        return ""
    cut = truncate_to_tokens(text, limit)
    return cut if cut == text else cut.rstrip() + "…"


def _fit(lines: list[Line], budget: int) -> tuple[list[Line], int]:
    """Longest prefix of ``lines`` whose token count (one newline per line) fits ``budget``."""
    out, used = [], 0
    for line in lines:
        cost = count_tokens(line[0] + "\n")
        if used + cost > budget:
            break
        out.append(line)
        used += cost
    return out, used


def _path_lines(result: RetrievalResult, p: ContextParams) -> list[Line]:
    if not result.paths or p.max_paths == 0:
        return []
    lines: list[Line] = [(PATHS_HEADER, None)]
    lines += [(render_path(result.names, path), ("path", str(i))) for i, path in enumerate(result.paths[: p.max_paths])]
    return lines


def _relation_lines(result: RetrievalResult, desc_limit: int | None, p: ContextParams) -> list[Line]:
    rows = result.relations[: p.max_relations]
    if not rows:
        return []
    lines: list[Line] = [(RELATIONS_HEADER, None), (_table_line(list(RELATION_COLUMNS)), None)]
    for i, r in enumerate(rows):
        values = [
            i,
            _name_cell(r.source),
            _name_cell(r.target),
            _shorten(r.description, desc_limit),
            upper_snake(r.relation_type),
            f"{r.weight:g}",
            r.rank,
        ]
        lines.append((_table_line(values), ("relation", r.relation_id)))
    return lines


def _informative(e: ScoredEntity) -> bool:
    """An entity row earns its tokens when it says more than the name the rows, paths and passages already show:
    a type, or a description (OpenIE graphs have neither, and a table of bare names took a share of the context
    for nothing; measured: evaluation/design-figures.md)."""
    return bool((e.entity_type and e.entity_type != DEFAULT_ENTITY_TYPE) or (e.description or "").strip())


def _entity_lines(result: RetrievalResult, desc_limit: int | None) -> list[Line]:
    entities = [e for e in result.entities if _informative(e)]
    if not entities:
        return []
    lines: list[Line] = [(ENTITIES_HEADER, None), (_table_line(list(ENTITY_COLUMNS)), None)]
    for i, e in enumerate(entities):
        values = [i, _name_cell(e.name), e.entity_type, _shorten(e.description, desc_limit), f"{e.score:.4f}"]
        lines.append((_table_line(values), ("entity", e.key)))
    return lines


def community_block(community: Any, desc_limit: int | None = None) -> list[str]:
    """A community report as the context shows it (and global search reads it): one header line kg-rag writes,
    then the report's text as quoted data lines (a report's text may hold line breaks; each line is quoted)."""
    c = community
    kind = " extractive" if getattr(c, "extractive", False) else ""
    head = f"community={safe_label(c.id)} level={c.level} rating={c.rating:.1f}{kind} title={safe_label(c.title)}"
    return [head] + [line for text in c.lines(desc_limit) for line in data_lines(text)]


def _community_lines(result: RetrievalResult, desc_limit: int | None) -> list[Line]:
    communities = getattr(result, "communities", None) or []
    if not communities:
        return []
    lines: list[Line] = [(COMMUNITIES_HEADER, None)]
    for c in communities:
        head, *body = community_block(c, desc_limit)
        lines.append((head, ("community", c.id)))
        lines += [(line, ("community-line", c.id)) for line in body]
    return lines


def _section(lines_at: Callable[[int | None], list[Line]], budget: int) -> tuple[list[Line], int]:
    """Render a table section into ``budget``: shorten every description step by step, and only when even
    empty descriptions do not fit drop whole rows from the end (types and direction are never cut)."""
    lines: list[Line] = []
    for limit in _DESC_STEPS:
        lines = lines_at(limit)
        fitted, used = _fit(lines, budget)
        if len(fitted) == len(lines):
            return fitted, used
    fitted, _ = _fit(lines, budget)
    while fitted and fitted[-1][1] is None:
        fitted.pop()  # no dangling headers
    return fitted, sum(count_tokens(line + "\n") for line, _ in fitted)


def _first_item_cost(lines: list[Line]) -> int:
    """Tokens of a section's headers and its first path or row (0 when it has none)."""
    for i, (_, tag) in enumerate(lines):
        if tag is not None:
            return sum(count_tokens(line + "\n") for line, _ in lines[: i + 1])
    return 0


def _source_header(i: int, c: ScoredChunk) -> str:
    title = c.metadata.get("title", "") if c.metadata else ""
    doc = f" doc={safe_label(c.doc_id)}" if c.doc_id != c.id else ""  # a corpus passage is its own document
    head = f"[{i + 1}] chunk={safe_label(c.id)}{doc} score={c.score:.4f}"
    return head + (f" title={safe_label(title)}" if title else "")


def _shown_text(c: ScoredChunk) -> str:
    """A chunk's text as the context shows it: without an opening line that is only its title as a Markdown
    heading, which the source's ``title=`` already names (kept when nothing follows it)."""
    title = (c.metadata or {}).get("title")
    rest = after_title(c.text, title) if title and c.text.lstrip().startswith("#") else None
    return rest.lstrip("\r\n") if rest is not None and rest.strip() else c.text


def _chunks_section(chunks: Sequence[ScoredChunk], budget: int) -> tuple[list[Line], int]:
    if not chunks:
        return [], 0
    header_cost = count_tokens(SOURCES_HEADER + "\n")
    if header_cost > budget:
        return [], 0
    lines: list[Line] = [(SOURCES_HEADER, None)]
    used = header_cost
    for i, c in enumerate(chunks):
        head = _source_header(i, c)
        text = _shown_text(c)
        body = data_lines(text)
        head_cost = count_tokens(head + "\n")
        cost = head_cost + sum(count_tokens(b + "\n") for b in body)
        if used + cost <= budget:
            lines += [(head, ("chunk", c.id))] + [(b, ("chunk-text", c.id)) for b in body]
            used += cost
            continue
        room = budget - used - head_cost - 2
        if room >= 16:  # a useful fragment: cut the text, keep the header
            cut = data_lines(truncate_to_tokens(text, room).rstrip() + "…")
            kept, spent = _fit([(b, ("chunk-text", c.id)) for b in cut], room)
            if kept:
                lines += [(head, ("chunk", c.id)), *kept]
                used += head_cost + spent
        break
    return (lines, used) if len(lines) > 1 else ([], 0)  # no dangling header


def _within(lines: list[Line], total: int) -> tuple[list[Line], str, int]:
    """``lines`` joined, dropping lines from the end while the whole text is over ``total`` tokens (token merges
    across lines can make the whole differ from the sum of its lines), and the text's token count."""
    text = "\n".join(line for line, _ in lines)
    tokens = count_tokens(text)
    while lines and tokens > total:
        lines = lines[:-1]
        text = "\n".join(line for line, _ in lines)
        tokens = count_tokens(text)
    return lines, text, tokens


def _tally(out: FormattedContext, lines: list[Line]) -> None:
    for _, tag in lines:
        if tag is None:
            continue
        kind, value = tag
        if kind == "relation":
            out.relations.append(value)
        elif kind == "path":
            out.paths.append(int(value))
        elif kind == "entity":
            out.entities.append(value)
        elif kind == "community":
            out.communities.append(value)
        elif kind == "chunk":
            out.chunks.append(value)


def format_context(result: RetrievalResult, params: ContextParams | None = None) -> FormattedContext:
    """Assemble the token-budgeted context of a retrieval result (see the module docstring).

    The returned text never exceeds ``params.max_context_tokens`` (tiktoken cl100k_base). It is the graph half
    (``graph_text``: paths, relationships, entities, communities) followed by the Sources section, which
    :func:`format_sources` can render again for another choice or order of the same passages.
    """
    p = params if params is not None else ContextBudget()
    total = p.max_context_tokens
    community_share = p.community_share
    shares = {
        "relations": p.relations_share,  # paths and relationship rows share it, paths first
        "entities": p.entities_share,
        "communities": community_share,
        "chunks": max(0.0, 1.0 - p.relations_share - p.entities_share - community_share),
    }

    def relations_at(limit: int | None) -> list[Line]:
        return _path_lines(result, p) + _relation_lines(result, limit, p)

    renderers: dict[str, Callable[[int], tuple[list[Line], int]]] = {
        "relations": lambda b: _section(relations_at, b),
        "entities": lambda b: _section(lambda lim: _entity_lines(result, lim), b),
        "communities": lambda b: _section(lambda lim: _community_lines(result, lim), b),
        "chunks": lambda b: _chunks_section(result.chunks, b),
    }
    unbounded = {name: render(10**9) for name, render in renderers.items()}
    need = {name: full[1] for name, full in unbounded.items()}
    alloc = {name: min(need[name], int(total * share)) for name, share in shares.items()}
    spare = total - sum(alloc.values())
    for name in ("chunks", "relations", "communities", "entities"):  # surplus flows to whoever still needs it
        extra = min(spare, need[name] - alloc[name])
        if extra > 0:
            alloc[name] += extra
            spare -= extra
    order = ("relations", "entities", "communities", "chunks")
    rendered = {  # a section that got all it needs is already rendered
        name: unbounded[name] if alloc[name] >= need[name] else renderers[name](alloc[name]) for name in order
    }
    shut_out = need["relations"] > 0 and p.relations_share > 0 and not rendered["relations"][1]
    first = _first_item_cost(relations_at(_DESC_STEPS[-1])) if shut_out else 0  # rendered only in that case
    moved = False
    if first and alloc["relations"] < first <= alloc["relations"] + alloc["chunks"]:
        # the share of a small budget holds not even one path or row while the passages' share has room: the
        # graph half takes the least it needs from it, so a larger budget never shows less of the graph
        alloc["chunks"] -= first - alloc["relations"]
        alloc["relations"] = first
        rendered["relations"] = renderers["relations"](first)
        rendered["chunks"] = renderers["chunks"](alloc["chunks"])
        moved = True
    starved = need["relations"] + need["chunks"] > 0 and not rendered["relations"][1] + rendered["chunks"][1]
    starved = starved or (moved and need["chunks"] > 0 and not rendered["chunks"][1])
    if starved:  # no share fits a path, a row or a passage: the budget goes to them whole, the paths first
        rendered["relations"] = renderers["relations"](total)
        rendered["chunks"] = renderers["chunks"](total - rendered["relations"][1])
        rendered["entities"] = rendered["communities"] = ([], 0)
    graph_lines = [line for name in order[:-1] for line in rendered[name][0]]
    lines, text, tokens = _within(graph_lines + rendered["chunks"][0], total)
    out = FormattedContext(
        text,
        graph_text="\n".join(line for line, _ in graph_lines),
        graph_support=graph_support(result, graph_lines),
        budget=total,
        sources_budget=alloc["chunks"],
    )
    _tally(out, lines)
    if not (out.paths or out.relations or out.chunks) and (result.paths or result.relations or result.chunks):
        out.warnings.append(
            f"max_context_tokens {total} holds no path, relationship row or passage of this result: "
            "raise it (a path with its section header needs about 50 tokens)"
        )
    out.section_tokens = {name: rendered[name][1] for name in order}
    out.section_tokens["total"] = tokens
    typed = sum(1 for r in result.relations if upper_snake(r.relation_type) != "RELATED")
    logger.info(
        "context tokens %s; %d rows (%d typed), %d paths",
        out.section_tokens,
        len(out.relations),
        typed,
        len(out.paths),
    )
    return out


def graph_support(result: RetrievalResult, lines: list[Line]) -> list[Any]:
    """What each graph line rests on among the returned passages: ``None`` (always shown: headers, entities,
    community reports, a row the question itself evidences), a list of chunk ids (a row: shown while one of
    them is), or ``{"steps": [[...], ...]}`` (a path: shown while every step has one of its chunks)."""
    returned = {c.id for c in result.chunks}
    evidence = {r.relation_id: [c for c in r.chunk_ids if c in returned] for r in result.relations}
    out: list[Any] = []
    for _, tag in lines:
        if tag is None:
            out.append(None)
            continue
        kind, value = tag
        if kind == "relation":
            out.append(evidence.get(value) or None)
        elif kind == "path":
            steps = [evidence.get(st.relation_id) for st in result.paths[int(value)].steps]
            out.append({"steps": [s for s in steps if s]} if any(steps) else None)
        else:
            out.append(None)
    return out


def keep_graph_lines(graph_text: str, support: Sequence[Any], kept: set[str]) -> str:
    """The graph half without the lines that rest only on passages not ``kept`` (a reranker or a filter dropped
    them), and without a section left empty by that. With every passage kept, it is ``graph_text``."""
    lines = graph_text.split("\n") if graph_text else []
    if len(support) != len(lines):  # no support recorded: nothing to decide on
        return graph_text

    def shown(rests_on: Any) -> bool:
        if rests_on is None:
            return True
        if isinstance(rests_on, dict):
            return all(set(step) & kept for step in rests_on.get("steps", []))
        return bool(set(rests_on) & kept)

    out: list[tuple[str, bool]] = []  # (line, is a header)
    for line, rests_on in zip(lines, support):
        header = line.startswith("-----") or line in _COLUMN_LINES
        if header or shown(rests_on):
            out.append((line, header))
    while out and out[-1][1]:  # a trailing header with nothing under it
        out.pop()
    kept_lines = [line for i, (line, header) in enumerate(out) if not header or _has_rows(out, i)]
    return "\n".join(kept_lines)


def _has_rows(lines: list[tuple[str, bool]], i: int) -> bool:
    """Whether the header at ``i`` has a content line before the next section header."""
    for line, header in lines[i + 1 :]:
        if not header:
            return True
        if line.startswith("-----"):
            return False
    return False


def format_sources(graph_text: str, chunks: Sequence[ScoredChunk], budget: int, sources_budget: int) -> str:
    """The context for ``graph_text`` (the graph half of a :class:`FormattedContext`) and these passages, in
    this order, numbered ``[1]``, ``[2]``, ... — what :func:`format_context` gives when they are its result's
    own chunks, and the same rendering for a reranked, filtered or merged list of them."""
    graph_lines: list[Line] = [(line, None) for line in graph_text.split("\n")] if graph_text else []
    return _within(graph_lines + _chunks_section(chunks, sources_budget)[0], budget)[1]


PASSAGE_PATHS = "Paths (X -[TYPE]-> Y: X is the source, Y the target):"
PASSAGE_TEXT = "Text:"


def render_passage(chunk: ScoredChunk) -> str:
    """One passage as a model may read it on its own (a Document's ``page_content``): the directed paths of the
    retrieval that reach it, then its text as quoted data lines, so nothing in the text can pass for a path."""
    title = chunk.metadata.get("title", "") if chunk.metadata else ""
    lines = [f"Source: chunk={safe_label(chunk.id)}"]
    lines[0] += f" doc={safe_label(chunk.doc_id)}" if chunk.doc_id != chunk.id else ""
    lines[0] += f" title={safe_label(title)}" if title else ""
    if chunk.paths:
        lines += [PASSAGE_PATHS, *chunk.paths]
    lines += [PASSAGE_TEXT, *data_lines(_shown_text(chunk))]
    return fence_safe("\n".join(lines))  # a user's prompt may put it between <context> tags
