"""LLM extraction of typed, directed relations with any LangChain chat model.

The model is called through ``with_structured_output`` (no hand-written JSON parsing) as one Runnable —
prompt, model, parse — run with ``batch_as_completed`` / ``abatch_as_completed``: bounded concurrency
(``max_concurrency``), the caller's ``RunnableConfig`` (callbacks, tags, run names) reaching every call, and
one retry layer with exponential backoff (give the model ``max_retries=0``; :func:`kg_rag.default_chat_model`
does). A chunk whose extraction still fails is reported, never raised: one bad chunk never sinks a batch.
Calls and prompt/completion tokens are counted (from the model's ``usage_metadata``, else by tiktoken).
An optional second pass (``gleaning``, as in GraphRAG) asks the model for what it missed.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from kg_rag.chat_calls import describe_chat_model, structured_output
from kg_rag.errors import ExtractionError, InputError
from kg_rag.ingest.extraction_schema import (
    GLEANING_PROMPT,
    SYSTEM_PROMPT,
    ExtractionSchema,
    extraction_text,
    vocabulary,
)
from kg_rag.model import Chunk, KnowledgeGraph
from kg_rag.model.names import (
    DEFAULT_ENTITY_TYPE,
    DEFAULT_ENTITY_TYPES,
    DEFAULT_RELATION_PATTERNS,
    DEFAULT_RELATION_TYPES,
    RELATED,
    canonical_key,
    clean_display_name,
    upper_snake,
)
from kg_rag.model.relation_types import RelationTyper
from kg_rag.model.report import IngestReport
from kg_rag.tokens import count_tokens

__all__ = [
    "GLEANING_PROMPT",
    "SYSTEM_PROMPT",
    "ExtractedEntity",
    "ExtractedRelation",
    "ExtractionResult",
    "ExtractionRun",
    "LLMExtractor",
    "ParsedRelation",
    "Usage",
    "apply_extraction",
    "usage_summary",
]

logger = logging.getLogger(__name__)


class ExtractedEntity(BaseModel):
    """An entity mentioned in the text."""

    name: str = Field(description="The entity's name as written in the text")
    type: str = Field(default=DEFAULT_ENTITY_TYPE, description="One of the allowed entity types")
    description: str = Field(default="", description="One sentence on what the text says about it")


class ExtractedRelation(BaseModel):
    """A directed relation: source -[type]-> target. Direction matters."""

    source: str = Field(description="Name of the entity the relation goes FROM (the subject/actor)")
    target: str = Field(description="Name of the entity the relation goes TO (the object)")
    type: str = Field(default=RELATED, description="One of the allowed relation types, UPPER_SNAKE")
    description: str = Field(default="", description="Short description of the relation in context")
    evidence: str = Field(default="", description="Verbatim quote from the text that states the relation")
    confidence: float = Field(default=1.0, ge=0.0, le=1.0, description="Confidence between 0 and 1")


class ParsedRelation(ExtractedRelation):
    """A relation read off a sentence by a parser rather than named by a model: it carries its predicate as
    written (``was founded by``), which the relation typer turns into a type (``FOUNDED_BY``) and which is kept on
    the stored relation, as for OpenIE triples."""

    predicate: str = Field(default="", description="The predicate as written, auxiliaries and preposition kept")


class ExtractionResult(BaseModel):
    """Entities and directed relations extracted from one chunk of text."""

    entities: list[ExtractedEntity] = Field(default_factory=list)
    relations: list[ExtractedRelation] = Field(default_factory=list)


def entity_cap(text: str) -> int:
    """Most entities (and relations) kept from one chunk: a chunk cannot name more things than it has
    words, so an answer beyond that is noise (counted, not kept)."""
    return max(8, len(text.split()))


@dataclass
class Usage:
    """Chat calls and tokens spent, from ``usage_metadata`` when the model reports it, else counted.

    ``calls`` counts every call made, including the ``failed`` ones (an error, a timeout, an answer that did not
    parse; a retry is another call): a provider bills for many of those too. A failed call's tokens are counted
    when the server reported them (an answer that did not parse); an error or timeout reports none.
    """

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    counted: int = 0
    """Calls whose tokens were counted with tiktoken because the model reported no usage."""
    failed: int = 0
    """Calls that raised or returned an answer that did not parse (included in ``calls``)."""

    def add(self, other: Usage) -> None:
        self.calls += other.calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.counted += other.counted
        self.failed += other.failed

    def to_dict(self) -> dict[str, int]:
        out = {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "counted_with_tiktoken": self.counted,
        }
        if self.failed:
            out["failed_calls"] = self.failed
        return out


def usage_of(message: Any) -> Usage:
    """The usage of one chat call: the message's ``usage_metadata``, or a tiktoken count of what it returned
    (``counted``; the caller counts what was sent)."""
    meta = getattr(message, "usage_metadata", None) or {}
    if meta.get("input_tokens") is not None or meta.get("output_tokens") is not None:
        return Usage(1, int(meta.get("input_tokens") or 0), int(meta.get("output_tokens") or 0))
    content = getattr(message, "content", "") or ""
    calls = getattr(message, "tool_calls", None) or []
    completion = (content if isinstance(content, str) else json.dumps(content)) + "".join(
        json.dumps(c.get("args", {})) for c in calls
    )
    return Usage(1, 0, count_tokens(completion), 1)


def _require_result(value: Any) -> ExtractionResult:
    if isinstance(value, ExtractionResult):
        return value
    if isinstance(value, Mapping):
        return ExtractionResult.model_validate(value)
    raise ExtractionError(f"model returned no structured extraction (got {type(value).__name__})")


def apply_extraction(
    kg: KnowledgeGraph,
    chunk: Chunk,
    result: ExtractionResult,
    typer: RelationTyper,
    report: IngestReport | None = None,
) -> None:
    """Merge one chunk's extraction into the graph, direction exactly as extracted.

    Self-loops (two names that are one entity) and relations with an empty end are skipped and counted,
    the self-loops by name; evidence quotes that do not occur in the chunk text are dropped (counted) so
    stored evidence is always real text; an answer with more entities or relations than the chunk has words
    is cut to that many (counted). An entity the chunk does not mention, and a relation with such an end, is
    dropped and counted by name (``entity_not_in_text``, ``member_not_in_text``; see
    :mod:`kg_rag.ingest.grounding`); a name the document defines a term as is mentioned where the term is
    (:mod:`kg_rag.ingest.defined`: *NVIDIA Corporation* where the chunk writes "the Company").
    """
    report = report if report is not None else IngestReport()
    haystack = " ".join(chunk.text.split()).casefold()
    unmentioned = _unmentioned(chunk)
    cap = entity_cap(chunk.text)
    entities, relations = result.entities, result.relations
    if len(entities) > cap:
        report.skip("entities_over_cap", len(entities) - cap, example=f"{chunk.id}: {len(entities)} > {cap}")
        entities = entities[:cap]
    if len(relations) > cap:
        report.skip("relations_over_cap", len(relations) - cap, example=f"{chunk.id}: {len(relations)} > {cap}")
        relations = relations[:cap]
    for ent in entities:
        if not clean_display_name(ent.name):
            report.skip("empty_entity_name")
            continue
        if report.refuses("entity", ent.name) or unmentioned("entity", ent.name, report=report):
            continue
        kg.add_entity(ent.name, ent.type, ent.description or None, chunk_id=chunk.id, doc_id=chunk.doc_id)
        report.added["entities"] += 1
    types = {canonical_key(e.name): e.type for e in entities if clean_display_name(e.name)}
    for rel in relations:
        if not clean_display_name(rel.source) or not clean_display_name(rel.target):
            report.skip("empty_member")
            continue
        if canonical_key(rel.source) == canonical_key(rel.target):
            report.skip("self_loop", example=f"{rel.source!r} -> {rel.target!r}")
            continue
        if report.refuses("member", rel.source, rel.target) or unmentioned(
            "member", rel.source, rel.target, report=report
        ):
            continue
        quote = " ".join(rel.evidence.split()) if rel.evidence else ""
        if quote and quote.casefold() not in haystack:
            report.warn("evidence_not_in_text")
            quote = ""
        predicate = getattr(rel, "predicate", "") or None  # a parsed relation keeps what it says
        kg.add_relation(
            rel.source,
            rel.target,
            typer(predicate) if predicate and upper_snake(rel.type) == RELATED else typer(rel.type),
            predicate=predicate,
            description=rel.description or None,
            evidence=quote or None,
            confidence=rel.confidence,
            chunk_id=chunk.id,
            doc_id=chunk.doc_id,
            source_type=types.get(canonical_key(rel.source)),
            target_type=types.get(canonical_key(rel.target)),
        )
        report.added["relations"] += 1


def _unmentioned(chunk: Chunk) -> Any:
    """``unmentioned(kind, *names, report=...)``: whether one of ``names`` is not mentioned in ``chunk`` (an
    extractor's invention); if so it is counted as ``<kind>_not_in_text`` with the chunk and the names."""
    from kg_rag.ingest.defined import defined_terms
    from kg_rag.ingest.grounding import ChunkText
    from kg_rag.model.names import shown_name

    meta = chunk.metadata or {}
    # a corpus passage's title is part of what was read (HippoRAG's passages are title + newline + text)
    read = f"{meta['title']}\n{chunk.text}" if meta.get("titled") and meta.get("title") else chunk.text
    text = ChunkText(read, defined_terms(chunk))  # "the Company" mentions the name the document defines it as

    def unmentioned(kind: str, *names: str, report: IngestReport) -> bool:
        if all(text.mentions(name) for name in names):
            return False
        report.skip(f"{kind}_not_in_text", example=f"{chunk.id}: " + " -> ".join(shown_name(n) for n in names))
        return True

    return unmentioned


@dataclass
class ExtractionRun:
    """What one extraction run returned: results and failures by chunk id, and what it cost."""

    results: dict[str, ExtractionResult] = field(default_factory=dict)
    failures: dict[str, BaseException] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)


class LLMExtractor:
    """Extracts entities and directed typed relations from chunks with a LangChain chat model.

    Args:
        llm: any ``BaseChatModel`` supporting ``with_structured_output``. Give it ``max_retries=0``: the
            extractor's own retry layer is the only one.
        entity_types / relation_types: the vocabulary shown to the model (either may be a mapping
            type -> meaning). Types outside the vocabulary are kept (typed from their words, see
            :class:`~kg_rag.model.relation_types.RelationTyper`) unless ``strict_vocabulary`` maps them to
            ``RELATED`` (and then a pattern never yields a type outside the vocabulary either).
        relation_patterns: predicate phrase -> type map applied to what the model returns.
        system_prompt: the system message; ``{entity_types}`` and ``{relation_types}`` are filled in.
        max_concurrency: simultaneous model calls. max_retries: extra attempts per chunk, with exponential
            backoff starting at ``retry_initial_wait`` seconds.
        structured_output_method: passed to ``with_structured_output(method=...)`` when set.
        gleaning: extra passes asking for missed entities and relations (0 = off).

    The vocabulary, prompt, patterns and gleaning are one :class:`~kg_rag.ingest.extraction_schema.ExtractionSchema`
    (``self.schema``); ``LLMExtractor(llm, **load_schema("schema.yaml").extractor_kwargs())`` reads it from a
    file, as ``kg-rag index --schema`` does.
    """

    def __init__(
        self,
        llm: Any,
        *,
        entity_types: Mapping[str, str] | Sequence[str] = DEFAULT_ENTITY_TYPES,
        relation_types: Mapping[str, str] | Sequence[str] = DEFAULT_RELATION_TYPES,
        relation_patterns: Mapping[str, str] = DEFAULT_RELATION_PATTERNS,
        strict_vocabulary: bool = False,
        max_concurrency: int = 4,
        max_retries: int = 2,
        retry_initial_wait: float = 1.0,
        structured_output_method: str | None = None,
        system_prompt: str = SYSTEM_PROMPT,
        gleaning: int = 0,
    ) -> None:
        if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int) or max_concurrency < 1:
            raise InputError(f"max_concurrency must be an integer >= 1, got {max_concurrency!r}")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise InputError(f"max_retries must be an integer >= 0, got {max_retries!r}")
        self.schema = ExtractionSchema(
            entity_types=vocabulary(entity_types, "entity_types"),
            relation_types=vocabulary(relation_types, "relation_types"),
            system_prompt=system_prompt,
            relation_patterns=relation_patterns,
            strict_vocabulary=strict_vocabulary,
            gleaning=gleaning,
        )
        if not hasattr(llm, "invoke"):
            raise InputError("llm must be a LangChain chat model")
        from langchain_core.runnables import RunnableLambda

        schema = self.schema
        patterns = schema.relation_patterns
        if schema.strict_vocabulary:  # a curated phrase must not smuggle in a type the schema does not allow
            patterns = {p: t for p, t in patterns.items() if upper_snake(t) in schema.relation_types}
        self.typer = RelationTyper(patterns, vocabulary=list(schema.relation_types), strict=schema.strict_vocabulary)
        self.max_concurrency = max_concurrency
        self.max_retries = max_retries
        self.model_name = _model_name(llm)
        self._system_tokens = count_tokens(schema.rendered_system_prompt())
        self.gleaning = schema.gleaning
        kwargs = {"method": structured_output_method} if structured_output_method else {}
        self.chat_model = describe_chat_model(llm)
        """The model, its provider and URL, as failures name them."""
        structured = structured_output(llm, ExtractionResult, include_raw=True, **kwargs)
        self.prompt, self.glean_prompt = schema.prompts()
        retry = {
            "stop_after_attempt": max_retries + 1,
            "wait_exponential_jitter": retry_initial_wait > 0,
            "exponential_jitter_params": {"initial": retry_initial_wait, "max": 30.0}
            if retry_initial_wait > 0
            else None,
        }
        parse = RunnableLambda(_unpack, name="parse extraction")
        first = _counted(self.prompt | structured | parse)
        glean = _counted(self.glean_prompt | structured | parse)
        self.chain = _per_input(first.with_retry(**retry), "kg-rag extraction", "extraction")
        self.glean_chain = _per_input(glean.with_retry(**retry), "kg-rag gleaning", "gleaning")

    # --------------------------------------------------------------- extraction
    def _config(self, config: Any) -> dict[str, Any]:
        out = dict(config or {})
        out["max_concurrency"] = min(int(out.get("max_concurrency") or self.max_concurrency), self.max_concurrency)
        return out

    def extract(self, chunks: Sequence[Chunk], *, progress: bool = False, config: Any = None) -> ExtractionRun:
        """Extract every chunk (bounded concurrency, the caller's config propagated). Failures are recorded,
        never raised."""
        from tqdm.auto import tqdm

        run = ExtractionRun()
        inputs = [{"text": extraction_text(c.text)} for c in chunks]
        with _failures_into(run):
            with tqdm(total=len(chunks), desc="extracting", disable=not progress) as bar:
                for i, out in self.chain.batch_as_completed(
                    inputs, config=self._config(config), return_exceptions=True
                ):
                    self._record(run, chunks[i], out)
                    bar.update(1)
            for _ in range(self.gleaning):
                self._glean(run, chunks, config, progress)
        return run

    async def aextract(self, chunks: Sequence[Chunk], *, progress: bool = False, config: Any = None) -> ExtractionRun:
        """Async :meth:`extract` (``abatch_as_completed``)."""
        from tqdm.auto import tqdm

        run = ExtractionRun()
        inputs = [{"text": extraction_text(c.text)} for c in chunks]
        with _failures_into(run):
            with tqdm(total=len(chunks), desc="extracting", disable=not progress) as bar:
                async for i, out in self.chain.abatch_as_completed(
                    inputs, config=self._config(config), return_exceptions=True
                ):
                    self._record(run, chunks[i], out)
                    bar.update(1)
            for _ in range(self.gleaning):
                todo, inputs = self._glean_inputs(run, chunks)
                async for i, out in self.glean_chain.abatch_as_completed(
                    inputs, config=self._config(config), return_exceptions=True
                ):
                    self._merge_glean(run, todo[i], out)
        return run

    def _record(self, run: ExtractionRun, chunk: Chunk, out: Any) -> None:
        if isinstance(out, BaseException):
            logger.warning("extraction failed for chunk %s (chat model %s): %s", chunk.id, self.chat_model, out)
            run.failures[chunk.id] = out
            return
        result, usage = out
        run.results[chunk.id] = result
        if usage.counted:  # no usage reported: count what was sent
            usage.prompt_tokens = self._system_tokens + count_tokens(chunk.text) + 8
        run.usage.add(usage)

    def _glean_inputs(self, run: ExtractionRun, chunks: Sequence[Chunk]) -> tuple[list[Chunk], list[dict]]:
        todo = [c for c in chunks if c.id in run.results]
        inputs = [{"text": extraction_text(c.text), "previous": run.results[c.id].model_dump_json()} for c in todo]
        return todo, inputs

    def _glean(self, run: ExtractionRun, chunks: Sequence[Chunk], config: Any, progress: bool) -> None:
        from tqdm.auto import tqdm

        todo, inputs = self._glean_inputs(run, chunks)
        with tqdm(total=len(todo), desc="gleaning", disable=not progress) as bar:
            for i, out in self.glean_chain.batch_as_completed(
                inputs, config=self._config(config), return_exceptions=True
            ):
                self._merge_glean(run, todo[i], out)
                bar.update(1)

    @staticmethod
    def _merge_glean(run: ExtractionRun, chunk: Chunk, out: Any) -> None:
        if isinstance(out, BaseException):  # a failed second pass keeps the first pass
            logger.warning("gleaning failed for chunk %s: %s", chunk.id, out)
            return
        extra, usage = out
        run.usage.add(usage)
        first = run.results[chunk.id]
        seen = {canonical_key(e.name) for e in first.entities}
        rel_seen = {(canonical_key(r.source), canonical_key(r.target), r.type.upper()) for r in first.relations}
        first.entities += [e for e in extra.entities if canonical_key(e.name) not in seen]
        first.relations += [
            r
            for r in extra.relations
            if (canonical_key(r.source), canonical_key(r.target), r.type.upper()) not in rel_seen
        ]

    # ------------------------------------------------------------------ ingest
    def apply(
        self, kg: KnowledgeGraph, chunks: Sequence[Chunk], run: ExtractionRun, report: IngestReport
    ) -> IngestReport:
        """Merge a run into ``kg`` (chunks in input order, so the graph does not depend on completion order)."""
        for chunk in chunks:
            if chunk.id in run.results:
                apply_extraction(kg, chunk, run.results[chunk.id], self.typer, report)
                report.failures.pop(chunk.id, None)
            elif chunk.id in run.failures:
                report.fail(chunk.id, run.failures[chunk.id])
        report.added["chunks_extracted"] += len(run.results)
        report.add_usage(run.usage.to_dict())
        return report

    def ingest(
        self,
        kg: KnowledgeGraph,
        chunks: Iterable[Chunk],
        report: IngestReport | None = None,
        *,
        progress: bool = False,
        config: Any = None,
    ) -> IngestReport:
        """Add ``chunks`` to ``kg`` (all of them, even ones whose extraction fails) and merge the extractions."""
        chunks = list(chunks)
        report = report if report is not None else IngestReport()
        for chunk in chunks:
            kg.add_chunk(chunk)
        return self.apply(kg, chunks, self.extract(chunks, progress=progress, config=config), report)

    async def aingest(
        self,
        kg: KnowledgeGraph,
        chunks: Iterable[Chunk],
        report: IngestReport | None = None,
        *,
        progress: bool = False,
        config: Any = None,
    ) -> IngestReport:
        chunks = list(chunks)
        report = report if report is not None else IngestReport()
        for chunk in chunks:
            kg.add_chunk(chunk)
        return self.apply(kg, chunks, await self.aextract(chunks, progress=progress, config=config), report)

    def reextract_failed(self, kg: KnowledgeGraph, report: IngestReport, *, progress: bool = False) -> IngestReport:
        """Retry the chunks listed in ``report.failures`` that are still in the graph."""
        chunks = [kg.chunks[cid] for cid in list(report.failures) if cid in kg.chunks]
        return self.apply(kg, chunks, self.extract(chunks, progress=progress), report)


def _per_input(retrying: Any, name: str, tag: str) -> Any:
    """A Runnable that runs ``retrying`` once per input. ``batch_as_completed`` on a retry binding would call
    the unwrapped chain (no retries); through this wrapper every input gets the retry layer, and the caller's
    config (callbacks, tags) reaches every call."""
    from langchain_core.runnables import RunnableLambda

    def one(inputs: dict[str, Any], config: Any) -> Any:
        return retrying.invoke(inputs, config)

    async def aone(inputs: dict[str, Any], config: Any) -> Any:
        return await retrying.ainvoke(inputs, config)

    return RunnableLambda(one, afunc=aone, name=name).with_config(run_name=name, tags=["kg-rag", tag])


class _Unparsed(ExtractionError):
    """The model answered, but not with a parsable extraction: a failed call whose tokens are known."""

    def __init__(self, message: str, usage: Usage) -> None:
        super().__init__(message)
        self.usage = usage


def _unpack(output: Any) -> tuple[ExtractionResult, Usage]:
    """``with_structured_output(include_raw=True)`` output -> (result, usage); a parse failure raises so the
    retry layer tries again."""
    if isinstance(output, Mapping) and "raw" in output:
        if output.get("parsing_error") is not None:
            raise _Unparsed(f"model output did not parse: {output['parsing_error']}", usage_of(output.get("raw")))
        try:
            return _require_result(output.get("parsed")), usage_of(output.get("raw"))
        except (ExtractionError, ValueError) as exc:  # pydantic's ValidationError is a ValueError
            raise _Unparsed(str(exc), usage_of(output.get("raw"))) from exc
    return _require_result(output), Usage(1)


class _FailedCalls:
    """Failed calls of one extraction run, counted from every worker thread or task (a retry is a call)."""

    def __init__(self) -> None:
        self.usage = Usage()
        self._lock = threading.Lock()

    def add(self, error: BaseException) -> None:
        usage = error.usage if isinstance(error, _Unparsed) else Usage(1)
        usage.failed = 1
        with self._lock:
            self.usage.add(usage)


_FAILED: ContextVar[_FailedCalls | None] = ContextVar("kg_rag_failed_extraction_calls", default=None)


@contextmanager
def _failures_into(run: ExtractionRun) -> Iterator[None]:
    """Count the failed calls made inside the block into ``run.usage``. A context variable reaches every
    worker: LangChain's executor copies the context into its threads, and asyncio into its tasks."""
    failed = _FailedCalls()
    token = _FAILED.set(failed)
    try:
        yield
    finally:
        _FAILED.reset(token)
        run.usage.add(failed.usage)


def _counted(attempt: Any) -> Any:
    """``attempt`` (prompt | model | parse), with each failure counted as a failed call before the retry layer
    sees it."""
    from langchain_core.runnables import RunnableLambda

    def note(error: BaseException) -> None:
        failed = _FAILED.get()
        if failed is not None:
            failed.add(error)

    def one(inputs: dict[str, Any], config: Any) -> Any:
        try:
            return attempt.invoke(inputs, config)
        except Exception as exc:
            note(exc)
            raise

    async def aone(inputs: dict[str, Any], config: Any) -> Any:
        try:
            return await attempt.ainvoke(inputs, config)
        except Exception as exc:
            note(exc)
            raise

    return RunnableLambda(one, afunc=aone, name="extraction attempt")


def _model_name(llm: Any) -> str | None:
    for attr in ("model_name", "model", "model_id"):
        value = getattr(llm, attr, None)
        if isinstance(value, str) and value:
            return value
    return None


def usage_summary(usage: Mapping[str, int], chunks: int) -> str:
    """One line: calls (and how many failed) and tokens, and what 1 000 chunks would cost at this rate."""
    calls, prompt, completion = usage.get("calls", 0), usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)
    failed = usage.get("failed_calls", 0)
    line = f"{calls} chat calls"
    if failed:
        line += f" ({failed} failed)"
    line += f", {prompt} prompt + {completion} completion tokens"
    if chunks:
        per = 1000 / chunks
        line += (
            f"; per 1 000 chunks: {calls * per:.0f} calls, {prompt * per:.0f} prompt + "
            f"{completion * per:.0f} completion tokens"
        )
    return line
